"""The kernels the sidebar offers: built-in ones plus user kernel files, as the worker lists
them in its ``env`` report (the app never imports kernel files: they import torch or Triton).

The only module of ``app/`` that imports the worker's catalog (tests/unit/test_boundaries.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.catalog.declare import Kernel
from profiling_worker.catalog.registry import Registry


@dataclass(frozen=True)
class KernelInfo:
    """One kernel as described by the worker: what the form and spec validation need."""

    id: str
    title: str
    parameters: tuple[str, ...]
    annotations: tuple[str, ...]
    default_configs: tuple[Mapping[str, Any], ...]
    cpu_configs: tuple[Mapping[str, Any], ...]
    builtin: bool = True
    source: str = "built-in"
    description: str = ""
    parameter_kinds: Mapping[str, str] = field(default_factory=dict)
    fusion_pairs: tuple[tuple[str, str], ...] = ()


def _info(d: Mapping[str, Any]) -> KernelInfo:
    return KernelInfo(
        id=str(d["id"]), title=str(d.get("title") or d["id"]),
        parameters=tuple(d.get("parameters") or ()), annotations=tuple(d.get("annotations") or ()),
        default_configs=tuple(d.get("default_configs") or ()),
        cpu_configs=tuple(d.get("cpu_configs") or ()), builtin=bool(d.get("builtin", True)),
        source=str(d.get("source", "")), description=str(d.get("description", "")),
        parameter_kinds=dict(d.get("parameter_kinds") or {}),
        fusion_pairs=tuple((str(p[0]), str(p[1])) for p in d.get("fusion_pairs") or ()
                           if len(p) == 2))


def builtin_kernels() -> Mapping[str, Kernel]:
    """The built-in declarations with their formulas (pure Python, no torch): what spec
    validation's memory check and the fusion pairs need in the app's process."""
    return CATALOG


def builtin_description() -> dict[str, Any]:
    """The built-in catalog described as the worker would (no user files)."""
    return Registry(dict(CATALOG)).describe()


def catalog_from_report(report: Mapping[str, Any]
                        ) -> tuple[dict[str, KernelInfo], list[dict[str, str]]]:
    """Kernel id -> :class:`KernelInfo` from the worker's env report, and the user files that
    failed to import ({file, error}). Falls back to the built-in catalog when the report has
    no kernel list (an older worker, or a worker that could not run)."""
    described = report.get("kernels") or builtin_description()
    kernels = {}
    for d in described.get("kernels") or ():
        try:
            kernels[str(d["id"])] = _info(d)
        except (KeyError, TypeError):
            continue
    return kernels, list(described.get("errors") or ())


def collectors_from_report(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """User info collector name -> {name, scope, unit, timeout_s, source}, as the worker's env
    report lists them (user files beside the kernels); empty without any."""
    described = report.get("kernels") or {}
    return {str(c["name"]): dict(c) for c in described.get("collectors") or ()
            if isinstance(c, Mapping) and c.get("name")}

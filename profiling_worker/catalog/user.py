"""User kernel files: any ``.py`` file in a folder named at start-up declares kernels with
:func:`kernel`, the same way the built-in catalog does (parameters, annotations, default
configs, FLOP and byte formulas).

A kernel is a function ``run(*config_values, annotate, device)`` that allocates its inputs
outside any annotation and runs each region inside ``with annotate("<name>"):``. The worker
calls it once per run (and ``warmup`` times before, with a no-op ``annotate``). Example::

    from profiling_worker.catalog.user import kernel

    @kernel(id="my_scale", parameters=("n",), annotations=("scale",),
            default_configs=[{"n": 1 << 20}, {"n": 1 << 24}],
            flops=lambda annotation, c: c["n"], bytes=lambda annotation, c: 8 * c["n"])
    def my_scale(n, *, annotate, device):
        import torch
        x = torch.randn(n, device=device)
        with annotate("scale"):
            x * 2

Files are imported only by the worker (never by the dashboard's process): a file that fails to
import is reported with its error and the others still load.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Formula = Callable[[str, Mapping[str, Any]], float]
_PENDING: list[UserKernel] = []  # filled by @kernel while a file is imported


@dataclass(frozen=True)
class UserKernel:
    """A kernel declared in a user file (the fields the built-in catalog entries have)."""

    id: str
    parameters: tuple[str, ...]
    annotations: tuple[str, ...]
    default_configs: tuple[Mapping[str, Any], ...]
    run: Callable[..., None]
    flops: Formula | None = None
    bytes: Formula | None = None
    dtype_of: str | Mapping[str, str] = "fp32"
    title: str = ""
    description: str = ""
    parameter_kinds: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    fusion_pairs: tuple[tuple[str, str], ...] = ()

    def dtype(self, annotation: str) -> str:
        """Data type of an annotation (for the roofline's compute ceiling)."""
        return self.dtype_of if isinstance(self.dtype_of, str) else self.dtype_of.get(annotation, "fp32")


def kernel(*, id: str, parameters: Sequence[str], annotations: Sequence[str],
           default_configs: Iterable[Mapping[str, Any]], flops: Formula | None = None,
           bytes: Formula | None = None, dtype: str | Mapping[str, str] = "fp32", title: str = "",
           description: str = "", parameter_kinds: Mapping[str, str] | None = None,
           fusion_pairs: Iterable[Sequence[str]] = ()
           ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare a user kernel (decorator). ``parameter_kinds`` maps a parameter to "size"
    (positive int, the default), "int", "float" or "str"; formulas return FLOPs and bytes
    per call of an annotation; ``fusion_pairs`` lists (unfused, fused) annotations that
    compute the same result (the fusion view offers only these). Returns the function
    unchanged."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        _PENDING.append(UserKernel(
            id=id, parameters=tuple(parameters), annotations=tuple(annotations),
            default_configs=tuple(dict(c) for c in default_configs), run=fn, flops=flops,
            bytes=bytes, dtype_of=dtype, title=title or id, description=description,
            parameter_kinds=dict(parameter_kinds or {}),
            fusion_pairs=tuple((str(u), str(f)) for u, f in fusion_pairs)))
        return fn

    return register


def _import_file(path: Path) -> list[UserKernel]:
    name = f"kprof_user_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path.name} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    _PENDING.clear()
    sys.modules[name] = module
    spec.loader.exec_module(module)
    found = [UserKernel(**{**k.__dict__, "source": path.name}) for k in _PENDING]
    _PENDING.clear()
    return found


def load_kernel_dirs(dirs: Iterable[str | os.PathLike[str]]
                     ) -> tuple[dict[str, UserKernel], list[dict[str, str]]]:
    """Import every ``*.py`` of each folder (not recursive, sorted).

    Returns:
        ``(kernels, errors)``: kernel id -> :class:`UserKernel`, and one
        ``{"file", "error"}`` per file that failed to import or declared a duplicate id.
    """
    kernels: dict[str, UserKernel] = {}
    errors: list[dict[str, str]] = []
    for folder in dirs:
        for path in sorted(Path(folder).glob("*.py")):
            try:
                found = _import_file(path)
            except BaseException as exc:  # a user file may raise anything, SystemExit included
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                errors.append({"file": path.name, "error": last})
                continue
            for k in found:
                if k.id in kernels:
                    errors.append({"file": path.name, "error": f"kernel id {k.id!r} already "
                                   f"declared in {kernels[k.id].source}"})
                else:
                    kernels[k.id] = k
    return kernels, errors


def kernel_dirs_from_env() -> list[str]:
    """Folders named in ``KPROF_KERNEL_DIRS`` (separated by ``os.pathsep``)."""
    return [d for d in os.environ.get("KPROF_KERNEL_DIRS", "").split(os.pathsep) if d]

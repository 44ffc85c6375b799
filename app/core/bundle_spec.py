"""What a bundle says was asked, typed: a :class:`JobSpec`, a :class:`PartialSpec` or None.

A bundle's spec is its manifest's ``spec`` (else ``spec.json``), read back through
:func:`profiling_worker.schema.spec.validate_spec`, so a job this dashboard's worker ran opens
with the same frozen :class:`JobSpec` it was submitted with. An import states only what its
files tell (``profiling_worker.importing.assemble.reconstruct_spec``): when that makes a valid
JobSpec it is one; when it does not (the backend is ``unknown``,
:data:`~profiling_worker.schema.spec.BACKEND_UNKNOWN`, because nsight-python 1.1 CSVs holding
only durations come from ncu or CUPTI alike; or values the spec refuses) it is a
:class:`PartialSpec`: kernels, configs, runs, metrics and the backend as written, and no
options (cache_control, clock_control, thermal, gpu...), which the files cannot tell and the
pages then show as nsight-python's defaults. None: a bundle with no spec at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from profiling_worker.schema import backends as B
from profiling_worker.schema.spec import JobSpec, SpecInvalid, validate_spec


@dataclass(frozen=True)
class PartialSpec:
    """The spec of an import that is not a valid :class:`JobSpec`, as far as its files tell.

    Attributes:
        kernels: the profiled functions' names (nsight-python) or ``imported``.
        configs: one mapping per config, parameter name -> value, as written.
        runs: runs per config, None when the files do not say.
        metrics: Nsight Compute metric names (and derived metrics' names) as written.
        annotations: the annotations (regions) that hold values, None when not named.
        backend: ``ncu``, ``cupti``, ``cpu`` or ``unknown`` (the files do not tell).
    """

    kernels: tuple[str, ...]
    configs: tuple[Mapping[str, Any], ...]
    runs: int | None
    metrics: tuple[str, ...]
    annotations: tuple[str, ...] | None
    backend: str

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The config parameter names, in the order of the first config (() without configs)."""
        return tuple(self.configs[0].keys()) if self.configs else ()


def _items(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _items(value))


def read_spec(raw: object) -> JobSpec | PartialSpec | None:
    """The typed spec of a bundle from its stored JSON object (manifest ``spec``/``spec.json``).

    Returns:
        The :class:`JobSpec` when ``raw`` validates, else a :class:`PartialSpec` of the fields
        it holds, else None when ``raw`` is not a JSON object. Never raises.
    """
    if not isinstance(raw, Mapping):
        return None
    if not B.on_gpu(str(raw.get("backend"))):  # recorded before a cpu job's unused GPU index
        raw = {**raw, "gpu": 0}                 # was refused: it ran on no GPU all the same
    try:
        return validate_spec(raw)
    except SpecInvalid:
        runs = raw.get("runs")
        return PartialSpec(
            kernels=_strings(raw.get("kernels")),
            configs=tuple(dict(c) for c in _items(raw.get("configs")) if isinstance(c, Mapping)),
            runs=runs if isinstance(runs, int) and not isinstance(runs, bool) else None,
            metrics=_strings(raw.get("metrics")),
            annotations=_strings(raw.get("annotations")) or None,
            backend=str(raw.get("backend") or ""))


__all__ = ["PartialSpec", "read_spec"]

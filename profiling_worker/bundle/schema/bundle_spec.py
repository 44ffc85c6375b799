"""What a bundle says was asked, typed: a :class:`JobSpec`, a :class:`PartialSpec` or None.

A bundle's spec is its manifest's ``spec`` (else ``spec.json``), read back through
:func:`profiling_worker.bundle.schema.spec.validate_spec`, so a job this dashboard's worker ran
opens with the same frozen :class:`JobSpec` it was submitted with. An import states only what its
files tell (``profiling_worker.importing.assemble.reconstruct_spec``): when that makes a valid
JobSpec it is one; when it does not (the backend is ``unknown``,
:data:`~profiling_worker.bundle.schema.spec.BACKEND_UNKNOWN`, because nsight-python 1.1 CSVs holding
only durations come from ncu or CUPTI alike; or values the spec refuses) it is a
:class:`PartialSpec`: the fields as written, each None (or empty) where the JSON lacks it. An
import writes nsight-python's defaults for the run options the files cannot tell (its manifest's
``provenance.spec_fields_defaulted`` names them). None: a bundle with no spec at all.

Readers of a manifest ask these types, never the JSON dict (gate, plausibility notes, the warm
worker's refusal, the result store).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.spec import JobSpec, SpecInvalid, validate_spec


@dataclass(frozen=True)
class PartialSpec:
    """The spec of an import that is not a valid :class:`JobSpec`, as far as its JSON tells.

    Attributes:
        kernels: the profiled functions' names (nsight-python) or ``imported``.
        configs: one mapping per config, parameter name -> value, as written.
        runs: runs per config, None when the files do not say.
        metrics: Nsight Compute metric names (and derived metrics' names) as written.
        annotations: the annotations (regions) that hold values, None when not named.
        backend: ``ncu``, ``cupti``, ``cpu`` or ``unknown`` (the files do not tell); "" unsaid.
        label: the job's label ("" unsaid).
        cache_control, clock_control, replay_mode, thermal_mode: the run options as written
            (None: unsaid).
        thermal_wait, thermal_cont, thermal_timeout: thermal limits (°C, °C, s; None: unsaid
            or nsight-python's default).
        section_set: the Nsight Compute section set (None: none or unsaid).
        gpu: the GPU index asked for (None: unsaid).
    """

    kernels: tuple[str, ...]
    configs: tuple[Mapping[str, Any], ...]
    runs: int | None
    metrics: tuple[str, ...]
    annotations: tuple[str, ...] | None
    backend: str
    label: str = ""
    cache_control: str | None = None
    clock_control: str | None = None
    replay_mode: str | None = None
    thermal_mode: str | None = None
    thermal_wait: int | None = None
    thermal_cont: int | None = None
    thermal_timeout: int | None = None
    section_set: str | None = None
    gpu: int | None = None

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The config parameter names, in the order of the first config (() without configs)."""
        return tuple(self.configs[0].keys()) if self.configs else ()

    @classmethod
    def as_written(cls, raw: Mapping[str, Any]) -> PartialSpec:
        """The fields of a spec's JSON object, typed, without validating it (cheap: the result
        store reads every bundle's on each listing)."""
        return cls(kernels=_strings(raw.get("kernels")),
                   configs=tuple(dict(c) for c in _items(raw.get("configs"))
                                 if isinstance(c, Mapping)),
                   runs=_int(raw.get("runs")), metrics=_strings(raw.get("metrics")),
                   annotations=_strings(raw.get("annotations")) or None,
                   backend=str(raw.get("backend") or ""), label=str(raw.get("label") or ""),
                   cache_control=_text(raw.get("cache_control")),
                   clock_control=_text(raw.get("clock_control")),
                   replay_mode=_text(raw.get("replay_mode")),
                   thermal_mode=_text(raw.get("thermal_mode")),
                   thermal_wait=_int(raw.get("thermal_wait")),
                   thermal_cont=_int(raw.get("thermal_cont")),
                   thermal_timeout=_int(raw.get("thermal_timeout")),
                   section_set=_text(raw.get("section_set")), gpu=_int(raw.get("gpu")))


def _items(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _items(value))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


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
        return PartialSpec.as_written(raw)


def manifest_spec(manifest: Mapping[str, Any]) -> JobSpec | PartialSpec | None:
    """:func:`read_spec` of a manifest's ``spec``."""
    return read_spec(manifest.get("spec"))


#: provenance key of imports whose files record no run count (plain report, ncu CSV export)
RUNS_NOT_ASKED = "runs_not_asked"


def asked_runs(manifest: Mapping[str, Any], spec: JobSpec | PartialSpec | None) -> int | None:
    """The runs per config the job asked for, which each config should have: the spec's
    fixed ``runs``. None where there is no such count: no spec, runs "auto" (a config stops
    when its interval is narrow enough, at ``runs`` at most), and an import whose files record
    no run count (provenance :data:`RUNS_NOT_ASKED`: its spec's ``runs`` is only the most that
    any region has in the file)."""
    if spec is None or (manifest.get("provenance") or {}).get(RUNS_NOT_ASKED):
        return None
    if isinstance(spec, JobSpec) and spec.run_target is not None:
        return None
    return spec.runs


def backend_of(manifest: Mapping[str, Any], spec: JobSpec | PartialSpec | None) -> str:
    """The backend that measured a bundle: the manifest's ``backend.name`` (the worker's or the
    importer's record), else the spec's, else ""."""
    entry = manifest.get("backend")
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return str(name or (spec.backend if spec is not None else "") or "")


__all__ = ["PartialSpec", "backend_of", "manifest_spec", "read_spec"]

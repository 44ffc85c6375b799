"""Pre-flight: a quick pass before a long job (issue 22). Two calls of each config, the first one
with no warm-up, on CUPTI (cpu where the job runs on no GPU), then, from its launches: launches
per annotation, config and call; the first call's kernels against the second's (a first call
that autotunes, as Triton's and cuDNN's do, or initialises lazily, launches others); launch
counts that differ between configs; and the planned job's time and report size.

**Estimates** are fits to the bundled H200 jobs (app/bundled): Nsight Compute wall-clock
``10 s + 0.19 s`` per profiled launch with a metric list (least squares over the 9 jobs without
a section set, 30-200 launches; ``detailed`` 1.3 s and ``full`` 3.8 s a launch), CUPTI
``5.6 s + 10 ms`` a launch (14 jobs); report bytes per launch from their uncompressed
``.ncu-rep`` files: 17 kB with one metric, 115 kB with the 6 of the bound preset, 282 kB with
17, 1.46 MB with ``full``. Expect +/- 50 %: shown as estimates, never as measurements. A cpu
job's time is its own pass's host time of one run times the runs plus 2 s (assumed), and says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pandas as pd

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.bundle_spec import PartialSpec
from profiling_worker.bundle.schema.spec import JobSpec, validate_spec

from app.core import frame_columns as F, numbers
from app.core.views.deep_dive import config_labeler

CALLS = 2  # the first call (no warm-up) and one more
PILOT_BUDGET_S = 60.0  # the most a pilot pass for Nsight Compute's runs may measure
LABEL = "pre-flight"
#: How every job list and label names a pass's job, after its status (app.ui.job_status).
PASS_WORDS = "Pre-flight pass"
FIRST, LATER = "FirstCallLaunches", "SecondCallLaunches"
FIRST_KERNELS, LATER_KERNELS = "FirstCallKernels", "SecondCallKernels"
#: Columns of :attr:`Preflight.counts`.
COLUMNS = (C.ANNOTATION, C.CONFIG, F.CONFIG_LABEL, FIRST, LATER, FIRST_KERNELS, LATER_KERNELS)
#: (fixed s, s per profiled launch) by backend / ncu section set; see the module docstring.
_TIME_NCU = {None: (10.0, 0.19), "detailed": (10.0, 1.3), "full": (10.0, 3.8)}
_TIME_CUPTI = (5.6, 0.010)
_TIME_CPU_FIXED = 2.0
#: How a cpu job's time is estimated: no GPU job's figure enters it.
_CPU_SOURCE = (f"estimate for the cpu backend: this pass's host time of one run of every config "
               f"times the runs, plus {_TIME_CPU_FIXED:g} s to start the worker (assumed, not "
               "fitted); no GPU job's timing is used")
#: (metrics up to, bytes per launch) of the bundled H200 reports; ``full``'s for any set.
_REPORT_BYTES = ((1, 17_000), (6, 115_000), (17, 282_000))
_REPORT_FULL = 1_460_000


def is_pass(spec: JobSpec | PartialSpec | None) -> bool:
    """Whether ``spec`` is a Pre-flight pass's (:func:`preflight_spec`: its label begins with
    :data:`LABEL`): :data:`CALLS` calls without warm-up, a quick look at the job, no result to
    compare or to show first (a bundle's spec, whole or partial)."""
    return spec is not None and str(spec.label or "").startswith(LABEL)


def pass_line(spec: JobSpec | PartialSpec | None) -> str | None:
    """The one line at the top of every results page of a Pre-flight pass (:func:`is_pass`):
    what it is (a pass of which job) and what it measured (:data:`CALLS` calls of each config,
    the first without warm-up, or a pilot's runs until its target held), so that its pages do
    not read as the job's results (issue 37: only the Job box said "Pre-flight pass"). None
    for any other job."""
    if spec is None or not is_pass(spec):
        return None
    of = str(spec.label).removeprefix(LABEL).removeprefix(" of ").strip()
    calls = (f"{CALLS} calls" if getattr(spec, "run_target", None) is None
             else "runs until its run target held (its pilot for Nsight Compute's runs)")
    configs = numbers.counted(len(spec.configs), "config")
    return (f"{PASS_WORDS} of {of or ', '.join(spec.kernels)}: {calls} of each of its {configs} "
            f"on the {spec.backend} backend, the first without warm-up, to count launches and "
            "estimate the job's time; a quick look, not the job's results.")


def preflight_spec(planned: JobSpec, pilot: bool = False) -> JobSpec:
    """The pre-flight job of ``planned``: its kernels, configs, annotations, GPU, cache control
    and ignored kernels (and a cpu job's torch threads, which its times depend on);
    :data:`CALLS` runs, no warm-up, timing only; CUPTI when ``planned``
    runs on a GPU, else cpu. ``pilot``: for a Nsight Compute job of runs "auto" (``planned`` is
    its CUPTI twin, with its ``run_target``), the pass runs "auto" itself from :data:`CALLS`
    runs, its budget at most :data:`PILOT_BUDGET_S`: its runs choose the ncu job's
    (:func:`ncu_runs`)."""
    target = planned.run_target if pilot else None
    runs: Any = CALLS if target is None else "auto"
    on_gpu = B.on_gpu(planned.backend)
    raw = {"kernels": list(planned.kernels), "configs": [dict(c) for c in planned.configs],
           "runs": runs, "warmup": 0, "backend": B.CUPTI if on_gpu else B.CPU, "gpu": planned.gpu,
           "cache_control": planned.cache_control, "ignore_kernels": list(planned.ignore_kernels),
           "label": f"{LABEL} of {planned.label or ', '.join(planned.kernels)}"[:200]}
    if on_gpu:  # no thermal pauses in a quick pass; the cpu backend has none to turn off
        raw["thermal_mode"] = "off"
    else:  # the estimate multiplies this pass's host time: timed as the job will be
        raw["cpu_threads"] = planned.cpu_threads
    if planned.annotations:
        raw["annotations"] = list(planned.annotations)
    if target is not None:
        raw["run_target"] = {**target.to_json(), "min_runs": CALLS,
                             "budget_s": min(target.budget_s, PILOT_BUDGET_S)}
    return validate_spec(raw)


def ncu_runs(manifest: Mapping[str, Any]) -> tuple[int, list[int]] | None:
    """(runs for the Nsight Compute job, runs each config took) from a pilot pass's
    ``backend.auto_runs``: Nsight Compute gives every config the same runs, so the most any
    config needed (its max_runs where the target was not met). None without a record."""
    entry = (manifest.get("backend") or {}).get("auto_runs") or {}
    taken = [int(c["runs"]) for c in entry.get("configs") or ()]
    return (max(taken), taken) if taken else None


@dataclass
class Preflight:
    """What the pass found. ``counts``: one row per annotation x config (:data:`COLUMNS`; the
    kernel columns are ``name xN`` lists). ``flags``: sentences to act on before the long run.
    ``estimate``: ``seconds``, ``report_bytes`` (None off ncu), ``launches`` (planned profiled
    launches), ``note`` (how it was estimated)."""

    counts: pd.DataFrame
    flags: list[str] = field(default_factory=list)
    estimate: dict[str, Any] = field(default_factory=dict)


def _kernels(launches: pd.DataFrame) -> Counter[str]:
    return Counter(str(k) for k in launches[C.KERNEL])


def _listing(kernels: Counter[str]) -> str:
    return ", ".join(f"{name.split('(')[0][:60]} x{n}" for name, n in sorted(kernels.items()))


def count_frame(launches: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
    """:data:`COLUMNS` from a pre-flight bundle's per-launch table (its duration rows, one per
    launch)."""
    label = config_labeler(configs)
    rows = []
    for key, group in launches.groupby([C.ANNOTATION, C.CONFIG], sort=True):
        annotation, config = cast(tuple[str, int], key)
        first, later = (group[group[C.RUN] == r] for r in (0, 1))
        rows.append({C.ANNOTATION: annotation, C.CONFIG: int(config),
                     F.CONFIG_LABEL: label(int(config)), FIRST: len(first), LATER: len(later),
                     FIRST_KERNELS: _listing(_kernels(first)),
                     LATER_KERNELS: _listing(_kernels(later))})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def flags_of(counts: pd.DataFrame, planned: JobSpec) -> list[str]:
    """The sentences of :class:`Preflight`: first calls that launch other kernels than the
    second (with what the planned warm-up does about it), and annotations whose launches per
    call differ between configs."""
    flags = []
    changed = counts[counts[FIRST_KERNELS] != counts[LATER_KERNELS]]
    if len(changed):
        where = "; ".join(f"{a} {c}: {numbers.counted(f, 'launch', 'launches')}, then {s}"
                          for a, c, f, s in zip(changed[C.ANNOTATION], changed[F.CONFIG_LABEL],
                                                changed[FIRST], changed[LATER]))
        cure = (f"the planned warm-up of {numbers.counted(planned.warmup, 'call')} runs before "
                "profiling, so "
                "profiled runs see the later kernels" if planned.warmup else
                "the planned job has no warm-up: set Warm-up calls to 1 or more, or its first "
                "run measures the autotuning")
        flags.append(f"First call launches other kernels than the second (autotuning or lazy "
                     f"initialisation): {where}. {cure}.")
    for annotation, group in counts.groupby(C.ANNOTATION, sort=True):
        if group[LATER].nunique() > 1:
            per = ", ".join(f"{c}: {n}" for c, n in zip(group[F.CONFIG_LABEL], group[LATER]))
            flags.append(f"{annotation}: launches per call differ between configs ({per}); "
                         "per-launch attribution keeps them apart, but compare configs per "
                         "kernel (Kernels page), not per launch.")
    return flags


def estimate(counts: pd.DataFrame, planned: JobSpec, host_ns_per_run: float = 0.0
             ) -> dict[str, Any]:
    """The planned job's time and report size (:class:`Preflight`'s ``estimate``) from the
    launches of the second call; ``host_ns_per_run``: the cpu pass's mean host time of one run
    of every config together (ns), used for a cpu job."""
    runs = planned.runs  # runs "auto": the most (max_runs), so an upper bound
    launches = int(counts[LATER].sum()) * runs
    caps = B.get(planned.backend)
    report: int | None = None
    if planned.backend == B.NCU:
        report = launches * (_REPORT_FULL if planned.section_set else next(
            (b for m, b in _REPORT_BYTES if len(planned.metrics) <= m),
            _REPORT_BYTES[-1][1] * len(planned.metrics) // _REPORT_BYTES[-1][0]))
    seconds = planned_seconds(planned, launches, host_ns_per_run * 1e-9)
    # a cpu job's figure is its own pass's host time, not a fit to the H200 jobs (issue 37)
    source = (_CPU_SOURCE if not caps.on_gpu
              else "estimate from the bundled H200 jobs' wall-clock and report sizes (+/- 50 %)")
    return {"seconds": round(seconds, 1), "report_bytes": report, "launches": launches,
            "note": source + ("; runs \"auto\": at most, by max_runs and the budget"
                              if planned.run_target else "")}


def planned_seconds(planned: JobSpec, launches: int, host_s_per_run: float) -> float:
    """Wall-clock seconds of the ``planned`` job: on a GPU backend from its ``launches`` profiled
    launches (the module docstring's fits), on cpu ``host_s_per_run`` (s of host time of one run
    of every config) times its runs plus a fixed start; runs "auto" at most its budget. Also
    Run's size check (app/core/job_size.py) before any Pre-flight, with a bound for each."""
    if planned.backend == B.NCU:
        fixed, per = _TIME_NCU.get(planned.section_set, _TIME_NCU["full"])
        seconds = fixed + per * launches
    elif B.on_gpu(planned.backend):
        seconds = _TIME_CUPTI[0] + _TIME_CUPTI[1] * launches
    else:
        seconds = _TIME_CPU_FIXED + host_s_per_run * planned.runs
    if planned.run_target is not None:
        seconds = min(seconds, _TIME_CUPTI[0] + planned.run_target.budget_s)
    return seconds


def read_preflight(launches: pd.DataFrame, manifest: Mapping[str, Any], planned: JobSpec
                   ) -> Preflight:
    """The :class:`Preflight` of a done pre-flight bundle (its ``launches`` table and manifest)
    for the ``planned`` job."""
    configs = [dict(c) for c in (manifest.get("spec") or {}).get("configs") or ()]
    metric = B.duration_metric((manifest.get("spec") or {}).get("backend"))
    timed = launches[launches[C.METRIC] == metric]
    counts = count_frame(timed, configs)
    host = float(timed[timed[C.RUN] == 1][C.VALUE].sum()) if not B.on_gpu(planned.backend) else 0.0
    return Preflight(counts, flags_of(counts, planned), estimate(counts, planned, host))

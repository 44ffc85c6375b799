"""Backend names and capabilities: the one place that names a backend.

The app imports this module (it may import ``profiling_worker.bundle.schema`` only); the worker's
run side registers how each backend collects (``profiling_worker/backends/registry.py``). Code
elsewhere asks a :class:`Backend` what it can do instead of comparing its name to a string.

Nsight Compute runs two ways, by the installed nsight-python (environment.py's ``nsight_mode``):
0.9.x re-runs the worker under ``ncu`` (launch mode: a cold worker, no info collectors), 1.1
attaches to the running worker (attach mode: warm workers and info collectors).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import tools as T
from profiling_worker.bundle.schema.tools import Tool
from profiling_worker.bundle.number_text import counted

#: The spec's ``backend`` values (JobSpec.backend's type); each has a :class:`Backend` below.
Name = Literal["ncu", "cupti", "events", "cpu"]
NCU: Final = "ncu"
CUPTI: Final = "cupti"
EVENTS: Final = "events"
CPU: Final = "cpu"
#: The manifest backend of an import whose files do not tell which backend measured it: not a
#: spec choice (not in :data:`Name`), described by :data:`IMPORTED_UNKNOWN`.
UNKNOWN: Final = "unknown"
#: How a backend runs the kernels: re-run under ncu, ncu attached to the worker, or the
#: worker's own process measures (CUPTI activity records, the host timer).
LAUNCH, ATTACH, IN_PROCESS = "launch", "attach", "in-process"
#: Set by nsight-python 0.9.x in the copy of the worker it re-runs under ncu (launch mode).
LAUNCH_CHILD_ENV: Final = "NSPY_NCU_PROFILE"
#: The spec's run options a backend may or may not apply (JobSpec fields).
OPTIONS = ("cache_control", "clock_control", "replay_mode", "thermal_mode")
#: Nsight Compute applies all; nsight-python 1.1's CUPTI collector takes no clock_control,
#: cache_control or replay_mode ("no meaning for CUPTI", nsight/analyze.py in the 1.1.0 wheel):
#: the worker flushes the L2 itself (l2_flush.py) and nsight-python keeps the thermal pauses.
_NCU_OPTIONS = OPTIONS
_CUPTI_OPTIONS = ("cache_control", "thermal_mode")
#: Where the L2 is flushed with cache_control "all": before every profiled kernel
#: (nsight-python's ncu), before each annotated region (the worker's CUPTI flush, l2_flush.py),
#: or nowhere (the host timer).
FLUSH_KERNEL, FLUSH_REGION, FLUSH_NONE = "kernel", "region", "none"
_NCU_TOOLS = (T.NSIGHT_PYTHON, T.NCU)


@dataclass(frozen=True)
class Backend:
    """What one backend measures and which spec options it honours.

    Attributes:
        name: the spec's ``backend`` value.
        measures: what its numbers are, in the user's words (shown next to results).
        mode: how it runs: ``launch``, ``attach`` or ``in-process``.
        on_gpu: runs the kernels on a GPU (False: the host, on the CPU).
        duration_metric: the metric its duration is recorded under (ns).
        any_metric: honours any Nsight Compute metric name (False: ``duration_metric`` only).
        collectors: honours nsight-python info collectors (GPU clocks, power... per run).
        options: the spec run options (:data:`OPTIONS`) it applies; the others are ignored.
        warm: a warm worker can serve it (imported and CUDA started once, jobs in turn).
        counters: reads GPU performance counters (needs ERR_NVGPUCTRPERM permission).
        nsight_mode: the environment report's and manifest's ``nsight_mode`` of this variant
            (``launch``, ``attach``, ``cupti``; None: nsight-python is not used).
        section_sets: honours ``section_set`` (Nsight Compute section sets, deep dive).
        l2_flush: where cache_control ``all`` flushes the L2 (:data:`FLUSH_KERNEL`...).
        tools: the profiling tools (:mod:`~profiling_worker.bundle.schema.tools`) whose versions its
            numbers depend on.
        auto_runs: its run loop is driven by ``runs: "auto"``'s stopping rule
            (:mod:`~profiling_worker.bundle.schema.run_target`; Nsight Compute replays in one call
            per job, or one process per call in launch mode: its runs come from a CUPTI pass).
    """

    name: Name | Literal["unknown"]
    measures: str
    mode: str
    on_gpu: bool
    duration_metric: str
    any_metric: bool
    collectors: bool
    options: tuple[str, ...]
    warm: bool
    counters: bool = False
    nsight_mode: str | None = None
    section_sets: bool = False
    l2_flush: str = FLUSH_NONE
    tools: tuple[Tool, ...] = ()
    auto_runs: bool = False


NCU_LAUNCH = Backend(NCU, "GPU kernel duration and counters (Nsight Compute)", LAUNCH,
                     on_gpu=True, duration_metric=C.GPU_TIME, any_metric=True, collectors=False,
                     options=_NCU_OPTIONS, warm=False, counters=True, nsight_mode=LAUNCH,
                     section_sets=True, l2_flush=FLUSH_KERNEL, tools=_NCU_TOOLS)
NCU_ATTACH = Backend(NCU, "GPU kernel duration and counters (Nsight Compute)", ATTACH,
                     on_gpu=True, duration_metric=C.GPU_TIME, any_metric=True, collectors=True,
                     options=_NCU_OPTIONS, warm=True, counters=True, nsight_mode=ATTACH,
                     section_sets=True, l2_flush=FLUSH_KERNEL, tools=_NCU_TOOLS)
CUPTI_BACKEND = Backend(CUPTI, "GPU kernel duration (CUPTI activity records)", IN_PROCESS,
                        on_gpu=True, duration_metric=C.GPU_TIME, any_metric=False,
                        collectors=True, options=_CUPTI_OPTIONS, warm=True,
                        nsight_mode=CUPTI, l2_flush=FLUSH_REGION,
                        tools=(T.NSIGHT_PYTHON, T.CUPTI_PYTHON), auto_runs=True)
EVENTS_BACKEND = Backend(EVENTS, "wall time between CUDA events on the stream around each region "
                         "(includes launch overhead and inter-kernel gaps)", IN_PROCESS,
                         on_gpu=True, duration_metric=C.EVENTS_TIME, any_metric=False,
                         collectors=False, options=("cache_control",), warm=True,
                         l2_flush=FLUSH_REGION, auto_runs=True)
#: The events backend's manifest key (``backend.host_launch``): per annotation x config the host
#: time from each region's start event to its end event (profiling_worker/backends/events.py).
HOST_LAUNCH = "host_launch"
#: Its records' medians (ns): the host time between the marks, the end mark's own call, and each
#: run's events time less its host time.
HOST_MEDIAN_NS, END_MARK_MEDIAN_NS = "median_ns", "median_end_mark_ns"
EVENTS_LESS_HOST_MEDIAN_NS = "median_events_minus_host_ns"
#: What the cpu backend's durations are, before the thread count (:func:`host_measurement`).
HOST_WALL_CLOCK: Final = "host wall-clock, not GPU"
#: The manifest key (``backend.cpu_threads``) of the torch intra-op threads a cpu job was timed
#: with (the spec's ``cpu_threads``, as torch reported it while timing).
CPU_THREADS: Final = "cpu_threads"
CPU_BACKEND = Backend(CPU, HOST_WALL_CLOCK, IN_PROCESS, on_gpu=False,
                      duration_metric=C.HOST_TIME, any_metric=False, collectors=False,
                      options=(), warm=True, auto_runs=True)

#: Every backend and run mode; the first of a name is its default description.
ALL: tuple[Backend, ...] = (NCU_ATTACH, NCU_LAUNCH, CUPTI_BACKEND, EVENTS_BACKEND, CPU_BACKEND)
#: The spec's ``backend`` choices, in the order the sidebar offers them (ncu is the default).
NAMES: tuple[str, ...] = tuple(dict.fromkeys(b.name for b in ALL))
DEFAULT: Final = NCU
#: Backends that run on a GPU, and those a warm worker can serve in some mode.
GPU_NAMES: tuple[str, ...] = tuple(dict.fromkeys(b.name for b in ALL if b.on_gpu))
WARM_NAMES: tuple[str, ...] = tuple(dict.fromkeys(b.name for b in ALL if b.warm))
#: Backends that can run ``runs: "auto"`` (:attr:`Backend.auto_runs`), in :data:`NAMES` order.
AUTO_NAMES: tuple[str, ...] = tuple(dict.fromkeys(b.name for b in ALL if b.auto_runs))
#: The thermal limits of nsight-python's pauses: used where ``thermal_mode`` is applied.
THERMAL_LIMITS: tuple[str, ...] = ("thermal_wait", "thermal_cont", "thermal_timeout")
#: Why a backend does not use a field (:func:`unused_why`), said after "which": it runs on no
#: GPU (every GPU field), on a GPU (the host's torch threads), it does not apply the run option
#: (or, for the thermal limits, ``thermal_mode``), it records no Nsight Compute sections.
NO_GPU, ON_GPU = "runs on no GPU", "runs on a GPU"
NOT_APPLIED, NO_SECTIONS = "does not apply it", "records no Nsight Compute sections"


def _applies(option: str) -> Callable[[Backend], bool]:
    """Whether a backend applies the run ``option`` (:attr:`Backend.options`)."""
    return lambda backend: option in backend.options


#: The one table of the spec's fields that not every backend uses: field -> (whether a backend
#: uses it, why one that runs on a GPU does not). Every other field is used by every backend.
_USED_BY: dict[str, tuple[Callable[[Backend], bool], str]] = {
    **{o: (_applies(o), NOT_APPLIED) for o in OPTIONS},
    **{t: (_applies("thermal_mode"), NOT_APPLIED) for t in THERMAL_LIMITS},
    "gpu": (lambda b: b.on_gpu, NO_GPU),
    "nvml_interval_ms": (lambda b: b.on_gpu, NO_GPU),
    "section_set": (lambda b: b.section_sets, NO_SECTIONS),
    "cpu_threads": (lambda b: not b.on_gpu, ON_GPU),
}
#: The spec's fields only a backend that runs on a GPU uses: its run options (:data:`OPTIONS`),
#: the thermal limits, the GPU index, the NVML sampler's period (ms) and the Nsight Compute
#: section set. The host backend times on the CPU and never reads them.
GPU_ONLY: tuple[str, ...] = (*OPTIONS, *THERMAL_LIMITS, "gpu", "nvml_interval_ms",
                             "section_set")
#: The spec's fields only the host backend uses: the torch threads it times with.
HOST_ONLY: tuple[str, ...] = ("cpu_threads",)


def said(names: tuple[str, ...], last: str = "and") -> str:
    """Backend names as a sentence's list: ``cupti, events and cpu`` (``last``: "or" for a
    choice)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"
#: An import whose files do not say which backend measured it (nsight-python 1.1 CSVs holding
#: only durations come from ncu or CUPTI alike): nsight-python output from a GPU, durations in
#: GPU time. Its own entry, so that adding a backend changes nothing about it; no job runs on it
#: (not in :data:`ALL`), and the L2 flush is not known (bundle/schema/plausibility.py says so).
IMPORTED_UNKNOWN = Backend(UNKNOWN, "GPU kernel duration (imported nsight-python output; "
                           "Nsight Compute or CUPTI, the files do not tell)", "imported",
                           on_gpu=True, duration_metric=C.GPU_TIME, any_metric=False,
                           collectors=False, options=(), warm=False, tools=(T.NSIGHT_PYTHON,))


def get(name: str | None, mode: str | None = None) -> Backend:
    """The backend ``name`` (None: the default, ncu) in run ``mode`` (None: its first mode).

    Raises:
        KeyError: no backend of that name (and mode); the message lists the names.
    """
    name = name or DEFAULT
    for backend in ALL:
        if backend.name == name and (mode is None or backend.mode == mode):
            return backend
    raise KeyError(f"backend {name!r} (mode {mode}) is not one of {', '.join(NAMES)}")


def find(name: str | None) -> Backend | None:
    """The backend ``name`` in its first mode, None for a name no backend has (an imported
    job's ``unknown``, a typo in a hand-written manifest)."""
    return get(name) if name in NAMES else None


def described(name: str | None) -> Backend:
    """What a bundle's backend ``name`` stands for: its backend (first mode), else
    :data:`IMPORTED_UNKNOWN` (an import's ``unknown``; a name no backend has or None is read
    the same way: nsight-python output from a GPU)."""
    return find(name) or IMPORTED_UNKNOWN


def resolve(name: str | None, nsight_mode: str | None) -> Backend:
    """The variant of backend ``name`` that an environment report entry's ``nsight_mode``
    describes (ncu: launch or attach); its first mode when none matches.

    Raises:
        KeyError: no backend of that name.
    """
    variants = [b for b in ALL if b.name == (name or DEFAULT)]
    return next((b for b in variants if b.nsight_mode == nsight_mode), None) or get(name)


def on_gpu(name: str | None) -> bool:
    """True when the backend ``name`` runs on a GPU; unknown names count as GPU
    (:func:`described`)."""
    return described(name).on_gpu


def unused(name: str | None) -> tuple[str, ...]:
    """The spec fields backend ``name`` (its first mode) never uses, by :data:`_USED_BY`:
    :data:`GPU_ONLY` on the host; on a GPU the host's torch threads, the run options it does
    not apply (:attr:`Backend.options`; the thermal limits with ``thermal_mode``) and the
    section set where it records no sections. The one rule the sidebar form greys out and
    leaves out of a job by, and the worker says ignored. A name no backend has (an import's
    ``unknown``) ran on a GPU with options nobody recorded: :data:`HOST_ONLY`."""
    backend = find(name)
    if backend is None:
        return HOST_ONLY
    return tuple(f for f, (uses, _) in _USED_BY.items() if not uses(backend))


def unused_why(name: str | None, field: str) -> str:
    """Why backend ``name`` does not use ``field`` (one of :func:`unused`), said after
    "which": :data:`NO_GPU` for every field on the host, else the table's reason
    (:data:`ON_GPU`, :data:`NOT_APPLIED`, :data:`NO_SECTIONS`)."""
    return NO_GPU if not on_gpu(name) else _USED_BY[field][1]


def tools(name: str | None) -> tuple[Tool, ...]:
    """The profiling tools whose versions the numbers of backend ``name`` depend on
    (:func:`described`: nsight-python for an import's ``unknown``)."""
    return described(name).tools


def duration_metric(name: str | None) -> str:
    """The duration metric of the backend ``name`` (None: the default, ncu); GPU time for
    unknown names (imports)."""
    return get(name).duration_metric if name is None else described(name).duration_metric


def host_measurement(threads: int | None) -> str:
    """What a cpu job's durations are, with the torch threads it was timed with:
    ``host wall-clock, not GPU, 1 torch thread`` (``threads`` None: a job recorded before the
    worker set and recorded them, said without a count)."""
    return HOST_WALL_CLOCK + (f", {counted(threads, 'torch thread')}" if threads else "")


#: How the worker's advice names the torch threads (the spec's key, for a CLI or YAML user); the
#: app's pages and job panel say the form's label instead (app.core.spec_form.in_form_words).
THREADS_IN_SPEC = "the spec's cpu_threads"
#: How the worker's too-many-threads warning asks for fewer (:data:`THREADS_IN_SPEC`'s rule).
SET_THREADS_IN_SPEC = "set cpu_threads to"

#: What a cpu job's contention warning means and what to do, the same for every job: kept
#: apart from the warning's figures, in the manifest's ``backend.host_contention.advice``
#: (profiling_worker/backends/cpu.py), so the app says it once without cutting text.
CONTENTION_ADVICE = ("the CPUs were oversubscribed, so these host wall-clock times may include "
                     "time spent waiting for a CPU, not only the kernels, however stable they "
                     "look; compare jobs recorded on an idle host, or give the job CPUs of its "
                     f"own (taskset to idle CPUs) and one torch thread ({THREADS_IN_SPEC} "
                     "1, the default)")


def waited_for_cpu(fraction: float, detail: str = "", whose: str = "its") -> str:
    """How long a cpu job's threads waited for a CPU while timing, in words: ``fraction`` is
    the run-queue delay summed over the process's threads over the timing loop's wall time
    (``backend.host_contention.waiting_fraction``, profiling_worker/backends/cpu.py). Summed
    over threads it can exceed 1, so it is said as a multiple of the elapsed time, with why it
    can exceed it: a new user read "116 % of the wall time", and later "0.30 s in 0.23 s", as a
    bug. ``detail``: figures said inside the same parenthesis (:func:`contention_detail`);
    ``whose``: the threads' owner as the sentence names it."""
    return (f"the time {whose} threads waited for a CPU adds up to {fraction:,.2f} x the timing "
            "loop's elapsed time (run-queue delay summed over the threads, so it exceeds the "
            f"elapsed time when several wait at once{': ' + detail if detail else ''})")


def contention_detail(run_delay_ns: float, wall_ns: float, threshold: float, cpus: int) -> str:
    """The figures of a contention warning, in seconds (one unit: "418 ms in 1.98 s" mixed
    them): ``0.30 s of waiting in a 0.23 s loop; warned above 0.10 x; 2 usable CPU(s)``."""
    return (f"{run_delay_ns / 1e9:,.2f} s of waiting in a {wall_ns / 1e9:,.2f} s loop; warned "
            f"above {threshold:.2f} x; {counted(cpus, 'usable CPU')}")


def too_short_to_judge(cpu_ns: float, min_cpu_ns: float, threshold: float) -> str:
    """The contention verdict of a cpu job whose timing loop ran too little CPU time to judge
    (manifest ``backend.host_contention``: ``judged`` false), with the figures in ms: ``too
    short to judge contention: the timing loop ran 3.3 ms of CPU time, under the 10 ms the
    check needs to tell waiting above 0.05 x from one scheduling delay``."""
    return (f"too short to judge contention: the timing loop ran {cpu_ns / 1e6:,.1f} ms of CPU "
            f"time, under the {min_cpu_ns / 1e6:,.0f} ms the check needs to tell waiting above "
            f"{threshold:.2f} x from one scheduling delay")


def contention_text(backend: Mapping[str, Any]) -> str | None:
    """A cpu job's contention warning from the figures of its manifest's ``backend``
    (``host_contention``, and ``host_load.cpus``) as :func:`waited_for_cpu` says it today; the
    warning the worker stored (which an older worker worded otherwise) where a figure is
    missing; None when the job was not warned."""
    figures = backend.get("host_contention") or {}
    warning = figures.get("warning")
    if not warning:
        return None
    values = [figures.get(k) for k in ("waiting_fraction", "run_delay_ns", "wall_ns",
                                       "threshold")]
    cpus = (backend.get("host_load") or {}).get("cpus")
    numbers = [float(v) for v in values if isinstance(v, (int, float))]
    if len(numbers) != len(values) or not isinstance(cpus, int):
        return str(warning)
    fraction, delay, wall, threshold = numbers
    return waited_for_cpu(fraction, contention_detail(delay, wall, threshold, cpus),
                          whose="the job's")

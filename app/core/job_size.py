"""How big a job is before it runs, and when Run should ask before starting it (pure).

A job's size is its runs as the job panel counts them: configs x runs (the most runs for runs
"auto") x kernels; each such run times every region (annotation) of its kernel once. Its time
is estimated without running anything (:func:`estimate`): the Pre-flight of the same spec where
one is done, else app/core/preflight.py's fits with one profiled launch a run (a GPU
backend's lower bound: a region launches at least once), else, on the cpu backend, whose
per-run time depends on the host and the kernel, an assumed :data:`CPU_RUN_S` a run.

Every door that queues a job (the sidebar's Run, ``kernel-sweep``, the agent door) asks first
above :data:`ASK_ABOVE_S` or :data:`ASK_ABOVE_RUNS` (:func:`confirm_text`), as it does for an
identical spec queued seconds ago (app/services/repeat_guard.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.spec import JobSpec

from app.core import numbers, preflight

#: A job expected to take longer than this (s) is asked about: 10 minutes, past what one
#: click is expected to start while the job panel is watched (the form's default job, 3 sizes
#: x 10 runs, takes seconds); Nsight Compute reaches it at about 3,100 runs of one launch.
ASK_ABOVE_S = 600.0
#: A job of more runs than this is asked about whatever its estimate: a cpu job's time is an
#: assumption until a Pre-flight measures it, and 10,000 runs is 300 x the default job (a fresh
#: user's 2,000 sizes x 10 runs, 20,000 runs, was queued silently: issue 37).
ASK_ABOVE_RUNS = 10_000
#: Seconds of one cpu run assumed before a Pre-flight measured one (not measured: stated as
#: assumed wherever it is used).
CPU_RUN_S = 0.01


@dataclass(frozen=True)
class Estimate:
    """A planned job's size: ``runs`` (:func:`job_runs`), ``seconds`` (wall clock, estimated)
    and ``source``, how the seconds were estimated (a phrase: "by its Pre-flight")."""

    runs: int
    seconds: float
    source: str

    def to_json(self) -> dict[str, object]:
        """The estimate for a caller (the agent door): runs, seconds (rounded to 0.1 s),
        source, and the thresholds above which a door asks."""
        return {"runs": self.runs, "seconds": round(self.seconds, 1), "source": self.source,
                "ask_above_s": ASK_ABOVE_S, "ask_above_runs": ASK_ABOVE_RUNS}


def job_runs(spec: JobSpec) -> int:
    """configs x runs (for runs "auto": its most) x kernels of ``spec``."""
    return len(spec.configs) * spec.runs * len(spec.kernels)


def estimate(spec: JobSpec, preflight_s: float | None = None) -> Estimate:
    """The size and time of ``spec`` without running it; ``preflight_s``: the estimate (s) of a
    done Pre-flight of this very spec, which wins where given."""
    runs = job_runs(spec)
    if preflight_s is not None:
        return Estimate(runs, preflight_s, "by its Pre-flight")
    regions = max(1, len(spec.annotations or ()))  # none named: every region, at least 1
    if B.on_gpu(spec.backend):
        seconds = preflight.planned_seconds(spec, runs * regions, 0.0)
        return Estimate(runs, seconds, "at least: the bundled H200 jobs' fit at one launch a "
                        "region; Pre-flight counts them")
    per_run = CPU_RUN_S * len(spec.configs) * len(spec.kernels)  # one run of every config
    return Estimate(runs, preflight.planned_seconds(spec, 0, per_run),
                    f"assumed {CPU_RUN_S * 1e3:g} ms a run, not measured; Pre-flight "
                    "measures it")


def duration_text(seconds: float) -> str:
    """``about 25 min``, ``about 40 s``, ``about 3.2 h``: an estimate's seconds, rounded."""
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def confirm_text(spec: JobSpec, est: Estimate) -> str | None:
    """What a door says before starting a job whose estimate ``est`` (:func:`estimate` of
    ``spec``) is over :data:`ASK_ABOVE_S` seconds or :data:`ASK_ABOVE_RUNS` runs, else None:
    ``This job has 20,000 runs (2,000 configs × 10 runs × 1 kernel), about 3 min on cpu
    (assumed …``."""
    if est.seconds <= ASK_ABOVE_S and est.runs <= ASK_ABOVE_RUNS:
        return None
    most = "at most " if spec.run_target is not None else ""
    return (f"This job has {most}{numbers.counted(est.runs, 'run')} "
            f"({numbers.counted(len(spec.configs), 'config')} × "
            f"{numbers.counted(spec.runs, 'run')} × "
            f"{numbers.counted(len(spec.kernels), 'kernel')}), {duration_text(est.seconds)} on "
            f"{spec.backend} ({est.source}): over {ASK_ABOVE_S / 60:g} min or "
            f"{ASK_ABOVE_RUNS:,} runs.")

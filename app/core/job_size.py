"""How big a job is before it runs, and when Run should ask before starting it (pure).

A job's size is its runs as the job panel counts them: configs x runs (the most runs for runs
"auto") x kernels; each such run times every region (annotation) of its kernel once.
Nsight Compute replays every profiled launch (about 0.19 s a launch on the H200 with a metric
list, app/core/preflight.py's fit), so its bound is far lower than the in-process backends'.
"""

from __future__ import annotations

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.spec import JobSpec

from app.core import numbers

#: Runs above which Run asks to be pressed again: Nsight Compute (about 6 minutes of replay at
#: 0.19 s a launch) and the in-process backends.
ASK_ABOVE_NCU = 2_000
ASK_ABOVE = 100_000


def job_runs(spec: JobSpec) -> int:
    """configs x runs (for runs "auto": its most) x kernels of ``spec``."""
    return len(spec.configs) * spec.runs * len(spec.kernels)


def confirm_text(spec: JobSpec) -> str | None:
    """What Run says before starting a job above :data:`ASK_ABOVE` (or :data:`ASK_ABOVE_NCU`
    on ncu) runs (:func:`job_runs`), else None."""
    runs = job_runs(spec)
    bound = ASK_ABOVE_NCU if spec.backend == B.NCU else ASK_ABOVE
    if runs <= bound:
        return None
    most = "at most " if spec.run_target is not None else ""
    return (f"This job is {most}{numbers.counted(runs, 'run')} "
            f"({numbers.counted(len(spec.configs), 'config')} × "
            f"{numbers.counted(spec.runs, 'run')} × "
            f"{numbers.counted(len(spec.kernels), 'kernel')}), more than the {bound:,} that "
            f"Run starts without asking on {spec.backend}. Press Run again to start it, or "
            "Pre-flight to estimate its time first.")

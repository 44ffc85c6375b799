"""Which two jobs the thermal_mode comparison (Clocks and thermal page) shows: two runs of the
same kernels and configs that differ in thermal_mode, and notes for any other pair picked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.views.compare import JobSummary


def _same_work(a: JobSummary, b: JobSummary) -> bool:
    """Same backend, kernels, annotations and configs (order aside)."""
    return (a.backend == b.backend and set(a.kernels) == set(b.kernels)
            and set(a.configs) == set(b.configs)
            and set(a.annotations or ()) == set(b.annotations or ()))


def thermal_pair(selected: str | None, jobs: Sequence[JobSummary],
                 modes: Mapping[str, str]) -> tuple[str, str] | None:
    """Two jobs of the same work (backend, kernels, annotations, configs) recorded with
    different thermal_mode: the selected job and its most recent such partner when it has one,
    else the most recent such pair; None when no two jobs qualify.

    Args:
        selected: the job the page shows (may be None or not in ``jobs``).
        jobs: the finished jobs, newest first.
        modes: job id -> its spec's thermal_mode (``auto``, ``off``...).
    """
    ordered = sorted(jobs, key=lambda j: j.job_id != selected)  # stable: newest first otherwise
    for a in ordered:
        for b in ordered:
            if modes[a.job_id] != modes[b.job_id] and _same_work(a, b):
                return a.job_id, b.job_id
    return None


def pair_notes(a: JobSummary, b: JobSummary, modes: Mapping[str, str]) -> list[str]:
    """Why the comparison of jobs ``a`` and ``b`` does not show thermal_mode's effect alone
    (empty: same work, different thermal_mode).

    Returns:
        Sentences: the same job twice; both with the same thermal_mode; different kernels,
        annotations or configs.
    """
    if a.job_id == b.job_id:
        return [f"Job A and job B are the same job ({a.job_id}): a job compared with itself."]
    notes = []
    if modes[a.job_id] == modes[b.job_id]:
        notes.append(f"Both jobs ran with thermal_mode {modes[a.job_id]}: their difference "
                     "is not thermal_mode's.")
    if not _same_work(a, b):
        notes.append("The two jobs differ in backend, kernels, annotations or configs, not "
                     "only in thermal_mode: their spread and wall time do not compare "
                     "thermal_mode alone.")
    return notes

"""Where jobs run: one interface, two implementations.

* this host: :class:`~app.services.job_manager.JobManager`, one lane per GPU (and the cpu);
* a cluster: :class:`~app.services.slurm_executor.SlurmExecutor`, a job's configs as a Slurm
  job array through submitit (or submitit's local executor, no Slurm).

Both keep :class:`~app.services.job_model.Job` objects that the job panel draws;
:class:`Executors` puts them side by side so the panel and the pages need not know where a
job runs. No Streamlit here.
"""

from __future__ import annotations

from typing import Protocol

from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus

from app.services.job_model import Job


class Executor(Protocol):
    """What the job panel and the pages need of a place that runs jobs (``submit`` differs:
    a cluster sweep takes its :class:`~app.services.sweep_plan.SweepOptions`)."""

    def snapshot(self) -> list[Job]:
        """Copies of this server's jobs, oldest first."""

    def get(self, job_id: str) -> Job | None:
        """A copy of one job, or None if this executor did not submit it."""

    def active(self) -> bool:
        """True while any job is queued or running."""

    def forget(self, job_id: str) -> bool:
        """Drop an ended job (deleted from History) from the jobs listed; False when none."""

    def cancel(self, job_id: str, reason: str = partial.USER_CANCEL) -> None:
        """Cancel a job (a cluster sweep: its whole array); nothing finished is lost. Its
        workers are told ``reason`` before their signal, and the job records it
        (:data:`~profiling_worker.bundle.schema.partial.CANCEL_REASON_FILE`)."""

    def wait(self, job_id: str, timeout_s: float) -> JobStatus:
        """Block until the job finishes or ``timeout_s`` passes; returns its status."""

    def shutdown(self) -> object:
        """Stop (server exit): host jobs are stopped as Cancel stops them (each keeps what it
        measured), cluster tasks run on. What it returns (the job manager: the ids it ended
        ``interrupted``) is not used through this protocol."""


class Executors:
    """Several executors as one: the jobs of all, each job's calls routed to its own."""

    def __init__(self, *executors: Executor) -> None:
        self.executors = executors

    def snapshot(self) -> list[Job]:
        """Every executor's jobs, oldest first (by submit time)."""
        jobs = [job for ex in self.executors for job in ex.snapshot()]
        return sorted(jobs, key=lambda j: j.submitted_at)

    def get(self, job_id: str) -> Job | None:
        """The job from whichever executor has it."""
        return next((j for ex in self.executors if (j := ex.get(job_id)) is not None), None)

    def active(self) -> bool:
        """True while any executor has a queued or running job."""
        return any(ex.active() for ex in self.executors)

    def forget(self, job_id: str) -> bool:
        """Drop the ended job from every executor that lists it; True when one did."""
        return any([ex.forget(job_id) for ex in self.executors])  # a list: ask each one

    def cancel(self, job_id: str, reason: str = partial.USER_CANCEL) -> None:
        """Cancel the job in the executor that has it, for ``reason``."""
        for ex in self.executors:
            if ex.get(job_id) is not None:
                ex.cancel(job_id, reason)
                return

    def wait(self, job_id: str, timeout_s: float) -> JobStatus:
        """Wait on the executor that has the job.

        Raises:
            KeyError: no executor has it.
        """
        for ex in self.executors:
            if ex.get(job_id) is not None:
                return ex.wait(job_id, timeout_s)
        raise KeyError(job_id)

    def shutdown(self) -> None:
        """Shut every executor down."""
        for ex in self.executors:
            ex.shutdown()

"""The replication verdict of two loaded bundles (the Files page and the agent door): the
worker's judgement (:mod:`profiling_worker.bundle.gate.replication`, TOST after the gate's checks)
on the gate's view of each bundle (:func:`app.core.views.compare.gate_side`), and the jobs that
can be a replica (the same spec)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from profiling_worker.bundle.gate import judge as gate, replication as R
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec

from profiling_worker.bundle.loader import Bundle
from app.core.views.compare import gate_side

#: The Files page's table of a verdict: its columns, in order.
TABLE_COLUMNS = (C.ANNOTATION, gate.CONFIG_LABEL, gate.BASELINE + gate.AVG,
                 gate.CANDIDATE + gate.AVG, gate.DIFF_PCT, R.CI90_LOWER_PCT, R.CI90_UPPER_PCT,
                 R.P_TOST, R.RUNS_TO_DECIDE, R.VERDICT, R.WHY)


def replication(reference: Bundle, replica: Bundle,
                tolerance_pct: float = R.DEFAULT_TOLERANCE_PCT) -> R.ReplicationResult:
    """The verdict on ``replica`` as a re-run of ``reference``.

    Raises:
        ValueError: ``tolerance_pct`` is not a finite number > 0.
    """
    return R.judge_replication(gate_side(reference), gate_side(replica), tolerance_pct)


def verdict_table(result: R.ReplicationResult) -> pd.DataFrame:
    """One row per region x config: the means (reference = Baseline, replica = Candidate, in
    the metric's unit), the difference and its 90 % interval (%), p_TOST, the runs that would
    decide, the verdict and why."""
    return result.rows[[c for c in TABLE_COLUMNS if c in result.rows]]


def spec_hash(manifest: dict[str, Any]) -> str | None:
    """The job's spec hash as the worker recorded it (manifest ``spec_hash``; an import has
    none: it is no replica of anything)."""
    recorded = manifest.get("spec_hash")
    return recorded if isinstance(recorded, str) and recorded else None


def replica_candidates(reference: Bundle, listed: Iterable[Any]) -> list[str]:
    """Job ids of the done jobs (``listed``: result-store entries with ``job_id``, ``status``,
    ``manifest``) that ran the reference's spec, other than the reference itself."""
    own = spec_hash(reference.manifest) if isinstance(reference.spec, JobSpec) else None
    if own is None:
        return []
    return [b.job_id for b in listed if b.job_id != reference.job_id
            and b.status == JobStatus.DONE and spec_hash(b.manifest) == own]

"""One side of a comparison: a bundle's manifest and aggregated table, read without the app."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.loader import TABLE_FORMATS, TableUnreadable, read_table_file
from profiling_worker.bundle.stats.aggregated_repair import KEYS, STATISTICS, complete
from profiling_worker.bundle.schema import backends as B, columns as C, intervals
from profiling_worker.bundle.schema.bundle_spec import (PartialSpec, asked_runs, backend_of,
                                                        manifest_spec)
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.bundle.schema.run_audit import ConfigAudit, config_audits, run_audit
from profiling_worker.bundle.schema.spec import JobSpec


class GateInputError(Exception):
    """A bundle the gate cannot read; ``str()`` names the directory and the fix."""


@dataclass(frozen=True)
class GateSide:
    """Attributes:
        job_id: the bundle directory's name.
        manifest: ``manifest.json`` as a dict (its ``spec`` included).
        aggregated: the ``aggregated`` table (one row per annotation x config x metric),
            restated by :func:`profiling_worker.bundle.schema.intervals.restate`.
        runs, collectors: the ``runs`` and ``collectors`` tables (empty when the bundle has
            none): each run's duration and SM clock, for the cycle check
            (:mod:`profiling_worker.bundle.gate.cycles`).
        more: the tables the run audit reads besides those (:data:`AUDIT_TABLES`: the NVML
            trace, CUPTI launch times, work, a stored ``run_audit``); missing ones left out.
    """

    job_id: str
    manifest: dict[str, Any]
    aggregated: pd.DataFrame = field(repr=False)
    runs: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    collectors: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    more: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def audit(self) -> dict[tuple[str, int], ConfigAudit]:
        """(annotation, config index) -> the validity audit of its runs
        (:mod:`profiling_worker.bundle.schema.run_audit`: the stored table, else derived now)."""
        tables = {C.TABLE_RUNS: self.runs, C.TABLE_COLLECTORS: self.collectors, **self.more}
        return config_audits(run_audit(tables, self.manifest))

    @functools.cached_property
    def spec(self) -> JobSpec | PartialSpec | None:
        """The bundle's spec, typed
        (:func:`~profiling_worker.bundle.schema.bundle_spec.read_spec`)."""
        return manifest_spec(self.manifest)

    @property
    def asked_runs(self) -> int | None:
        """The runs each config should have (:func:`~profiling_worker.bundle.schema.bundle_spec.
        asked_runs`; None: no such count, so fewer runs are no sign of a cut-short job)."""
        return asked_runs(self.manifest, self.spec)

    @property
    def parameters(self) -> tuple[str, ...]:
        """Config parameter names in the spec's first config (e.g. ``("n",)``)."""
        return self.spec.parameter_names if self.spec is not None else ()

    @property
    def duration_metric(self) -> str:
        """``host__time_duration.sum`` for the cpu backend, else ``gpu__time_duration.sum``."""
        return B.duration_metric(backend_of(self.manifest, self.spec) or None)

    @classmethod
    def load(cls, bundle_dir: Path) -> GateSide:
        """Read ``bundle_dir`` (``tables/aggregated.parquet``, else ``.csv``). Statistics
        columns the table lacks (a hand-made bundle) are recomputed from the runs table by the
        worker's method (:func:`profiling_worker.bundle.stats.aggregated_repair.complete`).

        Raises:
            GateInputError: no readable manifest, no readable aggregated table, or one without
                AvgValue, StdDev, NumRuns or a key column that the runs table cannot give
                (named).
        """
        try:
            manifest = read_manifest(bundle_dir)
        except ManifestError as exc:
            raise GateInputError(f"{bundle_dir}: not a result bundle ({exc}); give the "
                                 "directory a job wrote (it holds manifest.json)") from exc
        table = _read_table(bundle_dir, C.TABLE_AGGREGATED)
        if table is None:
            if manifest.get("status") != JobStatus.DONE.value:  # a failed job: no rows
                return cls(bundle_dir.name, manifest, pd.DataFrame())
            raise GateInputError(f"{bundle_dir}: no {C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet "
                                 "or .csv; record the job again")
        params = cls(bundle_dir.name, manifest, table).parameters
        runs, collectors = (_optional_table(bundle_dir, name)
                            for name in (C.TABLE_RUNS, C.TABLE_COLLECTORS))
        if any(column not in table for column in (*KEYS, *params, *STATISTICS)):
            done = complete(table, runs, params)
            lacking = [c for c in NEEDED if c in done.empty] + list(
                done.keys if not done.rebuilt else ())
            if lacking:
                raise GateInputError(
                    f"{bundle_dir}: the {C.TABLE_AGGREGATED} table has no {', '.join(lacking)} "
                    f"column and no {C.TABLE_RUNS} table to recompute it from; add the column "
                    "or record the job again")
            table = done.table
        more = {name: _optional_table(bundle_dir, name) for name in AUDIT_TABLES}
        return cls(bundle_dir.name, manifest, intervals.restate(table), runs, collectors,
                   {name: frame for name, frame in more.items() if not frame.empty})


#: Tables the run audit reads besides the runs and collectors (:attr:`GateSide.more`).
AUDIT_TABLES = (C.TABLE_NVML, C.TABLE_LAUNCH_TIMES, C.TABLE_WORK, C.TABLE_RUN_AUDIT)


#: The columns the gate judges with (a side's mean, spread and count of runs).
NEEDED = (C.AVG, C.STD, C.NUM_RUNS)


def _optional_table(bundle_dir: Path, name: str) -> pd.DataFrame:
    """``tables/<name>``, empty when missing or damaged (only the cycle check and a repair of
    the aggregated table use it; each says when it has nothing)."""
    try:
        table = _read_table(bundle_dir, name)
    except GateInputError:
        table = None
    return pd.DataFrame() if table is None else table


def _read_table(bundle_dir: Path, name: str) -> pd.DataFrame | None:
    """``tables/<name>.parquet``, else ``.csv``; None when the bundle has neither.

    Raises:
        GateInputError: the file is there but cannot be read, or is a link out of the bundle.
    """
    for fmt in TABLE_FORMATS:
        try:
            table = read_table_file(bundle_dir, name, fmt)
        except TableUnreadable as exc:
            raise GateInputError(f"{bundle_dir}: {exc}") from exc
        if table is not None:
            return table
    return None

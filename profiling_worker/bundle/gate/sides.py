"""One side of a comparison: what the gate reads of a loaded bundle (its manifest, aggregated
table and the tables of the cycle check and the run audit), and the gate's policy on a damaged
one, decided from what the one bundle loader recorded."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.loader import Bundle, load_bundle
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.bundle_spec import (PartialSpec, asked_runs, backend_of,
                                                        manifest_spec)
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError
from profiling_worker.bundle.schema.run_audit import (Check, ConfigAudit, config_audits,
                                                     job_evidence, run_audit)
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.bundle.table_problems import Fault, TableProblem
from profiling_worker.bundle.number_text import counted


class GateInputError(Exception):
    """A bundle the gate cannot read; ``str()`` names the directory and the fix."""


@dataclass(frozen=True)
class GateSide:
    """Attributes:
        job_id: the bundle directory's name.
        manifest: ``manifest.json`` as a dict, its ``spec`` the one the loader read (the
            manifest's, else ``spec.json``).
        aggregated: the ``aggregated`` table (one row per annotation x config x metric) as
            the loader gives it: completed, restated by
            :func:`profiling_worker.bundle.schema.intervals.restate`.
        runs, collectors: the ``runs`` and ``collectors`` tables (empty when the bundle has
            none or the file is unreadable): each run's duration and SM clock, for the cycle check
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
    def audit_frame(self) -> pd.DataFrame:
        """The validity audit of every run (:mod:`profiling_worker.bundle.schema.run_audit`:
        the stored table, else derived now)."""
        tables = {C.TABLE_RUNS: self.runs, C.TABLE_COLLECTORS: self.collectors, **self.more}
        return run_audit(tables, self.manifest)

    @functools.cached_property
    def audit(self) -> dict[tuple[str, int], ConfigAudit]:
        """(annotation, config index) -> the validity audit of its runs (:attr:`audit_frame`)."""
        return config_audits(self.audit_frame)

    @property
    def job_evidence(self) -> dict[Check, str]:
        """Each job-wide check that flagged a run -> its evidence, once for the job
        (:func:`~profiling_worker.bundle.schema.run_audit.job_evidence`)."""
        return job_evidence(self.audit_frame)

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
    def label(self) -> str:
        """The job's label as its spec (else its manifest) names it, "" without one: the name
        the gate's report gives the side beside :attr:`job_id`, the folder's."""
        said = getattr(self.spec, "label", "") or self.manifest.get("label") or ""
        return str(said).strip()

    @property
    def parameters(self) -> tuple[str, ...]:
        """Config parameter names in the spec's first config (e.g. ``("n",)``)."""
        return self.spec.parameter_names if self.spec is not None else ()

    @property
    def duration_metric(self) -> str:
        """``host__time_duration.sum`` for the cpu backend, else ``gpu__time_duration.sum``."""
        return B.duration_metric(backend_of(self.manifest, self.spec) or None)

    @classmethod
    def from_bundle(cls, bundle: Bundle, audit_table: pd.DataFrame | None = None) -> GateSide:
        """The gate's side of a loaded bundle (:func:`~profiling_worker.bundle.loader.
        load_bundle`): the one constructor of a side, for ``compare`` and the Compare page alike.

        The manifest carries the spec the loader read (the manifest's, else ``spec.json``); the
        aggregated table is the loader's (statistics it lacked recomputed, text read as numbers,
        restated); the runs, collectors and audit tables are the loader's, except that one whose
        file the loader recorded as unreadable is empty: the cycle check and the audit then say
        they have nothing, as they do for a bundle without it (:data:`BESIDE`; never refused).
        Whether the gate judges the bundle at all is :func:`refusal`'s answer.

        Args:
            bundle: the loaded bundle.
            audit_table: the bundle's run audit (the ``run_audit`` table's columns) when the
                caller keeps one (the app derives it once per loaded bundle); None: the stored
                table, else derived on first use (:attr:`audit`).
        """
        beside = beside_tables(bundle)
        if audit_table is not None:
            beside[C.TABLE_RUN_AUDIT] = audit_table
        more = {name: beside[name] for name in AUDIT_TABLES if not beside[name].empty}
        return cls(bundle.job_id, {**bundle.manifest, "spec": dict(bundle.spec_json)},
                   bundle.table(C.TABLE_AGGREGATED), beside[C.TABLE_RUNS],
                   beside[C.TABLE_COLLECTORS], more)

    @classmethod
    def load(cls, bundle_dir: Path) -> GateSide:
        """Read ``bundle_dir`` with the one bundle loader and judge it by the gate's policy
        (:func:`refusal`): the side of :meth:`from_bundle`.

        Raises:
            GateInputError: no readable manifest, or a bundle :func:`refusal` refuses; the
                message starts with ``bundle_dir`` as given and names the fix.
        """
        try:
            bundle = load_bundle(bundle_dir)
        except ManifestError as exc:
            raise GateInputError(f"{bundle_dir}: not a result bundle ({exc}); give the "
                                 "directory a job wrote (it holds manifest.json)") from exc
        why = refusal(bundle)
        if why is not None:
            raise GateInputError(f"{bundle_dir}: {why}")
        return cls.from_bundle(bundle)


#: Tables the run audit reads besides the runs and collectors (:attr:`GateSide.more`).
AUDIT_TABLES = (C.TABLE_NVML, C.TABLE_LAUNCH_TIMES, C.TABLE_WORK, C.TABLE_RUN_AUDIT)
#: The tables a side holds besides the aggregated one: read for the cycle check, a repair of
#: the aggregated table and the run audit; a damaged one is left empty, never refused.
BESIDE = (C.TABLE_RUNS, C.TABLE_COLLECTORS, *AUDIT_TABLES)


def unread_beside(bundle: Bundle) -> list[TableProblem]:
    """The :data:`BESIDE` tables whose file the loader recorded as UNREADABLE (a CSV beside it
    was read for the pages, when there is one): the ones :func:`beside_tables` leaves empty."""
    return [p for p in bundle.table_problems if p.fault is Fault.UNREADABLE
            and p.table in BESIDE]


def beside_tables(bundle: Bundle) -> dict[str, pd.DataFrame]:
    """The :data:`BESIDE` tables as the gate reads them: the loader's, except that one whose
    file is unreadable (:func:`unread_beside`) is empty, never the CSV beside it (other numbers
    than the file named). The one rule of the gate's cycle check and run audit and of the
    app's run audit (``app.core.views.run_audit``), so the pages audit what CI audits.

    Returns:
        table name -> frame, every name of :data:`BESIDE` (empty: missing or unreadable).
    """
    damaged = {p.table for p in unread_beside(bundle)}
    return {name: pd.DataFrame() if name in damaged else bundle.table(name) for name in BESIDE}


#: The columns the gate judges with (a side's mean, spread and count of runs).
NEEDED = (C.AVG, C.STD, C.NUM_RUNS)


def refusal(bundle: Bundle) -> str | None:
    """Why the gate does not judge ``bundle`` (None: it does), from the problems the loader
    recorded (:attr:`~profiling_worker.bundle.loader.Bundle.table_problems`) and the tables it
    found (:attr:`~profiling_worker.bundle.loader.Bundle.sources`); no file is read again.

    ==========================================  ===============================================
    recorded by the loader                      the gate
    ==========================================  ===============================================
    an aggregated file UNREADABLE (the CSV      refused: a verdict on the CSV would judge other
    beside it read for the pages)               numbers than the file named
    no aggregated file (not in ``sources``),    refused ("record the job again"); a failed or
    the job done                                cancelled job: judged with no rows
    aggregated NO_KEYS, or NO_COLUMN of         refused, naming the columns
    :data:`NEEDED`
    aggregated TEXT_IN_NUMBERS in               refused, naming the file, column and cells
    :data:`NEEDED` or Config, cells lost        (numbers written as text, none lost: judged)
    any problem of a :data:`BESIDE` table       judged; an UNREADABLE one left empty
                                                (:meth:`GateSide.from_bundle`)
    ==========================================  ===============================================
    """
    mine = [p for p in bundle.table_problems if p.table == C.TABLE_AGGREGATED]
    for rule in (_unreadable, _absent, _lacking, _text):
        why = rule(bundle, mine)
        if why is not None:
            return why
    return None


def _unreadable(bundle: Bundle, mine: list[TableProblem]) -> str | None:
    bad = [p for p in mine if p.fault is Fault.UNREADABLE]
    return None if not bad else (f"{bad[0].sentence}; the gate judges no other file in its "
                                 "place: restore it from the job's artifacts or record the "
                                 "job again")


def _absent(bundle: Bundle, mine: list[TableProblem]) -> str | None:
    if C.TABLE_AGGREGATED in bundle.sources or bundle.status is not JobStatus.DONE:
        return None  # a failed or cancelled job: judged with no rows
    return f"no {C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet or .csv; record the job again"


def _lacking(bundle: Bundle, mine: list[TableProblem]) -> str | None:
    empty = {c for p in mine if p.fault is Fault.NO_COLUMN for c in p.columns}
    lacking = [c for c in NEEDED if c in empty] + [
        c for p in mine if p.fault is Fault.NO_KEYS for c in p.columns]
    return None if not lacking else (
        f"the {C.TABLE_AGGREGATED} table has no {', '.join(lacking)} column and no "
        f"{C.TABLE_RUNS} table to recompute it from; add the column or record the job again")


def _text(bundle: Bundle, mine: list[TableProblem]) -> str | None:
    lost = [p for p in mine if p.fault is Fault.TEXT_IN_NUMBERS and p.cells
            and set(p.columns) & {*NEEDED, C.CONFIG}]
    return None if not lost else "; ".join(
        f"{p.file}: column {', '.join(p.columns)} holds {counted(p.cells, 'cell')} with no number"
        for p in lost) + ("; the gate judges with it: write the numbers there or record the "
                          "job again")

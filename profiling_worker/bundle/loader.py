"""Load one result bundle directory into a :class:`Bundle` (pure: pandas + pyarrow, no Streamlit).

A bundle is the directory a job writes (see ``profiling_worker.bundle.schema.columns``):
``manifest.json``, ``spec.json``, ``events.jsonl``, ``worker.log``, ``tables/<name>.parquet``
(and ``.csv`` in a bundle written before issue 40) and ``nsight/``. Missing tables load as
empty frames, so a failed or cancelled job still opens and every view can say "no data"
instead of raising; a damaged table is read as far as it can be and recorded
(:mod:`profiling_worker.bundle.table_problems`). The one loader of the pages, the HTML
report, the agent door and the regression gate, which judges from the record whether it can
judge the bundle (:func:`profiling_worker.bundle.gate.sides.refusal`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from pandas.api.types import is_numeric_dtype

from profiling_worker.bundle.paths import OutsideBundle, bundle_file, inside_bundle
from profiling_worker.bundle.stats.aggregated_repair import complete
from profiling_worker.bundle.schema import backends as B, columns, intervals
from profiling_worker.bundle.schema.manifest import (RESULT_READY_KEY, JobStatus, ManifestError,
                                                     job_gpu_index, read_manifest)
from profiling_worker.bundle.schema.plausibility import Note, manifest_notes
from profiling_worker.bundle.schema.spec import JobSpec

from profiling_worker.bundle import repair_notes
from profiling_worker.bundle.schema.bundle_spec import PartialSpec, read_spec
from profiling_worker.bundle.table_problems import Fault, TableProblem
from profiling_worker.bundle.number_text import counted

_LOG = logging.getLogger(__name__)
_Read = TypeVar("_Read")

HOST_TIMER_NOTE = B.HOST_WALL_CLOCK


@dataclass(frozen=True)
class BundleFile:
    """One file of a bundle: ``relpath`` (POSIX, relative to the bundle), ``size`` in bytes."""

    relpath: str
    size: int


@dataclass(frozen=True)
class Bundle:
    """A loaded bundle.

    Attributes:
        path: the bundle directory.
        manifest: ``manifest.json`` as a dict.
        spec: the typed job spec (manifest ``spec``, else ``spec.json``): a
            :class:`~profiling_worker.bundle.schema.spec.JobSpec`, the
            :class:`~profiling_worker.bundle.schema.bundle_spec.PartialSpec` of an import whose
            files do not make one (backend unknown), or None without a spec
            (:func:`profiling_worker.bundle.schema.bundle_spec.read_spec`).
        spec_json: the JSON object :attr:`spec` was read from, as the bundle holds it (the
            manifest's ``spec``, else ``spec.json``; ``{}`` without either).
        tables: table name -> DataFrame for every name in ``columns.TABLES`` (empty if absent).
        files: every regular file under the directory, sorted by path.
        table_problems: what was wrong with the tables, one record per file and fault
            (:class:`~profiling_worker.bundle.table_problems.TableProblem`: a file there but
            unreadable, text in a column of numbers, aggregated columns nothing gives); their
            sentences are :attr:`problems`.
        sources: table name -> the file its rows were read from, relative to the bundle
            (``tables/aggregated.csv`` where the Parquet file was unreadable); a table with no
            readable file is not in it.
        recomputed: aggregated columns the files lack that were recomputed from the runs
            table or the other columns (:mod:`profiling_worker.bundle.stats.aggregated_repair`),
            one sentence each (shown on every page).
        restated: CI95 lower bounds of an older bundle shown cut at 0 (the files keep them):
            a fact about the files, told in a caption under a table that shows those bounds,
            not on every page (a new user read it as the first thing on time-only pages).
        restated_metrics: the metrics whose CI95 lower bounds ``restated`` is about.
        notes: plausibility notes (``profiling_worker.bundle.schema.plausibility``): the manifest's,
            or computed at load time for bundles recorded before notes existed.
        unwritten: the tables of :data:`columns.TABLES` that a bundle whose worker said its
            result ready (manifest ``result_ready``: runs and aggregated written) does not hold:
            :attr:`pending` while its job runs, :attr:`missing` once it ended without them
            (a worker that died between its two manifest writes); () for any other bundle.
    """

    path: Path
    manifest: dict[str, Any]
    spec: JobSpec | PartialSpec | None
    tables: dict[str, pd.DataFrame] = field(repr=False)
    spec_json: Mapping[str, Any] = field(default_factory=dict, repr=False)
    files: tuple[BundleFile, ...] = ()
    table_problems: tuple[TableProblem, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    recomputed: tuple[str, ...] = ()
    restated: tuple[str, ...] = ()
    restated_metrics: tuple[str, ...] = ()
    unwritten: tuple[str, ...] = ()

    @property
    def job_id(self) -> str:
        """The directory name (what the store and the URL use)."""
        return self.path.name

    @property
    def problems(self) -> tuple[str, ...]:
        """One sentence per damaged part (:attr:`table_problems`), shown on every page."""
        return tuple(p.sentence for p in self.table_problems)

    @property
    def result_ready(self) -> str | None:
        """When the worker had written the runs and aggregated tables (ISO time, UTC; manifest
        ``result_ready``), None where it did not say (a bundle written before issue 40's
        contract, an import, a job that ended before)."""
        ready = self.manifest.get(RESULT_READY_KEY)
        return ready if isinstance(ready, str) else None

    @property
    def pending(self) -> tuple[str, ...]:
        """Tables still to come: a running job whose result is ready (:attr:`unwritten`)."""
        return () if self.status.finished else self.unwritten

    @property
    def missing(self) -> tuple[str, ...]:
        """Tables a job whose result was ready ended without (:attr:`unwritten`)."""
        return self.unwritten if self.status.finished else ()

    @property
    def status(self) -> JobStatus:
        """The manifest's status (``read_manifest`` refuses an unknown one)."""
        return JobStatus(self.manifest.get("status"))

    @property
    def backend(self) -> str:
        """``ncu``, ``cupti``, ``cpu`` or ``unknown`` (an import whose files do not say; manifest
        backend name, else the spec's)."""
        backend = self.manifest.get("backend") or {}
        return str(backend.get("name") or (self.spec.backend if self.spec else ""))

    @property
    def host_timer(self) -> bool:
        """True for the cpu backend: durations are host wall-clock, not GPU kernel time."""
        return not B.on_gpu(self.backend)

    @property
    def duration_metric(self) -> str:
        """The backend's duration metric (ns): ``gpu__time_duration.sum`` (ncu, CUPTI, imports),
        ``host__time_duration.sum`` (cpu), ``events__time_duration.sum`` (events)."""
        return B.duration_metric(self.backend or None)

    @property
    def measurement(self) -> str:
        """What the duration measures, in words (from the manifest when it says; a cpu job
        with its torch threads, :attr:`cpu_threads`)."""
        backend = self.manifest.get("backend") or {}
        if backend.get("measurement"):
            return str(backend["measurement"])
        return B.host_measurement(self.cpu_threads) if self.host_timer else "GPU kernel duration"

    @property
    def cpu_threads(self) -> int | None:
        """A cpu job's torch threads: as the worker recorded them while timing (manifest
        ``backend.cpu_threads``), else as its spec asks (a job not yet run); None for a GPU
        job and for a cpu job recorded before the worker set them (torch's default then, one
        per CPU unless OMP_NUM_THREADS said otherwise: not known here)."""
        if not self.host_timer:
            return None
        recorded = (self.manifest.get("backend") or {}).get(B.CPU_THREADS)
        asked = self.spec_json.get(B.CPU_THREADS)
        said = recorded if recorded is not None else asked
        return said if isinstance(said, int) and not isinstance(said, bool) else None

    @property
    def parameters(self) -> tuple[str, ...]:
        """Config parameter names, in the order of the first config (e.g. ``("n",)``)."""
        return self.spec.parameter_names if self.spec else ()

    @property
    def job_spec(self) -> JobSpec | None:
        """The spec with its options (cache_control, clock_control, thermal, gpu...); None for
        an import whose files do not tell them
        (:class:`~profiling_worker.bundle.schema.bundle_spec.PartialSpec`)."""
        return self.spec if isinstance(self.spec, JobSpec) else None

    @property
    def gpu_index(self) -> int:
        """NVML index of the job's GPU in the manifest's ``environment["gpus"]``
        (:func:`~profiling_worker.bundle.schema.manifest.job_gpu_index`)."""
        return job_gpu_index(self.manifest, self.job_spec.gpu if self.job_spec else None)

    @property
    def error(self) -> dict[str, Any] | None:
        """The manifest's error dict (kind, message, hint, log_tail) of a failed job."""
        err = self.manifest.get("error")
        return err if isinstance(err, dict) else None

    def table(self, name: str) -> pd.DataFrame:
        """One table by name; an empty frame for an unknown or missing one."""
        return self.tables.get(name, pd.DataFrame())


class TableUnreadable(ValueError):
    """A table file that is there but cannot be read (corrupt, truncated, not Parquet) or that
    leads out of the bundle; ``str()`` names the file (relative to the bundle) and the cause."""


#: A table's files in the order they are read: Parquet, else the CSV beside it (written by the
#: writer before issue 40; a newer bundle has none: its CSV is made on download).
TABLE_FORMATS = ("parquet", "csv")
_READERS: dict[str, Callable[[Path], pd.DataFrame]] = {"parquet": pd.read_parquet,
                                                        "csv": pd.read_csv}


def read_table_file(bundle_dir: str | os.PathLike[str], name: str, fmt: str = "parquet"
                    ) -> pd.DataFrame | None:
    """``tables/<name>.<fmt>`` of a bundle as written (``fmt``: ``parquet`` or ``csv``); None when
    the bundle has no such file. The one read of a table file: :func:`read_table` (the pages and
    the gate, through :func:`load_bundle`), the timeline and
    :func:`~profiling_worker.bundle.writer.finish_bundle` all go through it, through
    :func:`~profiling_worker.bundle.paths.bundle_file`.

    Raises:
        TableUnreadable: the file cannot be parsed, or is a link out of the bundle.
    """
    return _read_table_path(bundle_dir, table_relpath(name, fmt), _READERS[fmt])


def table_rows(bundle_dir: str | os.PathLike[str], name: str) -> int | None:
    """The row count of ``tables/<name>.parquet`` from its footer (its metadata, a few kB: no
    column is read); None when the bundle has no such file.

    Raises:
        TableUnreadable: the footer cannot be read (not Parquet, cut short), or the file is a
            link out of the bundle.
    """
    import pyarrow.parquet as pq

    return _read_table_path(bundle_dir, table_relpath(name, "parquet"),
                            lambda path: int(pq.read_metadata(path).num_rows))


def _read_table_path(bundle_dir: str | os.PathLike[str], rel: str,
                     read: Callable[[Path], _Read]) -> _Read | None:
    """``read`` of the bundle file ``rel``; None when there is no such file."""
    # a cause's text holds the server's path (pyarrow's "Could not open ... '/srv/...'", a
    # link's target): the log keeps it, the message (shown on pages) names the table only
    try:
        path = bundle_file(bundle_dir, rel)
        return read(path)
    except FileNotFoundError:
        return None
    except OutsideBundle as exc:
        _LOG.warning("%s", exc)
        raise TableUnreadable(f"{rel} leads out of the bundle or is not a regular file: "
                              "not read") from exc
    except Exception as exc:  # pyarrow, pandas and OS errors alike
        _LOG.warning("%s cannot be read: %s", path, exc)
        cause = str(exc).replace(str(path), rel)
        raise TableUnreadable(f"{rel} cannot be read ({type(exc).__name__}: "
                              f"{cause[:200]})") from exc


def table_relpath(name: str, fmt: str) -> str:
    """``tables/<name>.<fmt>``: where a bundle keeps a table, relative to the bundle."""
    return f"{columns.TABLES_DIR}/{name}.{fmt}"


def read_table(bundle_dir: Path, name: str, problems: list[TableProblem] | None = None
               ) -> pd.DataFrame:
    """``tables/<name>.parquet``, else ``tables/<name>.csv``, else an empty frame.

    A file that cannot be parsed (corrupt, truncated) is skipped for the next choice and
    recorded in ``problems`` (never raised: one broken table must not take the pages down).
    """
    return _first_readable(bundle_dir, name, problems)[0]


def _first_readable(bundle_dir: Path, name: str, problems: list[TableProblem] | None
                    ) -> tuple[pd.DataFrame, str | None]:
    """:func:`read_table`, and the file read (None: none there or none readable)."""
    for fmt in TABLE_FORMATS:
        rel = table_relpath(name, fmt)
        try:
            table = read_table_file(bundle_dir, name, fmt)
        except TableUnreadable as exc:
            if problems is not None:
                problems.append(TableProblem(Fault.UNREADABLE, name, rel, str(exc)))
            continue
        if table is not None:
            return _numbers_as_numbers(table, name, rel, problems), rel
    return pd.DataFrame(), None


def _numbers_as_numbers(table: pd.DataFrame, name: str, rel: str,
                        problems: list[TableProblem] | None) -> pd.DataFrame:
    """Columns of :data:`columns.NUMERIC` that a damaged or hand-edited file holds as text,
    read as numbers (a cell that is no number: empty), each recorded in ``problems``: the pages
    compute with them, and one text column must not take every page down. A column without
    text cells (all empty, as an empty table's may be stored) is read as numbers without a word."""
    for col in [c for c in columns.NUMERIC if c in table and not is_numeric_dtype(table[c])]:
        numbers = pd.to_numeric(table[col], errors="coerce")
        lost = int(numbers.isna().sum() - table[col].isna().sum())
        text = any(isinstance(v, str) for v in table[col])
        table = table.assign(**{col: numbers})
        if problems is not None and text:
            problems.append(TableProblem(
                Fault.TEXT_IN_NUMBERS, name, rel,
                f"{rel}: column {col} holds text, read as numbers"
                + (f" ({counted(lost, 'cell')} with no number left empty)" if lost else ""),
                (col,), lost))
    return table


def list_files(bundle_dir: Path) -> tuple[BundleFile, ...]:
    """Every regular file below ``bundle_dir`` (hidden temp files and symlinks skipped)."""
    out = []
    for path in sorted(bundle_dir.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name.startswith("."):
            continue
        out.append(BundleFile(path.relative_to(bundle_dir).as_posix(), path.stat().st_size))
    return tuple(out)


def load_bundle(bundle_dir: str | Path) -> Bundle:
    """Read a bundle directory. The aggregated table of a bundle written before the one interval
    method is restated by it (:func:`profiling_worker.bundle.schema.intervals.restate`: CI95 lower
    bounds of non-negative quantities cut at 0, one run never stable); the files keep what was
    written, and the pages say what was cut (``recomputed``). The current worker writes the cut
    bounds and (since issue 34) names the method in the manifest (``ci95_method``).

    Raises:
        ManifestError: no readable ``manifest.json`` (not a bundle), or a manifest without a
            spec beside a ``spec.json`` that is not JSON.
    """
    path = Path(bundle_dir).resolve()
    manifest = read_manifest(path)
    raw_spec = manifest.get("spec")
    if not isinstance(raw_spec, dict):
        raw_spec = _spec_file(path)
    problems: list[TableProblem] = []
    tables, sources = {}, {}
    for name in (*columns.TABLES, *columns.OPTIONAL_TABLES):
        tables[name], source = _first_readable(path, name, problems)
        if source is not None:
            sources[name] = source
    spec = read_spec(raw_spec)
    completed = complete(tables[columns.TABLE_AGGREGATED], tables[columns.TABLE_RUNS],
                         spec.parameter_names if spec else None)
    problems += repair_notes.empty_problems(completed, sources.get(columns.TABLE_AGGREGATED, ""))
    # Bundles written before the one interval method: the pages show its intervals.
    tables[columns.TABLE_AGGREGATED] = intervals.with_ci95_half_pct(
        intervals.restate(completed.table))
    restated = repair_notes.restated_sentences(completed.table,
                                                    tables[columns.TABLE_AGGREGATED])
    return Bundle(path=path, manifest=manifest, spec=spec, tables=tables, spec_json=raw_spec,
                  files=list_files(path), table_problems=tuple(problems), sources=sources,
                  recomputed=repair_notes.recomputed_sentences(completed),
                  restated=restated,
                  restated_metrics=repair_notes.cut_metrics(completed.table,
                                                            tables[columns.TABLE_AGGREGATED]),
                  notes=tuple(manifest_notes(tables, {**manifest, "spec": raw_spec})),
                  unwritten=_unwritten(manifest, sources))


def _unwritten(manifest: Mapping[str, Any], sources: Mapping[str, str]) -> tuple[str, ...]:
    """:attr:`Bundle.unwritten`: the tables of :data:`columns.TABLES` without a file, in a
    bundle whose manifest says its result was ready; () in any other."""
    if not isinstance(manifest.get(RESULT_READY_KEY), str):
        return ()
    return tuple(name for name in columns.TABLES if name not in sources)


def _spec_file(path: Path) -> dict[str, Any]:
    """``spec.json`` of a bundle whose manifest holds no spec; ``{}`` without one.

    Raises:
        ManifestError: the file is there but is no JSON object (read as the manifest's own
            spec would be: the bundle cannot say what was asked).
    """
    spec_file = inside_bundle(path, columns.SPEC_FILE)
    if spec_file is None:
        return {}
    try:
        raw = json.loads(spec_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path.name}: {columns.SPEC_FILE} is not valid JSON ({exc})") from exc
    return raw if isinstance(raw, dict) else {}

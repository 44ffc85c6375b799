"""Import plain nsight-python output (made anywhere) as a result bundle.

nsight-python with ``output_csv=True`` writes, per decorated call ``<fn>-<id>``:

``profiled_data-<fn>-<id>.csv``   one row per annotation x config x run x metric:
    ``Annotation, Value, Metric, Kernel, GPU, Host, ComputeClock, MemoryClock, [Unit],
    [<collector columns>], <config parameters>`` (0.9.x has no ``Unit``; collectors are 1.1+).
``processed_data-<fn>-<id>.csv``  the aggregated ``to_dataframe()`` rows:
    ``Annotation, Metric, <config parameters>, AvgValue, StdDev, MinValue, MaxValue, NumRuns,
    Kernel, GPU, Host, ComputeClock, MemoryClock, [Unit], ..., CI95_Lower, CI95_Upper,
    RelativeStdDevPct, StableMeasurement, Normalized, [NormalizationValue], Geomean``
``ncu-output-<fn>-<id>.ncu-rep`` / ``.log``  Nsight Compute's report and log (ncu backend only).

(research/nsight-python.md §1.9-1.10; checked against the H200 0.9.6 files in
shared/reference/h200-nsight-0.9.6-matmul/.)

:func:`import_nsight_output` turns such files into a bundle directory (layout in
:mod:`profiling_worker.schema.columns`): ``tables/runs`` from the per-run rows,
``tables/aggregated`` recomputed from them with :func:`~profiling_worker.extract.aggregate.
aggregate_runs` (Student-t CI, median, kernel counts) or, for a call whose per-run CSV is
missing, taken from ``processed_data`` as nsight-python wrote it; empty ``launches``, ``work`` and
``nvml_trace`` tables; the original files under ``nsight/``; ``spec.json`` reconstructed as far as
the files allow; ``manifest.json`` last.

Files are parsed with the :mod:`csv` module as text (never pickle or eval). Anything malformed
raises :class:`ImportFailed` naming the file and the problem.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle_writer import empty_table, table_columns, write_table
from profiling_worker.extract.aggregate import RULE_SINGLE, aggregate_runs, launches_to_runs
from profiling_worker import import_report as R
from profiling_worker.schema import columns as C
from profiling_worker.schema.manifest import JobStatus, write_manifest
from profiling_worker.schema.spec import SpecInvalid, validate_spec

#: nsight-python's fixed columns of the per-run CSV (every other column is a config parameter
#: or, in 1.1+, an info-collector value).
NSIGHT_RAW_FIXED = ("Annotation", "Value", "Metric", "Kernel", "GPU", "Host", "ComputeClock",
                    "MemoryClock", "Unit")
#: Columns of the aggregated CSV that are not config parameters (besides collector stats).
NSIGHT_AGG_FIXED = ("Annotation", "Metric", "AvgValue", "StdDev", "MinValue", "MaxValue",
                    "NumRuns", "Kernel", "GPU", "Host", "ComputeClock", "MemoryClock", "Unit",
                    "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement",
                    "Normalized", "NormalizationValue", "Geomean")
#: CombineRule of imported runs whose value nsight-python had already combined from several
#: kernels with the user's ``combine_kernel_metrics`` (the function is not recorded).
RULE_NSIGHT_COMBINED = "combined by nsight-python (combine_kernel_metrics)"

MAX_FILE_BYTES = 2 * 1024**3
_JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_TAG_RE = re.compile(r"^(?:profiled|processed)_data-(?P<tag>.+)\.csv$")
_INT_RE = re.compile(r"^[+-]?\d+$")
_NA_STRINGS = frozenset({"", "nan", "NaN", "NAN", "<NA>", "None", "null", "NULL", "NA", "N/A"})
_METRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")


class ImportFailed(Exception):
    """The sources cannot be imported. ``message`` names the file and the problem, ``hint``
    says what to do. Same fields as the worker's errors (``kind``, ``to_event_fields``)."""

    kind = "import_failed"

    def __init__(self, message: str, hint: str = ""):
        super().__init__(f"{message} ({hint})" if hint else message)
        self.message = message
        self.hint = hint

    def to_event_fields(self) -> dict[str, Any]:
        """The fields of an ``error`` event: kind, message, hint."""
        return {"kind": self.kind, "message": self.message, "hint": self.hint}


_HINT_CSV = ("give the profiled_data-*.csv / processed_data-*.csv files nsight-python writes "
             "with output_csv=True, unmodified")


# --- reading ---------------------------------------------------------------------------------

@dataclass
class _Csv:
    path: Path
    kind: str  # "raw" (profiled_data) or "agg" (processed_data)
    tag: str
    header: list[str]
    rows: list[list[str]]
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    params: list[str] = field(default_factory=list)


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file exists and is readable") from exc
    if size == 0:
        raise ImportFailed(f"{path.name}: the file is empty", _HINT_CSV)
    if size > MAX_FILE_BYTES:
        raise ImportFailed(f"{path.name}: {size / 1024**3:.1f} GiB is larger than the "
                           f"{MAX_FILE_BYTES // 1024**3} GiB an import accepts",
                           "split the job, or import the processed_data CSV only")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file is readable") from exc
    if b"\x00" in data:
        raise ImportFailed(f"{path.name}: contains NUL bytes, so it is not a CSV text file",
                           _HINT_CSV)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path.name}: is not UTF-8 text (byte {exc.start})", _HINT_CSV) from exc


def _parse_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    text = _read_text(path)
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ImportFailed(f"{path.name}: not valid CSV ({exc})", _HINT_CSV) from exc
    records = [r for r in records if r and any(f.strip() for f in r)]
    if not records:
        raise ImportFailed(f"{path.name}: holds no CSV header", _HINT_CSV)
    header = [h.strip() for h in records[0]]
    if any(not h for h in header):
        raise ImportFailed(f"{path.name}: the header has an empty column name", _HINT_CSV)
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise ImportFailed(f"{path.name}: duplicate column(s) {', '.join(dups)}", _HINT_CSV)
    rows = records[1:]
    for i, r in enumerate(rows, start=2):
        if len(r) != len(header):
            raise ImportFailed(
                f"{path.name}: data row {i} has {len(r)} fields, the header has {len(header)}",
                "the file looks truncated or edited; export it again from nsight-python")
    if not rows:
        raise ImportFailed(f"{path.name}: has a header but no data rows",
                           "the profiled call produced no results; check its ncu log")
    return header, rows


def _classify(path: Path, header: list[str]) -> str:
    if "AvgValue" in header:
        return "agg"
    if "Value" in header:
        return "raw"
    raise ImportFailed(
        f"{path.name}: columns {_short(header)} are neither nsight-python's per-run table "
        "(Annotation, Value, Metric, ...) nor its aggregated table (Annotation, Metric, AvgValue, "
        "...)", _HINT_CSV)


def _short(names: Sequence[str], limit: int = 8) -> str:
    shown = [repr(n[:40]) for n in names[:limit]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > limit else "") + "]"


def _tag(path: Path) -> str:
    m = _TAG_RE.match(path.name)
    return m.group("tag") if m else path.stem


def _expand(sources: Sequence[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """CSV files, other nsight files (.ncu-rep, .log) and ignored files among the sources."""
    csvs: list[Path] = []
    extra: list[Path] = []
    ignored: list[Path] = []

    def natural(p: Path):
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]

    for src in sources:
        src = Path(src)
        if src.is_dir():
            children = sorted((p for p in src.iterdir() if p.is_file()), key=natural)
            for p in children:
                if _TAG_RE.match(p.name):
                    csvs.append(p)
                elif p.suffix in (".ncu-rep", ".log") or R.is_report(p):
                    extra.append(p)
                else:
                    ignored.append(p)
        elif src.is_file():
            if src.suffix.lower() == ".csv":
                csvs.append(src)
            elif src.suffix in (".ncu-rep", ".log") or R.is_report(src):
                extra.append(src)
            else:
                raise ImportFailed(f"{src.name}: not a file nsight-python writes",
                                   "give .csv files, a .ncu-rep, an ncu log, or their folder")
        else:
            raise ImportFailed(f"{src.name}: no such file or folder",
                               "check the path of the nsight-python output")
    return csvs, extra, ignored


# --- typing the string columns ---------------------------------------------------------------

def _floats(values: pd.Series, path: Path, column: str, finite: bool = True) -> pd.Series:
    s = values.astype(str).str.strip()
    na = s.isin(_NA_STRINGS)
    num = pd.to_numeric(s.where(~na, None), errors="coerce")
    bad = num.isna() & ~na
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column}, data row {i + 2}: "
                           f"{s.iloc[i][:40]!r} is not a number", _HINT_CSV)
    num = num.astype("float64")
    if finite and np.isinf(num.to_numpy()).any():
        i = int(np.flatnonzero(np.isinf(num.to_numpy()))[0])
        raise ImportFailed(f"{path.name}: column {column}, data row {i + 2}: "
                           f"{s.iloc[i][:40]!r} is not a finite number", _HINT_CSV)
    return num


def _bools(values: pd.Series) -> pd.Series:
    s = values.astype(str).str.strip().str.lower()
    return s.isin({"true", "1", "1.0", "yes"})


def _typed_param(values: pd.Series) -> pd.Series:
    """int64 when every value is a whole number that fits, else finite float64, else str."""
    s = values.astype(str).str.strip()
    if len(s) and s.str.match(_INT_RE).all():
        try:
            ints = [int(v) for v in s]
            if all(-(2**63) <= v < 2**63 for v in ints):
                return pd.Series(ints, index=s.index, dtype="int64")
        except ValueError:
            pass
    num = pd.to_numeric(s, errors="coerce")
    if len(s) and num.notna().all() and np.isfinite(num.to_numpy(dtype="float64")).all():
        return num.astype("float64")
    return s.astype(object)


def _text(values: pd.Series, path: Path, column: str, required: bool) -> pd.Series:
    s = values.astype(str).str.strip()
    if required and (s == "").any():
        i = int(np.flatnonzero((s == "").to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column} is empty in data row {i + 2}",
                           _HINT_CSV)
    return s.astype(object)


def _units(frame: pd.DataFrame) -> pd.Series:
    """The Unit column; for 0.9.x files (no Unit) the obvious units are inferred:
    ns for ``*__time_duration*``, % for ``*pct*`` metrics; otherwise None."""
    if "Unit" in frame.columns:
        u = frame["Unit"].astype(str).str.strip()
        u = u.where(~u.isin(_NA_STRINGS), None)
    else:
        u = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    metric = frame["Metric"].astype(str)
    inferred = np.where(metric.str.contains("__time_duration", regex=False), "ns",
                        np.where(metric.str.contains(r"\.pct", regex=True), "%", None))
    return u.where(u.notna(), pd.Series(inferred, index=frame.index, dtype=object))


def _kernels(frame: pd.DataFrame) -> pd.Series:
    """Kernels combined into one nsight-python row: its ``Kernel`` names joined by ``|``."""
    if "Kernel" not in frame.columns:
        return pd.Series(1, index=frame.index, dtype="int64")
    k = frame["Kernel"].astype(str)
    return (k.str.count(r"\|") + 1).astype("int64")


# --- the import ------------------------------------------------------------------------------

def _param_columns(item: _Csv, agg_params: dict[str, list[str]],
                   param_names: Sequence[str] | None) -> list[str]:
    header = item.header
    if param_names is not None:
        missing = [p for p in param_names if p not in header]
        if missing:
            raise ImportFailed(f"{item.path.name}: no column for parameter(s) {', '.join(missing)}",
                               f"the file has columns {_short(header)}")
        return list(param_names)
    if item.kind == "agg":
        i_metric = header.index("Metric") if "Metric" in header else -1
        i_avg = header.index("AvgValue")
        if i_metric < 0 or i_metric > i_avg:
            raise ImportFailed(f"{item.path.name}: expected the parameters between Metric and "
                               "AvgValue", _HINT_CSV)
        return [h for h in header[i_metric + 1:i_avg] if h not in NSIGHT_AGG_FIXED]
    # Per-run table: the aggregated table of the same call names the parameters exactly.
    for cand in (agg_params.get(item.tag), *agg_params.values()):
        if cand is not None and all(p in header for p in cand):
            return list(cand)
    last_fixed = max(i for i, h in enumerate(header) if h in NSIGHT_RAW_FIXED)
    return [h for h in header[last_fixed + 1:] if h not in NSIGHT_RAW_FIXED]


def _check_params(item: _Csv) -> None:
    clash = [p for p in item.params if p in C.RESERVED]
    if clash:
        raise ImportFailed(f"{item.path.name}: config parameter column(s) {', '.join(clash)} "
                           "clash with the dashboard's own column names",
                           "rename the parameter of the profiled function and profile again")


def _load(csvs: list[Path], param_names: Sequence[str] | None) -> list[_Csv]:
    items = []
    for p in csvs:
        header, rows = _parse_csv(p)
        kind = _classify(p, header)
        required = ("Annotation", "Value", "Metric") if kind == "raw" else \
            ("Annotation", "Metric", "AvgValue")
        missing = [c for c in required if c not in header]
        if missing:
            raise ImportFailed(f"{p.name}: lacks column(s) {', '.join(missing)}", _HINT_CSV)
        items.append(_Csv(p, kind, _tag(p), header, rows))
    agg_params: dict[str, list[str]] = {}
    for it in items:
        if it.kind == "agg":
            it.params = _param_columns(it, {}, param_names)
            agg_params.setdefault(it.tag, it.params)
    for it in items:
        if it.kind == "raw":
            it.params = _param_columns(it, agg_params, param_names)
        _check_params(it)
        it.frame = pd.DataFrame(it.rows, columns=it.header, dtype=object)
        it.rows = []
    names = {tuple(it.params) for it in items}
    if len(names) > 1:
        raise ImportFailed("the files name different config parameters: " +
                           "; ".join(f"{it.path.name}: {it.params}" for it in items),
                           "import the output of one profiled function at a time")
    return items


def _assign_configs(items: list[_Csv], params: list[str]) -> list[dict[str, Any]]:
    """Type the parameter columns across all files and number configs in first-seen order."""
    if not params:
        for it in items:
            it.frame[C.CONFIG] = 0
        return [{}]
    lengths = [len(it.frame) for it in items]
    allp = pd.concat([it.frame[params] for it in items], ignore_index=True)
    for p in params:
        allp[p] = _typed_param(allp[p])
    keys = pd.MultiIndex.from_frame(allp[params].astype(str))
    codes, _ = pd.factorize(keys)
    configs = []
    first = allp.loc[pd.Series(codes).drop_duplicates().index]
    for _, row in first.iterrows():
        configs.append({p: _py(row[p]) for p in params})
    start = 0
    for it, n in zip(items, lengths):
        sl = slice(start, start + n)
        for p in params:
            it.frame[p] = allp[p].iloc[sl].to_numpy()
            if allp[p].dtype != object:
                it.frame[p] = it.frame[p].astype(allp[p].dtype)
        it.frame[C.CONFIG] = codes[sl].astype("int64")
        start += n
    return configs


def _py(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def _key_columns(it: _Csv, params: list[str]) -> pd.DataFrame:
    """Annotation, Config, <params>, Metric of one nsight-python CSV (checked text columns)."""
    f = it.frame
    out = pd.DataFrame({
        C.ANNOTATION: _text(f["Annotation"], it.path, "Annotation", True),
        C.CONFIG: f[C.CONFIG].astype("int64"),
    })
    for p in params:
        out[p] = f[p]
    out[C.METRIC] = _text(f["Metric"], it.path, "Metric", True)
    return out


def _runs_from_raw(items: list[_Csv], params: list[str]) -> pd.DataFrame:
    frames = []
    for it in items:
        f = it.frame
        out = _key_columns(it, params)
        out[C.VALUE] = _floats(f["Value"], it.path, "Value")
        out[C.UNIT] = _units(f)
        out[C.KERNELS] = _kernels(f)
        frames.append(out)
    runs = pd.concat(frames, ignore_index=True)
    runs[C.RUN] = runs.groupby([C.ANNOTATION, C.CONFIG, C.METRIC], sort=False).cumcount() \
        .astype("int64")
    runs[C.COMBINE_RULE] = np.where(runs[C.KERNELS] > 1, RULE_NSIGHT_COMBINED, RULE_SINGLE)
    cols = table_columns(C.TABLE_RUNS, params)
    f = runs[cols].copy()
    f["_a"] = pd.factorize(f[C.ANNOTATION])[0]
    f["_m"] = pd.factorize(f[C.METRIC])[0]
    f = f.sort_values([C.CONFIG, "_a", "_m", C.RUN], kind="stable")
    return f.drop(columns=["_a", "_m"]).reset_index(drop=True)


def _agg_from_processed(items: list[_Csv], params: list[str]) -> pd.DataFrame:
    frames = []
    for it in items:
        f = it.frame

        def num(col: str, finite: bool = True) -> pd.Series:
            if col not in f.columns:
                return pd.Series(np.nan, index=f.index, dtype="float64")
            return _floats(f[col], it.path, col, finite)

        out = _key_columns(it, params)
        out[C.UNIT] = _units(f)
        nruns = num("NumRuns")
        out[C.NUM_RUNS] = nruns.fillna(0).clip(0, 2**62).round().astype("int64")
        out[C.AVG] = num("AvgValue")
        out[C.STD] = num("StdDev")
        out[C.MIN] = num("MinValue")
        out[C.MAX] = num("MaxValue")
        out[C.MEDIAN] = pd.Series(np.nan, index=f.index, dtype="float64")
        out[C.CI95_LOWER] = num("CI95_Lower")
        out[C.CI95_UPPER] = num("CI95_Upper")
        out[C.RSD] = num("RelativeStdDevPct", finite=False)
        out[C.STABLE] = _bools(f["StableMeasurement"]) if "StableMeasurement" in f.columns \
            else pd.Series(False, index=f.index)
        out[C.KERNELS] = _kernels(f).astype("float64")
        out[C.KERNELS_VARY] = pd.Series(False, index=f.index, dtype=bool)
        frames.append(out)
    return pd.concat(frames, ignore_index=True)[table_columns(C.TABLE_AGGREGATED, params)]


def _environment(items: list[_Csv]) -> dict[str, Any]:
    env: dict[str, Any] = {}
    names = {"GPU": "gpu_name", "Host": "host", "ComputeClock": "max_sm_clock_khz",
             "MemoryClock": "max_mem_clock_khz"}
    for col, key in names.items():
        vals: list[str] = []
        for it in items:
            if col in it.frame.columns:
                for v in it.frame[col].astype(str).str.strip().unique():
                    if v and v not in vals and v not in _NA_STRINGS:
                        vals.append(v[:200])
        if vals:
            env[key] = vals[0] if len(vals) == 1 else vals[:20]
    if env:
        env["source"] = ("nsight-python CSV columns (ComputeClock/MemoryClock are the device's "
                         "maximum clocks in kHz, not clocks measured during the runs)")
    return env


def _dropped(items: list[_Csv], params: list[str]) -> list[str]:
    known = set(NSIGHT_RAW_FIXED) | set(NSIGHT_AGG_FIXED) | set(params) | {C.CONFIG}
    out: list[str] = []
    for it in items:
        out += [h for h in it.header if h not in known and h not in out]
    return out


def _spec(items: list[_Csv], configs: list[dict[str, Any]], runs: pd.DataFrame,
          agg: pd.DataFrame) -> tuple[dict[str, Any], bool, list[str]]:
    kernels = list(dict.fromkeys(re.sub(r"-\d+$", "", it.tag) for it in items))
    table = runs if not runs.empty else agg
    metrics = [m for m in dict.fromkeys(table[C.METRIC])
               if _METRIC_NAME_RE.match(m) or m == C.HOST_TIME]
    n_runs = int(agg[C.NUM_RUNS].max()) if len(agg) else 1
    raw = {
        "kernels": kernels,
        "configs": configs,
        "runs": max(n_runs, 1),
        "metrics": metrics or [C.GPU_TIME],
        "backend": "ncu",
        "annotations": list(dict.fromkeys(table[C.ANNOTATION])),
        "label": ("imported: " + ", ".join(it.path.name for it in items))[:200],
    }
    try:
        return validate_spec(raw).to_json(), True, []
    except SpecInvalid as exc:
        return raw, False, [str(e) for e in exc.errors][:20]


def import_nsight_output(sources: Sequence[Path], out_dir: Path, job_id: str, *,
                         param_names: Sequence[str] | None = None) -> Path:
    """Turn nsight-python output files into the result bundle ``out_dir/job_id``.

    Args:
        sources: files and/or folders. Folders contribute their ``profiled_data-*.csv``,
            ``processed_data-*.csv``, ``*.ncu-rep`` and ``*.log`` files. A CSV is recognised by
            its columns (``Value`` = per-run table, ``AvgValue`` = aggregated table), so renamed
            files work too. nsight-python 0.9.x (no ``Unit`` column) and 1.x are accepted.
        out_dir: the folder that receives the bundle (created if missing).
        job_id: the bundle's folder name (letters, digits, ``_ . -``); must not exist yet.
        param_names: the config parameter columns, when the files cannot tell (a 1.1 per-run CSV
            with info-collector columns and no aggregated CSV beside it); None = detect: the
            columns between ``Metric`` and ``AvgValue`` of the aggregated CSV, else the columns
            after nsight-python's fixed ones.

    Returns:
        The bundle directory, holding ``tables/{runs,aggregated,launches,work,nvml_trace}``
        (``.parquet`` + ``.csv``), ``nsight/`` (copies of the sources), ``spec.json`` and
        ``manifest.json`` (status ``done``). Values keep nsight's units (ns, %, byte...).
        ``runs``: per-run rows, Run numbered 0.. in file order within annotation x config x
        metric, Config numbered in first-seen order of the parameter values; ``Kernels`` from
        the ``|``-joined Kernel names. ``aggregated``: recomputed from the runs (Student-t CI95,
        median) for every call that has a per-run CSV; otherwise nsight-python's rows as written
        (its 1.96-sigma CI, no median: MedianValue is NaN). The bundle is built in a temporary
        folder and renamed into place, so a failed import leaves nothing behind.

    Raises:
        ImportFailed: with ``message`` naming the file and the problem and ``hint`` the fix:
            missing or unreadable files, no CSV among the sources, empty/truncated/non-UTF-8/
            non-CSV files, wrong or duplicate columns, non-numeric or infinite values, parameter
            names that clash with bundle columns, a bad job_id, an existing bundle.
    """
    if not isinstance(job_id, str) or not _JOB_ID_RE.match(job_id) or ".." in job_id:
        raise ImportFailed(f"job id {str(job_id)[:80]!r} is not a plain folder name",
                           "use letters, digits, '_', '.' and '-' only")
    out_dir = Path(out_dir)
    final = out_dir / job_id
    if final.exists():
        raise ImportFailed(f"{job_id}: a bundle of that name already exists in {out_dir.name}",
                           "choose another job id; finished bundles are never overwritten")
    csvs, extra, ignored = _expand([Path(s) for s in sources])
    if not csvs and not any(R.is_report(p) for p in extra):
        raise ImportFailed("no nsight-python CSV and no .ncu-rep among the sources "
                           f"({', '.join(Path(s).name for s in sources)[:200] or 'none given'})",
                           "run the profiled function with output_csv=True and import the "
                           "profiled_data-*.csv (and processed_data-*.csv) it writes, or its "
                           ".ncu-rep")
    try:
        return _import(csvs, extra, ignored, out_dir, job_id, final, param_names)
    except ImportFailed:
        raise
    except Exception as exc:  # never a bare traceback for a user's file
        names = ", ".join(p.name for p in [*csvs, *extra])[:200]
        raise ImportFailed(f"{names}: could not be imported ({type(exc).__name__}: "
                           f"{str(exc)[:300]})",
                           "check that these are unmodified nsight-python CSV files; "
                           "if they are, report this with the files") from exc


def _from_csvs(csvs: list[Path], param_names: Sequence[str] | None) -> dict[str, Any]:
    """Tables, spec and provenance from nsight-python's CSVs."""
    items = _load(csvs, param_names)
    params = items[0].params
    configs = _assign_configs(items, params)
    raw_items = [it for it in items if it.kind == "raw"]
    raw_tags = {it.tag for it in raw_items}
    agg_only = [it for it in items if it.kind == "agg" and it.tag not in raw_tags]

    runs = _runs_from_raw(raw_items, params) if raw_items else empty_table(C.TABLE_RUNS, params)
    parts = []
    if raw_items:
        parts.append(aggregate_runs(runs, params))
    if agg_only:
        parts.append(_agg_from_processed(agg_only, params))
    agg = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    agg = agg[table_columns(C.TABLE_AGGREGATED, params)]
    if raw_items and not agg_only:
        agg_source = "recomputed from the per-run rows (Student-t CI95)"
    elif raw_items:
        agg_source = ("recomputed from the per-run rows where a profiled_data CSV was given, "
                      "else nsight-python's processed_data rows as written")
    else:
        agg_source = "nsight-python's processed_data rows as written (normal-approximation CI95)"

    spec, spec_valid, spec_errors = _spec(items, configs, runs, agg)
    version = "1.x (Unit column)" if any("Unit" in it.header for it in items) \
        else "0.9.x (no Unit column)"
    return {"params": params, "configs": configs, "runs": runs, "agg": agg, "spec": spec,
            "spec_valid": spec_valid, "spec_errors": spec_errors,
            "environment": _environment(items),
            "provenance": {"nsight_python_format": version, "aggregated": agg_source,
                           "parameters": params, "dropped_columns": _dropped(items, params)}}


def _report_spec(report: Path, configs: list[dict[str, Any]], runs: pd.DataFrame,
                 agg: pd.DataFrame) -> tuple[dict[str, Any], bool, list[str]]:
    stem = re.sub(r"\.ncu-rep(\.gz)?$", "", report.name, flags=re.IGNORECASE)
    kernel = re.sub(r"-\d+$", "", re.sub(r"^ncu-output-", "", stem)) or "imported"
    n_runs = int(agg[C.NUM_RUNS].max()) if len(agg) else 1
    raw = {"kernels": [kernel], "configs": configs, "runs": max(n_runs, 1),
           "metrics": list(dict.fromkeys(runs[C.METRIC])) or [C.GPU_TIME], "backend": "ncu",
           "annotations": list(dict.fromkeys(runs[C.ANNOTATION])),
           "label": f"imported: {report.name}"[:200]}
    try:
        return validate_spec(raw).to_json(), True, []
    except SpecInvalid as exc:
        return raw, False, [str(e) for e in exc.errors][:20]


def _add_report(prep: dict[str, Any] | None, report: Path) -> tuple[dict[str, Any], pd.DataFrame,
                                                                      dict[str, Any]]:
    """Read ``report`` into the launches table; with no CSVs, runs and aggregated come from it."""
    metrics = R.REPORT_METRICS
    if prep is not None:
        table = prep["runs"] if not prep["runs"].empty else prep["agg"]
        named = [m for m in dict.fromkeys(table[C.METRIC]) if _METRIC_NAME_RE.match(m)]
        metrics = tuple(dict.fromkeys([*named, *R.REPORT_METRICS]))
    rows, device, summary = R.read_report(report, metrics, ImportFailed)
    if prep is None:
        params, configs = R.report_only_configs(rows)
        launches, how = R.attribute_launches(rows, params, configs, None)
        if launches.empty:
            raise ImportFailed(f"{report.name}: holds no launch inside an nsight-python "
                               "annotation", "profile with nsight-python (nsight.annotate "
                               "ranges), or import its CSVs")
        runs = launches_to_runs(launches, params)
        agg = aggregate_runs(runs, params)
        spec, spec_valid, spec_errors = _report_spec(report, configs, runs, agg)
        prep = {"params": params, "configs": configs, "runs": runs, "agg": agg, "spec": spec,
                "spec_valid": spec_valid, "spec_errors": spec_errors, "environment": {},
                "provenance": {"aggregated": "computed from the report's launches (combined "
                                             "per run, Student-t CI95)",
                               "parameters": params}}
    else:
        launches, how = R.attribute_launches(rows, prep["params"], prep["configs"], prep["runs"])
    prep["environment"] = {**R.gpu_environment(device), **prep["environment"]}
    prep["provenance"]["launches"] = {
        "report": report.name, "attribution": how, "rows": int(len(launches)),
        "metrics_read": sorted(set(rows[C.METRIC])) if len(rows) else [],
        "metrics_missing": device.get("missing_metrics", [])[:50]}
    device = {k: v for k, v in device.items() if k != "missing_metrics"}
    return prep, launches, {"device_attributes": device, "summary": summary}


def _import(csvs: list[Path], extra: list[Path], ignored: list[Path], out_dir: Path,
            job_id: str, final: Path, param_names: Sequence[str] | None) -> Path:
    reports = [p for p in extra if R.is_report(p)]
    prep = _from_csvs(csvs, param_names) if csvs else None
    report_info: dict[str, Any] = {}
    if reports:
        prep, launches, report_info = _add_report(prep, reports[0])
    assert prep is not None
    params = prep["params"]
    if not reports:
        launches = empty_table(C.TABLE_LAUNCHES, params)
    spec = prep["spec"]
    measurement = "imported nsight-python output" if csvs else "imported Nsight Compute report"

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".import-{job_id}-", dir=out_dir))
    try:
        write_table(tmp, C.TABLE_RUNS, prep["runs"])
        write_table(tmp, C.TABLE_AGGREGATED, prep["agg"])
        write_table(tmp, C.TABLE_LAUNCHES, launches)
        write_table(tmp, C.TABLE_WORK, empty_table(C.TABLE_WORK, params))
        write_table(tmp, C.TABLE_NVML, empty_table(C.TABLE_NVML))
        write_table(tmp, C.TABLE_COLLECTORS, empty_table(C.TABLE_COLLECTORS, params))
        nsight = tmp / C.NSIGHT_DIR
        nsight.mkdir()
        copied: list[str] = []
        for src in [*csvs, *extra]:
            name = src.name
            k = 1
            while (nsight / name).exists():
                name = f"{src.stem}-{k}{src.suffix}"
                k += 1
            shutil.copy2(src, nsight / name)
            copied.append(name)
        if report_info:
            (tmp / C.REPORT_SUMMARY_FILE).write_text(
                json.dumps(report_info["summary"], indent=1, default=str), encoding="utf-8")
        (tmp / C.SPEC_FILE).write_text(json.dumps(spec, indent=2, default=str), encoding="utf-8")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        backend: dict[str, Any] = {"name": "ncu", "measurement": measurement}
        if report_info:
            backend["report"] = reports[0].name
            backend["device_attributes"] = report_info["device_attributes"]
        manifest = {
            "job_id": job_id,
            "status": JobStatus.DONE.value,
            "spec": spec,
            "backend": backend,
            "environment": prep["environment"],
            "timings": {"imported_at": now},
            "provenance": {
                "imported_from": [p.name for p in [*csvs, *extra]],
                "ignored": [p.name for p in ignored],
                "date": now,
                **prep["provenance"],
                "spec_reconstructed": True,
                "spec_fields_from_files": ["kernels", "configs", "runs", "metrics",
                                           "annotations"],
                "spec_fields_defaulted": sorted(k for k in spec if k not in (
                    "kernels", "configs", "runs", "metrics", "annotations", "label",
                    "backend")),
                "spec_valid": prep["spec_valid"],
                "spec_errors": prep["spec_errors"],
            },
            "files": files + [C.MANIFEST_FILE],
        }
        write_manifest(tmp, manifest)
        try:
            tmp.rename(final)
        except OSError as exc:
            raise ImportFailed(f"{job_id}: cannot create the bundle in {out_dir.name} "
                               f"({exc.strerror or exc})",
                               "choose another job id or a writable folder") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


__all__ = ["import_nsight_output", "ImportFailed", "NSIGHT_RAW_FIXED", "NSIGHT_AGG_FIXED",
           "RULE_NSIGHT_COMBINED"]

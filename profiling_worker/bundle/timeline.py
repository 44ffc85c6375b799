"""A job's timeline as a Chrome/Perfetto trace: one track per region with each kernel launch,
and the NVML SM clock, memory clock, temperature and power as counter tracks.

Format: the Trace Event Format's JSON Object Format (``{"traceEvents": [...]}``; complete
events ``ph: "X"``, counter events ``ph: "C"``, metadata events ``ph: "M"``; ``ts``/``dur`` in
microseconds), https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
and Perfetto's reading of it, https://perfetto.dev/docs/getting-started/other-formats#json.
It opens as is in https://ui.perfetto.dev and chrome://tracing. Written with the standard
``json`` module: no maintained Python writer of this JSON format fits (Perfetto's own Python
``trace_builder`` writes its protobuf format).

Where the launches sit:
* CUPTI bundles with a ``launch_times`` table: each launch at its CUPTI GPU start and end; the
  NVML samples on the same axis through the manifest's ``backend.nvml_trace_start_ns``.
* every other bundle (Nsight Compute, older CUPTI bundles, imports): the launches placed back to
  back in run order (config, run, region, launch), each as long as its measured duration. That
  axis is not a clock: the track names and each launch's ``placement`` argument say so, and the
  NVML samples (seconds since the sampler started) go in a process of their own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.loader import TableUnreadable, read_table_file
from profiling_worker.bundle.stats.units import normalise_unit
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import job_gpu, read_manifest

PLACED_BY_CUPTI = "CUPTI start/end (GPU timestamps)"
PLACED_IN_RUN_ORDER = "measured duration, placed back to back in run order (not a start time)"
#: Suffix of a track name whose launches are placed in run order.
RUN_ORDER_NOTE = " (run order, not a clock)"
_LAUNCH_PID, _NVML_PID = 1, 2
#: First region track's tid. Process-level events (names, counters) use tid = pid, and Perfetto
#: treats a tid seen in another process as a new thread, so every tid is unique in the file.
_FIRST_TRACK_TID = 10
#: NVML trace column -> (counter track name, unit)
COUNTERS = {C.SM_CLOCK_MHZ: ("SM clock", "MHz"), C.MEM_CLOCK_MHZ: ("memory clock", "MHz"),
            C.TEMP_C: ("GPU temperature", "C"), C.POWER_W: ("power", "W")}


class TimelineError(ValueError):
    """The bundle cannot give a timeline; ``hint`` says what would."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def _table(bundle: Path, name: str) -> pd.DataFrame | None:
    """The bundle's table ``name``; None when it has none.

    Raises:
        TimelineError: the table is there but unreadable (truncated or not Parquet).
    """
    try:
        return read_table_file(bundle, name)
    except TableUnreadable as exc:
        raise TimelineError(f"{bundle.name}: {exc}", "the CSV beside it may still be intact; "
                            "re-run the job for a new bundle") from exc


def _durations(launches: pd.DataFrame) -> pd.DataFrame:
    """Rows of the duration metric (GPU time, else host time) with a ``DurationNs`` column."""
    for metric in C.DURATION_METRICS:
        rows = launches[launches[C.METRIC] == metric]
        if not rows.empty:
            ns = [normalise_unit(float(v), str(u))[0] for v, u in zip(rows[C.VALUE], rows[C.UNIT])]
            return rows.assign(DurationNs=ns)
    raise TimelineError("the launches table holds no duration (metric "
                        f"{' or '.join(C.DURATION_METRICS)})",
                        f"profile with the metric {C.GPU_TIME}")


def _in_run_order(timed: pd.DataFrame) -> pd.DataFrame:
    """Launch rows with StartNs/EndNs placed back to back in run order from 0."""
    region_order = {a: i for i, a in enumerate(dict.fromkeys(timed[C.ANNOTATION]))}
    ordered = timed.assign(_region=timed[C.ANNOTATION].map(region_order)).sort_values(
        [C.CONFIG, C.RUN, "_region", C.LAUNCH], kind="stable")
    end = ordered["DurationNs"].cumsum()
    # each start is the previous end itself (not end - duration, which rounds): they touch
    return ordered.assign(**{C.START_NS: end.shift(1, fill_value=0.0), C.END_NS: end})


def _placed(bundle: Path) -> tuple[pd.DataFrame, str, int]:
    """(launch rows with StartNs, EndNs, DurationNs; placement; launches left out because CUPTI
    gave them no start)."""
    launches = _table(bundle, C.TABLE_LAUNCHES)
    if launches is None or launches.empty:
        raise TimelineError(f"{bundle.name}: no launches table",
                            "a timeline needs a finished job's bundle (tables/launches.parquet)")
    durations = _durations(launches)
    times = _table(bundle, C.TABLE_LAUNCH_TIMES)
    if times is None or times.empty:
        return _in_run_order(durations), PLACED_IN_RUN_ORDER, 0
    keys = [C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH]
    timed = durations.merge(times[[*keys, C.START_NS, C.END_NS]], on=keys, how="inner")
    timed = timed.dropna(subset=[C.START_NS])
    return timed, PLACED_BY_CUPTI, len(durations) - len(timed)


def _lanes(rows: pd.DataFrame) -> list[int]:
    """Per row (sorted by start), the lowest lane whose last slice ended by its start: slices on
    one track must not overlap (trace-event complete events nest or follow each other)."""
    ends: list[float] = []
    lanes = []
    for start, end in zip(rows[C.START_NS], rows[C.END_NS]):
        lane = next((i for i, e in enumerate(ends) if e <= start), len(ends))
        if lane == len(ends):
            ends.append(end)
        ends[lane] = end
        lanes.append(lane)
    return lanes


def _launch_events(rows: pd.DataFrame, params: list[str], placement: str,
                   origin_ns: float) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    tids: dict[tuple[str, int], int] = {}
    note = "" if placement == PLACED_BY_CUPTI else RUN_ORDER_NOTE
    for region, group in rows.sort_values(C.START_NS).groupby(C.ANNOTATION, sort=False):
        for row, lane in zip(group.to_dict("records"), _lanes(group)):
            key = (str(region), lane)
            if key not in tids:
                tids[key] = tid = _FIRST_TRACK_TID + len(tids)
                name = f"region {region}" + (f" (overlap {lane + 1})" if lane else "") + note
                events += [_meta("thread_name", tid, name), _meta("thread_sort_index", tid, tid)]
            ts = _us(row[C.START_NS] - origin_ns)
            events.append({
                "ph": "X", "name": str(row[C.KERNEL]), "cat": "kernel", "pid": _LAUNCH_PID,
                "tid": tids[key], "ts": ts,
                "dur": _us(row[C.END_NS] - origin_ns) - ts,  # exact: see _us
                "args": {"region": str(region), "config": int(row[C.CONFIG]),
                         **{p: _plain(row[p]) for p in params if p in row},
                         "run": int(row[C.RUN]), "launch": int(row[C.LAUNCH]),
                         "duration_ns": float(row["DurationNs"]), "placement": placement}})
    return events


#: Steps per µs of the grid every time is put on: 2^-20 µs (0.95 ps), far below 1 ns.
_GRID_PER_US = 2 ** 20


def _us(ns: float) -> float:
    """ns -> the format's µs, rounded up to a multiple of 2^-20 µs.

    Such a number below 2^33 µs (2.4 h) is an exact double, so a reader's ``ts + dur`` is exact:
    a launch that ends where the next starts touches it, never overlaps it (Chrome's trace
    engine drops a complete event that ends after the one before it on its track, in
    TreeHelpers.treify; speedscope ends it in the wrong place). It is within 0.95 ps above the
    exact ns, so Perfetto, which reads a JSON number as ``llround(µs * 1000)``
    (json_trace_tokenizer.cc since v51; earlier versions truncated), reads the exact ns.
    """
    return math.ceil(float(ns) * _GRID_PER_US / 1e3) / _GRID_PER_US


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _meta(name: str, tid: int | None, value: Any, pid: int = _LAUNCH_PID) -> dict[str, Any]:
    """A metadata event; ``tid`` None: a process-level one (tid = pid)."""
    key = "sort_index" if name.endswith("sort_index") else "name"
    return {"ph": "M", "name": name, "pid": pid, "tid": pid if tid is None else tid,
            "args": {key: value}}


def _counter_events(nvml: pd.DataFrame, start_ns: float, pid: int) -> list[dict[str, Any]]:
    """One counter track per NVML column; ``start_ns``: TimeS 0 on the axis (ns)."""
    events = []
    for column, (name, unit) in COUNTERS.items():
        for t, value in zip(nvml[C.TIME_S], nvml[column]):
            if pd.notna(value):
                events.append({"ph": "C", "name": name, "pid": pid, "tid": pid,
                               "ts": _us(start_ns + float(t) * 1e9),
                               "args": {unit: float(value)}})
    return events


def build_trace(bundle: str | Path) -> dict[str, Any]:
    """The trace of a result bundle (a job directory with ``manifest.json`` and ``tables/``).

    Returns:
        ``{"traceEvents": [...], "otherData": {job_id, placement, nvml_aligned, launches,
        launches_without_start}}``
        (no ``displayTimeUnit``: Perfetto reads ``"ns"`` there as ns timestamps); ``ts``/``dur``
        in µs from the first event; launch ``args`` give region, config index and parameters,
        run, launch, ``duration_ns`` and ``placement`` (:data:`PLACED_BY_CUPTI` or
        :data:`PLACED_IN_RUN_ORDER`); counters per :data:`COUNTERS` (MHz, °C, W).

    Raises:
        ManifestError: no readable manifest.
        TimelineError: no launches table, an unreadable table, or no duration metric.
    """
    bundle = Path(bundle)
    manifest = read_manifest(bundle)
    configs = manifest.get("spec", {}).get("configs") or [{}]
    params = list(configs[0])
    rows, placement, untimed = _placed(bundle)
    nvml = _table(bundle, C.TABLE_NVML)
    nvml_start = manifest.get("backend", {}).get("nvml_trace_start_ns")
    aligned = placement == PLACED_BY_CUPTI and nvml_start is not None
    starts = [rows[C.START_NS].min()] + ([nvml_start] if aligned else [])
    origin = float(min(starts)) if not rows.empty else 0.0
    label = f"{manifest.get('job_id', bundle.name)} on {_gpu(manifest)}" + (
        f" ({counted(untimed, 'launch', 'launches')} without a CUPTI start left out)"
        if untimed else "")
    events = [_meta("process_name", None, f"kernels: {label}"),
              *_launch_events(rows, params, placement, origin)]
    if nvml is not None and not nvml.empty:
        pid = _LAUNCH_PID if aligned else _NVML_PID
        if not aligned:
            events.append(_meta("process_name", None, "NVML samples (time since the sampler "
                                "started; not the launches' axis)", _NVML_PID))
        events += _counter_events(nvml, float(nvml_start) - origin if aligned else 0.0, pid)
    return {"traceEvents": events,
            "otherData": {"job_id": manifest.get("job_id"), "placement": placement,
                          "nvml_aligned": aligned, "launches": int(len(rows)),
                          "launches_without_start": untimed}}


def _gpu(manifest: dict[str, Any]) -> str:
    return str(job_gpu(manifest).get("name") or "unknown GPU")  # the job's GPU, not the first


def write_trace(bundle: str | Path, out: str | Path) -> Path:
    """Write :func:`build_trace` of ``bundle`` to ``out`` (JSON); returns ``out``."""
    out = Path(out)
    out.write_text(json.dumps(build_trace(bundle)), encoding="utf-8")
    return out


def trace_problems(trace: dict[str, Any]) -> list[str]:
    """What in ``trace`` breaks the Trace Event Format (empty: none): required keys and types
    per phase, non-negative durations, and complete events of one track (pid, tid) that
    overlap without nesting (the format's slices on a thread nest or follow each other; Chrome's
    trace engine drops such an event). Times compared as a reader does, in double µs."""
    required = {"X": ("name", "ts", "dur", "pid", "tid"), "C": ("name", "ts", "pid", "args"),
                "M": ("name", "pid", "args")}
    events: Iterable[Any] = trace.get("traceEvents", None) or []
    if not isinstance(trace.get("traceEvents"), list):
        return ["traceEvents is missing or not a list"]
    problems = []
    for i, event in enumerate(events):
        phase = event.get("ph")
        missing = [k for k in required.get(phase, ()) if k not in event]
        if phase not in required:
            problems.append(f"event {i}: phase {phase!r} is not X, C or M")
        elif missing:
            problems.append(f"event {i} ({phase}): missing {', '.join(missing)}")
        elif phase == "X" and not event["dur"] >= 0:
            problems.append(f"event {i}: negative duration {event['dur']}")
        elif phase == "C" and not all(isinstance(v, (int, float)) for v in event["args"].values()):
            problems.append(f"event {i}: counter values must be numbers")
    return problems or _overlaps(trace["traceEvents"])


def _overlaps(events: list[dict[str, Any]]) -> list[str]:
    """Complete events that start inside another of their track and end after it."""
    problems = []
    slices = sorted((e["pid"], e["tid"], e["ts"], -e["dur"], i)
                    for i, e in enumerate(events) if e["ph"] == "X")
    open_: list[tuple[Any, Any, float, int]] = []  # (pid, tid, end µs, index): the nesting stack
    for pid, tid, ts, minus_dur, i in slices:
        while open_ and (open_[-1][:2] != (pid, tid) or open_[-1][2] <= ts):
            open_.pop()
        end = ts - minus_dur
        if open_ and end > open_[-1][2]:
            problems.append(f"event {i} overlaps event {open_[-1][3]} on track (pid {pid}, tid "
                            f"{tid}) by {end - open_[-1][2]:.3g} µs without nesting in it")
            continue
        open_.append((pid, tid, end, i))
    return problems

"""Read a ``.ncu-rep`` with ``ncu_report`` into the per-launch table (the only ncu_report import).

Each profiled launch ("action") is attributed by its NVTX state:
- the annotation from the ``nsight-python`` domain (push/pop ranges in 0.9.x, start/end in 1.1);
- the config and run from the worker's own ``kprof`` domain range ``c<config>r<run>``, pushed
  around each call of the profiled body. Attribution therefore never depends on how many
  kernels a config launched (nsight-python's own extraction divides by position and fails,
  or silently mixes configs, when counts differ).
Reports made elsewhere (no ``kprof`` range) are attributed in launch order, per annotation.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import ncu_report

from profiling_worker.schema import metrics as M
from profiling_worker.extract.units import normalise_unit
from profiling_worker.schema import columns as C
from profiling_worker.schema.run_range import KPROF_DOMAIN, NSIGHT_DOMAIN, parse_run_range


#: Rule message and speedup-estimate types by name (ncu_report's MsgType_*, SpeedupType_*).
MSG_TYPES = {ncu_report.MsgType_NONE: "none", ncu_report.MsgType_OK: "ok",
             ncu_report.MsgType_OPTIMIZATION: "optimization",
             ncu_report.MsgType_WARNING: "warning", ncu_report.MsgType_ERR: "error"}
SPEEDUP_TYPES = {ncu_report.SpeedupType_UNKNOWN: "unknown",
                 ncu_report.SpeedupType_LOCAL: "local", ncu_report.SpeedupType_GLOBAL: "global"}


def kernel_name(action: Any) -> str:
    """The demangled kernel name (template instances stay apart)."""
    return str(action.name(ncu_report.IAction.NameBase_DEMANGLED))


def _ranges(state: Any, domain_name: str) -> tuple[str, ...]:
    if state is None:  # a report recorded without NVTX support
        return ()
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        if domain.name() == domain_name:
            return tuple(domain.push_pop_ranges()) + tuple(domain.start_end_ranges())
    return ()


def _other_range(state: Any) -> str | None:
    """The innermost NVTX range of any domain but nsight-python's and kprof's, or None."""
    if state is None:
        return None
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        if domain.name() in (NSIGHT_DOMAIN, KPROF_DOMAIN):
            continue
        ranges = tuple(domain.push_pop_ranges()) + tuple(domain.start_end_ranges())
        if ranges:
            return str(ranges[-1])
    return None


def _actions(report_path: Path) -> Iterator[Any]:
    report = ncu_report.load_report(str(report_path))
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for a in range(rng.num_actions()):
            yield rng.action_by_idx(a)


def metric_value(action: Any, name: str) -> tuple[Any, str] | None:
    """(value, unit) of metric ``name`` of a launch with the unit normalised (units.py), or
    None when the launch does not have it."""
    if name not in action.metric_names():
        return None
    metric = action[name]
    return normalise_unit(metric.value(), metric.unit())


def _source(action: Any, name: str) -> str | None:
    """``name`` if the launch has it, else its first :data:`~M.EQUIVALENTS` present, else None."""
    names = action.metric_names()
    return next((n for n in (name, *M.EQUIVALENTS.get(name, ())) if n in names), None)


def placed_actions(report_path: Path, other_ranges: bool = False
                   ) -> Iterator[tuple[Any, str | None, int, int, int]]:
    """Every profiled launch of a report with where it belongs, in report order.

    Args:
        report_path: a plain ``.ncu-rep``.
        other_ranges: as in :func:`read_launches` (keep launches outside nsight-python ranges).

    Yields:
        ``(action, annotation, config, run, launch)``: the ``ncu_report`` IAction; the
        annotation (region; None for a launch in no NVTX range); config and run from the kprof
        range, or config -1 and the launch's order within its annotation for a report made
        elsewhere; the launch's index within its (annotation, config, run).
    """
    launch_no: dict[tuple[str, int, int], int] = {}
    order: dict[str, int] = {}
    for action in _actions(report_path):
        state = action.nvtx_state()
        annotations = _ranges(state, NSIGHT_DOMAIN)
        if not annotations and not other_ranges:
            continue
        annotation = annotations[0] if annotations else _other_range(state)
        placed = next((p for p in map(parse_run_range, _ranges(state, KPROF_DOMAIN)) if p), None)
        if placed:
            config, run = placed
        else:  # foreign report: launch order within the annotation
            region = annotation or action.name()
            config, run = -1, order.setdefault(region, 0)
            order[region] += 1
        key = (annotation or action.name(), config, run)
        launch = launch_no.get(key, 0)
        launch_no[key] = launch + 1
        yield action, annotation, config, run, launch


def read_launches(report_path: Path, metrics: Sequence[str], other_ranges: bool = False
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-launch rows (without config parameter columns) and the device attributes.

    Args:
        report_path: a ``.ncu-rep`` written by Nsight Compute.
        metrics: the metric names to read for every launch (missing ones are skipped and
            reported in the returned ``device["missing_metrics"]``; one missing under its own
            name but present under an equivalent (:data:`~M.EQUIVALENTS`) is read from that and
            listed in ``device["metric_sources"]``, {name: name read}).
        other_ranges: keep launches outside nsight-python ranges too (reports made elsewhere):
            their Annotation is the innermost NVTX range of another domain, or None when the
            launch is in none (the caller names it after its kernel); Kernel is then the
            demangled name, so template instances stay apart.

    Returns:
        ``(rows, device)``: rows with Annotation, Config, Run, Launch, Kernel, Grid, Block,
        Metric, Value, Unit (one per launch x metric); ``device`` holds every
        ``device__attribute_*`` metric of the first launch plus ``missing_metrics`` and
        ``empty_launches`` (launches whose record holds no metric at all: a file that ends
        inside a launch; they give no rows).

    Raises:
        OSError, RuntimeError: the report cannot be read (ncu_report's own errors).
    """
    rows: list[dict[str, Any]] = []
    device: dict[str, Any] = {}
    missing: set[str] = set()
    sources: dict[str, str] = {}
    empty = 0
    for action, annotation, config, run, launch in placed_actions(report_path, other_ranges):
        if not action.metric_names():  # a record cut short: the launch is there, its values not
            empty += 1
            continue
        if not device:
            device = {n: action[n].value() for n in action.metric_names()
                      if n.startswith(M.DEVICE_ATTRIBUTE_PREFIX)}
        grid = metric_value(action, M.GRID_SIZE)
        block = metric_value(action, M.BLOCK_SIZE)
        for name in metrics:
            source = _source(action, name)
            got = metric_value(action, source) if source else None
            if got is None:
                missing.add(name)
                continue
            if source != name:
                sources[name] = str(source)
            rows.append({C.ANNOTATION: annotation, C.CONFIG: config, C.RUN: run, C.LAUNCH: launch,
                         C.KERNEL: kernel_name(action)
                         if other_ranges else action.name(), C.GRID: grid[0] if grid else None,
                         C.BLOCK: block[0] if block else None, C.METRIC: name,
                         C.VALUE: got[0], C.UNIT: got[1]})
    device["missing_metrics"] = sorted(missing)
    device["metric_sources"] = sources
    device["empty_launches"] = empty
    return rows, device


def rule_results(report_path: Path, limit: int = C.SUMMARY_RULE_LAUNCHES) -> list[dict[str, Any]]:
    """Nsight Compute rule results (name, kernel, message ...) of the first ``limit`` launches.

    Returns an empty list when the report holds none (rules run only with ``--section``).
    """
    out: list[dict[str, Any]] = []
    for i, action in enumerate(_actions(report_path)):
        if i >= limit:
            break
        for rule in action.rule_results_as_dicts() or ():
            out.append({"kernel": action.name(), **{k: str(v) for k, v in dict(rule).items()}})
    return out


def summarize(report_path: Path) -> dict[str, Any]:
    """Summary of a report: launches, launches per kernel name, metrics per launch, rule results.

    Returns a JSON-able dict: ``report`` (file name), ``launches`` (int), ``kernels``
    ({name: launches}), ``metrics_per_launch`` (int, first launch), ``rule_results`` (list).
    """
    kernels: Counter[str] = Counter()
    metrics_per_launch = 0
    for action in _actions(report_path):
        kernels[action.name()] += 1
        metrics_per_launch = metrics_per_launch or len(action.metric_names())
    return {"report": report_path.name, "launches": sum(kernels.values()),
            "kernels": dict(kernels.most_common()), "metrics_per_launch": metrics_per_launch,
            "rule_results": rule_results(report_path)}


def write_summary(report_path: Path, out_path: Path) -> None:
    """Write :func:`summarize` of ``report_path`` as JSON to ``out_path``."""
    out_path.write_text(json.dumps(summarize(report_path), indent=1, default=str))

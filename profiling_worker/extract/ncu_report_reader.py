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
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import ncu_report

from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.stats.units import normalise_unit
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.run_range import KPROF_DOMAIN, NSIGHT_DOMAIN, parse_run_range


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


class _Summary:
    """What :func:`summarize` reports, gathered while the launches are read (ncu_report keeps
    every loaded launch in memory until the process ends: each extra pass over a 17 MB report
    cost about 25 MB and 0.1 s)."""

    def __init__(self, rule_limit: int = C.SUMMARY_RULE_LAUNCHES) -> None:
        self.kernels: Counter[str] = Counter()
        self.metrics_per_launch = 0
        self.rules: list[dict[str, Any]] = []
        self.rule_limit = rule_limit

    def see(self, action: Any) -> None:
        if sum(self.kernels.values()) < self.rule_limit:
            for rule in action.rule_results_as_dicts() or ():
                self.rules.append({"kernel": action.name(),
                                   **{k: str(v) for k, v in dict(rule).items()}})
        self.kernels[action.name()] += 1
        self.metrics_per_launch = self.metrics_per_launch or len(action.metric_names())

    def result(self, report_path: Path) -> dict[str, Any]:
        return {"report": report_path.name, "launches": sum(self.kernels.values()),
                "kernels": dict(self.kernels.most_common()),
                "metrics_per_launch": self.metrics_per_launch, "rule_results": self.rules}


def _seen(actions: Iterator[Any], summary: _Summary) -> Iterator[Any]:
    for action in actions:
        summary.see(action)
        yield action


def metric_value(action: Any, name: str, names: Collection[str] | None = None
                 ) -> tuple[Any, str] | None:
    """(value, unit) of metric ``name`` of a launch with the unit normalised (units.py), or
    None when the launch does not have it (``names``: its metric names, when known)."""
    if name not in (action.metric_names() if names is None else names):
        return None
    metric = action[name]
    return normalise_unit(metric.value(), metric.unit())


def _source(names: Collection[str], name: str) -> str | None:
    """``name`` if the launch has it, else its first :data:`~M.EQUIVALENTS` present, else None."""
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
    yield from _placed(_actions(report_path), other_ranges)


def _placed(actions: Iterator[Any], other_ranges: bool
            ) -> Iterator[tuple[Any, str | None, int, int, int]]:
    """:func:`placed_actions` of the launches ``actions`` yields."""
    launch_no: dict[tuple[str, int, int], int] = {}
    order: dict[str, int] = {}
    for action in actions:
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


def read_launches(report_path: Path, metrics: Sequence[str], other_ranges: bool = False,
                  summary: _Summary | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
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
        summary: gathers :func:`summarize`'s figures in the same pass (one load of the
            report: see :func:`read_with_summary`).

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
    actions = _actions(report_path)
    for action, annotation, config, run, launch in _placed(
            actions if summary is None else _seen(actions, summary), other_ranges):
        names = frozenset(action.metric_names())  # one call: it builds a tuple of every name
        if not names:  # a record cut short: the launch is there, its values not
            empty += 1
            continue
        if not device:
            device = {n: action[n].value() for n in names
                      if n.startswith(M.DEVICE_ATTRIBUTE_PREFIX)}
        grid = metric_value(action, M.GRID_SIZE, names)
        block = metric_value(action, M.BLOCK_SIZE, names)
        kernel = kernel_name(action) if other_ranges else action.name()
        for name in metrics:
            source = _source(names, name)
            got = metric_value(action, source, names) if source else None
            if got is None:
                missing.add(name)
                continue
            if source != name:
                sources[name] = str(source)
            rows.append({C.ANNOTATION: annotation, C.CONFIG: config, C.RUN: run, C.LAUNCH: launch,
                         C.KERNEL: kernel, C.GRID: grid[0] if grid else None,
                         C.BLOCK: block[0] if block else None, C.METRIC: name,
                         C.VALUE: got[0], C.UNIT: got[1]})
    device["missing_metrics"] = sorted(missing)
    device["metric_sources"] = sources
    device["empty_launches"] = empty
    return rows, device


def read_with_summary(report_path: Path, metrics: Sequence[str], other_ranges: bool = False
                      ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """:func:`read_launches` and :func:`summarize` of a report in one pass (one load).

    Returns:
        (rows, device, summary) as those two functions give them.
    Raises:
        OSError, RuntimeError: the report cannot be read (ncu_report's own errors).
    """
    summary = _Summary()
    rows, device = read_launches(report_path, metrics, other_ranges, summary)
    return rows, device, summary.result(report_path)


def summarize(report_path: Path) -> dict[str, Any]:
    """Summary of a report: launches, launches per kernel name, metrics per launch, rule results
    (Nsight Compute's, of the first :data:`~C.SUMMARY_RULE_LAUNCHES` launches; none when the
    report was recorded without ``--section``).

    Returns a JSON-able dict: ``report`` (file name), ``launches`` (int), ``kernels``
    ({name: launches}), ``metrics_per_launch`` (int, first launch), ``rule_results`` (list).
    """
    summary = _Summary()
    for action in _actions(report_path):
        summary.see(action)
    return summary.result(report_path)


def merged_summary(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One summary of several reports' (:func:`summarize` each, in order: an Nsight Compute
    job of several calls, backends/ncu_calls.py): launches and kernels added up, the reports
    named, the rule results one after the other."""
    if len(summaries) == 1:
        return dict(summaries[0])
    kernels: Counter[str] = Counter()
    for summary in summaries:
        kernels.update(summary["kernels"])
    return {"report": ", ".join(s["report"] for s in summaries),
            "launches": sum(s["launches"] for s in summaries),
            "kernels": dict(kernels.most_common()),
            "metrics_per_launch": summaries[0]["metrics_per_launch"],
            "rule_results": [r for s in summaries for r in s["rule_results"]]}


def write_summary(report_path: Path, out_path: Path) -> None:
    """Write :func:`summarize` of ``report_path`` as JSON to ``out_path``."""
    out_path.write_text(json.dumps(summarize(report_path), indent=1, default=str))

"""A report's sections, rule results, warp stalls and source hot spots: the deep-dive tables.

Read with ``ncu_report`` (no GPU, no ncu) from a ``.ncu-rep`` made with a section set
(``--set full`` via the spec's ``section_set``, or imported). Every launch is placed as the
per-launch table places it (:func:`~profiling_worker.extract.ncu_report_reader.placed_actions`).
What a report does not hold is absent from the output, never written as zero: a default-set
report has no WarpStateStats, MemoryWorkloadAnalysis or SourceCounters section, so it has no
stall rows, no cache hit rates and no hot spots; ``sections_present`` says which it has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from profiling_worker.extract.ncu_report_reader import (MSG_TYPES, SPEEDUP_TYPES, kernel_name,
                                                      metric_value, placed_actions)
from profiling_worker.extract.pm_sampling import sampled_series
from profiling_worker.extract.kernel_regions import region_names
from profiling_worker.bundle.schema import metrics as M

#: Launches read at most (a deep dive is one config; an imported sweep may be large).
MAX_LAUNCHES = 200
#: Source hot spots kept per launch (program counters with the most warp samples).
HOT_SPOTS = 12


def rule_rows(action: Any) -> list[dict[str, Any]]:
    """One dict per rule result of a launch: rule, name, section, title, message, type,
    speedup_type, speedup (estimated %, None when the rule gives none), focus_metrics
    (``;``-joined names)."""
    out = []
    for rule in action.rule_results_as_dicts() or ():
        msg = rule.get("rule_message") or {}
        speedup = rule.get("speedup_estimation") or {}
        out.append({"rule": str(rule.get("rule_identifier", "")), "name": str(rule.get("name", "")),
                    "section": str(rule.get("section_identifier", "")),
                    "title": str(msg.get("title", "")), "message": str(msg.get("message", "")),
                    "type": MSG_TYPES.get(msg.get("type"), str(msg.get("type"))),
                    "speedup_type": SPEEDUP_TYPES.get(speedup.get("type"), None),
                    "speedup": float(speedup["speedup"]) if "speedup" in speedup else None,
                    "focus_metrics": ";".join(str(f.get("name", ""))
                                              for f in rule.get("focus_metrics") or ())})
    return out


def _section_rows(action: Any) -> list[dict[str, Any]]:
    """Scalar header and body metrics of each section (instanced curves and breakdown lists
    are left out: they are not one number)."""
    rows = []
    for sec in action.sections():
        for part, metrics in (("header", sec.header_metrics()), ("body", sec.body_metrics())):
            for m in metrics:
                name = str(m.name())
                if name.startswith("breakdown:") or m.num_instances() > 1 or not m.has_value():
                    continue
                value = m.value()
                rows.append({"section": str(sec.identifier()), "section_name": str(sec.name()),
                             "order": int(sec.order()), "part": part, "metric": name,
                             "label": str(m.label() or ""),
                             "value": value if isinstance(value, (int, float)) else str(value),
                             "unit": str(m.unit() or "")})
    return rows


def _metric_rows(action: Any) -> list[dict[str, Any]]:
    """The deep-dive metrics (bundle/schema/metrics.py) and every warp-stall metric the launch
    has."""
    names = list(M.DEEP_DIVE_METRICS) + sorted(
        n for n in action.metric_names() if n.startswith(M.STALL_PREFIX)
        and n.endswith(M.STALL_SUFFIX))
    rows = []
    for name in dict.fromkeys(names):
        got = metric_value(action, name)
        if got is not None and isinstance(got[0], (int, float)):
            rows.append({"metric": name, "value": float(got[0]), "unit": got[1]})
    return rows


def _markers(action: Any) -> list[dict[str, Any]]:
    """Source markers the rules left (file, line, SASS address, message)."""
    out = []
    for marker in action.source_markers() or ():
        loc = marker.get("source_location") or {}
        out.append({"rule": str(marker.get("rule_identifier", "")),
                    "section": str(marker.get("section_identifier", "")),
                    "message": str(marker.get("message", "")),
                    "file": str(loc.get("file_name", "")),
                    "line": loc.get("line"), "address": marker.get("source_address")})
    return out


def _sample_metric(action: Any) -> Any:
    """The per-PC warp sample metric of a launch (SourceCounters section), or None."""
    names = [n for n in action.metric_names() if n.startswith(M.PC_SAMPLE_PREFIX)]
    for name in [*(n for n in M.PC_SAMPLE_METRICS if n in names), *sorted(names)]:
        metric = action[name]
        if metric.num_instances() > 1 and metric.has_correlation_ids():
            return metric
    return None


def _hot_spots(action: Any) -> list[dict[str, Any]]:
    """Program counters with the most warp samples: address, samples, share (% of the launch's
    samples), SASS text, and file/line when the report holds the source correlation."""
    metric = _sample_metric(action)
    if metric is None:
        return []
    pcs = metric.correlation_ids()
    samples = [(int(pcs.as_uint64(i)), float(metric.as_double(i)))
               for i in range(metric.num_instances())]
    total = sum(v for _pc, v in samples) or 1.0
    out = []
    for pc, value in sorted(samples, key=lambda s: -s[1])[:HOT_SPOTS]:
        info = action.source_info(pc)
        out.append({"address": pc, "samples": value, "share_pct": 100.0 * value / total,
                    "sass": str(action.sass_by_pc(pc) or ""), "metric": str(metric.name()),
                    "file": str(info.file_name()) if info else "",
                    "line": int(info.line()) if info else None})
    return out


def deep_dive(report_path: Path, other_ranges: bool = True) -> dict[str, Any]:
    """The deep-dive tables of a plain ``.ncu-rep``.

    Args:
        report_path: the report (plain; inflate a ``.gz`` first, ``inflate.plain_file``).
        other_ranges: keep launches outside nsight-python ranges (imported reports).

    Returns:
        JSON-able dict: ``report`` (file name); ``launches`` (list of {launch_id, annotation,
        config, run, launch, kernel}); ``sections_present`` ({launch_id: [section ids]});
        ``sections``, ``metrics``, ``rules``, ``markers``, ``hot_spots``, ``pm_sampling`` (one
        row per sampled series: :func:`~profiling_worker.extract.pm_sampling.sampled_series`):
        row lists, each row with its ``launch_id``; ``truncated`` (launches beyond
        :data:`MAX_LAUNCHES` left out);
        ``problems`` (parts that could not be read, with the error).
        Units: ns for durations, bytes, %, Hz, cycles per issued instruction for stalls.

    Raises:
        OSError, RuntimeError: ncu_report cannot read the report.
    """
    out: dict[str, Any] = {"report": report_path.name, "launches": [], "sections_present": {},
                           "sections": [], "metrics": [], "rules": [], "markers": [],
                           "hot_spots": [], "pm_sampling": [], "truncated": 0, "problems": []}
    for i, (action, annotation, config, run, launch) in enumerate(
            placed_actions(report_path, other_ranges)):
        if i >= MAX_LAUNCHES:
            out["truncated"] += 1
            continue
        out["launches"].append({"launch_id": i, "annotation": annotation, "config": config,
                                "run": run, "launch": launch, "kernel": kernel_name(action)})
        out["sections_present"][i] = sorted(str(s.identifier()) for s in action.sections())
        for key, read in (("sections", _section_rows), ("metrics", _metric_rows),
                          ("rules", rule_rows), ("markers", _markers), ("hot_spots", _hot_spots),
                          ("pm_sampling", sampled_series)):
            try:
                out[key] += [{"launch_id": i, **row} for row in read(action)]
            except (AttributeError, TypeError, ValueError, RuntimeError) as exc:
                # one unreadable part (an ncu_report version without that call) costs that
                # part only, named in the output, never the job
                out["problems"].append(f"launch {i} {key}: {type(exc).__name__}: {exc}")
    unnamed = [launch for launch in out["launches"] if launch["annotation"] is None]
    names = region_names(launch["kernel"] for launch in unnamed)  # as the importer names them
    for launch in unnamed:
        launch["annotation"] = names[launch["kernel"]]
    return out


def write_deep_dive(report_path: Path, out_path: Path) -> None:
    """Write :func:`deep_dive` of ``report_path`` (launches in nsight-python ranges) as JSON."""
    out_path.write_text(json.dumps(deep_dive(report_path, other_ranges=False), default=str))

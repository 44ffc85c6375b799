"""A digest of Nsight Compute's rule results over every launch of a job (one table).

Each launch of the report is placed (annotation, config, run) as the per-launch table places it;
its rule results (``IAction.rule_results_as_dicts()``) are grouped by rule and title, and the
groups are sorted by the time they could save in the whole sweep:

    saving % = 100 x sum over the launches where it fires of (duration x speedup / 100)
               / sum of the durations of all launches of the report

where speedup is the rule's estimated speedup in % (Nsight Compute's "Est. Speedup"; a
``local`` estimate speeds up one part of the kernel, so the saving is then an upper bound) and
durations are ``gpu__time_duration.sum`` (ns). A report collected with ``--metrics`` only (the
bundled sweeps) holds no rule results: the digest is empty and says why.

**Capped at the speed-of-light roof.** Each launch's speedup is capped at its headroom,
``100 - max(SM %, memory %)`` of peak (Nsight Compute's GPU Speed Of Light Throughput section:
``sm__throughput`` and ``gpu__compute_memory_throughput`` ``.avg.pct_of_peak_sustained_elapsed``,
each the busiest unit of its kind as % of its peak; Nsight Compute Profiling Guide, "Throughput"):
the same work cannot finish in less than that busiest unit's share of the time. Nsight Compute's
rules estimate each on its own model (TheoreticalOccupancy offered 81-87.5 % on cuBLAS matmuls
running at 86-93 % of the SM's peak: h200-ncu-matmul-rules), so its uncapped figure is kept apart,
:data:`NCU_SAVING`. A launch without the two throughputs is not capped (:data:`CAPPED` says on how
many launches the cap was checked and applied).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.paths import bundle_file, bundle_reports as reports_inside
from profiling_worker.extract.deep_dive_file import written_deep_dive
from profiling_worker.extract.ncu_report_reader import kernel_name, metric_value, placed_actions
from profiling_worker.extract.ncu_sections import rule_rows
from profiling_worker.extract.kernel_regions import region_names
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import metrics as M

RULE, TITLE, SECTION, TYPE = "Rule", "Title", "Section", "Type"
SPEEDUP_MEDIAN, SPEEDUP_MAX, SPEEDUP_TYPE = ("Est. speedup % (median)", "Est. speedup % (max)",
                                             "Speedup type")
FOCUS, REGIONS, CONFIGS, KERNELS = "Focus metrics", C.REGIONS, C.CONFIGS, C.KERNEL_NAMES
FIRES, TIME_SHARE, SAVING, MESSAGE = (C.LAUNCHES, "Time share %", "Est. saving % of sweep",
                                      "Message")
NCU_SAVING = "Nsight Compute's est. saving % (uncapped)"
CAPPED = "Capped at SOL roof"
DIGEST_COLUMNS = [RULE, TITLE, SECTION, TYPE, SAVING, NCU_SAVING, CAPPED, SPEEDUP_MEDIAN,
                  SPEEDUP_MAX, SPEEDUP_TYPE, TIME_SHARE, FIRES, REGIONS, CONFIGS, KERNELS, FOCUS,
                  MESSAGE]
#: Speed-of-light throughputs (% of peak) whose largest bounds a launch's speedup.
SOL_METRICS = (M.SM_PCT, M.MEMORY_PCT)


def launch_rules(report_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(launches, rules) of a plain ``.ncu-rep``.

    Returns:
        launches: one row per launch: launch_id, Annotation, Config (-1: a report made
        elsewhere), Run, Kernel (demangled), duration_ns (NaN when the report lacks
        ``gpu__time_duration.sum``); rules: one row per launch x rule result with launch_id and
        the fields of :func:`~profiling_worker.extract.ncu_sections.rule_rows`.

    Raises:
        OSError, RuntimeError: ncu_report cannot read the report.
    """
    launches, rules = [], []
    for i, (action, annotation, config, run, _launch) in enumerate(
            placed_actions(report_path, other_ranges=True)):
        duration = metric_value(action, M.GPU_TIME)
        sol = [metric_value(action, name) for name in SOL_METRICS]
        launches.append({"launch_id": i, C.ANNOTATION: annotation, C.CONFIG: config,
                         C.RUN: run, C.KERNEL: kernel_name(action),
                         "duration_ns": float(duration[0]) if duration else float("nan"),
                         "sol_pct": sol_pct(float(v[0]) for v in sol if v is not None)})
        rules += [{"launch_id": i, **row} for row in rule_rows(action)]
    return name_regions(pd.DataFrame(launches)), pd.DataFrame(rules)


def deep_dive_rules(data: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(launches, rules) as :func:`launch_rules` returns them, from a written deep dive
    (``nsight/deep_dive.json``: its launches are already placed and named, its rule rows are
    :func:`rule_rows`'s, durations are its ``gpu__time_duration.sum`` metric rows)."""
    values: dict[str, dict[Any, float]] = {name: {} for name in (M.GPU_TIME, *SOL_METRICS)}
    for row in data.get("metrics") or ():
        if row.get("metric") in values and isinstance(row.get("value"), (int, float)):
            values[row["metric"]][row["launch_id"]] = float(row["value"])
    launches = pd.DataFrame(
        [{"launch_id": launch["launch_id"], C.ANNOTATION: launch["annotation"],
          C.CONFIG: launch["config"], C.RUN: launch["run"], C.KERNEL: launch["kernel"],
          "duration_ns": values[M.GPU_TIME].get(launch["launch_id"], float("nan")),
          "sol_pct": sol_pct(values[name][launch["launch_id"]] for name in SOL_METRICS
                             if launch["launch_id"] in values[name])}
         for launch in data.get("launches") or ()])
    return name_regions(launches), pd.DataFrame(data.get("rules") or [])


def sol_pct(throughputs: Iterable[float]) -> float:
    """The busiest unit's throughput in % of its peak: the largest of a launch's
    :data:`SOL_METRICS` values (NaN when it has none)."""
    values = [v for v in throughputs if v == v]
    return max(values) if values else float("nan")


def capped_speedup(speedup: pd.Series, sol: pd.Series) -> pd.Series:
    """Each estimated speedup (% of the launch's duration) capped at the launch's headroom
    ``100 - sol`` (% of peak of its busiest unit, :func:`sol_pct`); uncapped where ``sol`` is
    NaN, NaN where the rule gives no estimate."""
    keep = speedup.isna() | sol.isna() | (speedup <= 100.0 - sol)
    return speedup.where(keep, 100.0 - sol.clip(upper=100.0))


def name_regions(launches: pd.DataFrame) -> pd.DataFrame:
    """Launches in no NVTX range get the region name the importer gives them (their kernel's
    function name, told apart when two shorten alike: extract/kernel_regions.py), so the digest
    names the regions the pages show."""
    if launches.empty:
        return launches
    outside = launches[C.ANNOTATION].isna()
    names = region_names(launches.loc[outside, C.KERNEL])
    launches.loc[outside, C.ANNOTATION] = launches.loc[outside, C.KERNEL].map(names)
    return launches


def _joined(values: Iterable[Any], limit: int = 8, sep: str = ", ") -> str:
    unique = list(dict.fromkeys(str(v) for v in values))
    more = f" (+{len(unique) - limit} more)" if len(unique) > limit else ""
    return sep.join(unique[:limit]) + more


def digest(launches: pd.DataFrame, rules: pd.DataFrame,
           config_label: Callable[[int], str] = str) -> pd.DataFrame:
    """One row per (rule, title), columns :data:`DIGEST_COLUMNS`, most saving first.

    Args:
        launches, rules: as :func:`launch_rules` returns them.
        config_label: config index -> text (``n=4096``); -1 is a config the report does not name.

    Returns:
        The digest; empty (with the columns) when there are no rule results. Time share and
        saving are NaN when the report has no durations.
    """
    if rules.empty or launches.empty:
        return pd.DataFrame(columns=DIGEST_COLUMNS)
    df = rules.merge(launches, on="launch_id", how="left")
    total = launches["duration_ns"].sum(min_count=1)
    sol = df["sol_pct"] if "sol_pct" in df else pd.Series(float("nan"), index=df.index)
    df["ncu_saved_ns"] = df["duration_ns"] * df["speedup"] / 100.0  # NaN: no estimate given
    df["saved_ns"] = df["duration_ns"] * capped_speedup(df["speedup"], sol) / 100.0
    df["checked"], df["capped"] = sol.notna(), df["saved_ns"] < df["ncu_saved_ns"]
    rows = []
    for (rule, title), g in df.groupby(["rule", "title"], sort=False):
        fired = g.drop_duplicates("launch_id")
        best = g.iloc[int(g["saved_ns"].fillna(-1.0).to_numpy().argmax())]
        rows.append({
            RULE: rule, TITLE: title or g["name"].iloc[0], SECTION: g["section"].iloc[0],
            TYPE: _joined(g["type"]), SAVING: 100.0 * g["saved_ns"].sum(min_count=1) / total,
            NCU_SAVING: 100.0 * g["ncu_saved_ns"].sum(min_count=1) / total,
            CAPPED: _capped_text(g),
            SPEEDUP_MEDIAN: g["speedup"].median(), SPEEDUP_MAX: g["speedup"].max(),
            SPEEDUP_TYPE: _joined(g["speedup_type"].dropna()) or "none given",
            TIME_SHARE: 100.0 * fired["duration_ns"].sum(min_count=1) / total,
            FIRES: f"{len(fired)} of {len(launches)}", REGIONS: _joined(fired[C.ANNOTATION]),
            CONFIGS: _joined(config_label(int(c)) for c in sorted(fired[C.CONFIG].unique())),
            # whole names, " + "-joined as the Kernel counts table's: the pages shorten each
            # in the middle (app/core/table_text.py), the CSV keeps them
            KERNELS: _joined(fired[C.KERNEL].map(lambda k: k.split("(")[0]), 4, " + "),
            FOCUS: _joined(f for fs in g["focus_metrics"] for f in fs.split(";") if f),
            MESSAGE: best["message"]})
    out = pd.DataFrame(rows, columns=DIGEST_COLUMNS)
    return out.sort_values([SAVING, SPEEDUP_MAX], ascending=False, na_position="last",
                           ignore_index=True)


def _capped_text(group: pd.DataFrame) -> str:
    """``"40 of 48 launches"`` (capped of those with an estimate), ``"no (48 checked)"``, or
    ``"not checked (no SOL throughput)"``; ``""`` for a rule without an estimate."""
    estimated = group[group["speedup"].notna()].drop_duplicates("launch_id")
    if estimated.empty:
        return ""
    if not estimated["checked"].any():
        return "not checked (no SOL throughput)"
    capped = int(estimated["capped"].sum())
    if not capped:
        return f"no ({int(estimated['checked'].sum())} checked)"
    return f"{capped} of {counted(len(estimated), 'launch', 'launches')}"


def bundle_config_label(bundle: Path) -> Callable[[int], str]:
    """Config index -> ``name=value, ...`` from the bundle's spec.json (``config <i>`` when the
    spec does not list it; ``unknown`` for a launch the report does not place)."""
    try:
        configs = json.loads(bundle_file(bundle, C.SPEC_FILE).read_text()).get("configs") or []
    except (OSError, ValueError):  # missing, a link out (OutsideBundle), not JSON
        configs = []

    def label(i: int) -> str:
        if i < 0:
            return "unknown"
        if i < len(configs) and isinstance(configs[i], dict):
            return ", ".join(f"{k}={v}" for k, v in configs[i].items())
        return f"config {i}"
    return label


def bundle_reports(bundle: Path) -> list[Path]:
    """The bundle's Nsight Compute reports (``nsight/*.ncu-rep`` and ``*.ncu-rep.gz``), links
    out of the bundle left out (:func:`profiling_worker.bundle.paths.bundle_reports`)."""
    return reports_inside(bundle)


def bundle_digest(bundle: Path) -> tuple[pd.DataFrame, str]:
    """The rule digest of a bundle's first report (else of its written deep dive, which holds
    every launch's rules when the report was left out), and a note (why it is empty, what it
    read).

    Raises:
        InflateError: a ``.gz`` report or deep dive cannot be inflated.
        ValueError: the written deep dive is not JSON.
        OSError, RuntimeError: ncu_report cannot read the report.
    """
    from profiling_worker.bundle.inflate import plain_file

    reports = bundle_reports(bundle)
    written = None if reports else written_deep_dive(bundle)
    if reports:
        with plain_file(reports[0]) as plain:
            launches, rules = launch_rules(plain)
        source = reports[0].name
    elif written is not None:
        launches, rules = deep_dive_rules(written)
        source = (f"{written.get('report', 'the report')} (read from {C.DEEP_DIVE_FILE}: the "
                  "report itself is not in this bundle)")
    else:
        return pd.DataFrame(columns=DIGEST_COLUMNS), f"{bundle.name}: no Nsight Compute report"
    note = (f"{source}: {counted(len(launches), 'launch', 'launches')}, "
            f"{counted(len(rules), 'rule result')}")
    if rules.empty:
        note += (" (rules run with sections; this report was collected with --metrics only, "
                 "so Nsight Compute evaluated none: profile with a section set, e.g. a deep dive)")
    return digest(launches, rules, bundle_config_label(bundle)), note

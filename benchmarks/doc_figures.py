"""The speed, A/A, events and runs "auto" figures that docs/ states, recomputed from
the raw device-run files under ``benchmarks/h200/`` (issues 34 and 40).

Each figure is computed here, by a stated method, from a committed file; :func:`claims` gives
the text each document must hold for it, and ``tests/unit/test_doc_figures.py`` checks that the
documents hold exactly that text, so a figure cannot drift from its raw file.

- **speed** (``*-overhead.json``, ``benchmarks/overhead.py``): cold worker / bare script, pair by
  pair, to the result on disk and to exit apart; the paired ratio, CI95 and Wilcoxon p of
  ``benchmarks/paired.py``.
- **A/A** (``*-gate_aa.json``, ``benchmarks/gate_aa.py``): per backend and kind, ``k`` of ``n`` A/A
  rows not ``same`` with the Clopper-Pearson 95 % upper bound, and the planted slowdown found.
  The rows of one pair share its two jobs and consecutive pairs share a job, so the rows are not
  independent: the bound over rows is what the rows would support if they were; over the
  disjoint job pairs (``jobs // 2``, each counted once) it is wider.
- **events** (the attribution table that ``tests/gpu/test_events_gpu.py`` printed in a device
  run's ``*-pytest_gpu.txt``): the residual as a share of the gap it explains (events median -
  CUPTI median), beside its share of the events time.
- **runs "auto"** (the JSON lines of ``benchmarks/adaptive_runs.py`` in a ``*-pytest_gpu.txt``):
  GPU time auto / fixed, and fixed runs brought to auto's interval width: the runs a fixed job
  needs for auto's width, ``n_fixed (w_fixed / w_auto)^2`` (the t interval narrows as
  ``1/sqrt(n)``), and its GPU time at each config's time per run in the bundled job of the same
  kernels (:data:`AUTO_BUNDLES`).
- **warm** (``*-warm_stages.json``) and **pages** (``benchmarks/cpu/page-speed-*.json``): the
  worker's own part of a warm J1 against nsight-python's call; the page ratios and click, and
  where a run measured a baseline checkout in the same rounds, after / before pair by pair.
- **warm post-processing, before/after** (``benchmarks/cpu/post-processing-ab-*.json``,
  ``benchmarks/post_processing.py --against``): per recorded bundle, after / before of the
  rounds' median wall and CPU time per job, paired by round.
- **a click's CPU time** (``benchmarks/cpu/click-cpu-*.json``, ``benchmarks/click_cpu.py``): per
  page, the browser main thread's CPU from the click to the chart's frame and the server's
  script run up to the chart, two trees in the same rounds, and their paired ratios (over
  every click, and for a change to one page over that page's clicks alone).
- **big sweeps** (``benchmarks/cpu/big-sweep-*.json``, ``benchmarks/big_sweep_page.py``): seconds
  to the Size sweep's first chart of a 1,000- and a 10,000-config sweep, after and before,
  medians and the paired ratio, and a bare Streamlit page's in the same rounds where measured;
  single loads message by message (``benchmarks/cpu/big-sweep-breakdown-*.json``,
  ``benchmarks/big_sweep_breakdown.py``): when the script started, the chart's and the table's
  messages arrived and the chart was drawn, and the renderer main thread's longest task; the
  page's script run, cold and warm, after and before (``benchmarks/big_sweep_server.py``).
- **the gate's read through the one loader** (``benchmarks/cpu/gate-load-*.json``,
  ``benchmarks/gate_load.py --cli``): per bundle, the medians of ``GateSide.load`` before and
  after and the paired ratio; the whole ``compare`` command the same way.
- **upload memory** (``benchmarks/cpu/upload-memory-*.json``, ``benchmarks/upload_memory.py
  --baseline ... --json``): the server's resident set above its level before a closed tab's
  upload, with it, at its session's shutdown and 10 s later, before and after; medians of the
  rounds.

Usage: ``python benchmarks/doc_figures.py`` prints every figure (Markdown).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
H200 = HERE / "h200"
sys.path[:0] = [str(REPO), str(HERE)]

from gate_aa import clopper_pearson  # noqa: E402  (benchmarks/ on sys.path)
from overhead import to_result  # noqa: E402
from paired import paired_ratio  # noqa: E402

#: Device runs whose overhead JSON docs/performance.md quotes (issue 40).
SPEED_RUNS = ("h200-1202-s6run2", "h200-1205-speedrun1", "h100-1205-s10all", "h100-1205-s11all",
              "h100-1205-s13all", "h100-1206-s18cold", "h100-1207-s23merged", "h100-1207-s24ncuov")
#: Device runs whose ``*-warm_stages.json`` docs/performance.md quotes.
WARM_RUNS = ("h200-1202-s6run2", "h200-1205-speedrun1", "h100-1205-s10all", "h100-1205-s11all",
             "h100-1205-s13all", "h100-1206-s18cold", "h100-1207-s23merged", "h100-1207-s24gc1",
             "h100-1207-s24gc0", "h100-1207-s24gc0b", "h100-1207-s26", "h100-1207-s27")
#: Device runs whose warm stages carry the result-ready mark (session 25's contract).
WARM_READY_RUNS = ("h100-1207-s26", "h100-1207-s27")
#: Gate A/A studies: study 1 (defaults) and study 2 (more runs), docs/measurements-h200.md.
AA_RUNS = ("h200-1201-run2", "h200-1201-run4")
#: Events attribution and runs "auto": the two device runs the docs quote.
EVENTS_RUNS = ("h200-1202-run7", "h200-1202-run9")
AUTO_RUN = "h200-1202-run2"


def speed(run: str) -> dict[str, dict[str, Any]]:
    """Per backend: ``to_result`` and ``to_exit`` (cold / bare, :func:`paired.paired_ratio`)."""
    raw = json.loads((H200 / f"{run}-overhead.json").read_text())
    out = {}
    for backend, runs in raw.items():
        out[backend] = {
            "to_result": paired_ratio(to_result(runs, "cold"), to_result(runs, "bare")),
            "to_exit": paired_ratio(runs["cold_s"], runs["bare_s"])}
        if runs.get("warm_first_job_s"):
            n = len(runs["warm_first_job_s"])
            out[backend]["first_warm_over_cold"] = paired_ratio(runs["warm_first_job_s"],
                                                                runs["cold_s"][:n])
    return out


def aa(run: str) -> list[dict[str, Any]]:
    """One row per backend x kind: A/A ``k`` of ``n`` not same with the Clopper-Pearson upper
    bound over rows and over disjoint job pairs (``jobs // 2``), and the planted found."""
    raw = json.loads((H200 / f"{run}-gate_aa.json").read_text())
    rows = []
    for backend, res in raw["backends"].items():
        for kind, k in res["kinds"].items():
            a, p = k["aa_not_same"], k["planted_found"]
            if not a["n"]:
                continue
            per_pair = a["n"] // res["pairs"]
            disjoint = res["jobs"] // 2
            rows.append({
                "backend": backend, "kind": kind, "pairs": res["pairs"], "jobs": res["jobs"],
                "k": a["k"], "n": a["n"], "rate_pct": 100 * a["k"] / a["n"],
                "upper_pct": 100 * clopper_pearson(a["k"], a["n"])[1],
                "disjoint_pairs": disjoint,
                # 0 of n rows: 0 of the disjoint pairs too; for k > 0 the file does not say
                # how many pairs held them
                "upper_disjoint_pct": 100 * clopper_pearson(0, disjoint)[1]
                if a["k"] == 0 and per_pair else math.nan,
                "found_k": p["k"], "found_n": p["n"], "found_pct": 100 * p["k"] / p["n"],
                "found_lower_pct": 100 * clopper_pearson(p["k"], p["n"])[0]})
    return rows


def warm(run: str) -> dict[str, float]:
    """A warm J1 (``*-warm_stages.json``, ``benchmarks/warm_stages.py``), per job: the worker's
    own part = ``runner.run_job``'s wall less nsight-python's call; medians over the jobs (ms)
    and of own / nsight-python per job (issue 40's target: at most 0.10)."""
    raw = json.loads((H200 / f"{run}-warm_stages.json").read_text())
    nspy = [job["nsight-python call"] for job in raw["per_job_ms"]]
    own = [1e3 * w - n for w, n in zip(raw["run_job_wall_s"], nspy)]
    return {"jobs": len(own), "own_ms": statistics.median(own),
            "nsight_ms": statistics.median(nspy),
            "own_over_nsight": statistics.median(o / n for o, n in zip(own, nspy))}


#: Warm J1 before / after on one card in one call: ``<run>-ws-{base,new}-{1,2}.json``, the
#: rounds base, new, base, new (``warm_stages.py`` of each tree, 10 jobs each); a round whose
#: file did not come back from the device is left out, and its partner round with it.
WARM_AB_RUNS = ("h100-1205-s11ab", "h100-1205-s13all")


def _own_parts(raw: dict[str, Any]) -> list[float]:
    """Per job: ``run_job``'s wall less nsight-python's call (ms)."""
    return [1e3 * w - j["nsight-python call"]
            for w, j in zip(raw["run_job_wall_s"], raw["per_job_ms"])]


def warm_ab(run: str) -> dict[str, Any]:
    """The worker's own part per side (medians, ms), nsight-python's call, and new / base
    paired job by job within each round (:func:`paired.paired_ratio`, target 0.10: issue 40's
    own part against nsight-python's call is judged from ``own_over_nsight``)."""
    import statistics

    from paired import paired_ratio

    sides: dict[str, list[dict[str, Any]]] = {
        side: [json.loads(path.read_text()) for i in (1, 2)
               if (path := H200 / f"{run}-ws-{side}-{i}.json").exists()]
        for side in ("base", "new")}
    own = {side: [_own_parts(r) for r in raws] for side, raws in sides.items()}
    pairs = [(n, b) for rn, rb in zip(own["new"], own["base"]) for n, b in zip(rn, rb)]
    nspy = [j["nsight-python call"] for r in sides["new"] for j in r["per_job_ms"]]
    flat_new = [o for r in own["new"] for o in r]
    return {"base_ms": statistics.median(o for r in own["base"] for o in r),
            "new_ms": statistics.median(flat_new), "nsight_ms": statistics.median(nspy),
            "own_over_nsight": statistics.median(o / n for o, n in zip(flat_new, nspy)),
            "ratio": paired_ratio([n for n, _ in pairs], [b for _, b in pairs])}


def warm_ab_text(run: str) -> str:
    """``own part 47 ms against main's 71 ms: 0.66 (CI95 ..., 0 of 20 pairs slower, ...``."""
    w = warm_ab(run)
    r = w["ratio"]
    lo, hi = r["ci95"]
    return (f"the worker's own part {w['new_ms']:.0f} ms against {w['base_ms']:.0f} ms before, "
            f"after / before {r['estimate']:.2f} (CI95 {lo:.2f}-{hi:.2f}, {r['slower_pairs']} of "
            f"{r['n']} pairs slower, p = {r['p_wilcoxon']:.3f}); nsight-python's call "
            f"{w['nsight_ms']:.0f} ms, the own part {w['own_over_nsight']:.2f}x it")


def warm_ready(run: str) -> dict[str, float]:
    """A warm J1's own part to ``result_ready`` (runs and aggregated on disk, what the first
    chart reads): per job ``run_job``'s wall less nsight-python's call less what follows the
    mark (``own part: whole`` less ``own part: to result_ready``, both from the start of
    ``write_result_tables``); medians over the jobs (ms) and of it / nsight-python's call."""
    raw = json.loads((H200 / f"{run}-warm_stages.json").read_text())
    ready = [1e3 * w - j["nsight-python call"]
             - (j["own part: whole (to the final write)"] - j["own part: to result_ready"])
             for w, j in zip(raw["run_job_wall_s"], raw["per_job_ms"])]
    nspy = [j["nsight-python call"] for j in raw["per_job_ms"]]
    return {"jobs": len(ready), "ready_ms": statistics.median(ready),
            "ready_over_nsight": statistics.median(r / n for r, n in zip(ready, nspy))}


def warm_ready_text(run: str) -> str:
    w = warm_ready(run)
    return (f"the worker's own part to `result_ready` {w['ready_ms']:.1f} ms, "
            f"{w['ready_over_nsight']:.2f}x nsight-python's call (median of {w['jobs']} jobs)")


def warm_text(run: str) -> str:
    w = warm(run)
    return (f"the worker's own part {w['own_ms']:.0f} ms against nsight-python's call "
            f"{w['nsight_ms']:.0f} ms, {w['own_over_nsight']:.2f}x it (median of {w['jobs']} jobs)")


#: Warm post-processing before/after runs (``benchmarks/post_processing.py --against ... --json``,
#: 2-core machine) the docs quote (issue 40).
POST_AB_RUNS = ("post-processing-ab-1205-speed", "post-processing-ab-1205-warm-own",
                "post-processing-ab-1205-s10", "post-processing-ab-1205-s11",
                "post-processing-ab-1205-s12", "post-processing-ab-1205-s13",
                "post-processing-ab-1206-s19", "post-processing-ab-1206-s19-no-csv-probe",
                "post-processing-ab-1206-s20-csv", "post-processing-ab-1207-s21-ready",
                "post-processing-ab-1207-s23-warm", "post-processing-ab-1207-s23-warm-j1x20",
                "post-processing-ab-1207-s24-tables")


def post_ab(run: str) -> dict[str, dict[str, Any]]:
    """Per bundle: after / before of each round's median wall and median CPU time per job
    (:func:`paired.paired_ratio` over the rounds, each round one fresh process per side)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    out = {}
    for name in dict.fromkeys(r["bundle"] for r in raw["before"]):
        before = [r for r in raw["before"] if r["bundle"] == name]
        after = [r for r in raw["after"] if r["bundle"] == name]
        out[name] = {
            "wall": paired_ratio([r["median_ms"] for r in after], [r["median_ms"] for r in before]),
            "cpu": paired_ratio([r["cpu_median_ms"] for r in after],
                                [r["cpu_median_ms"] for r in before]),
            "before_ms": _median([r["median_ms"] for r in before]),
            "after_ms": _median([r["median_ms"] for r in after]),
            "same": all(r["same_as_recorded"] for r in before + after)}
    return out


def _median(values: list[float]) -> float:
    import statistics

    return statistics.median(values)


def post_ab_text(run: str, bundle: str) -> str:
    """``h200-cupti-j1-fp16: wall 98.1 -> 61.2 ms, after / before 0.62 (CI95 ...) ...``."""
    r = post_ab(run)[bundle]

    def ratio(x: dict[str, Any]) -> str:
        lo, hi = x["ci95"]
        return (f"{x['estimate']:.2f} (CI95 {lo:.2f}-{hi:.2f}, {x['slower_pairs']} of {x['n']} "
                f"rounds slower, p = {x['p_wilcoxon']:.3f})")

    return (f"{bundle}: median per round {r['before_ms']:.1f} -> {r['after_ms']:.1f} ms, wall "
            f"after / before {ratio(r['wall'])}, CPU time {ratio(r['cpu'])}; every rebuilt "
            f"bundle the same as recorded: {r['same']}")


#: ``benchmarks/warm_stages.py --recorded`` runs on the 2-core machine (issue 40), per side.
CPU_STAGE_RUNS = {side: tuple(f"warm-stages-1205-speed-{side}-{i}" for i in (1, 2))
                  for side in ("before", "after")}
#: The H200 run whose warm stages the breakdown table sets beside them.
H200_STAGE_RUN = "h200-1205-speedrun1"
#: (label in the table, stage name in the JSON), the worker's own stages.
CPU_STAGES = (("the worker's own part, whole", "run_job wall"),
              ("`write_result_tables`", "write_result_tables"),
              ("`launches_to_runs`", "tables: launches_to_runs"),
              ("`aggregate_runs`", "tables: aggregate_runs"),
              ("7 x `write_table`", "tables: write_table"),
              ("`write_run_audit`", "write_run_audit"),
              ("`finish_bundle`", "finish_bundle"),
              ("plausibility checks", "finish: plausibility"))
#: The second session on the worker's own part (issue 40, branch warm-own): its runs, per side,
#: and its stages (the run audit's own timer added).
CPU_STAGE_RUNS_WARM_OWN = {side: tuple(f"warm-stages-1205-warm-own-{side}-{i}" for i in (1, 2))
                           for side in ("before", "after")}
CPU_STAGES_WARM_OWN = (*CPU_STAGES[:6], ("`audit_runs`", "run audit: audit_runs"),
                       *CPU_STAGES[6:])
#: The third session on it (issue 40, branch warm-own2): its runs, per side, and its stages
#: (the files' own timers and the manifest added).
CPU_STAGE_RUNS_S10 = {side: tuple(f"warm-stages-1205-s10-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
CPU_STAGES_S10 = (*CPU_STAGES_WARM_OWN[:5],
                  ("Parquet writes", "tables: Parquet writes"),
                  ("CSV writes", "tables: CSV writes (the worker's)"),
                  *CPU_STAGES_WARM_OWN[5:], ("manifest (written, fsynced)", "finish: manifest"))
#: The fourth session on it (issue 40, branch warm-own3): its runs per side, on J1's recorded
#: inputs and on those of h200-cupti-gate-base (launch times and an NVML trace, as a live
#: CUPTI job has: the run audit's clock and idle-gap checks run), with the S10 stages and the
#: H100 run "h100 1205-s10all" beside them.
CPU_STAGE_RUNS_S11 = {side: tuple(f"warm-stages-1205-s11-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
CPU_STAGE_RUNS_S11_GATE = {side: tuple(f"warm-stages-1205-s11-gate-{side}-{i}" for i in (1, 2))
                           for side in ("before", "after")}
#: The fifth session on it (issue 40, branch warm-own4): its runs per side, on the same two
#: bundles' inputs, with the S10 stages and the H100 run "h100 1205-s11all" (the code before
#: this pass, on the card) beside them.
CPU_STAGE_RUNS_S12 = {side: tuple(f"warm-stages-1205-s12-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
CPU_STAGE_RUNS_S12_GATE = {side: tuple(f"warm-stages-1205-s12-gate-{side}-{i}" for i in (1, 2))
                           for side in ("before", "after")}
DEVICE_STAGE_RUN_S12 = "h100-1205-s11all"
#: The sixth session on it (issue 40, branch warm-own5): its runs per side, on the same two
#: bundles' inputs, beside the same device run. The empty collectors table of a job without
#: collectors is no ``write_table`` call after it (``write_empty_table``, timed apart).
CPU_STAGE_RUNS_S13 = {side: tuple(f"warm-stages-1205-s13-{side}-{i}" for i in range(1, 5))
                      for side in ("before", "after")}
CPU_STAGE_RUNS_S13_GATE = {side: tuple(f"warm-stages-1205-s13-gate-{side}-{i}"
                                       for i in range(1, 5))
                           for side in ("before", "after")}
CPU_STAGES_S13 = (*CPU_STAGES_S10[:4],
                  ("`write_table` (after: all but the empty collectors table)",
                   "tables: write_table"),
                  ("`write_empty_table` (the empty collectors table)",
                   "tables: write_empty_table"),
                  *CPU_STAGES_S10[5:])

#: The seventh session on it (issue 40, branch s19-warm-own): J1's recorded inputs with the
#: tables' CSV copies (this branch, the table's "before" column) and without them (a probe of
#: the branch that writes Parquet only, the "after" column; not landed: docs/performance.md
#: says what landing it needs), beside the device run "gpu 1206-s18cold".
CPU_STAGE_RUNS_S19 = {"before": ("warm-stages-1206-s19-csv-1", "warm-stages-1206-s19-csv-2"),
                      "after": ("warm-stages-1206-s19-no-csv-probe-1",
                                "warm-stages-1206-s19-no-csv-probe-2")}
DEVICE_STAGE_RUN_S18 = "h100-1206-s18cold"
#: The eighth (issue 40, branch s20-csv): J1's recorded inputs, main 6733f9e (the "before"
#: column, CSV copies written) and this branch (Parquet only, the CSVs made on download).
CPU_STAGE_RUNS_S20 = {side: tuple(f"warm-stages-1206-s20-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
#: The ninth (issue 40, branch s21-ready): J1's recorded inputs, main 40705e94 ("before") and
#: this branch (the plausibility checks' negative-value check searches only where a value is at
#: or below 0).
CPU_STAGE_RUNS_S21 = {side: tuple(f"warm-stages-1207-s21-ready-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
#: The tenth (issue 40, branch s23-warm): J1's recorded inputs, main 2b3505c2 ("before") and
#: this branch (columns read as Python values once, a layout's Arrow schema made once, the
#: checks' numpy looks before their Series).
CPU_STAGE_RUNS_S23 = {side: tuple(f"warm-stages-1207-s23-warm-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
#: The eleventh (issue 40, branch s24-tables): main df807212 ("before") and the branch (short
#: columns numbered by a dict, columns read once, typed audit columns), five runs a side in turn.
CPU_STAGE_RUNS_S24 = {side: tuple(f"warm-stages-1207-s24-tables-{side}-{i}" for i in range(1, 6))
                      for side in ("before", "after")}
#: The twelfth (issue 40, branch s25-ready): main ce5a99ed ("before") and the branch, which
#: writes a manifest with ``result_ready`` after runs and aggregated (the first chart's tables),
#: then the rest; the stages add the own part to that write and the write itself.
CPU_STAGE_RUNS_S25 = {side: tuple(f"warm-stages-1207-s25-ready-{side}-{i}" for i in (1, 2))
                      for side in ("before", "after")}
CPU_STAGES_S25 = (("the worker's own part, to `result_ready`", "own part: to result_ready"),
                  *CPU_STAGES_S13[:1],
                  ("`result_ready` manifest write", "result ready (manifest)"),
                  *CPU_STAGES_S13[1:])

#: The thirteenth (issue 40, session 27, branch s27-warm): main 253aeda1 ("before") and the
#: branch (the aggregated table written from its columns before its frame is made, the runs
#: table from its columns, the units' and Kernels' reads without a Series), four runs a side in
#: turn, beside the H100's warm J1 of "gpu 1207-s26" (the code before this pass, on the card).
CPU_STAGE_RUNS_S27 = {side: tuple(f"warm-stages-1207-s27-own-{side}-{i}" for i in range(1, 5))
                      for side in ("before", "after")}
CPU_STAGES_S27 = (*CPU_STAGES_S25[:6],
                  ("`write_table` (after: all but runs, aggregated and the empty collectors table)",
                   "tables: write_table"),
                  ("`write_columns` (after: runs, aggregated)", "tables: write_columns"),
                  *CPU_STAGES_S25[7:9], *CPU_STAGES_S25[10:])
DEVICE_STAGE_RUN_S26 = "h100-1207-s26"


def own_ready_ab(stage_runs: dict[str, tuple[str, ...]], stage: str) -> dict[str, Any]:
    """Job i of a side's k-th ``warm_stages.py --recorded`` run paired with job i of the other
    side's k-th run (the two runs were made one after the other), on the stage's CPU time per
    job (``per_job_cpu_ms``): the sides' medians (ms) and :func:`paired.paired_ratio` of after
    / before."""
    sides = {side: [json.loads((HERE / "cpu" / f"{run}.json").read_text())["per_job_cpu_ms"]
                    for run in runs] for side, runs in stage_runs.items()}
    pairs = [(a[stage], b[stage]) for before, after in zip(sides["before"], sides["after"])
             for b, a in zip(before, after)]
    return {"before_ms": statistics.median(b for _, b in pairs),
            "after_ms": statistics.median(a for a, _ in pairs),
            "ratio": paired_ratio([a for a, _ in pairs], [b for _, b in pairs])}


def own_ready_ab_text(stage_runs: dict[str, tuple[str, ...]] = CPU_STAGE_RUNS_S27) -> str:
    """``to result_ready 5.3 -> 4.4 ms of CPU per job, after / before 0.83 (CI95 ...): met;
    whole ...`` (:func:`own_ready_ab`)."""
    ready = own_ready_ab(stage_runs, "own part: to result_ready")
    whole = own_ready_ab(stage_runs, "own part: whole (to the final write)")
    return (f"the worker's own part to `result_ready` {ready['before_ms']:.1f} -> "
            f"{ready['after_ms']:.1f} ms of CPU per job (medians), after / before "
            f"{ratio_text(ready['ratio'])}; whole {whole['before_ms']:.1f} -> "
            f"{whole['after_ms']:.1f} ms, {ratio_text(whole['ratio'])}")


def _stage_ms(job: dict[str, float], wall_s: float, stage: str) -> float:
    return 1e3 * wall_s if stage == "run_job wall" else job.get(stage, math.nan)


#: The device run after issue 40's three passes (an H100: the device tool gave that card) and
#: the stages its table shows.
DEVICE_STAGE_RUN = "h100-1205-s10all"
DEVICE_STAGES = (*CPU_STAGES_S10[:9], ("`finish_bundle`", "finish_bundle"),
                 ("plausibility checks", "finish: plausibility"),
                 ("manifest (written, fsynced)", "finish: manifest"),
                 ("`prepare`", "prepare"), ("warm-up (one call per config)", "warm_up_bodies"),
                 ("nsight-python's one call", "nsight-python call"))


def warm_repeat_text(run: str = DEVICE_STAGE_RUN) -> str:
    """``0.185 s from submit to result (0.154-0.208, 6 jobs`` (``overhead.py``'s warm repeats
    through the job manager, CUPTI)."""
    import statistics

    warm_s = json.loads((H200 / f"{run}-overhead.json").read_text())["cupti"]["warm_s"]
    return (f"{statistics.median(warm_s):.3f} s from submit to result ({min(warm_s):.3f}-"
            f"{max(warm_s):.3f}, {len(warm_s)} jobs")


def device_stage_rows(run: str = DEVICE_STAGE_RUN,
                      stages: tuple[tuple[str, str], ...] = DEVICE_STAGES) -> list[str]:
    """``| stage | median | min-max |`` (ms, wall) over the warm jobs of one device run's
    ``*-warm_stages.json``; the whole own part is ``run_job`` less nsight-python's call."""
    import statistics

    raw = json.loads((H200 / f"{run}-warm_stages.json").read_text())
    rows = []
    for label, stage in stages:
        if stage == "run_job wall":
            own = [1e3 * w - j["nsight-python call"]
                   for w, j in zip(raw["run_job_wall_s"], raw["per_job_ms"])]
            med, lo, hi = statistics.median(own), min(own), max(own)
        else:
            st = raw["stages"][stage]
            med, lo, hi = st["median_ms"], st["min_ms"], st["max_ms"]
        rows.append(f"| {label} | {med:.1f} | {lo:.1f}-{hi:.1f} |")
    return rows


def cpu_stage_rows(stage_runs: dict[str, tuple[str, ...]] = CPU_STAGE_RUNS,
                   stages: tuple[tuple[str, str], ...] = CPU_STAGES,
                   cpu_time: bool = False, device_run: str = H200_STAGE_RUN) -> list[str]:
    """The breakdown table's rows (``stage_runs``: per side, its warm_stages runs): per stage,
    the device run ``device_run``'s median over its warm jobs (the whole own part there:
    ``run_job`` less nsight-python's call; ``-`` where it was not timed) and,
    per side on the 2-core machine, the fastest job of both runs (the least disturbed by the
    other sessions' load; medians are in the JSON), or with ``cpu_time`` the median CPU time
    of the stage over both runs' jobs (``per_job_cpu_ms``)."""
    import statistics

    h200 = json.loads((H200 / f"{device_run}-warm_stages.json").read_text())
    sides = {side: [json.loads((HERE / "cpu" / f"{run}.json").read_text()) for run in runs]
             for side, runs in stage_runs.items()}
    rows = []
    for label, stage in stages:
        if stage == "run_job wall":
            on_h200 = statistics.median(1e3 * w - j["nsight-python call"] for w, j in
                                        zip(h200["run_job_wall_s"], h200["per_job_ms"]))
        else:
            on_h200 = h200["stages"].get(stage, {}).get("median_ms", math.nan)
        fastest = {side: (statistics.median(j.get(stage, math.nan) for raw in runs
                                            for j in raw["per_job_cpu_ms"]) if cpu_time else
                          min(_stage_ms(j, w, stage) for raw in runs
                              for w, j in zip(raw["run_job_wall_s"], raw["per_job_ms"])))
                   for side, runs in sides.items()}
        cells = [f"{v:.1f}" if v == v else "-" for v in (on_h200, fastest["before"],
                                                         fastest["after"])]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


#: Page benchmark runs (``benchmarks/page_speed.py --json``, 2-core machine) the docs quote.
PAGE_RUNS = ("page-speed-1205-speed", "page-speed-1205-speed2", "page-speed-1205-s10-quiet",
             "page-speed-1206-s20-quiet", "page-speed-1207-s21-quiet",
             "page-speed-1207-s23-quiet", "page-speed-1207-s25-quiet",
             "page-speed-1207-s26-quiet")


#: Page benchmark runs beside a baseline checkout (``page_speed.py --baseline``) the docs quote.
PAGE_PAIRED_RUNS = ("page-speed-1205-s10-click", "page-speed-1205-s10-click2",
                    "page-speed-1205-s10-final", "page-speed-1205-s11-quiet",
                    "page-speed-1205-s12-quiet", "page-speed-1206-s14-quiet",
                    "page-speed-1206-s17")


def pages_text(run: str) -> str:
    """``cold 1.27x, warm 1.41x a bare page, click 1173 ms (medians of 5 rounds; load 10.9)``."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())["summary"]
    r, m = raw["ratio_median"], raw["median_s"]
    return (f"cold {r['dash_cold']:.2f}x, warm {r['dash_warm']:.2f}x a bare page, click "
            f"{1e3 * m['dash_click']:.0f} ms (medians of {raw['rounds']} rounds; load average "
            f"{raw['load_average'][0]:.1f} on {raw['cpus']} CPUs)")


def pages_paired_text(run: str) -> str:
    """``click 190 ms (before 385 ms, 20 clicks each); after / before, pair by pair: click 0.52
    (CI95 ...), cold ..., warm ...; cold 1.08x, warm 1.02x a bare page (before ...)``: medians
    of one :mod:`page_speed` run with ``--baseline``, the paired ratios of its summary
    (:func:`paired.paired_ratio`: the geometric mean, its CI95, the pairs slower, Wilcoxon p)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())["summary"]
    r, m, p = raw["ratio_median"], raw["median_s"], raw["paired"]

    def after_before(kind: str) -> str:
        lo, hi = p[kind]["ci95"]
        return (f"{kind} {p[kind]['estimate']:.2f} (CI95 {lo:.2f}-{hi:.2f}, "
                f"{p[kind]['slower_pairs']} of {p[kind]['n']} pairs slower, "
                f"p = {p[kind]['p_wilcoxon']:.3f})")

    return (f"click {1e3 * m['dash_click']:.0f} ms (before {1e3 * m['base_click']:.0f} ms, "
            f"{p['click']['n']} clicks each); after / before, pair by pair: "
            + "; ".join(after_before(k) for k in ("click", "cold", "warm"))
            + f"; cold {r['dash_cold']:.2f}x, warm {r['dash_warm']:.2f}x a bare page (before "
            f"{r['base_cold']:.2f}x, {r['base_warm']:.2f}x; medians of {raw['rounds']} rounds; "
            f"load average {raw['load_average'][0]:.1f} on {raw['cpus']} CPUs)")


#: Page benchmark runs (no baseline) whose clicks the docs give page by page.
CLICKS_BY_PAGE_RUNS = ("page-speed-1207-s25-quiet", "page-speed-1207-s26-quiet")


#: Page benchmark runs that time a bare two-page Streamlit app's click beside the dashboard's.
BARE_CLICK_RUNS = ("page-speed-1206-s17-bareclick-1round", "page-speed-1206-s17",
                   "page-speed-1206-s20-quiet")


def bare_click_text(run: str) -> str:
    """``click 407 ms (324-539 ms); a bare two-page Streamlit app's click in the same rounds
    200 ms (132-265 ms); dashboard / bare 2.04x (the median of the rounds' ratios; 1 round,
    load average 3.7 on 2 CPUs)`` for one :mod:`page_speed` run (medians over its clicks)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())["summary"]
    m, spans = raw["median_s"], raw["click_range_ms"]

    def side(key: str, span: str) -> str:
        lo, hi = spans[span]
        return f"{1e3 * m[key]:.0f} ms ({lo:.0f}-{hi:.0f} ms)"

    return (f"click {side('dash_click', 'dash')}; a bare two-page Streamlit app's click in the "
            f"same rounds {side('bare_click', 'bare')}; dashboard / bare "
            f"{raw['click_ratio_median']['dash']:.2f}x (the median of the rounds' ratios; "
            f"{raw['rounds']} round{'s' if raw['rounds'] > 1 else ''}, load average "
            f"{raw['load_average'][0]:.1f} on {raw['cpus']} CPUs)")


#: Page benchmark runs whose clicks fail per round, not per run, with the paired ratios against
#: the bare page and app (``vs_bare``; page_speed.py since session 21).
VS_BARE_RUNS = ("page-speed-1207-s21-fixed-2rounds", "page-speed-1207-s23-quiet",
                "page-speed-1207-s25-quiet", "page-speed-1207-s26-quiet")


def vs_bare_text(run: str) -> str:
    """``click 994 ms (267-1920 ms; 8 clicks timed, failed per round 0, 0); a bare two-page
    Streamlit app's click 917 ms; dashboard / bare, pair by pair: click 0.97 (CI95 ..., one
    pair a round: the rounds' median clicks), cold ..., warm ... (one pair a round; 2 rounds,
    load average 15.0 on 2 CPUs)`` for one :mod:`page_speed` run (:func:`paired.paired_ratio`
    of its summary's ``vs_bare``)."""
    whole = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    raw, timed = whole["summary"], len(whole["samples"]["dash_click"])
    m, (lo, hi), vs = raw["median_s"], raw["click_range_ms"]["dash"], raw["vs_bare"]

    def pairs(kind: str) -> str:
        r = vs[f"dash_{kind}"]
        return (f"{kind} {r['estimate']:.2f} (CI95 {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}, "
                f"{r['slower_pairs']} of {r['n']} pairs slower, p = {r['p_wilcoxon']:.3f})")

    failed = ", ".join(str(n) for n in raw["click_failures"]["dash_click"])
    return (f"click {1e3 * m['dash_click']:.0f} ms ({lo:.0f}-{hi:.0f} ms; {timed} clicks timed, "
            f"failed per round {failed}); a bare two-page Streamlit app's click "
            f"{1e3 * m['bare_click']:.0f} ms; dashboard / bare, pair by pair: "
            + "; ".join(pairs(k) for k in ("click", "cold", "warm"))
            + f" (one pair a round, the click's the rounds' median clicks; {raw['rounds']} "
            f"rounds, load average {raw['load_average'][0]:.1f} on {raw['cpus']} CPUs)")


def clicks_by_page_text(run: str, side: str = "dash") -> str:
    """``stability 500, kernels 374, one-kernel 528, sweep 274 ms`` for one
    :mod:`page_speed` run: each page's click, the median over the rounds (the samples hold one
    click per page of ``CLICK_PAGES`` per round, in that order; ``sweep`` is the root page)."""
    from page_speed import CLICK_PAGES

    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    clicks, pages = raw["samples"][f"{side}_click"], [p or "sweep" for p in CLICK_PAGES]
    return ", ".join(f"{page} {1e3 * statistics.median(clicks[i::len(pages)]):.0f}"
                     for i, page in enumerate(pages)) + " ms"


#: Clicks stage by stage (``benchmarks/click_breakdown.py --json``), before and after.
CLICK_BREAKDOWN_RUNS = ("click-breakdown-1205-s10-before", "click-breakdown-1205-s10-after")


def click_breakdown_text(run: str, page: str) -> str:
    """``stability: 43 messages (10,956 B) before the chart's, chart message 980 ms, drawn
    1667 ms, script finished 2083 ms after the click`` for one :mod:`click_breakdown` run's
    first visits (pass 1; medians of the rounds; load average at its start and end)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    clicks = [c for c in raw["clicks"] if c["pass"] == 1 and c["page"] == page]

    def med(key: str) -> float:
        return float(statistics.median(c[key] for c in clicks))

    return (f"{page}: {med('messages_before_chart'):.0f} messages ({med('bytes_before_chart'):,.0f}"
            f" B) before the chart's, chart message {med('chart_msg'):.0f} ms, drawn "
            f"{med('drawn'):.0f} ms, script finished {med('finished'):.0f} ms after the click")


#: A click's CPU time, server and browser, two trees in the same rounds
#: (``benchmarks/click_cpu.py --json``; wall times were no measure beside a CPU hog).
#: Run -> whether its server figures count (the first run's hook took a click's first run, which
#: could be a short rerun before the page's, as the run to the chart).
CLICK_CPU_RUNS = {"click-cpu-1205-s13-ticks": False, "click-cpu-1205-s13-hog": True,
                  "click-cpu-1206-s17-listing": True, "click-cpu-1206-s17-bare4": True,
                  "click-cpu-1206-s20-sweep": True, "click-cpu-1206-s20-pages": True,
                  "click-cpu-1207-s21-bare4": True, "click-cpu-1207-s21-table": True,
                  "click-cpu-1207-s26-styler": True, "click-cpu-1207-s26-prefetch": True}

#: :mod:`click_cpu` runs of a change to the server's work after the chart (the whole script
#: run's CPU, ``server_cpu_ms``, is their figure: :func:`click_cpu_server_text`).
CLICK_CPU_SERVER_RUNS = ("click-cpu-1207-s26-styler", "click-cpu-1207-s26-prefetch")


def click_cpu_text(run: str, server: bool = True) -> str:
    """``browser to the chart's frame: stability 180 / 250 ms, ...; the server to the chart:
    ...; this / before, pair by pair: browser 0.90 (CI95 ...)`` for one :mod:`click_cpu` run of
    two trees (its first tag against its second): medians per page over the rounds of the
    renderer main thread's CPU from the click to the chart's frame and of the script thread's CPU
    up to the chart's element, the paired ratios over every click (:func:`paired.paired_ratio`),
    and the clicks whose script run had a full garbage collection (before the chart, and the
    CPU ms of the run's collections), all recomputed from the clicks."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    clicks = raw["clicks"]
    tags = list(dict.fromkeys(c["tag"] for c in clicks))
    pages = list(dict.fromkeys(c["page"] for c in clicks))

    def by_page(field: str) -> str:
        def med(tag: str, page: str) -> str:
            values = [c[field] for c in clicks if (c["tag"], c["page"]) == (tag, page)]
            return f"{statistics.median(values):.0f}"

        return ", ".join(f"{page} " + " / ".join(med(tag, page) for tag in tags)
                         for page in pages) + " ms"

    def gc_text(tag: str) -> str:
        mine = [c for c in clicks if c["tag"] == tag]
        full = [c for c in mine if c["server_gc_full"]]
        before = sum(c["server_gc_full_before_chart"] > 0 for c in full)
        spent = (f", {min(c['server_gc_ms'] for c in full):.0f}-"
                 f"{max(c['server_gc_ms'] for c in full):.0f} ms" if full else "")
        return f"{tag} {len(full)} of {len(mine)} clicks ({before} before the chart{spent})"

    def ratio(field: str) -> str:
        return _click_ratio(clicks, tags, field)

    return (f"{' / '.join(tags)}, medians of {raw['rounds']} rounds: the browser's main thread "
            f"from the click to the chart's frame {by_page('browser_cpu_ms')}; "
            + (f"the server's script run to the chart's element "
               f"{by_page('server_chart_cpu_ms')}; " if server else "")
            + f"pair by pair, {tags[0]} / {tags[1]}: browser {ratio('browser_cpu_ms')}"
            + (f", server to the chart {ratio('server_chart_cpu_ms')}" if server else "")
            + "; full garbage collections in the script thread: "
            + "; ".join(gc_text(tag) for tag in tags)
            + " (load average "
            f"{raw['load_average_before'][0]:.1f} -> {raw['load_average_after'][0]:.1f} on "
            f"{raw['cpus']} CPUs)")


def _click_ratio(clicks: list[dict[str, Any]], tags: list[str], field: str,
                 page: str | None = None) -> str:
    """``0.90 (CI95 0.80-1.01, 7 of 20 pairs slower, p = 0.100)``: ``field`` of the clicks of
    ``tags[0]`` over those of ``tags[1]``, pair by pair (same round and page;
    :func:`paired.paired_ratio`), on ``page`` only where given."""
    pair = {(c["tag"], c["round"], c["page"]): c for c in clicks}
    firsts = [c for c in clicks if c["tag"] == tags[0] and page in (None, c["page"])
              and (tags[1], c["round"], c["page"]) in pair]
    r = paired_ratio([c[field] for c in firsts],
                     [pair[(tags[1], c["round"], c["page"])][field] for c in firsts])
    lo, hi = r["ci95"]
    return (f"{r['estimate']:.2f} (CI95 {lo:.2f}-{hi:.2f}, {r['slower_pairs']} of "
            f"{r['n']} pairs slower, p = {r['p_wilcoxon']:.3f})")


#: :mod:`click_cpu` runs of a change to some pages -> those pages (each one's clicks' ratios)
CLICK_CPU_PAGE_RUNS = {"click-cpu-1206-s20-sweep": ("sweep",),
                       "click-cpu-1206-s20-pages": ("stability", "kernels", "one-kernel", "sweep"),
                       "click-cpu-1207-s26-prefetch": ("kernels",)}


def click_cpu_page_text(run: str, page: str) -> str:
    """``the clicks to sweep alone, this / main, pair by pair: browser 0.90 (CI95 ...), server
    to the chart ..., click to the chart drawn (wall) ...`` for one :mod:`click_cpu` run of two
    trees: a change to one page shows in its clicks only, which the ratios over every page's
    clicks dilute."""
    clicks = json.loads((HERE / "cpu" / f"{run}.json").read_text())["clicks"]
    tags = list(dict.fromkeys(c["tag"] for c in clicks))
    return (f"the clicks to {page} alone, {tags[0]} / {tags[1]}, pair by pair: browser "
            f"{_click_ratio(clicks, tags, 'browser_cpu_ms', page)}, server to the chart "
            f"{_click_ratio(clicks, tags, 'server_chart_cpu_ms', page)}, click to the chart "
            f"drawn (wall) {_click_ratio(clicks, tags, 'drawn_ms', page)}")


def click_cpu_server_text(run: str) -> str:
    """``the server's whole script run of a click, this / base, medians of 5 rounds: stability
    65 / 164, ... ms; pair by pair: 0.46 (CI95 ...)`` for one :mod:`click_cpu` run of two trees:
    the script thread's CPU of the page's run, to its end (``server_cpu_ms``), which runs beside
    the browser's drawing of the chart on the 2-core machine."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    clicks = raw["clicks"]
    tags = list(dict.fromkeys(c["tag"] for c in clicks))
    pages = list(dict.fromkeys(c["page"] for c in clicks))

    def med(tag: str, page: str) -> str:
        values = [c["server_cpu_ms"] for c in clicks if (c["tag"], c["page"]) == (tag, page)]
        return f"{statistics.median(values):.0f}"

    per_page = ", ".join(f"{page} " + " / ".join(med(tag, page) for tag in tags)
                         for page in pages)
    return (f"the server's whole script run of a click, {' / '.join(tags)}, medians of "
            f"{raw['rounds']} rounds: {per_page} ms; pair by pair: "
            f"{_click_ratio(clicks, tags, 'server_cpu_ms')}")


def _rounds_load(raw: dict[str, Any]) -> str:
    """``6 rounds, load average 0.5 -> 2.4 on 2 CPUs`` of a big-sweep run."""
    return (f"{raw['rounds']} rounds, load average {raw['load_average_before'][0]:.1f} -> "
            f"{raw['load_average_after'][0]:.1f} on {raw['cpus']} CPUs")


def _bare_text(times: dict[str, list[float]]) -> str:
    """``a bare Streamlit page with one chart, same rounds: warm 2.5 s, cold 2.9 s`` (medians)."""
    return (f"a bare Streamlit page with one chart, same rounds: warm "
            f"{statistics.median(times['bare_warm']):.1f} s, cold "
            f"{statistics.median(times['bare_cold']):.1f} s")


#: Big-sweep page runs (``benchmarks/big_sweep_page.py --baseline ... --json``) the docs quote.
BIG_SWEEP_RUNS = ("big-sweep-1205-1000", "big-sweep-1205-10000", "big-sweep-1205-1000-notes",
                  "big-sweep-1205-3s-1000", "big-sweep-1205-3s-10000",
                  "big-sweep-1205-s10-prewarm", "big-sweep-1205-s10-prewarm2",
                  "big-sweep-1205-s10-final", "big-sweep-1205-s11-quiet",
                  "big-sweep-1205-s11-prefetch-ab", "big-sweep-1205-s11-final",
                  "big-sweep-1205-s12-afterhog", "big-sweep-1205-s12-quiet",
                  "big-sweep-1206-s14-quiet", "big-sweep-1206-s15-quiet",
                  "big-sweep-1206-s19-wsimport-ab", "big-sweep-1206-s19-preloadonly-ab",
                  "big-sweep-1206-s20-folds", "big-sweep-1207-s26-ab",
                  "big-sweep-1207-s26-ab0", "big-sweep-1207-s26-ab2", "big-sweep-1207-s26-ab3",
                  "big-sweep-1207-s27-preload-ab", "big-sweep-1207-s27-ab",
                  "big-sweep-1207-s27-ab2", "big-sweep-1207-s27-ab3")
#: Big-sweep page runs of one change against one baseline whose pairs the docs also pool.
BIG_SWEEP_POOLED = (("big-sweep-1207-s27-ab", "big-sweep-1207-s27-ab2", "big-sweep-1207-s27-ab3"),)


def big_sweep_pooled_text(runs: tuple[str, ...]) -> str:
    """``the 18 pairs of the 3 runs together: warm after / before 0.82 (CI95 ...): met; cold
    after / before ...`` (every round of ``runs`` a pair, :func:`paired.paired_ratio`)."""
    raws = [json.loads((HERE / "cpu" / f"{run}.json").read_text())["times_s"] for run in runs]
    parts = [f"{kind} after / before " + ratio_text(paired_ratio(
        [v for t in raws for v in t[f"dash_{kind}"]], [v for t in raws for v in t[f"base_{kind}"]]))
        for kind in ("warm", "cold")]
    pairs = sum(len(t["dash_warm"]) for t in raws)
    return f"the {pairs} pairs of the {len(runs)} runs together: " + "; ".join(parts)
#: Big-sweep page runs of one checkout beside the bare page, without a baseline (``--bare``).
BIG_SWEEP_ALONE_RUNS = ("big-sweep-1205-quiet-1000", "big-sweep-1206-s19-quiet",
                        "big-sweep-1207-s21-quiet-1000")
#: Big-sweep page runs with in-app navigation (``big_sweep_page.py --bare --clicks``).
BIG_SWEEP_NAV_RUNS = ("big-sweep-1206-s19-clicks",)
#: Big-sweep page runs with in-app navigation paired against a baseline (``--clicks
#: --baseline``).
BIG_SWEEP_NAV_AB_RUNS = ("big-sweep-1206-s20-stab",)
#: Server script runs of the page, paired (``benchmarks/big_sweep_server.py --json``).
BIG_SWEEP_SERVER_RUNS = ("big-sweep-server-1205-10000", "big-sweep-server-1205-10000-r8",
                         "big-sweep-server-1205-s10-1000", "big-sweep-server-1206-s20-stab-1000",
                         "big-sweep-server-1206-s20-badges")


#: Server script runs of the Size sweep, paired, read as the interpreter's CPU seconds
#: (``big_sweep_server.py --json``, which records them: ``cpu_s``).
BIG_SWEEP_SERVER_CPU_RUNS = ("big-sweep-server-1207-s26-10000",)


def big_sweep_server_cpu_text(run: str) -> str:
    """``10,000 configs: the Size sweep's script run, CPU: cold 3.80 s (before 4.14 s), a
    rerun 0.13 s (before 0.28 s); cold after / before ...; rerun after / before ...; 3 rounds,
    load average ...`` (medians of the rounds; a round's rerun is the median of its warm runs;
    every thread of the interpreter)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    c, r, med = raw["cpu_s"], raw["cpu_ratios"], statistics.median
    return (f"{raw['configs']:,} configs: the Size sweep's script run, CPU: cold "
            f"{med(c['dash_cold']):.2f} s (before {med(c['base_cold']):.2f} s), a rerun "
            f"{med(c['dash_warm']):.2f} s (before {med(c['base_warm']):.2f} s); cold after / "
            f"before {ratio_text(r['cold'])}; rerun after / before {ratio_text(r['warm'])}; "
            f"{_rounds_load(raw)}")


def big_sweep_nav_ab_text(run: str) -> str:
    """``1,000 configs, in an open dashboard: a click to Stability 0.9 s (before 2.2 s, 6
    clicks each), after / before 0.41 (CI95 ...): met; to the Size sweep ...; 3 rounds, load
    average ...`` (medians; each page's clicks paired click by click)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    med, nav = statistics.median, raw["nav_s"]
    names = {"sweep": "the Size sweep", "stability": "Stability"}
    clicks = "; ".join(
        f"to {names[k]} {med(nav['dash'][k]):.1f} s (before {med(nav['base'][k]):.1f} s, "
        f"{len(nav['dash'][k])} clicks each), after / before {ratio_text(raw['nav_ratios'][k])}"
        for k in sorted(nav["dash"], reverse=True))
    return (f"{raw['configs']:,} configs, in an open dashboard: a click {clicks}; "
            f"{_rounds_load(raw)}")


def big_sweep_server_text(run: str) -> str:
    """``10,000 configs: the page's script run cold 12.9 s (before 12.7 s), warm 0.27 s (before
    0.55 s); cold after / before ...; warm after / before ...; 4 rounds, load average ...``
    (medians of the rounds; a round's warm time is the median of its warm runs); of a page
    timed after the Size sweep (``--page``): ``the stability page's script run after the Size
    sweep's, CPU: first visit ... s (before ... s), later visits ...; ...``."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    t, med, page = raw["times_s"], statistics.median, raw.get("page")
    if page:  # the interpreter's CPU seconds where the run has them, else wall seconds
        c, r, what = ((raw["cpu_s"], raw["cpu_ratios"], "CPU") if "cpu_s" in raw
                      else (t, raw["ratios"], "wall"))
        return (f"{raw['configs']:,} configs: the {page} page's script run after the Size "
                f"sweep's, {what}: first visit {med(c['dash_cold']):.1f} s (before "
                f"{med(c['base_cold']):.1f} s), later visits {med(c['dash_warm']):.1f} s "
                f"(before {med(c['base_warm']):.1f} s); first visit after / before "
                f"{ratio_text(r['cold'])}; later visits after / before {ratio_text(r['warm'])}; "
                f"{_rounds_load(raw)}")
    return (f"{raw['configs']:,} configs: the page's script run cold {med(t['dash_cold']):.1f} s "
            f"(before {med(t['base_cold']):.1f} s), warm {med(t['dash_warm']):.2f} s (before "
            f"{med(t['base_warm']):.2f} s); cold after / before {ratio_text(raw['ratios']['cold'])}"
            f"; warm after / before {ratio_text(raw['ratios']['warm'])}; {_rounds_load(raw)}")


#: Single loads message by message (``benchmarks/big_sweep_breakdown.py --json``) the docs quote.
BREAKDOWN_RUNS = ("big-sweep-breakdown-1205-1000-before", "big-sweep-breakdown-1205-1000-after",
                  "big-sweep-breakdown-1205-10000-before", "big-sweep-breakdown-1205-10000-after",
                  "big-sweep-breakdown-1205-bare", "big-sweep-breakdown-1205-quiet-1000",
                  "big-sweep-breakdown-1206-s19-main", "big-sweep-breakdown-1206-s19-bare",
                  "big-sweep-breakdown-1206-s19-noshell", "big-sweep-breakdown-1206-s19-wsimport",
                  "big-sweep-breakdown-1207-s26-main", "big-sweep-breakdown-1207-s26-bare",
                  "big-sweep-breakdown-1207-s27-main", "big-sweep-breakdown-1207-s27-bare",
                  "big-sweep-breakdown-1207-s27-after")
#: Those of them that also split the main thread's CPU from the chart's message to its draw
#: (``chart_message_to_drawn_cpu_ms``, :func:`page_trace.phases`).
PHASE_RUNS = ("big-sweep-breakdown-1207-s27-main", "big-sweep-breakdown-1207-s27-bare",
              "big-sweep-breakdown-1207-s27-after")


def big_sweep_text(run: str) -> str:
    """``1,000 configs: first chart warm 2.9 s (before 5.1 s), cold ...; warm after / before
    0.57 (CI95 ...): met; 6 rounds, load average 14.7 -> 12.0 on 2 CPUs`` (medians of the
    rounds; the ratio pair by pair, :func:`paired.paired_ratio`)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    t = raw["times_s"]
    return (f"{raw['configs']:,} configs: first chart "
            + _after_before(raw, t, raw["ratios"], ("warm", "cold"), "{:.1f} s")
            + (f"; {_bare_text(t)}" if "bare_warm" in t else ""))


def _after_before(raw: dict[str, Any], samples: dict[str, list[float]],
                  ratios: dict[str, Any], kinds: tuple[str, str], unit: str) -> str:
    """``warm 2.9 s (before 5.1 s), cold ... s (before ... s); warm after / before 0.57
    (CI95 ...); cold after / before ...; 6 rounds, load average ...``: medians of the rounds in
    ``unit``'s format, each kind's ratio pair by pair (:func:`ratio_text`)."""
    med = statistics.median
    shown = ", ".join(f"{k} {unit.format(med(samples[f'dash_{k}']))} (before "
                      f"{unit.format(med(samples[f'base_{k}']))})" for k in kinds)
    paired = "; ".join(f"{k} after / before {ratio_text(ratios[k])}" for k in kinds)
    return f"{shown}; {paired}; {_rounds_load(raw)}"


#: Big-sweep page runs with the browser's CPU time (``big_sweep_page.py --trace``) the docs quote.
BIG_SWEEP_CPU_RUNS = ("big-sweep-1205-s13-hog-trace", "big-sweep-1206-s20-folds",
                      "big-sweep-1207-s27-trace")


def big_sweep_cpu_text(run: str) -> str:
    """``1,000 configs: the browser main thread's CPU to the first chart cold 1,520 ms (before
    1,610 ms), warm ...; cold after / before 0.94 (CI95 ...): not shown; warm ...; 4 rounds,
    load average ...`` (medians of the rounds; the ratio pair by pair)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    return (f"{raw['configs']:,} configs: the browser main thread's CPU to the first chart "
            + _after_before(raw, raw["cpu_ms"], raw["cpu_ratios"], ("cold", "warm"), "{:,.0f} ms"))


def big_sweep_alone_text(run: str) -> str:
    """``1,000 configs: first chart warm 2.9 s, cold 3.7 s; a bare Streamlit page with one
    chart, same rounds: warm 2.5 s, cold 2.9 s; 6 rounds, load average 0.5 -> 2.4 on 2 CPUs``
    (medians of the rounds) for a run without a baseline."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    t, med = raw["times_s"], statistics.median
    return (f"{raw['configs']:,} configs: first chart warm {med(t['dash_warm']):.1f} s, cold "
            f"{med(t['dash_cold']):.1f} s; {_bare_text(t)}; {_rounds_load(raw)}")


def big_sweep_nav_text(run: str) -> str:
    """``1,000 configs, in an open dashboard: a click to the Size sweep 0.5 s (0.4-0.8 s, 6
    clicks), to Stability 2.2 s (0.6-5.9 s, 6 clicks); fresh loads in the same rounds: first
    chart warm 5.5 s, cold 4.8 s; a bare Streamlit page ...; 3 rounds, load average ...``
    (medians; the clicks from :func:`big_sweep_page._navigate`, click event to chart drawn)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    t, med, nav = raw["times_s"], statistics.median, raw["nav_s"]["dash"]
    names = {"sweep": "the Size sweep", "stability": "Stability"}
    clicks = ", ".join(f"to {names[k]} {med(v):.1f} s ({min(v):.1f}-{max(v):.1f} s, "
                       f"{len(v)} clicks)" for k, v in sorted(nav.items(), reverse=True))
    return (f"{raw['configs']:,} configs, in an open dashboard: a click {clicks}; fresh loads "
            f"in the same rounds: first chart warm {med(t['dash_warm']):.1f} s, cold "
            f"{med(t['dash_cold']):.1f} s; {_bare_text(t)}; {_rounds_load(raw)}")


def breakdown_text(run: str) -> str:
    """``warm: script start 2.1 s, chart message 3.9 s (46 KB), table 570 KB at 4.1 s, chart
    drawn 5.2 s; the main thread's longest task 3.0 s`` for each load of one
    :mod:`big_sweep_breakdown` run (times from navigation start, as the page received them)."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    out = []
    for kind in ("cold", "warm"):
        load = raw[kind]
        at = {m["what"].split(" [")[0]: m for m in reversed(load["messages"])}  # the first of each
        chart, table = at.get("delta plotly_chart"), at.get("delta dataframe")
        out.append(
            f"{kind}: script start {at['new_session']['arrived_ms'] / 1e3:.1f} s, chart message "
            f"{chart['arrived_ms'] / 1e3:.1f} s ({chart['bytes'] / 1e3:.0f} KB), table "
            + (f"{table['bytes'] / 1e3:,.0f} KB at {table['arrived_ms'] / 1e3:.1f} s" if table
               else "none") + f", chart drawn {load['drawn_ms'] / 1e3:.1f} s; the main "
            f"thread's longest task {load['main_thread_ms']['longest'] / 1e3:.1f} s")
    return (f"{raw['configs']:,} configs" if not raw.get("bare") else "bare page") + ": " + \
        "; ".join(out) + f" (load average {raw['load_average_before'][0]:.1f})"


def phases_text(run: str) -> str:
    """``main: warm: chart message to chart drawn 1.2 s, main thread CPU 880 ms (React 453,
    chunks evaluated 71, other script 27, style/layout/paint 59, rest 269); the plotly chunk
    evaluated from 1.6 s for 1.1 s; cold: ...`` for one :mod:`big_sweep_breakdown` run."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())
    out = []
    for kind in ("cold", "warm"):
        load = raw[kind]
        cpu = load["chart_message_to_drawn_cpu_ms"]
        chart = next(m for m in load["messages"] if "plotly_chart" in m["what"])
        parts = [("React", "react"), ("chunks evaluated", "evaluate"),
                 ("other script", "script"), ("style/layout/paint", "render"), ("rest", "other")]
        total = sum(cpu.get(k, 0.0) for _n, k in parts)
        out.append(f"{kind}: chart message to chart drawn "
                   f"{(load['drawn_ms'] - chart['handled_ms']) / 1e3:.1f} s, main thread CPU "
                   f"{total:,.0f} ms (" + ", ".join(f"{n} {cpu.get(k, 0.0):,.0f}"
                                                    for n, k in parts)
                   + f"); the plotly chunk evaluated from {cpu['plotly_eval_start'] / 1e3:.1f} s"
                   f" for {cpu['plotly_eval'] / 1e3:.1f} s")
    name = "bare page" if raw.get("bare") else f"{raw['configs']:,} configs"
    return f"{name}: " + "; ".join(out)


#: Upload memory runs (``benchmarks/upload_memory.py --baseline ... --json``) the docs quote.
UPLOAD_RUNS = ("upload-memory-1205",)


def upload_text(run: str) -> str:
    """``a 150 MB upload never imported, the server's resident set above its level before
    (MiB, medians of 3 rounds): before +143 with it, +143 at the shutdown, +143 10 s later;
    now +143, +2, +0; load average ...``."""
    raw = json.loads((HERE / "cpu" / f"{run}.json").read_text())

    def side(rows: list[dict[str, float]]) -> str:
        return ", ".join(f"{statistics.median(r[k] for r in rows):+.0f}"
                         for k in ("held", "at_shutdown", "after"))

    return (f"a {raw['upload_mb']} MB upload never imported, the server's resident set above "
            f"its level before (MiB, medians of {raw['rounds']} rounds) with it, at the "
            f"session's shutdown and {raw['after_s']} s later: before "
            f"{side(raw['rows_mib']['base'])}; now {side(raw['rows_mib']['this'])}; load "
            f"average {raw['load_average_before'][0]:.1f} -> {raw['load_average_after'][0]:.1f} "
            f"on {raw['cpus']} CPUs")


#: Gate load runs (``benchmarks/gate_load.py --cli --json``) docs/design-notes.md quotes.
GATE_LOAD_RUNS = ("gate-load-1205",)


def gate_load_texts(run: str) -> list[str]:
    """One line per bundle: ``h200-ncu-matmul-sweep (notes computed at load): 64 -> 174 ms,
    after / before 2.94 (CI95 ...): missed``; the command's line names it."""
    out = []
    for r in json.loads((HERE / "cpu" / f"{run}.json").read_text())["results"]:
        notes = {True: " (notes stored)", False: " (notes computed at load)"}.get(
            r["notes_stored"], "")
        name = ("the whole compare command" if r["bundle"] == "compare-cli"
                else f"{r['bundle']}{notes}")
        out.append(f"{name}: {r['before_ms_median']:,.0f} -> {r['after_ms_median']:,.0f} ms, "
                   f"after / before {ratio_text(r)}, load average {r['load_average']:.1f}")
    return out


def _attribution(run: str) -> list[dict[str, float]]:
    """The events attribution table printed in ``run``'s pytest output (one dict per n)."""
    lines = (H200 / f"{run}-pytest_gpu.txt").read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if "ResidualPct" in line)
    names = lines[head].lstrip(". ").split()
    rows = []
    for line in lines[head + 1:]:
        cells = line.split()
        if len(cells) != len(names) + 1 or not cells[0].isdigit():
            break
        rows.append({k: (float(v) if re.fullmatch(r"-?[\d.]+", v) else v)
                     for k, v in zip(names, cells[1:])})
    return rows


def events(run: str) -> list[dict[str, float]]:
    """Per n: residual (µs), its % of the events median and % of the gap (events median -
    CUPTI median) it is left of."""
    out = []
    for r in _attribution(run):
        gap = r["EventsMedianUs"] - r["CuptiMedianUs"]
        out.append({"n": int(r["n"]), "residual_us": r["ResidualUs"],
                    "pct_of_events": r["ResidualPct"], "gap_us": gap,
                    "pct_of_gap": 100 * r["ResidualUs"] / gap})
    return out


def _auto_lines(run: str) -> list[dict[str, Any]]:
    text = (H200 / f"{run}-pytest_gpu.txt").read_text()
    return [json.loads(m) for m in re.findall(r'^\.?(\{"job": .*"gpu_time_ratio".*\})$', text, re.M)]


#: The bundled CUPTI job of each runs "auto" job's kernels and sizes (its time per run per config).
AUTO_BUNDLES = {"J1": "h200-cupti-j1-fp16", "memory-bound": "h200-cupti-elementwise"}


def per_run_ns(bundle: str) -> list[float]:
    """Per config (in config order): the sum over the job's annotations of the mean kernel
    time per run (ns, ``gpu__time_duration.sum`` of ``tables/aggregated.csv``)."""
    import pandas as pd

    agg = pd.read_csv(REPO / "app" / "bundled" / bundle / "tables" / "aggregated.csv")
    agg = agg[agg["Metric"] == "gpu__time_duration.sum"]
    return [float(v) for v in agg.groupby("Config", sort=True)["AvgValue"].sum()]


def auto(run: str) -> list[dict[str, Any]]:
    """Per job: recorded GPU time auto / fixed, and auto against fixed runs of auto's interval
    width (module docstring): per config ``n_eq = ceil(n_fixed (w_fixed / w_auto)^2)``, at least
    2 and at most the fixed job's runs (where auto is the narrower one, the fixed job is counted
    at its own runs); ``equal_width_ratio`` = sum(auto runs x t) / sum(n_eq x t), t the config's
    time per run in the bundled job of the same kernels (:data:`AUTO_BUNDLES`)."""
    out = []
    for line in _auto_lines(run):
        fixed, mine = line["fixed"]["configs"], line["auto"]["configs"]
        t = per_run_ns(AUTO_BUNDLES[line["job"]])
        n_eq = [min(f["runs"], max(2, math.ceil(f["runs"] * (f["rel_ci95_pct"]
                                                             / a["rel_ci95_pct"]) ** 2)))
                for f, a in zip(fixed, mine)]
        auto_t = sum(a["runs"] * ti for a, ti in zip(mine, t))
        out.append({"job": line["job"], "gpu_time_ratio": line["gpu_time_ratio"],
                    "fixed_over_auto_width": [f["rel_ci95_pct"] / a["rel_ci95_pct"]
                                              for f, a in zip(fixed, mine)],
                    "auto_runs": [a["runs"] for a in mine], "equal_width_runs": n_eq,
                    "equal_width_ratio": auto_t / sum(n * ti for n, ti in zip(n_eq, t))})
    return out


def ratio_text(r: dict[str, Any]) -> str:
    """``0.91 (CI95 0.83-1.00, 1 of 5 pairs slower, p = 0.12): met`` (:func:`paired.paired_ratio`)."""
    lo, hi = r["ci95"]
    return (f"{r['estimate']:.2f} (CI95 {lo:.2f}-{hi:.2f}, {r['slower_pairs']} of {r['n']} "
            f"pairs slower, p = {r['p_wilcoxon']:.3f}): {r['verdict']}")


def aa_text(row: dict[str, Any]) -> str:
    """``0 of 57 rows not same (at most 6.3 %), planted found in 57 of 57 (100.0 %)``."""
    return (f"{row['k']} of {row['n']} rows not `same` ({row['rate_pct']:.1f} %, at most "
            f"{row['upper_pct']:.1f} %), planted found in {row['found_k']} of {row['found_n']} "
            f"({row['found_pct']:.1f} %)")


def events_text(run: str) -> str:
    """``+0.2, -9.1, -11.3, -2.2 % of the gap`` for n = 1024..8192."""
    return ", ".join(f"{e['pct_of_gap']:+.1f}" for e in events(run)) + " % of the gap"


#: Device runs of ``worker_breakdown.py --bare-libcupti``: the worker's cold CUPTI job and the
#: bare script of J1 under pyinstrument in one call.
COLD_PROFILE_RUNS = ("h100-1205-s11bd", "h100-1206-s19final")


def profile_frames(path: Path) -> dict[str, float]:
    """The seconds of each frame's first (outermost) appearance in a pyinstrument text
    profile, keyed by the function's name: ``{"run_job": 13.41, "_cuda_init": 0.19, ...}``."""
    out: dict[str, float] = {}
    for line in path.read_text().splitlines():
        m = re.search(r"(\d+\.\d+) (\S+)  (\S+:\d+|<built-in>)$", line)
        if m and m.group(2) not in out:
            out[m.group(2)] = float(m.group(1))
    return out


def cold_profile_text(run: str) -> str:
    """``worker: environment probe 0.15 s, warm-up 0.57 s (CUDA's start 0.19 s), ...; bare
    script: nsight-python's call 0.61 s (...)``: the cold CUPTI job's steps past the imports,
    from the two profiles of one :mod:`worker_breakdown` run."""
    w = profile_frames(H200 / f"{run}-cold_cupti.txt")
    b = profile_frames(H200 / f"{run}-cold_bare_cupti.txt")
    tables = w["profile_and_write"] - w["collect"]
    # a frame below pyinstrument's display threshold is not in the text: 0 s
    after = w["run_job"] - w["profile_and_write"] - w.get("prepare", 0.0)
    # the probe's time on the main thread: since it runs on a thread of its own from the
    # process's start (ProbeInBackground), the wait for it, if any, in prepare
    probe = w.get("environment_report", 0.0) + w.get("ProbeInBackground.result", 0.0)
    return (f"worker: environment probe {probe:.2f} s, warm-up "
            f"{w['warm_up_bodies']:.2f} s (CUDA's start {w['_cuda_init']:.2f} s), nsight-python's "
            f"call {w['wrapper']:.2f} s, the tables {tables:.2f} s, the run audit and the "
            f"manifest {after:.2f} s; bare script: nsight-python's call {b['wrapper']:.2f} s "
            f"(its CUPTI collection {b['CUPTICollector.collect']:.2f} s: the profiled runs "
            f"{b['run_profile_session']:.2f} s, the device's properties "
            f"{b['get_device_properties']:.2f} s); past the imports "
            f"{w['run_job'] - w['collect'] + w['warm_up_bodies'] + w['wrapper']:.2f} s against "
            f"{b['wrapper']:.2f} s")


#: Whole CI runs on a fresh clone (``CI=true bash .ci/run``): its step lines and pytest's
#: summary, ``benchmarks/cpu/<run>.txt`` (issue 41's suite time).
CI_RUNS = ("ci-1205-s11-idle", "ci-1205-s11-hog", "ci-1205-s12-hog8", "ci-1205-s12-idle",
           "ci-1205-s13-hog2", "ci-1206-s14-hog2", "ci-1206-s15-hog2",
           "ci-1206-s16-hog2")


def ci_text(run: str) -> str:
    """``2 failed, 2,206 passed, 3 skipped, 59 deselected; tests 1,362 s, the whole run
    1,585 s`` from pytest's last summary line and the run's ``rc= wall=`` line."""
    text = (HERE / "cpu" / f"{run}.txt").read_text()
    summary = re.findall(r"^(.*) in (\d+\.\d+)s \(", text, flags=re.M)[-1]
    counts = re.sub(r"\d+", lambda m: f"{int(m.group()):,}", summary[0])
    wall = int(re.findall(r"^rc=\d+ wall=(\d+)s", text, flags=re.M)[-1])
    loads = [float(x) for x in re.findall(r"load average: (\d+\.\d+),", text)]
    during = (f" (1-minute load average each minute: median {statistics.median(loads):.1f}, "
              f"at most {max(loads):.1f})" if loads else "")
    return f"{counts}; tests {float(summary[1]):,.0f} s, the whole run {wall:,} s{during}"


#: Device runs whose ``pytest -m gpu`` summary docs/performance.md quotes.
GPU_TEST_RUNS = ("h100-1206-s18cold", "h100-1206-s19final", "h200-1206-s19merged",
                 "h100-1206-s20ncu", "h100-1206-s20cupti", "h100-1206-s20ncu2",
                 "h100-1206-s20ncu2-bundles", "h100-1207-s23cupti", "h100-1207-s23ncu4",
                 "h100-1207-s23merged", "h100-1207-s23mergedncu", "h100-1207-s24",
                 "h100-1207-s24ncu", "h100-1207-s26", "h100-1207-s26ncu",
                 "h100-1207-s27")


def gpu_tests_text(run: str) -> str:
    """``pytest -m gpu`: 3 failed, 36 passed, 11 skipped, 9 deselected``: the counts of the
    last summary line of the run's ``*-pytest_gpu.txt`` (warnings left out)."""
    last = (H200 / f"{run}-pytest_gpu.txt").read_text().strip().splitlines()[-1]
    counts = [c for c in last.split(" in ")[0].split(", ") if "warning" not in c]
    return f"`pytest -m gpu`: {', '.join(counts)}"


#: Cold CUPTI J1 with and without one worker setting beside the bare script
#: (``*-cold_ab.json``, ``benchmarks/cold_ab.py``; issue 40).
COLD_AB_RUNS = ("h100-1207-s24coldab",)


def cold_ab_text(run: str) -> str:
    """The three paired ratios to the result of a :mod:`cold_ab` run, recomputed from its raw
    seconds (:func:`paired.paired_ratio`)."""
    raw = json.loads((H200 / f"{run}-cold_ab.json").read_text())
    cold, bare, setting = (raw[f"{s}_to_result_s"] for s in ("cold", "bare", "setting"))
    return (f"cold CUPTI J1 to the result / the bare script {ratio_text(paired_ratio(cold, bare))}"
            f"; with {raw['setting']} / the bare script {ratio_text(paired_ratio(setting, bare))}"
            f"; as it is / with {raw['setting']} {ratio_text(paired_ratio(cold, setting))}")


#: What a cold CUPTI job imports beside the bare script (``*-cold_imports.json``,
#: ``benchmarks/cold_imports.py``; issue 40).
COLD_IMPORT_RUNS = ("h100-1207-s24imports",)


def cold_imports_text(run: str) -> str:
    """Import totals per side (medians, s), the worker's own modules (ms) and the three modules
    both import whose import took the worker longest beyond the bare script's (median ms)."""
    raw = json.loads((H200 / f"{run}-cold_imports.json").read_text())
    total = raw["import_total_s"]
    slower = "; ".join(f"`{name}` {cold:.0f} vs {bare:.0f} ms"
                       for name, cold, bare in raw["both_modules_slower_in_worker_ms"][:3])
    return (f"imports {total['bare']:.2f} s in the bare script, {total['cold']:.2f} s in the cold "
            f"worker ({len(raw['cold_steps_s'])} rounds, medians of `-X importtime`'s self "
            f"times); the worker's own modules {raw['worker_only_total_ms']:.0f} ms; modules "
            f"both import, the worker's import longest beyond the bare script's: {slower}")


def claims() -> list[tuple[str, str]]:
    """(document, text it must hold) for every figure above that the documents state."""
    out: list[tuple[str, str]] = []
    for run in SPEED_RUNS:
        sp = speed(run)
        for backend, name in (("ncu", "NCU"), ("cupti", "CUPTI")):
            if backend not in sp:  # a run that paired one backend only
                continue
            out.append(("docs/performance.md",
                        f"{name} to the result {ratio_text(sp[backend]['to_result'])}"))
            out.append(("docs/performance.md", f"{name} to exit {ratio_text(sp[backend]['to_exit'])}"))
    for run in WARM_RUNS:
        out.append(("docs/performance.md", f"warm J1: {warm_text(run)}"))
    out += [("docs/performance.md", warm_ready_text(run)) for run in WARM_READY_RUNS]
    out += [("docs/performance.md", cold_ab_text(run)) for run in COLD_AB_RUNS]
    out += [("docs/performance.md", cold_imports_text(run)) for run in COLD_IMPORT_RUNS]
    out += [("docs/performance.md", gpu_tests_text(run)) for run in GPU_TEST_RUNS]
    for run in WARM_AB_RUNS:
        out.append(("docs/performance.md", warm_ab_text(run)))
    for run in PAGE_RUNS:
        out.append(("docs/performance.md", pages_text(run)))
    for run in PAGE_PAIRED_RUNS:
        out.append(("docs/performance.md", pages_paired_text(run)))
    out.append(("docs/performance.md", clicks_by_page_text("page-speed-1205-s10-quiet")))
    out += [("docs/performance.md", clicks_by_page_text(run)) for run in CLICKS_BY_PAGE_RUNS]
    out += [("docs/performance.md", bare_click_text(run)) for run in BARE_CLICK_RUNS]
    out += [("docs/performance.md", vs_bare_text(run)) for run in VS_BARE_RUNS]
    for run in PAGE_PAIRED_RUNS:
        for side in ("dash", "base"):
            out.append(("docs/performance.md", clicks_by_page_text(run, side)))
    for run in CLICK_BREAKDOWN_RUNS:
        for page in ("stability", "one-kernel"):
            out.append(("docs/performance.md", click_breakdown_text(run, page)))
    for run, server in CLICK_CPU_RUNS.items():
        out.append(("docs/performance.md", click_cpu_text(run, server)))
    out += [("docs/performance.md", click_cpu_page_text(run, page))
            for run, pages in CLICK_CPU_PAGE_RUNS.items() for page in pages]
    out += [("docs/performance.md", click_cpu_server_text(run)) for run in CLICK_CPU_SERVER_RUNS]
    out += [("docs/performance.md", row) for row in cpu_stage_rows()]
    out += [("docs/performance.md", row) for row in device_stage_rows()]
    out.append(("docs/performance.md", warm_repeat_text()))
    out += [("docs/performance.md", row)
            for row in cpu_stage_rows(CPU_STAGE_RUNS_WARM_OWN, CPU_STAGES_WARM_OWN)]
    out += [("docs/performance.md", row)
            for row in cpu_stage_rows(CPU_STAGE_RUNS_S10, CPU_STAGES_S10, cpu_time=True)]
    out += [("docs/performance.md", row)
            for runs in (CPU_STAGE_RUNS_S11, CPU_STAGE_RUNS_S11_GATE)
            for row in cpu_stage_rows(runs, CPU_STAGES_S10, cpu_time=True,
                                      device_run=DEVICE_STAGE_RUN)]
    out += [("docs/performance.md", row)
            for runs in (CPU_STAGE_RUNS_S12, CPU_STAGE_RUNS_S12_GATE)
            for row in cpu_stage_rows(runs, CPU_STAGES_S10, cpu_time=True,
                                      device_run=DEVICE_STAGE_RUN_S12)]
    out += [("docs/performance.md", row)
            for runs in (CPU_STAGE_RUNS_S13, CPU_STAGE_RUNS_S13_GATE)
            for row in cpu_stage_rows(runs, CPU_STAGES_S13, cpu_time=True,
                                      device_run=DEVICE_STAGE_RUN_S12)]
    out += [("docs/performance.md", row)
            for runs in (CPU_STAGE_RUNS_S19, CPU_STAGE_RUNS_S20, CPU_STAGE_RUNS_S21,
                         CPU_STAGE_RUNS_S23)
            for row in cpu_stage_rows(runs, CPU_STAGES_S13, cpu_time=True,
                                      device_run=DEVICE_STAGE_RUN_S18)]
    out += [("docs/performance.md", row)
            for row in cpu_stage_rows(CPU_STAGE_RUNS_S24, CPU_STAGES_S13, cpu_time=True,
                                      device_run="h100-1207-s24gc1")]
    out += [("docs/performance.md", row)
            for row in cpu_stage_rows(CPU_STAGE_RUNS_S25, CPU_STAGES_S25, cpu_time=True,
                                      device_run="h100-1207-s24gc1")]
    out += [("docs/performance.md", row)
            for row in cpu_stage_rows(CPU_STAGE_RUNS_S27, CPU_STAGES_S27, cpu_time=True,
                                      device_run=DEVICE_STAGE_RUN_S26)]
    out.append(("docs/performance.md", own_ready_ab_text()))
    for run in POST_AB_RUNS:
        for bundle in post_ab(run):
            out.append(("docs/performance.md", post_ab_text(run, bundle)))
    for run in BIG_SWEEP_RUNS:
        out.append(("docs/performance.md", big_sweep_text(run)))
    for runs in BIG_SWEEP_POOLED:
        out.append(("docs/performance.md", big_sweep_pooled_text(runs)))
    for run in BIG_SWEEP_ALONE_RUNS:
        out.append(("docs/performance.md", big_sweep_alone_text(run)))
    for run in BIG_SWEEP_NAV_RUNS:
        out.append(("docs/performance.md", big_sweep_nav_text(run)))
    for run in BIG_SWEEP_NAV_AB_RUNS:
        out.append(("docs/performance.md", big_sweep_nav_ab_text(run)))
    for run in BIG_SWEEP_CPU_RUNS:
        out.append(("docs/performance.md", big_sweep_cpu_text(run)))
    for run in BIG_SWEEP_SERVER_RUNS:
        out.append(("docs/performance.md", big_sweep_server_text(run)))
    for run in BIG_SWEEP_SERVER_CPU_RUNS:
        out.append(("docs/performance.md", big_sweep_server_cpu_text(run)))
    for run in PHASE_RUNS:
        out.append(("docs/performance.md", phases_text(run)))
    for run in BREAKDOWN_RUNS:
        out.append(("docs/performance.md", breakdown_text(run)))
    for run in UPLOAD_RUNS:
        out.append(("docs/performance.md", upload_text(run)))
    for run in CI_RUNS:
        out.append(("docs/testing.md", ci_text(run)))
    for run in COLD_PROFILE_RUNS:
        out.append(("docs/performance.md", cold_profile_text(run)))
    for run in GATE_LOAD_RUNS:
        out += [("docs/design-notes.md", text) for text in gate_load_texts(run)]
    for run in AA_RUNS:
        for row in aa(run):
            out.append(("docs/measurements-h200.md", f"{row['backend']} {row['kind']}: {aa_text(row)}"))
    first = {(r["backend"], r["kind"]): r for r in aa(AA_RUNS[0])}
    out.append(("docs/regression-gate.md", f"CUPTI GEMM and memory-bound sweeps at 20 runs: "
                                           f"{aa_text(first['cupti', 'memory'])}"))
    out.append(("docs/regression-gate.md",
                f"Nsight Compute memory-bound at 5 runs: {aa_text(first['ncu', 'memory'])}"))
    for run in EVENTS_RUNS:
        out.append(("docs/performance.md", events_text(run)))
    for job in auto(AUTO_RUN):
        out.append(("docs/performance.md",
                    f"{job['job']}: GPU time auto / fixed {job['gpu_time_ratio']:.3f}; at auto's "
                    f"interval width {job['equal_width_ratio']:.2f}"))
    return out


def main() -> None:
    for doc, text in claims():
        print(f"{doc}: {text}")


if __name__ == "__main__":
    main()

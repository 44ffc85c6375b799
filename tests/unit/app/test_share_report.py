"""The shareable report's document on the recorded H200 scenarios (tests/fixtures/bundles): plotly.js once,
nothing fetched, every table cell's exact value kept, a few MB at most; and the gate's decision
within its 4 KB (tests/e2e/test_share_report.py opens the files in Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import plotly.offline
import pytest

from profiling_worker.bundle.loader import load_bundle
from app.core.bundle_files import zip_bundle
from app.core.share import document as H
from app.core.share.build import comparison_report, job_report
from app.core.share.verdict import MAX_BYTES, decision, judged
from app.core.views.stability import StabilityOptions, stability_frame
from tests.scenarios import SCENARIOS, scenario_names

JOBS = scenario_names()
PLOTLY_HEADER = re.compile(r"\* plotly\.js v\d")
#: plotly.js (4.8 MB minified, plotly 7.1) plus the job's charts and tables.
MAX_REPORT_BYTES = 6_000_000
#: The plain sentence that starts a marked chart's note (app.core.views.run_audit).
MARK = "An × marks a point whose runs failed the run audit"


def _external(html: str) -> list[str]:
    """What would make a browser fetch something, outside plotly.js itself (whose code holds
    attribution links it never loads): a src or href to a URL, a <link>, an @import."""
    page = html.replace(plotly.offline.get_plotlyjs(), "")
    return re.findall(r"""(?:src|href)\s*=\s*["'](?:https?:)?//[^"']*|<link\b[^>]*|@import[^;]*|"""
                      r"""<script[^>]+src""", page)


@pytest.mark.parametrize("job", JOBS)
def test_each_bundled_job_is_one_offline_file_of_a_few_mb(job: str) -> None:
    html = job_report(load_bundle(SCENARIOS / job))
    assert len(PLOTLY_HEADER.findall(html)) == 1  # plotly.js inlined once
    assert "MathJax" not in html.split("</script>", 1)[1]  # no MathJax loader after plotly.js
    assert _external(html) == []
    assert html.count('class="plotly-graph-div"') == html.count("Plotly.newPlot(")
    assert len(html.encode("utf-8")) <= MAX_REPORT_BYTES


def test_table_cells_keep_the_views_exact_values() -> None:
    bundle = load_bundle(SCENARIOS / "h200-cupti-stability")
    html = job_report(bundle)
    frame = stability_frame(bundle, StabilityOptions(time_unit="µs"))
    section = html.split("<h2>Stability</h2>", 1)[1].split("</table>", 1)[0]
    head = re.findall(r"<th>([^<]*)</th>", section)
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>", 1)[1])
    col = head.index("AvgValue")
    cells = [re.findall(r"<td([^>]*)>", r)[col] for r in rows]
    values = [float(re.search(r'data-value="([^"]*)"', c).group(1)) for c in cells]  # type: ignore[union-attr]
    assert values == frame["AvgValue"].tolist()  # repr round-trips every float exactly


def test_text_from_files_is_escaped() -> None:
    cell = H.table(__import__("pandas").DataFrame({"Kernel": ["<script>alert(1)</script>"]}))
    assert "<script>" not in cell and "&lt;script&gt;" in cell


def test_a_long_table_is_cut_and_says_so() -> None:
    import pandas as pd

    out = H.table(pd.DataFrame({"x": range(H.MAX_ROWS + 7)}))
    assert out.count("<tr>") == H.MAX_ROWS + 1  # + the header row
    assert f"first {H.MAX_ROWS:,} of {H.MAX_ROWS + 7:,} rows" in out


def test_comparison_report_leads_with_the_gates_verdict() -> None:
    base, cand = (load_bundle(SCENARIOS / j) for j in ("h200-cupti-gate-tf32",
                                                     "h200-cupti-gate-fp32"))
    html = comparison_report(base, cand)
    assert html.index("Gate verdict: regressed") < html.index("<h2>Regression gate</h2>")
    assert len(PLOTLY_HEADER.findall(html)) == 1 and _external(html) == []


def test_decision_stays_within_4_kb_and_counts_what_it_leaves_out() -> None:
    # 15 region x config rows, all not comparable (backends differ), each with a long reason
    result = judged(load_bundle(SCENARIOS / "h200-ncu-matmul-sweep"),
                    load_bundle(SCENARIOS / "h200-cupti-matmul-sweep"))
    out = decision(result)
    assert len(json.dumps(out, indent=2).encode("utf-8")) <= MAX_BYTES
    assert len(out["rows"]) + out["rows_not_listed"] == len(result.rows)
    assert out["verdict"] == "not judged" and out["exit_code"] == 3
    assert out["context"] == result.context and out["context"]


def test_cli_writes_the_report_without_starting_a_server(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from app import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(["--report", str(SCENARIOS / "h200-cupti-gate-base")])
    assert stop.value.code == 2 and "--report needs --out FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["--report", str(tmp_path / "no-such-bundle"), "--out", str(tmp_path / "x")])
    assert "--report:" in capsys.readouterr().err and not (tmp_path / "x").exists()
    zipped = tmp_path / "shared.zip"  # the Files page's download: said, with what reopens it
    zipped.write_bytes(zip_bundle(load_bundle(SCENARIOS / "h200-cupti-gate-base")).read())
    with pytest.raises(SystemExit):
        cli.main(["--report", str(zipped), "--out", str(tmp_path / "x")])
    err = " ".join(capsys.readouterr().err.split())
    assert (f"--report {zipped}: a dashboard bundle's zip (the Files page's download), not a "
            "job's folder: --report reads job folders. Reopen it as its job on the Import page, "
            f"or: python -m profiling_worker import {zipped} --out ") in err, err
    out = tmp_path / "pair.html"
    assert cli.main(["--report", str(SCENARIOS / "h200-cupti-gate-base"),
                     str(SCENARIOS / "h200-cupti-gate-again"), "--max-slowdown", "5%",
                     "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "Gate verdict: passed" in html and "allowed slowdown 5 %" in html


@pytest.mark.parametrize("text", ["nsight-python 0.9.6 (Normalized column, no Unit)",
                                  "![x](http://e/i.png) a_b \\ c", "<b>*x*</b> @me $1 | {y}"])
def test_sentences_the_pages_write_as_markdown_read_back_as_written(text: str) -> None:
    from app.core.markdown import esc

    assert H.from_markdown(esc(text)) == text


def test_the_digits_sentence_says_what_the_tables_show() -> None:
    """The lead said "Tables show four significant digits" above 2,684,749 and 16.768: each
    column shares the decimals of four significant digits of its median value (issue 37's
    policy, one module for pages and report), as it now says."""
    from app.core.share.build import OFFLINE_NOTE

    html = job_report(load_bundle(SCENARIOS / "h200-ncu-matmul-sweep"))
    assert "Tables show four significant digits" not in html and H.text(OFFLINE_NOTE) in html
    section = html.split("<h2>Size sweep</h2>", 1)[1].split("</table>", 1)[0]
    col = re.findall(r"<th>([^<]*)</th>", section).index("AvgValue")
    shown = [re.findall(r"<td[^>]*>([^<]*)</td>", r)[col]
             for r in re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>", 1)[1])]
    assert len({len(s.split(".")[1]) for s in shown}) == 1  # one number of decimals
    # as the Size sweep page's table: three decimals, as its narrowest CI95 needs to keep its width
    assert "16.768" in shown and "21,437.494" in shown


def test_a_tables_box_scrolls_sideways() -> None:
    import pandas as pd

    out = H.table(pd.DataFrame({f"Column{i}": [1.5] for i in range(30)}))
    assert out.startswith('<div class="wide"><table>') and ".wide{overflow-x:auto" in H._STYLE
    assert "scroll-hint" in H.page("t", [], [H.Section("s").add(out)])  # the script saying so


def test_hints_say_what_the_dashboard_offers() -> None:
    """A static file has no "Pick another metric": a view's hint reads as what the dashboard
    offers (a CUPTI job's memory view: no DRAM byte counters)."""
    html = job_report(load_bundle(SCENARIOS / "h200-cupti-elementwise"))
    assert "To get it:" not in html
    memory = html.split("<h2>Memory traffic and fusion</h2>", 1)[1].split("</section>", 1)[0]
    assert "What the dashboard offers: " in memory and "memory metric preset" in memory
    assert "<h3>Fusion: unfused → fused</h3>" in memory  # its time ratio needs only durations


def test_the_report_and_the_agent_door_carry_the_verdicts_caveats() -> None:
    """gate-base -> timeline n = 8192 (issue 34): the candidate's two modes make it not
    comparable, and its power-capped runs are said beside the outcome in the JSON decision
    (the agent door's) and the HTML report alike; "clock not checked", a caveat of a
    direction, is not (the row has none)."""
    base, cand = (load_bundle(SCENARIOS / j) for j in ("h200-cupti-gate-base",
                                                     "h200-cupti-timeline"))
    out = decision(judged(base, cand))
    row = next(r for r in out["rows"] if r["config"] == "n=8192")
    assert row["outcome"] == "not comparable"
    assert row["caveats"] == ["power-capped runs"]
    assert "not one population" in row["reason"]
    html = comparison_report(base, cand)
    assert "power-capped runs" in html and "clock not checked" not in html


def test_the_job_report_carries_the_run_audit() -> None:
    html = job_report(load_bundle(SCENARIOS / "h200-cupti-timeline"))
    assert "<h2>Run audit</h2>" in html
    assert "39 of 100 runs passed (clock 6, population 61)" in html
    assert "derived on load" in html


def test_a_column_in_several_units_reads_as_on_the_pages() -> None:
    """One kernel's table of fp32 n=8192 (µs, %, Hz, byte rows): the report wrote the AvgValue
    column in one format (4 decimals on Hz); it writes each unit's rows as the page's table does
    (numbers.column_display), each cell keeping its exact value."""
    from app.core import numbers
    from app.core.views.one_kernel import OneKernelOptions, one_kernel_frame

    frame = one_kernel_frame(load_bundle(SCENARIOS / "h200-ncu-matmul-sweep"),
                             OneKernelOptions("fp32", 4))
    page = numbers.column_display(frame).text(frame)["AvgValue"]
    html = H.table(frame)
    head = re.findall(r"<th>([^<]*)</th>", html)
    rows = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>", 1)[1])
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", r)[head.index("AvgValue")] for r in rows]
    assert cells == [H.text(c) if c is not None else "—" for c in page]
    assert "21,437.5" in cells and "1,978,513,520" in cells  # µs and Hz, as the page shows
    exact = [float(re.findall(r'data-value="([^"]*)"', r)[0]) for r in rows if "data-value" in r]
    assert exact  # the numbers stay exact behind the text


def _cells(html: str) -> list[str]:
    """Every table cell's shown text in a report, outside its scripts (plotly.js, chart data)."""
    body = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    return [c.strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", body, flags=re.S)]


def test_a_job_whose_runs_failed_the_audit_is_never_called_clean() -> None:
    """Issue 37: the matmul sweep's report said "every check passed" above a run audit with
    failed pairs, and "15 of 15 pairs are stable" without saying that stable there means
    repeatable, not valid. Both read the audit now (the page's words). The recorded runs all
    pass since the clock check reads a run against its own config's median (the job's pooled
    median failed 5 pairs' runs, tensor-core GEMMs at a steady lower clock): three pairs are
    given a planted clock drop (runs 0-2 at 90 %)."""
    from html import unescape

    from app.core.views.run_audit import badge_frame, failed_text
    from app.core.views.stability import stable_text
    from tests.scenarios import with_clock_drop

    bundle = with_clock_drop("h200-ncu-matmul-sweep", [("fp16", 2), ("fp16", 4), ("bf16", 4)])
    html = unescape(job_report(bundle))
    failed = failed_text(bundle)
    assert failed is not None and "in 3 of 15 region × config pairs" in failed
    assert ("fp16 n=2048: 7/10 runs passed (clock 3: 1,503 MHz vs its config's median 1,664 MHz "
            "(-9.7 %; limit 5 %)") in failed
    assert "every check passed" not in html and "every run passed the run audit" not in html
    assert failed[1:] in html
    said = stable_text(bundle, stability_frame(bundle, StabilityOptions()), badge_frame(bundle))
    assert said.startswith("15 of 15 annotation × config pairs are stable (RSD < 2 %), over "
                           "every recorded run; 3 of them have runs that failed the run audit")
    assert said in html
    # the Size sweep's section marks and names those points, as under the page's chart
    sweep = html.split("<h2>Size sweep</h2>", 1)[1].split("<h2>", 1)[0]
    assert f"{MARK} (the checks" in sweep
    assert "Marked: fp16 n=2048: 7/10 runs passed (clock 3: " in sweep
    assert "this report's Run audit section" in sweep
    assert "⚠ 7/10 passed; failed clock (3)" in sweep  # the table's Run audit column
    # and so do the Bound and Roofline sections (a fresh user's find: the Roofline did not)
    for name in ("Bound", "Roofline", "Memory traffic and fusion", "Kernels"):
        part = html.split(f"<h2>{name}</h2>", 1)[1].split("<h2>", 1)[0]
        # (the memory chart shows the last config, n=8192, as the page opens)
        assert f"{MARK} (the checks" in part, name
        assert "fp16 n=8192: 7/10 runs passed (clock 3: " in part, name
        assert "this report's Run audit section" in part, name
        assert "⚠ 7/10 passed; failed clock (3)" in part, name  # the Run audit column


def test_a_cpu_job_on_a_contended_cpu_carries_the_pages_warnings(tmp_path: Path) -> None:
    """Issue 37: a real cpu job timed on a contended CPU: the report said "every check passed"
    and left out the contended-CPU warning every page of the job shows. It carries the pages'
    warnings (the same functions) and what the run audit failed."""
    from html import unescape

    from app.core.share.job import contention_note, host_timer_note
    from app.core.views.run_audit import audit_frame, failed_frame, failed_text
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.bundle.schema import run_audit as A
    from tests.contended_cpu import record_contended_job

    proc = record_contended_job(tmp_path / "busy")
    assert proc.returncode == 0, proc.stderr[-2000:]
    bundle = load_bundle(tmp_path / "busy")
    html = unescape(job_report(bundle))
    warned, timer = contention_note(bundle), host_timer_note(bundle)
    assert warned is not None and warned.startswith("Timed on a contended CPU: ")
    assert timer is not None and warned in html and timer in html
    assert "every check passed" not in html
    failed = failed_text(bundle)  # host_contention flags every run when the warning was stored
    assert failed is not None
    # the facts, whatever else a loaded machine made another check flag: the one pair, none of
    # its 3 runs passed, host_contention among its flags, the job-wide evidence said once
    (pair,) = failed_frame(bundle).to_dict("records")
    assert (pair[C.ANNOTATION], pair[C.CONFIG_LABEL], pair["Passed"], pair[C.RUNS]) == (
        "fp32", "n=512", 0, 3), pair
    assert A.HOST_CONTENTION in pair["Flags"] and f"{pair[C.ANNOTATION]} n=512" in failed
    # the job-wide evidence of the contention is the warning's (its figures), said once in
    # the notes: not again in what the run audit failed nor in its section (session 23)
    from app.core.share.build import NOTES_SAY
    from profiling_worker.bundle.schema import backends as B

    evidence = A.job_evidence(audit_frame(bundle))[A.HOST_CONTENTION]
    assert evidence not in failed, failed  # (the table of runs flagged keeps each run's)
    figures = B.contention_text(bundle.manifest["backend"])
    assert figures and figures in warned and html.count(warned) == 1  # (and the manifest's JSON)
    assert f"{A.HOST_CONTENTION}: {NOTES_SAY}" in html
    assert "every run passed the run audit" not in html and failed[1:] in html
    assert warned in unescape(comparison_report(bundle, bundle))


def test_compare_names_each_caveated_pair_by_region() -> None:
    """Issue 37: the compare page listed "n=4096: not comparable (clock-dropped runs)" twice
    (fp16 and bf16 share the config); each pair is named by region and config, on the page
    and in the report. Both n=4096 pairs of the baseline given a planted clock drop (the
    recorded runs pass since the clock check reads a run against its own config's median)."""
    from html import unescape

    from app.core.views.compare import CompareOptions, caveated_pairs, compare_frame
    from tests.scenarios import scenario, with_clock_drop

    base = with_clock_drop("h200-ncu-matmul-sweep", [("fp16", 3), ("bf16", 3)])
    cand = scenario("h200-ncu-matmul-rules")
    pairs = caveated_pairs(compare_frame(base, cand, CompareOptions()))
    assert len(pairs) == len(set(pairs)) == 2
    assert {"fp16 n=4096: not comparable (clock-dropped runs)",
            "bf16 n=4096: not comparable (clock-dropped runs)"} <= set(pairs)
    html = unescape(comparison_report(base, cand))
    assert all(p in html for p in pairs)


@pytest.mark.parametrize("pair", [("h200-ncu-matmul-sweep", "h200-ncu-matmul-rules"),
                                  ("h200-ncu-gate-base", "h200-ncu-linear-backward")])
def test_no_report_cell_shows_raw_inf_nan_or_none(pair: tuple[str, str]) -> None:
    """Issue 37: the comparison report's DetectablePct and DiffCI95UpperPct cells read "inf"
    where the page says "unbounded". Every cell of every section of both reports (the comparison
    and each job's) is scanned for a raw inf, nan or None."""
    from tests.scenarios import scenario

    base, cand = scenario(pair[0]), scenario(pair[1])
    raw = {"inf", "-inf", "+inf", "nan", "none", "<na>", "&lt;na&gt;", "nat"}
    for html in (comparison_report(base, cand), job_report(base), job_report(cand)):
        cells = _cells(html)
        assert cells and sorted({c for c in cells if c.lower() in raw}) == []


def test_a_report_figure_names_its_unbounded_ci95s_under_it() -> None:
    """The pages name the points whose CI95 runs to the chart's edge under the chart
    (common.open_end_note); the report's figures carry the same note (they drew the arrows
    without it), and a bounded figure none."""
    import numpy as np
    import pandas as pd

    from app.core.figures import common
    from app.core.figures.sweep import build_sweep_figure
    from profiling_worker.bundle.schema import columns as C

    frame = pd.DataFrame({C.ANNOTATION: ["copy"] * 2, "n": [1024, 4096], C.UNIT: "GB/s",
                          C.NUM_RUNS: 10, C.AVG: [20.0, 35.0], C.CI95_LOWER: [17.6, 30.0],
                          C.CI95_UPPER: [np.inf, 41.0]})
    fig = build_sweep_figure(frame, "n", host_timer=False)
    note = common.open_end_note(fig)
    assert note and H.text(note) in H.figure(fig, "f")
    bounded = build_sweep_figure(frame.assign(**{C.CI95_UPPER: [23.0, 41.0]}), "n", False)
    assert "CI95 unbounded at" not in H.figure(bounded, "g")


def test_the_reports_say_each_intervals_method_and_coverage() -> None:
    """As the pages: the comparison report's ratios Fieller's line, a job report's sweep and
    stability sections the mean CI95's (not the ratio's, nor a pooled range)."""
    from profiling_worker.bundle.schema import interval_words as W

    base, cand = (load_bundle(SCENARIOS / j) for j in ("h200-cupti-gate-base",
                                                     "h200-cupti-gate-again"))
    assert H.text(W.line(W.RATIO)) in comparison_report(base, cand)
    html = job_report(load_bundle(SCENARIOS / "h200-cupti-stability"))
    assert html.count(H.text(W.line(W.MEAN))) == 2  # the sweep's and the stability's
    assert H.text(W.line(W.RATIO)) not in html

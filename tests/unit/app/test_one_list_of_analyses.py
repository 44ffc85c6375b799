"""One list of analyses (app/core/pages.py, issue 38): the link bar, the HTML report and the
agent door enumerate the same entries, and each shows the table its page opens on, on recorded
H200 bundles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.agent_door.door import Door, DoorError, records
from app.agent_door.server import ANALYSIS_TABLE
from app.core import pages
from profiling_worker.bundle.loader import load_bundle
from app.core.derived import MissingWork
from app.core.metrics import MissingData
from app.core.share.analyses import DRAW, analysis_sections
from app.ui import navigation
from tests.scenarios import SCENARIOS, scenario_dir

ROOT = Path(__file__).resolve().parents[3]
KEYS = [a.key for a in pages.ANALYSES]
JOB = "h200-ncu-roofline"  # feeds every analysis but the collectors (it recorded none)


@pytest.fixture()
def door(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Door:
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    return Door()


def test_the_bar_links_every_analysis_page() -> None:
    assert navigation.SECTIONS is pages.SECTIONS  # the bar reads the list, no copy
    scripts = {e.script for entries in pages.SECTIONS.values() for e in entries}
    assert {a.script for a in pages.ANALYSES} <= scripts
    assert all((ROOT / "app" / "app_pages" / a.script).is_file() for a in pages.ANALYSES)
    assert len(set(KEYS)) == len(KEYS)


def test_the_report_has_one_section_per_analysis_in_its_order() -> None:
    assert list(DRAW) == KEYS
    sections = analysis_sections(load_bundle(SCENARIOS / JOB))
    assert [s.title for s in sections] == [a.title for a in pages.ANALYSES]


def test_the_door_lists_and_gives_each_analysis_as_its_page_opens(door: Door) -> None:
    assert door.job_summary(JOB)["analyses"] == KEYS
    assert all(key in ANALYSIS_TABLE for key in KEYS)  # the tool's description, from the list
    bundle = load_bundle(SCENARIOS / JOB)
    for entry in pages.ANALYSES:
        answer = door.analysis_table(JOB, entry.key)
        assert answer["page"] == pages.page(entry.script).title
        if "missing" in answer:
            why = re.escape(answer["missing"][:40])
            with pytest.raises((MissingData, MissingWork), match=why):
                entry.table(bundle)
            continue
        assert answer["rows"] == records(entry.table(bundle))["rows"]
    assert "missing" not in door.analysis_table(JOB, "bound")
    with pytest.raises(DoorError, match="give one of sweep, stability"):
        door.analysis_table(JOB, "no-such-analysis")


def test_the_agents_doc_names_every_key() -> None:
    doc = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `analysis_table`"))
    assert [k for k in KEYS if f"`{k}`" not in row] == []


def test_the_doors_summary_carries_what_the_run_audit_failed(door: Door) -> None:
    """Issue 37: the door gave an agent the Stable column and the audit's counts with no
    sentence saying the stable matmul-sweep pairs had runs that failed (clock 10 of 10, on the
    job's pooled median clock; since the check reads a run against its own config's median the
    sweep passes, and the timeline's n=8192 fails: clock 6, population 61)."""
    from app.core.views.run_audit import failed_text

    said = failed_text(load_bundle(scenario_dir("h200-cupti-timeline")))
    assert said is not None and "fp16 n=8192: 39/100 runs passed (" in said
    caveats = door.job_summary("h200-cupti-timeline")["caveats"]
    assert caveats[-1] == said[:1].upper() + said[1:]
    assert failed_text(load_bundle(scenario_dir("h200-ncu-matmul-sweep"))) is None


def test_the_doors_summary_says_the_ci95s_method_and_coverage(door: Door) -> None:
    """Its durations carry CI95 bounds: the line the Stability page captions them with."""
    from profiling_worker.bundle.schema import interval_words as W

    summary = door.job_summary(JOB)
    assert "rows" in summary["durations"] and summary["ci95"] == W.line(W.MEAN)
    # so do the analyses whose tables carry CI95 bounds (the Stability and Size sweep pages')
    for key in ("stability", "sweep"):
        answer = door.analysis_table(JOB, key)
        assert "CI95_Lower" in answer["rows"][0] and answer["interval"] == W.line(W.MEAN), key
    assert "interval" not in door.analysis_table(JOB, "bound")


def test_the_doors_verdict_says_its_intervals_method_and_coverage(door: Door) -> None:
    """compare_jobs gave each row's reason with its 95 % interval ("95 % CI -0.41 .. +0.12 %")
    and no word of its method or coverage: it carries the line under the CLI's Markdown table
    and in its JUnit properties (``report.interval_line``), from the same figures."""
    from profiling_worker.bundle.gate import report
    from profiling_worker.bundle.schema import interval_words as W
    from app.core.share.verdict import judged

    said = door.compare_jobs("h200-cupti-gate-base", "h200-cupti-gate-again")
    result = judged(*(load_bundle(SCENARIOS / j)
                      for j in ("h200-cupti-gate-base", "h200-cupti-gate-again")))
    assert any("95 % CI" in r["reason"] for r in said["rows"])
    assert said["interval"] == report.interval_line(result) == W.line(W.RATIO)
    assert report.interval_line(result) in report.markdown(result)


def test_the_doors_tables_of_a_big_job_are_capped_and_say_where_the_rest_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: an answer carries MAX_ROWS rows of a table (10,000 configs: 30,000 pairs), the
    count of the rest and where every row is (the page's CSV, the run audit's table)."""
    import pandas as pd

    from benchmarks.results_page_scale import build_scale_bundle
    from app.agent_door.door import MAX_ROWS
    from app.core.views.run_audit import AUDIT_ELSEWHERE

    monkeypatch.setenv("KPROF_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(tmp_path / "none"))
    job = "scale-25-configs"
    build_scale_bundle(tmp_path / job, configs=25, runs=3)  # 3 regions: 75 pairs
    door = Door()
    summary = door.job_summary(job)
    for key, elsewhere in (("durations", f"Stability page (/stability?job={job})"),
                           ("run_audit", AUDIT_ELSEWHERE)):
        answer = summary[key]
        assert len(answer["rows"]) == MAX_ROWS and answer["rows_not_listed"] == 75 - MAX_ROWS
        assert elsewhere in answer["rows_elsewhere"], answer["rows_elsewhere"]
    table = door.analysis_table(job, "stability")
    assert table["rows_not_listed"] == 75 - MAX_ROWS
    assert "CSV download" in table["rows_elsewhere"]
    assert "rows_elsewhere" not in records(pd.DataFrame({"a": range(3)}), elsewhere="x")

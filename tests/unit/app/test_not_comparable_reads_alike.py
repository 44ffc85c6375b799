"""A fresh user's find: two cpu jobs timed on a contended CPU read "No verdict, every pair not
comparable" on the Compare page while its TimeOutcome column said "regressed", and the gate's
Markdown gave such a pair "about N runs a side would likely decide it". A pair that is not
comparable now reads so in every output (the CLI's text, Markdown and JUnit, the HTML report,
the agent door): its runs' figures, no outcome of them and no runs that would decide it.

The pair: the ncu sweep against the roofline job of the same matmuls (the metric sets differ:
not comparable) at 1 % allowed, where several rows' time alone is improved or regressed and
some are clock-explained."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest

from app.agent_door.door import gate_decision
from app.core.share.build import comparison_report
from app.core.views.compare import CompareOptions, compare_frame
from profiling_worker.bundle.gate import judge as J
from profiling_worker.bundle.gate.sides import GateSide
from tests.scenarios import SCENARIOS, scenario

BASE, CAND = "h200-ncu-matmul-sweep", "h200-ncu-roofline"
ALLOWED = 1.0
#: An outcome of the runs, or a runs estimate, said of a row that is not comparable.
JUDGED = re.compile(r"the runs alone: (regressed|improved|same|ambiguous|clock-explained)"
                    r"|runs a side would|so the clock explains|: (regressed|improved|same)\b")


def test_the_pair_is_not_comparable_and_its_time_alone_has_directions() -> None:
    """The premise: the rows' time alone leaves the threshold (what "regressed" was said of)."""
    result = J.judge(*(GateSide.load(SCENARIOS / n) for n in (BASE, CAND)),
                     J.GateOptions(max_slowdown_pct=ALLOWED))
    rows = result.rows
    assert result.context and set(rows[J.OUTCOME]) == {J.Outcome.NOT_COMPARABLE.value}
    assert ((rows[J.DIFF_CI95_LOWER_PCT] > ALLOWED)
            | (rows[J.DIFF_CI95_UPPER_PCT] < -ALLOWED)).sum() >= 3
    assert set(rows[J.TIME_OUTCOME]) == {J.Outcome.NOT_COMPARABLE.value}
    assert set(rows[J.CYCLES_OUTCOME].dropna()) <= {J.Outcome.NOT_COMPARABLE.value}
    assert rows[J.RUNS_TO_DECIDE].isna().all()
    assert not [r for r in rows[J.REASON] if JUDGED.search(r)]


def test_the_cli_text_markdown_and_junit_judge_no_row(tmp_path: Path) -> None:
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(SCENARIOS / BASE), str(SCENARIOS / CAND), "--max-slowdown",
                           f"{ALLOWED:g}%", "--junit", str(junit), "--markdown", str(md)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 3, proc.stderr
    markdown = md.read_text(encoding="utf-8")
    table = [line for line in markdown.splitlines() if line.startswith(("| fp", "| bf"))]
    assert len(table) == 15 and all("| **not comparable** |" in line for line in table)
    assert not JUDGED.search(markdown) and not JUDGED.search(proc.stdout)
    said = " ".join(e.get("message", "") + (e.text or "")
                    for e in ET.parse(junit).getroot().iter("error"))
    assert "the runs alone: " in said and not JUDGED.search(said)


def test_the_html_report_judges_no_row() -> None:
    html = unescape(comparison_report(scenario(BASE), scenario(CAND), ALLOWED))
    assert "not comparable" in html and "the runs alone: " in html
    assert not JUDGED.search(html)
    # nor a cell of its tables (TimeOutcome is one of the ratio table's columns)
    assert "TimeOutcome" in html and not re.search(
        r">\s*(regressed|improved|ambiguous|same|clock-explained)\s*<", html)


def test_the_agent_door_judges_no_row() -> None:
    said = gate_decision(scenario(BASE), scenario(CAND), ALLOWED, None)
    assert said["verdict"] == "not judged" and said["rows"]
    assert {r["outcome"] for r in said["rows"]} == {J.Outcome.NOT_COMPARABLE.value}
    assert not [r for r in said["rows"] if JUDGED.search(r["reason"])]


@pytest.mark.parametrize("column", [J.TIME_OUTCOME, J.CYCLES_OUTCOME])
def test_the_compare_pages_table_has_no_outcome_beside_not_comparable(column: str) -> None:
    """The page's table (and its CSV) from :func:`compare_frame`: the column the user read
    "regressed" in."""
    frame = compare_frame(scenario(BASE), scenario(CAND), CompareOptions(None, ALLOWED))
    assert set(frame[column].dropna()) == {J.Outcome.NOT_COMPARABLE.value}
    assert frame[J.RUNS_TO_DECIDE].isna().all()

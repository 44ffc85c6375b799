"""The gate judges what was recorded (issue 34): the L2 flush as the backend did it, options in
force, and each side's runs (the run audit: one population, power-capped runs), in the CLI's
text, Markdown and JUnit alike; the self-comparison note agrees with the verdict."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from profiling_worker.bundle.gate import exit_codes, report
from profiling_worker.bundle.gate.judge import (CAVEATS, OUTCOME, REASON, TIME_OUTCOME, GateOptions,
                                                judge)
from profiling_worker.bundle.gate.runs_context import CLOCK_NOT_CHECKED, POWER_CAPPED
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.gate.verdict import Outcome
from tests.scenarios import SCENARIOS

STABILITY, J1 = SCENARIOS / "h200-cupti-stability", SCENARIOS / "h200-cupti-j1-fp16"
BASE, TIMELINE = SCENARIOS / "h200-cupti-gate-base", SCENARIOS / "h200-cupti-timeline"


def cli(base: Path, cand: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str],
                                                         ET.Element]:
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(base),
                           str(cand), "--junit", str(junit)],
                          capture_output=True, text=True, timeout=120, check=False)
    return proc, ET.parse(junit).getroot()


def _row(base: Path, cand: Path, n: int) -> dict[str, object]:
    rows = judge(GateSide.load(base), GateSide.load(cand), GateOptions()).rows
    return dict(rows[rows["n"] == n].iloc[0])


def test_stability_without_the_l2_flush_is_not_comparable_with_a_flushed_job(
        tmp_path: Path) -> None:
    """Its spec says cache_control all, but it was recorded before the CUPTI backend flushed
    (no backend.cache_flush): at n = 1024 the +16.39 % is the L2, not the kernel, so no
    outcome of the time is said either (it read TimeOutcome "regressed")."""
    r = _row(STABILITY, J1, 1024)
    assert r[TIME_OUTCOME] == r[OUTCOME] == Outcome.NOT_COMPARABLE.value
    assert "the runs alone: +16.39 % (" in str(r[REASON])
    assert str(r[REASON]).startswith("cache control: all (not in force: CUPTI backend, "
                                     "recorded without the L2 flush) vs all")
    proc, xml = cli(STABILITY, J1, tmp_path)
    assert proc.returncode == exit_codes.EXIT_NOT_JUDGED, proc.stdout
    assert "recorded without the L2 flush" in proc.stdout
    assert xml.get("failures") == "0"


def test_gate_base_to_timeline_names_the_two_modes_and_the_power_capped_runs(
        tmp_path: Path) -> None:
    """The runs alone give +7.98 %, but not one population: not comparable, with no outcome
    of the time and so no "clock not checked" (a caveat of a direction; both were said)."""
    r = _row(BASE, TIMELINE, 8192)
    assert r[TIME_OUTCOME] == r[OUTCOME] == Outcome.NOT_COMPARABLE.value
    reason = str(r[REASON])
    assert "the candidate's runs are not one population" in reason
    assert "61 of 100 runs at 1.132x" in reason and "the runs alone: +7.98 % (" in reason
    assert str(r[CAVEATS]).split(", ") == [POWER_CAPPED]
    assert "SW power cap; 208 W" in reason and CLOCK_NOT_CHECKED not in reason
    proc, xml = cli(BASE, TIMELINE, tmp_path)
    assert proc.returncode == exit_codes.EXIT_NOT_JUDGED, proc.stdout
    assert f"**not comparable** ({POWER_CAPPED})" in proc.stdout
    case = next(c for c in xml.iter("testcase") if c.get("name") == "fp16 n=8192")
    error = case.find("error")  # not comparable fails the step (exit 3): an error, not a skip
    assert error is not None and POWER_CAPPED in str(error.get("message"))
    assert POWER_CAPPED in str(error.text)


def test_a_direction_without_the_cycle_check_says_clock_not_checked() -> None:
    tf32, fp32 = SCENARIOS / "h200-cupti-gate-tf32", SCENARIOS / "h200-cupti-gate-fp32"
    rows = judge(GateSide.load(tf32), GateSide.load(fp32), GateOptions()).rows
    assert set(rows[OUTCOME]) == {Outcome.REGRESSED.value}
    assert set(rows[CAVEATS]) == {CLOCK_NOT_CHECKED}


def test_the_self_comparison_note_agrees_with_the_verdict(tmp_path: Path) -> None:
    """A bundle against itself: every difference is 0, yet a row whose runs are two modes is
    not comparable and the note counts it instead of calling every row same."""
    proc, _ = cli(TIMELINE, TIMELINE, tmp_path)
    result = judge(GateSide.load(TIMELINE), GateSide.load(TIMELINE), GateOptions())
    assert result.count(Outcome.NOT_COMPARABLE) == 1
    assert "same by construction" not in proc.stderr
    assert report.self_comparison(result) in proc.stderr
    assert "1 of 2 rows same, 1 not comparable" in proc.stderr
    quiet = judge(GateSide.load(BASE), GateSide.load(BASE), GateOptions())
    assert report.self_comparison(quiet).endswith("3 of 3 rows same")


def test_a_job_wide_caveat_says_its_evidence_once_in_every_output() -> None:
    """h200-cupti-stability ran without the L2 flush its spec asks (a job-wide check, all 3
    configs): the gate's details repeated that evidence per config in the CLI's Markdown, the
    JUnit cases and the agent door. Each row names its runs; the evidence is said once."""
    import html

    from app.core.share.verdict import decision
    from profiling_worker.bundle.schema import run_audit as A

    side = GateSide.load(SCENARIOS / "h200-cupti-stability")
    evidence = side.job_evidence[A.L2]
    result = judge(side, side, GateOptions())
    assert len(result.rows) == 3 and all("l2_state: " in r for r in result.rows[REASON])
    assert all(evidence not in r for r in result.rows[REASON])
    assert result.job_caveats == [
        f"L2 warm against the spec in the {name} (every config): l2_state: {evidence}"
        for name in ("baseline", "candidate")]
    for text in (report.markdown(result), html.unescape(report.junit_xml(result)),
                 repr(decision(result))):
        assert text.count(evidence) == 2, text  # once per side


def test_a_rows_own_cause_is_told_from_the_pairs_context() -> None:
    """Compare names the pairs not comparable for a cause of their own with the Markdown
    report's why (issue 37: README's gate pair read "not comparable" with no word why): the
    timeline's two modes are the row's own cause; of the cache control pair (not comparable
    for the context, said once above the table) only the row whose runs are two modes has one,
    and its why begins "not comparable (above)" as the report's cell does."""
    judged = judge(GateSide.load(BASE), GateSide.load(TIMELINE), GateOptions())
    row = judged.rows[judged.rows["n"] == 8192].iloc[0]
    assert report.blocked_by_row(judged, row[REASON])
    assert report.row_why(judged, row[REASON]) == row[REASON]  # no context to leave out
    cache = judge(GateSide.load(SCENARIOS / "h200-cupti-elementwise"),
                  GateSide.load(SCENARIOS / "h200-cupti-elementwise-cache-none"), GateOptions())
    own = [r for r in cache.rows[REASON] if report.blocked_by_row(cache, r)]
    assert own == [r for r in cache.rows[REASON] if "not one population" in r], own
    assert len(own) == 1 and report.row_why(cache, own[0]).startswith(
        f"{report.CONTEXT_SAID}; the baseline's runs are not one population: two modes")
    assert f"| **not comparable** | {report.CONTEXT_SAID}; the baseline's runs are not one " \
        "population" in report.markdown(cache)

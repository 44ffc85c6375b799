"""How the run audit's failed pairs are said (app/core/views/run_audit.py), on every page, in the
report and to the agent door: one phrasing of a pair (a chart's marked points, the Stability
count, the report's notes, One kernel), pairs of the same outcome named together, a job-wide
check's evidence once (a fresh user's find: a contended cpu job's note under the Size sweep
repeated the host-contention evidence for each of its 9 configs, about 2,600 characters), and
the slow-config caption's configs after their cause."""

from __future__ import annotations

import pytest

from app.core.numbers import TIME_UNITS, fmt
from app.core.views import run_audit as R
from profiling_worker.bundle.schema import columns as C
from app.core.views.stability import StabilityOptions, stability_frame, stable_text
from profiling_worker.bundle.schema import run_audit as A
from tests.scenarios import scenario, with_clock_drop

#: No L2 flush on every run of its 3 configs (a job-wide check) and, on n=8192, a slower group.
NO_FLUSH = "h200-cupti-stability"


def _l2_evidence(bundle: object) -> str:
    audit = R.audit_frame(bundle)  # type: ignore[arg-type]
    return str(audit[audit[A.CHECK] == A.L2][A.EVIDENCE].iloc[0])


def test_a_job_wide_checks_evidence_is_said_once_wherever_the_pairs_are() -> None:
    bundle = scenario(NO_FLUSH)
    evidence = _l2_evidence(bundle)
    pairs = tuple((a, int(c)) for a, c in zip(R.badge_frame(bundle)["Annotation"],
                                              R.badge_frame(bundle)["Config"]))
    assert len(pairs) == 3
    failed = R.failed_text(bundle)
    (note,) = R.chart_audit_notes(bundle, pairs, R.PAGE_EVIDENCE)
    stable = stable_text(bundle, stability_frame(bundle, StabilityOptions()),
                         R.badge_frame(bundle))
    one = R.pair_failed_text(bundle, *pairs[0])
    for said in (failed, note, one):
        assert said is not None and said.count(evidence) == 1, said
        assert f"; for the whole job, l2_state: {evidence}" in said
    assert stable.count(evidence) <= 1
    # each config names the check by its runs; its own checks keep their evidence
    assert failed is not None and "fp16 n=256" in failed and "(l2_state 30" in failed
    assert R.job_evidence_text(bundle) == f"l2_state: {evidence}"


def test_pairs_of_the_same_outcome_are_named_together() -> None:
    """Every config of a job flagged by a job-wide check alone reads as one group."""
    bundle = scenario(NO_FLUSH)
    frame = R.failed_frame(bundle)
    alike = frame.assign(Passed=0, Runs=30, Evidence="l2_state 30", Flags="l2_state 30")
    said = R.failed_pairs_text(bundle, alike)
    assert said.startswith("fp16 n=256, fp16 n=1024, fp16 n=8192: 0/30 runs passed each "
                           "(l2_state 30); for the whole job, l2_state: ")
    assert R.failed_pairs_text(bundle, alike.head(1)).startswith(
        "fp16 n=256: 0/30 runs passed (l2_state 30); ")


def test_every_place_phrases_a_failed_pair_alike() -> None:
    """The chart's note, the report's notes (failed_text), Stability and One kernel say a
    pair in the same words (flagged_points_text and failed_pairs_text were near-twins:
    "fp16 n=2048: 7/10 runs passed the run audit (…)" and "fp16 n=2048 (3 of 10 runs; …)")."""
    bundle = with_clock_drop("h200-ncu-matmul-sweep", [("fp16", 2)])
    pair = R.flagged_points_text(bundle, (("fp16", 2),))
    assert pair is not None and pair.startswith("fp16 n=2048: 7/10 runs passed (clock 3: ")
    assert A.JOB_WIDE and "for the whole job" not in pair  # no job-wide check failed
    assert f"pairs: {pair}" in str(R.failed_text(bundle))
    assert f"Marked: {pair}." in R.chart_audit_notes(bundle, (("fp16", 2),),
                                                     R.PAGE_EVIDENCE)[0]
    assert str(R.pair_failed_text(bundle, "fp16", 2)).startswith(f"Run audit: {pair}; the RSD")
    stable = stable_text(bundle, stability_frame(bundle, StabilityOptions()),
                         R.badge_frame(bundle))
    assert stable.endswith(f"not valid: {pair}.")


def test_the_slow_config_caption_puts_each_cause_before_its_configs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh user's find: "..., fp32 n=8192 at 1,979 MHz (its runs' median): fp16 n=8192
    at ..." read as a list belonging to the fastest config. The fastest config ends its own
    sentence; each cause leads its configs. The labels come without the audit's summary
    (badge_frame was built for them alone)."""
    bundle = scenario("h200-ncu-matmul-sweep")

    def no_summary(*_: object) -> None:
        raise AssertionError("the slow-config caption built the audit's summary")

    monkeypatch.setattr(R, "badge_frame", no_summary)
    monkeypatch.setattr(A, "summary_frame", no_summary)
    said = R.slow_configs_text(bundle)
    assert said is not None
    assert said.startswith(
        "Clock by config (not a failed audit: each run is checked against its own config's "
        "median). The job's fastest config, fp32 n=8192, ran at 1,979 MHz (its runs' median); "
        "10 configs ran more than 5 % below it. Cause not shown (no power or thermal throttle "
        "reason at the runs; the job's NVML trace read power, but no reading is matched to "
        "these runs): fp16 n=512 at 1,827 MHz (8 % below), fp16 n=1024 at ")
    assert "fp16 n=8192 at 1,515 MHz (23 % below)" in said and said.endswith(".")
    assert "placed" not in said
    # fp16 before bf16 (the job's order), each by size
    assert said.index("fp16 n=2048") < said.index("fp16 n=8192") < said.index("bf16 n=")


def test_the_reports_audit_section_says_the_job_wide_evidence_once() -> None:
    """The report's table of runs passed per config leaves a job-wide check's evidence out of
    its rows (each would repeat it) and says it once under the table."""
    from html import unescape

    from app.core.share.build import job_report

    bundle = scenario(NO_FLUSH)
    html = unescape(job_report(bundle))
    said = "The Evidence column leaves out what holds for the whole job: l2_state: "
    assert html.count(said + _l2_evidence(bundle)) == 1
    assert set(R.badge_frame(bundle)["Evidence"].str.split(" \\| ").str[0]) == {"l2_state 30"}


@pytest.mark.parametrize(("pairs", "failed", "drawn", "said"), [
    (R.BADGE_PAIRS, 2, R.BADGE_PAIRS, None),  # a small job: every badge, as before
    (R.BADGE_PAIRS + 1, 0, 0, "0 failed, 31 passed every run"),
    (100, 3, 3, "3 failed (their badges above), 97 passed every run"),
    (100, 40, R.BADGE_PAIRS, "40 failed (the first 30 badges above, 10 more not drawn), 60"),
])
def test_a_big_jobs_badges_are_its_failed_pairs_then_counts(pairs: int, failed: int, drawn: int,
                                                            said: str | None) -> None:
    """Issue 37: above BADGE_PAIRS pairs a page draws the failed pairs' badges (at most
    BADGE_PAIRS) and counts the rest; every failed pair is drawn or counted."""
    import pandas as pd

    badges = pd.DataFrame({"Annotation": "fp32", "Config": range(pairs), "Runs": 10,
                           "Passed": [9 if c < failed else 10 for c in range(pairs)]})
    rows, text = R.drawn_badges(badges)
    assert len(rows) == drawn
    if said is None:
        assert text is None and rows is badges
    else:
        assert (rows["Passed"] < 10).all()
        assert text is not None and said in text and R.BADGES_EVIDENCE in text
        assert text.startswith(f"Run audit of {pairs} region × config pairs, summarised: ")


def test_a_big_jobs_slow_configs_are_counted_per_cause_and_listed_whole(tmp_path) -> None:
    """Issue 37: the slow-config caption named every config below the fastest's clock (20,000
    on a 10,000-config sweep). Above SLOW_NAMED it counts them per cause, names each cause's
    slowest and where every one is; slow_configs_frame has them all. Real H200 rows tiled to
    20 configs (the benchmarks' builder): 40 fp16/bf16 configs below fp32's clock."""
    from html import unescape

    from benchmarks.results_page_scale import build_scale_bundle
    from profiling_worker.bundle.loader import load_bundle

    build_scale_bundle(tmp_path / "scale-20-configs", configs=20, runs=3)
    bundle = load_bundle(tmp_path / "scale-20-configs")
    frame = R.slow_configs_frame(bundle)
    assert len(frame) == 40 > R.SLOW_NAMED
    said = R.slow_configs_text(bundle, "WHERE")
    assert said is not None
    assert "; 40 configs ran more than 5 % below it, summarised. Cause not shown (" in said
    assert "): 40 configs, the slowest fp16 n=8196 at 1,516 MHz (23 % below)." in said
    assert said.endswith(" Every one: WHERE.") and said.count(" MHz (") == 2  # fastest, slowest
    assert said.count(" at 1,516 MHz") == 1 and len(said) < 600
    from app.core.share.build import job_report

    report = unescape(job_report(bundle))
    assert f'<p class="caption">{R.SLOW_TABLE}</p>' in report  # the report's table of them
    assert f"Every one: the table “{R.SLOW_TABLE}” below." in report


def test_a_big_jobs_failed_text_names_the_first_failed_pairs_and_counts_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: failed_text (the report's notes, the agent door's caveats) named every failed
    pair: thousands on a big sweep. Above BADGE_PAIRS it names the first and counts the rest."""
    import pandas as pd

    bundle = scenario("h200-ncu-matmul-sweep")
    pairs = R.BADGE_PAIRS + 7
    badges = pd.DataFrame({"Annotation": "fp32", "Config": range(pairs + 3), "Runs": 10,
                           "Passed": [9] * pairs + [10] * 3, "ConfigLabel": "n=1",
                           "Evidence": "clock 1: x", "Flags": "clock 1"})
    monkeypatch.setattr(R, "badge_frame", lambda _: badges)
    monkeypatch.setattr(R, "job_evidence_text", lambda *_: "")
    said = R.failed_text(bundle)
    assert said is not None
    assert said.startswith(f"the run audit failed runs in {pairs} of {pairs + 3} region × ")
    assert said.count("fp32 n=1") == R.BADGE_PAIRS
    assert said.endswith(f"; 7 more failed: every pair's badge: {R.AUDIT_ELSEWHERE}")


@pytest.mark.parametrize("name", ["h200-cupti-elementwise", "h200-cupti-stability-thermal-off"])
def test_the_evidence_writes_durations_in_the_pages_unit(name: str) -> None:
    """The worker writes a population's medians in ns; a page shows them in its own unit (the
    Stability page's time unit, µs by default) in the badges' evidence, the failed pairs'
    sentence and the details table."""
    bundle = scenario(name)
    in_ns = R.badge_frame(bundle, "ns")
    medians = in_ns[C.EVIDENCE].str.extract(r"\(([\d,]+) vs ([\d,]+) ns\)").dropna()
    assert len(medians) == 1
    slow, fast = (float(v.replace(",", "")) for v in medians.iloc[0])
    for unit in ("µs", "ms"):
        badges = R.badge_frame(bundle, unit)
        shown = f"({fmt(slow / TIME_UNITS[unit])} vs {fmt(fast / TIME_UNITS[unit])} {unit})"
        assert badges[C.EVIDENCE].str.contains(shown, regex=False).sum() == 1
        assert shown in R.failed_pairs_text(bundle, R.failed_rows(badges))
        details = R.flagged_frame(bundle, unit)[A.EVIDENCE]
        assert details.str.contains(shown, regex=False).any()
        assert not details.str.contains(r"\d ns\b").any()
    assert R.badge_frame(bundle)[C.EVIDENCE].equals(R.badge_frame(bundle, "µs")[C.EVIDENCE])

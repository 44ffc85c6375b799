"""The gate's Markdown says what its ± is and names the jobs by their labels (a fresh user's
find): a side's ``21.35 ± 14.71 µs (n=10)`` stood under a column "baseline" beside one headed
"difference (95 % CI)", so the ± read as a CI half-width, and the headline read "candidate vs
baseline base" (the folders' names) where the specs label the jobs. On the recorded H200 pair
h200-cupti-gate-base / h200-cupti-gate-again, and the same pair with the labels taken out."""

from __future__ import annotations

import dataclasses

import pytest

from profiling_worker.bundle.gate import report
from profiling_worker.bundle.gate.judge import GateOptions, GateResult, judge
from profiling_worker.bundle.gate.sides import GateSide
from tests.scenarios import scenario_dir


@pytest.fixture(scope="module")
def result() -> GateResult:
    return judge(GateSide.load(scenario_dir("h200-cupti-gate-base")),
                 GateSide.load(scenario_dir("h200-cupti-gate-again")),
                 GateOptions(max_slowdown_pct=3.0))


def _header(markdown: str) -> list[str]:
    line = next(l for l in markdown.splitlines() if l.startswith("| region"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_the_means_columns_say_mean_plus_minus_sd(result: GateResult) -> None:
    md = report.markdown(result)
    header = _header(md)
    assert header[2:5] == ["baseline (mean ± SD)", "candidate (mean ± SD)",
                           "difference (95 % CI)"], header
    rows = [l for l in md.splitlines() if l.startswith("| ") and not l.startswith(("| region",
                                                                                  "| ---"))]
    assert len(rows) == 3 and all(" ± " in l for l in rows)
    # every ± the Markdown writes is in a column that says it is the SD, or the header itself
    assert all(c.endswith("(mean ± SD)") for c in header if "±" in c)


def test_junit_text_says_mean_plus_minus_sd(result: GateResult) -> None:
    xml = report.junit_xml(result)
    assert "baseline h200-cupti-gate-base (mean ± SD): " in xml
    assert "candidate h200-cupti-gate-again (mean ± SD): " in xml


def test_headline_names_the_jobs_by_their_labels(result: GateResult) -> None:
    assert (result.baseline_label, result.candidate_label) == ("h200-cupti-gate-base",
                                                               "h200-cupti-gate-again")
    line = report.headline(result)
    assert line.startswith('candidate "h200-cupti-gate-again" (folder h200-cupti-gate-again) '
                           'vs baseline "h200-cupti-gate-base" (folder h200-cupti-gate-base) ('), line
    assert report.headline(result) in report.markdown(result)


def test_headline_label_differs_from_folder(result: GateResult) -> None:
    named = dataclasses.replace(result, baseline="base", candidate="candidate",
                                baseline_label="gate baseline", candidate_label="gate candidate")
    assert report.headline(named).startswith(
        'candidate "gate candidate" (folder candidate) vs baseline "gate baseline" '
        "(folder base) (")


def test_headline_falls_back_to_the_folder_and_says_so(result: GateResult) -> None:
    bare = dataclasses.replace(result, baseline="base", candidate="candidate",
                               baseline_label="", candidate_label="")
    assert report.headline(bare).startswith(
        "candidate candidate (folder name: the job has no label) vs baseline base (folder "
        "name: the job has no label) (")


def test_side_label_from_spec_then_manifest() -> None:
    side = GateSide.load(scenario_dir("h200-cupti-gate-base"))
    assert side.label == "h200-cupti-gate-base"
    no_spec = dataclasses.replace(side, manifest={"label": " from manifest "})
    assert no_spec.label == "from manifest"
    assert dataclasses.replace(side, manifest={}).label == ""


def test_the_cli_counts_the_pairs_and_the_one_sided_rows_apart(result: GateResult) -> None:
    """Session 23's fresh user: the CLI said "12 not comparable" where Compare said "6 ... not
    comparable. 6 more on one side only." for one pair. Both say :func:`report.pair_counts`:
    the pairs both jobs hold by outcome, then the rows of one side apart."""
    from profiling_worker.bundle.gate.judge import CANDIDATE, OUTCOME
    from profiling_worker.bundle.gate.verdict import Outcome
    from profiling_worker.bundle.schema import columns as C

    rows = result.rows.copy()
    rows.loc[rows.index[0], CANDIDATE + C.RUNS] = float("nan")  # in the baseline only
    rows.loc[rows.index[0], OUTCOME] = Outcome.NOT_COMPARABLE.value
    one_sided = dataclasses.replace(result, rows=rows)
    both = len(rows) - 1
    line = report.headline(one_sided)
    assert line.endswith(report.pair_counts(one_sided))
    assert f"{both} matching annotation × config pairs: " in line
    assert f"1 {report.ONE_SIDE}." in line
    said = {o.value: int((rows[OUTCOME].iloc[1:] == o.value).sum()) for o in Outcome}
    assert all(f"{n} {o}" in line for o, n in said.items())  # the pairs' outcomes alone
    # the page's: the same words and counts, the outcomes present only
    page = report.pair_counts(one_sided, every_outcome=False)
    assert page.startswith(f"{both} matching annotation × config pairs: ")
    assert page.endswith(f"1 {report.ONE_SIDE}.")
    assert not any(f"{sep} 0 {o}" in page for sep in (":", ",") for o in Outcome), page

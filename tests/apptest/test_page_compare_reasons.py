"""Compare says why each pair it calls not comparable is (issue 37: a fresh user read "not
comparable" for README's gate pair at n=128 with an empty Caveats cell and no box, while the
gate's report gave "the baseline's runs are not one population: two modes ..."). The words are
the gate's own (:func:`profiling_worker.bundle.gate.report.row_why`, the Markdown report's
*why* cell), each pair named by region and config, in the table's unit."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import plotly_specs, unescape
from test_page_compare import _one_run_copy
from app.core.derived import DEFAULT_TIME_UNIT
from app.core.figures.common import HOVER_LINES, HOVER_MORE, HOVER_WIDTH
from app.core.numbers import durations_in
from app.core.views.compare import BLOCKED_SHOWN, blocked_text
from profiling_worker.bundle.gate import report
from profiling_worker.bundle.gate.judge import (CONFIG_LABEL, OUTCOME, REASON, GateOptions,
                                                GateResult, judge)
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.gate.verdict import Outcome
from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS


def _judged(folder: Path, baseline: str, candidate: str) -> GateResult:
    """The pair as ``python -m profiling_worker compare`` judges it."""
    return judge(GateSide.load(folder / baseline), GateSide.load(folder / candidate),
                 GateOptions())


def _own_reasons(judged: GateResult) -> list[str]:
    """``"<region> <config>: <why>"`` of each row both jobs hold that the gate calls not
    comparable for a cause of its own, its why as the gate's report words it, in µs."""
    rows = judged.rows[judged.rows[C.BASELINE + C.RUNS].notna()
                       & judged.rows[C.CANDIDATE + C.RUNS].notna()]
    return [f"{r[C.ANNOTATION]} {r[CONFIG_LABEL]}: "
            f"{durations_in(report.row_why(judged, r[REASON]), DEFAULT_TIME_UNIT)}"
            for _, r in rows.iterrows() if r[OUTCOME] == Outcome.NOT_COMPARABLE.value
            and report.blocked_by_row(judged, r[REASON])]


def _reasons_box(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The page's box of the pairs not comparable for a reason of their own (none or one)."""
    assert not at.exception, at.exception
    return [unescape(w.value) for w in at.warning if "each for a reason of its own" in w.value]


def test_a_pair_whose_runs_are_two_modes_says_so(store, monkeypatch, app) -> None:
    """gate-base -> timeline: n=8192's candidate runs are two modes; its reason is in a box
    under the chart, not only in the table's last column."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    pair = ("h200-cupti-gate-base", "h200-cupti-timeline")
    at = app("compare", query={"baseline": pair[0], "candidate": pair[1]})
    (said,) = _reasons_box(at)
    own = _own_reasons(_judged(SCENARIOS, *pair))
    assert len(own) == 1 and "not one population" in own[0], own
    shown = len(at.dataframe[0].value)
    assert said.startswith(f"**1 of {counted(shown, 'pair')} not comparable**"), said
    assert f"- {own[0]}" in said, (own, said)
    assert " ns" not in said  # in the table's µs


def test_a_pair_measured_differently_names_its_own_causes_beside_the_context(
        store, monkeypatch, app) -> None:
    """Cache control all vs none: every pair is not comparable for the context (its own box);
    the one whose baseline runs are two modes is named apart, "not comparable (above)" first,
    as the gate's report writes it; a pair blocked by the context alone gets no box."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    pair = ("h200-cupti-elementwise", "h200-cupti-elementwise-cache-none")
    at = app("compare", query={"baseline": pair[0], "candidate": pair[1]})
    (said,) = _reasons_box(at)
    judged = _judged(SCENARIOS, *pair)
    own = _own_reasons(judged)
    assert own and all(f"- {line}" in said for line in own), (own, said)
    assert all(report.CONTEXT_SAID in line for line in own)
    # the context's box, said once above the pair's own reasons
    boxes = [unescape(w.value) for w in at.warning]
    context = next(i for i, box in enumerate(boxes) if judged.context_headline in box)
    assert context < boxes.index(said)
    pair = ("h200-ncu-matmul-sweep", "h200-ncu-roofline")  # metric sets differ, nothing else
    at = app("compare", query={"baseline": pair[0], "candidate": pair[1]})
    assert _own_reasons(_judged(SCENARIOS, *pair)) == [] and _reasons_box(at) == []


def test_one_run_pairs_say_they_lack_a_spread(store, app) -> None:
    """Two 1-run jobs: each pair's reason (too few runs) in the box, as the gate words it."""
    for run, name in ((0, "one-run-a"), (1, "one-run-b")):
        _one_run_copy(SCENARIOS / "h200-cupti-stability", store["results"] / name, run)
    at = app("compare", query={"baseline": "one-run-b", "candidate": "one-run-a"})
    (said,) = _reasons_box(at)
    own = _own_reasons(_judged(store["results"], "one-run-b", "one-run-a"))
    assert len(own) == len(at.dataframe[0].value) == 3
    assert all(f"- {line}" in said for line in own) and "1 run" in said, said


def test_the_box_names_at_most_a_few_pairs_and_counts_the_rest() -> None:
    """Thousands of pairs not comparable name the first few; the rest are counted."""
    pairs = [f"fp32 n={n}: baseline has 1 run" for n in range(BLOCKED_SHOWN + 5)]
    said = blocked_text(pairs, 40)
    assert said.startswith(f"**{BLOCKED_SHOWN + 5} of 40 pairs not comparable**")
    assert said.count("\n- ") == BLOCKED_SHOWN and pairs[BLOCKED_SHOWN] not in said
    assert "5 more in the table's Reason column." in said


def _hover_whys(spec: dict) -> dict[tuple[str, str], str]:
    """(region, config) -> the why of its point's hover: the lines that follow the template's
    "why: ", joined as the words they were cut from."""
    whys = {}
    for trace in spec["data"]:
        template = trace["hovertemplate"]
        assert "why: " in template, template
        first = int(template.split("why: %{customdata[", 1)[1].split("]", 1)[0])
        for x, row in zip(trace["x"], trace["customdata"]):
            whys[(trace["name"], str(x))] = unescape(" ".join(c for c in row[first:] if c))
    return whys


def test_the_charts_hover_says_each_verdicts_reason_as_the_table(store, monkeypatch,
                                                                  app) -> None:
    """The chart's hover said a pair's verdict without its why (issue 37, session 24's
    review): each point's hover ends with the Reason the table gives its row, in the table's
    unit; a pair measured differently (every pair not comparable) as much as a comparable
    one."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    for pair in (("h200-cupti-gate-base", "h200-cupti-timeline"),
                 ("h200-cupti-elementwise", "h200-cupti-elementwise-cache-none")):
        at = app("compare", query={"baseline": pair[0], "candidate": pair[1]})
        assert not at.exception, at.exception
        (spec,) = plotly_specs(at)
        table = at.dataframe[0].value
        whys = _hover_whys(spec)
        assert len(whys) == len(table) > 0
        for _, row in table.iterrows():
            said = whys[(str(row[C.ANNOTATION]), str(row[CONFIG_LABEL]))]
            reason = " ".join(str(row[REASON]).split())
            if said.endswith(HOVER_MORE):  # a long one's first lines (the table has it all)
                assert reason.startswith(said.removesuffix(HOVER_MORE)), (said, reason)
                assert len(said) > HOVER_WIDTH * (HOVER_LINES - 1)
            else:
                assert said == reason
        assert not any(" ns" in why for why in whys.values())  # the table's µs

"""The Compare page shows CI's gate refusal of a pair, with its reason, and no verdict, so the
page and ``python -m profiling_worker compare`` never disagree (gate.sides.refusal)."""

from __future__ import annotations

import html
import shutil

import pandas as pd

from apptest_helpers import unescape
from profiling_worker.bundle.gate.sides import refusal
from profiling_worker.bundle.loader import load_bundle
from app.agent_door.door import Door
from app.core.share.build import comparison_report
from app.core.views.compare import refusal_text
from tests.scenarios import SCENARIOS


def test_a_pair_ci_refuses_shows_the_gates_refusal_and_no_verdict(store, monkeypatch,
                                                                    app) -> None:
    """The Compare page and CI never disagree: a copy of h200-cupti-gate-base whose
    aggregated.parquet is cut short (its CSV whole, which the pages read) is refused by
    ``compare`` (exit 2); the page shows that refusal, with its reason, and no verdict. The
    recorded pair it was copied from is judged on both."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    damaged = shutil.copytree(SCENARIOS / "h200-cupti-gate-base", store["results"] / "damaged")
    parquet = damaged / "tables" / "aggregated.parquet"
    pd.read_parquet(parquet).to_csv(parquet.with_suffix(".csv"), index=False)
    parquet.write_bytes(parquet.read_bytes()[:parquet.stat().st_size // 2])
    why = refusal(load_bundle(damaged))
    assert why is not None and why.startswith("tables/aggregated.parquet cannot be read")
    for baseline, candidate, refused in (("damaged", "h200-cupti-gate-again", "baseline"),
                                         ("h200-cupti-gate-again", "damaged", "candidate"),
                                         ("h200-cupti-gate-base", "h200-cupti-gate-again", None)):
        at = app("compare", query={"baseline": baseline, "candidate": candidate})
        assert not at.exception, at.exception
        assert at.selectbox(key="compare-candidate").value == candidate
        errors = [unescape(e.value) for e in at.error if "CI's gate refuses" in e.value]
        if refused is None:  # judged: a verdict on every matching config, no refusal
            assert not errors and len(at.dataframe[0].value["Verdict"]) == 3
            continue
        assert len(errors) == 1 and f"the {refused}, `damaged`: {why}" in errors[0], errors
        assert not [d for d in at.dataframe if "Verdict" in d.value], (baseline, candidate)


def test_the_report_and_the_agent_door_say_the_pages_refusal(store, monkeypatch, app) -> None:
    """Issue 37: where the Compare page said CI's gate refuses the pair, the comparison report
    and the agent door gave a verdict. The three now say the page's sentence (one function,
    naming where no verdict is given), and neither gives a verdict."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    damaged = shutil.copytree(SCENARIOS / "h200-cupti-gate-base", store["results"] / "damaged")
    parquet = damaged / "tables" / "aggregated.parquet"
    pd.read_parquet(parquet).to_csv(parquet.with_suffix(".csv"), index=False)
    parquet.write_bytes(parquet.read_bytes()[:parquet.stat().st_size // 2])
    refused = {"candidate": refusal(load_bundle(damaged))}
    ids = {"baseline": "h200-cupti-gate-again", "candidate": "damaged"}
    at = app("compare", query={"baseline": ids["baseline"], "candidate": "damaged"})
    (error,) = [unescape(e.value) for e in at.error if "CI's gate refuses" in e.value]
    assert error.replace("`", "") == refusal_text(refused, ids, "this page")
    said = Door().compare_jobs(ids["baseline"], "damaged")
    assert said == {"verdict": "refused", "exit_code": 2, **ids, "refused": refused,
                    "reason": refusal_text(refused, ids, "the door")}
    report = html.unescape(comparison_report(load_bundle(SCENARIOS / ids["baseline"]),
                                             load_bundle(damaged)))
    assert refusal_text(refused, ids, "this report") in report
    assert "Gate verdict" not in report and "Regression gate" not in report


def test_the_backends_page_refuses_as_compare_does(store, monkeypatch, app) -> None:
    """CUPTI vs Nsight Compute gives the gate's verdicts too (CUPTI as baseline): on a CUPTI
    job whose aggregated table is cut short it says Compare's refusal and gives none."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    damaged = shutil.copytree(SCENARIOS / "h200-cupti-j1-fp16", store["results"] / "damaged")
    parquet = damaged / "tables" / "aggregated.parquet"
    pd.read_parquet(parquet).to_csv(parquet.with_suffix(".csv"), index=False)
    parquet.write_bytes(parquet.read_bytes()[:parquet.stat().st_size // 2])
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    at.selectbox(key="backends-cupti").set_value("damaged").run()
    assert not at.exception, at.exception
    (error,) = [unescape(e.value) for e in at.error if "CI's gate refuses" in e.value]
    ids = {"baseline": "damaged", "candidate": "h200-ncu-j1-fp16"}
    refused = {"baseline": refusal(load_bundle(damaged))}
    assert error.replace("`", "") == refusal_text(refused, ids, "this page")
    assert not [d for d in at.dataframe if "Verdict" in d.value]

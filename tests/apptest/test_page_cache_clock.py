"""Cache and clock control page on the bundled H200 elementwise jobs (cache all and none)."""

from __future__ import annotations

from apptest_helpers import JOB_ID, plotly_specs, texts, unescape
from tests.scenarios import SCENARIOS


def test_matrix_of_the_two_cache_variants(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("cache_clock", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert {t["name"].split(" · ", 1)[1] for t in spec["data"]} == {
        "cache all · clock none", "cache none · clock none"}
    assert set(at.dataframe[0].value["Variant"]) == {"cache all · clock none",
                                                     "cache none · clock none"}
    # Issue 25: the bandwidth panel's 57-character axis title ran into the time panel's; the
    # long descriptions are panel titles above each panel, the axis titles short
    titles = [spec["layout"][f"yaxis{n}"]["title"]["text"] for n in ("", "2", "3")]
    assert titles == ["Time (µs)", "Bandwidth (GB/s)", "SM clock (MHz)"]
    above = {a["text"] for a in spec["layout"]["annotations"]}
    assert "Bandwidth: DRAM bytes (measured, else analytic) / time" in above


def test_job_without_variants_says_how_to_add_one(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("cache_clock", query={"job": "h200-ncu-softmax"})
    assert not at.exception
    assert "run this job again with the other cache_control" in texts(at)


def test_a_cpu_job_is_not_told_to_vary_what_its_backend_never_applies(seeded, app) -> None:
    """A fresh user's find: a cpu job was told to run again "with the other cache_control or
    clock_control", which the form greys out for the cpu backend and the worker ignores (one
    rule: backends.unused)."""
    at = app("cache_clock", query={"job": JOB_ID})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "run this job again with the other cache_control" not in shown
    assert ("The cpu backend runs on no GPU: it applies no cache_control or clock_control "
            "(greyed out in the form, never sent), so this job has no variant here. Run the "
            "same job on a GPU backend (ncu, cupti or events) to compare them.") in shown


def test_a_cpu_job_without_variants_is_said_so_once_and_draws_none(seeded, app) -> None:
    """Session 23's fresh user: a cpu job's page said it had no variant, then "Variants: cache
    all · clock none", lines named "fp32 · cache all · clock none" and a DRAM bandwidth panel
    the cpu backend cannot measure. It says so once and draws no variant."""
    from app.core.markdown import esc
    from app.core.views.cache_clock import no_variant_text, variant_label
    from profiling_worker.bundle.loader import load_bundle

    bundle = load_bundle(seeded["results"] / JOB_ID)
    assert bundle.backend == "cpu"
    at = app("cache_clock", query={"job": JOB_ID})
    assert not at.exception, at.exception
    said = unescape(no_variant_text(bundle.backend, esc))
    assert [unescape(i.value) for i in at.info].count(said) == 1
    shown = texts(at)
    assert shown.count(said) == 1
    assert variant_label(bundle) not in shown and "Variants:" not in shown
    assert not plotly_specs(at)  # no chart: no variant's name, no DRAM bandwidth panel


def test_points_whose_runs_failed_the_run_audit_are_marked_and_named(store, monkeypatch,
                                                                     app) -> None:
    """Each variant's points are marked × by its own job's run audit, as the Size sweep marks
    its points; the caption names them with their variant, the table has the Run audit."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("cache_clock", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    (caption,) = [unescape(c.value) for c in at.caption if "failed the run audit" in c.value]
    assert caption.startswith("cache all · clock none: An × marks a point")
    assert "fused n=16777216: 5/10 runs passed (population 5: " in caption
    assert "cache none" not in caption
    (spec,) = plotly_specs(at)
    marked = {t["name"] for t in spec["data"]
              if "x" in ((t.get("marker") or {}).get("symbol") or [])}
    assert marked == {"fused · cache all · clock none"}
    table = at.dataframe[0].value
    flagged = table[table["Run audit"].str.startswith("⚠")]
    assert set(zip(flagged["Variant"], flagged["Annotation"])) == {
        ("cache all · clock none", "fused")}


def test_a_cupti_job_is_told_to_vary_only_the_cache_control(store, monkeypatch, app) -> None:
    """s20: cupti applies no clock_control (the form greys it out, backends.unused), so a
    cupti job is told to vary the cache control only, and why not the clock."""
    from app import settings

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(settings.BUNDLED_DIR_DEFAULT))
    at = app("cache_clock", query={"job": "h200-cupti-cuda-core-saxpy"})
    assert not at.exception, at.exception
    shown = texts(at)
    assert ("No other job with the same spec and another cache_control setting: run this job "
            "again with the other cache_control. The cupti backend applies no clock_control "
            "(greyed out in the form, never sent).") in shown

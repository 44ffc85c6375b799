"""One kernel page on bundled H200 jobs and on a cpu job."""

from __future__ import annotations

import json
from pathlib import Path

from apptest_helpers import displayed, plotly_specs, text_number_problems, texts, unescape
from app.core.provenance import ANNOTATED_SCOPE, HOST_SCOPE
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]


def _open(app, monkeypatch, job: str):
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("one_kernel", query={"job": job})
    assert not at.exception, at.exception
    return at


def _values(at):
    """The table of every value of the annotation × config (the one with a Metric column),
    drawn under the launches' chart and its table."""
    return next(d for d in at.dataframe if "Metric" in d.value.columns)


def test_split_k_region_with_clock_and_tflops(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep")
    text = texts(at)
    assert "Only the work inside the annotated region" in text
    assert "allocation" in text and "NVIDIA H200" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Duration (µs)"] == "16.77" and metrics["Runs"] == "10"
    assert metrics["SM clock (MHz)"] == "1,942" and metrics["TFLOP/s"] == "16.01"
    code = at.code[0].value
    assert "split_k" in code and len(code.splitlines()) == 2
    table = _values(at).value
    assert "SM clock the kernel ran at" in set(table["Metric"])
    spec = plotly_specs(at)[0]
    assert spec["layout"]["yaxis"]["title"]["text"] == "Duration (µs)"
    assert "region total" in [t["name"] for t in spec["data"]]


def test_switching_annotation_and_config(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep")
    at.selectbox(key="one-kernel-config").set_value(4).run()
    assert not at.exception
    at.selectbox(key="one-kernel-annotation").set_value("fp16").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Duration (µs)"] == "1,458.3"
    assert set(_values(at).value["n"]) == {8192}



def test_a_stable_pair_whose_runs_failed_the_audit_says_so(store, monkeypatch, app) -> None:
    """Issue 37: fp16 n=8192 of the matmul sweep reads Stable "yes" while runs of it failed
    the run audit: the page says so beside the tile, with the evidence; n=512 (all passed)
    shows no such warning. (The recorded runs pass since the clock check reads a run against
    its own config's median; runs 0-2 get a planted clock drop.)"""
    from html import unescape

    from tests.scenarios import clock_drop_dir

    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"], [("fp16", 4)])
    at = app("one_kernel", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    assert not [w for w in at.warning if "Run audit" in w.value]
    at.selectbox(key="one-kernel-config").set_value(4).run()
    at.selectbox(key="one-kernel-annotation").set_value("fp16").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Stable"] == "yes"
    (said,) = [unescape(w.value) for w in at.warning if "Run audit" in w.value]
    assert said.replace("\\", "").startswith(
        "Run audit: fp16 n=8192: 7/10 runs passed (clock 3: 1,364 MHz vs its config's median "
        "1,515 MHz (-10.0 %; limit 5 %)")

def test_duration_card_follows_the_unit_toggle_and_tables_formatted(store, monkeypatch,
                                                                     app) -> None:
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep")
    at.selectbox(key="one-kernel-config").set_value(4).run()  # fp32, n = 8192: 21,437 µs
    metrics = {m.label: m.value for m in at.metric}
    # not "2.144e+04", cut to "2.14..."; the mean with the decimals its CI95 (21,434.6 to
    # 21,440.4 us: 5.8 wide) needs, so the card and its interval agree (issue 37)
    assert metrics["Duration (µs)"] == "21,437.5", metrics
    card = [m for m in at.metric if m.label == "Duration (µs)"][0]
    assert "CI95 [21,434.6, 21,440.4] µs" in card.proto.help, card.proto.help
    at.segmented_control(key="one-kernel-time-unit").set_value("ms").run()
    assert {m.label: m.value for m in at.metric}["Duration (ms)"] == "21.4375"
    at.segmented_control(key="one-kernel-time-unit").set_value("µs").run()
    table = _values(at)
    # rows in several units (µs, %, Hz, byte ...): each unit's values with that unit's decimals
    # (app.core.numbers.by_unit_as_text), the mean and its CI95 bounds alike, never "2.144e+04";
    # one format for the column wrote 4 decimals on Hz and bytes. The CSV keeps exact values.
    shown = displayed(table).set_index("Metric")
    assert list(shown.loc["gpu__time_duration.sum", ["AvgValue", "CI95_Lower", "CI95_Upper"]]) \
        == ["21,437.5", "21,434.6", "21,440.4"]  # as the card and its help
    assert shown.loc["gpc__cycles_elapsed.avg.per_second", "AvgValue"] == "1,978,513,520"
    assert shown.loc["sm__throughput.avg.pct_of_peak_sustained_elapsed", "AvgValue"] == "86.5977"
    assert not text_number_problems(displayed(table), json.loads(table.proto.columns))
    # the text is the Styler's: the values stay numbers, so a header click sorts them by value
    assert table.value["AvgValue"].dtype == float


def test_cupti_job_has_no_kernel_clock(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-stability")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["SM clock (MHz)"] == "—" and metrics["Stable"] == "no"


def test_cpu_job(seeded, app) -> None:
    at = app("one_kernel")
    assert not at.exception
    assert "host wall-clock, not GPU" in plotly_specs(at)[0]["layout"]["title"]["text"]
    # a tiny host matmul runs far below 1 TFLOP/s: the card moves to a unit that fits
    label, value = next((m.label, m.value) for m in at.metric if m.label.endswith("FLOP/s"))
    assert label != "TFLOP/s" and not value.startswith("0.0"), (label, value)
    assert 1 <= float(value.replace(",", "")) < 1000
    table = _values(at).value  # the table's throughput row is in the card's unit
    assert label in set(table["Unit"]), (label, set(table["Unit"]))
    # issue 37: a cpu job ran on no GPU and used no nsight: no "GPU: unknown", no SM clock
    # tile, no nsight.annotate scope
    shown = texts(at)
    assert "SM clock (MHz)" not in [m.label for m in at.metric]
    assert "**GPU:** none: ran on the host (cpu backend)" in shown and "unknown" not in shown
    assert HOST_SCOPE in [i.value for i in at.info] and ANNOTATED_SCOPE not in shown


def test_an_import_without_durations_draws_no_control_or_chart_over_nothing(store, app) -> None:
    """A fresh user's find: an imported job of derived metrics only (case 05, nsight-python's
    CSVs with no duration metric) showed a Time unit control, an empty duration chart, an
    empty table with its CSV and HTML downloads, and "—" in SM clock and TFLOP/s. Now: the
    recorded values' table, a note that there is no duration to draw, nothing that acts on
    nothing."""
    from profiling_worker.importing import import_nsight_output

    import_nsight_output([REPO / "tests" / "fixtures" / "import_cases" / "05-derived-inf"],
                         store["results"], "derived")
    at = app("one_kernel", query={"job": "derived"})
    assert not at.exception
    assert not [c for c in at.get("button_group") if c.label == "Time unit"]
    assert not plotly_specs(at)
    assert [i for i in at.info if "no per-run or per-launch" in i.value]
    assert not [m.label for m in at.metric if m.label == "SM clock (MHz)"
                or m.label.endswith("FLOP/s")]
    assert at.dataframe and not [d for d in at.dataframe if d.value.empty]  # values, notes
    assert [b.label for b in at.get("download_button")] == ["Download CSV"]


def test_a_big_jobs_audit_is_not_read_for_one_pair_and_it_says_so(store, monkeypatch,
                                                                   app) -> None:
    """Issue 37: One kernel derived the whole job's run audit to say one pair's (7.6 of the
    page's 17 s profiled on a 1,000-config sweep). Above CHART_AUDIT_RUNS runs it reads it no
    more, as the charts, and says where each run's checks are. Real H200 rows tiled to 200
    configs x 10 runs (the benchmarks' builder): 6,000 runs."""
    from benchmarks.results_page_scale import build_scale_bundle
    from app.core.views import run_audit as R

    build_scale_bundle(store["results"] / "scale-200-configs", configs=200, runs=10)

    def no_audit(*_: object) -> None:
        raise AssertionError("One kernel derived the audit of a big job")

    monkeypatch.setattr(R, "audit_frame", no_audit)
    at = app("one_kernel", query={"job": "scale-200-configs"})
    assert not at.exception, at.exception
    assert not [w for w in at.warning if "Run audit" in w.value]
    (said,) = [c.value for c in at.caption if c.value.startswith("Not marked by the run audit")]
    # measurements, not runs: the job panel counts a run once, whatever its regions
    assert ("this job's 6,000 measurements (runs × regions) are more than the 5,000"
            in unescape(said))


def test_every_value_names_its_metric_in_words(store, monkeypatch, app) -> None:
    """Session 23: tables named a metric by its raw name alone; the words beside it, the raw
    name kept (the key)."""
    from app.core import frame_columns as F, metric_roles
    from tests.scenarios import SCENARIOS

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("one_kernel", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if F.METRIC_WORDS in d.value.columns)
    named = dict(zip(table["Metric"], table[F.METRIC_WORDS]))
    assert named["gpu__time_duration.sum"] == metric_roles.words({},
                                                                       "gpu__time_duration.sum")

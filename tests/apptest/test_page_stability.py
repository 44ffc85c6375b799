"""Stability page on bundled H200 jobs and on a cpu job."""

from __future__ import annotations

from apptest_helpers import JOB_ID, open_folds, plotly_specs, texts, unescape
from app.core import metric_roles
from app.core.views.stability import DRIFT_CAUSE
from profiling_worker.bundle.schema import metrics as M
from tests.scenarios import REPO, SCENARIOS


def _open(app, monkeypatch, job: str, page: str):
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query={"job": job})
    assert not at.exception, at.exception
    return at


def test_stability_on_matmul_sweep(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep", "stability")
    specs = plotly_specs(at)
    assert len(specs) == 2
    assert specs[0]["layout"]["yaxis"]["title"]["text"] == "Relative standard deviation (%)"
    assert "run index" in specs[1]["layout"]["xaxis"]["title"]["text"]
    assert len(at.dataframe) == 2  # summary, runs; the run audit's two once it is opened
    assert len(open_folds(at).dataframe) == 4
    shown = texts(at)  # ncu kernel durations: no launch overhead claimed; their RSD given
    assert "shorter than 10 µs" in shown and "RSD " in shown
    assert DRIFT_CAUSE[False] in shown and DRIFT_CAUSE[True] not in shown  # a GPU's drift
    assert "launch" not in shown.split("shorter than 10 µs")[1].split(".")[0]
    # the Metric picker: words, the raw name beside (metric_roles.readable); values stay raw
    picker = at.selectbox(key="stability-metric")
    assert picker.value == M.GPU_TIME
    assert metric_roles.readable({}, M.GPU_TIME) in picker.options
    assert M.GPU_TIME not in picker.options and f"({M.DRAM_READ})" in " ".join(picker.options)
    at.selectbox(key="stability-config").set_value(4).run()
    assert not at.exception
    assert set(at.dataframe[1].value["n"]) == {8192}


def test_stability_cpu_job_says_host_timer(seeded, app) -> None:
    at = app("stability")
    assert not at.exception
    assert all("host wall-clock, not GPU" in s["layout"]["title"]["text"].replace("<br>", " ")
               for s in plotly_specs(at))
    # issue 37 (05b_howto.png): its "How to read this" puts drift on the host, not the GPU
    shown = texts(at)
    assert DRIFT_CAUSE[True] in shown and DRIFT_CAUSE[False] not in shown


def test_normalised_processed_file_alone_uses_its_relative_std_dev(store, app) -> None:
    """Case 04's processed_data alone said '0 of 6 stable', each row 'RSD nan %'."""
    import subprocess
    import sys

    src = REPO / "tests" / "fixtures" / "import_cases" / "04-normalized"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                           str(src / "processed_data-bench-0.csv"),
                           "--out", str(store["results"] / "normalised")],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    at = app("stability", query={"job": "normalised"})
    assert not at.exception, at.exception
    assert "5 of 6 annotation × config pairs are stable" in texts(at)
    table = at.dataframe[0].value
    assert table["RelativeStdDevPct"].notna().all()
    assert table["Note"].tolist().count("") == 5  # torch n=16777216: RSD 2.17 %
    assert "nan" not in " ".join(table["Note"]).lower() + texts(at).lower()


def test_a_cpu_job_timed_on_a_contended_cpu_says_so_on_the_page(store, app) -> None:
    """The contention warning the worker wrote (its threads' run-queue delay) is on the results
    page of the job, not only in the sidebar while the job is listed."""
    from app.core.share.job import contention_line, contention_title
    from profiling_worker.bundle.loader import load_bundle
    from tests.contended_cpu import record_contended_job

    proc = record_contended_job(store["results"] / "contended")
    assert proc.returncode == 0, proc.stderr[-2000:]
    bundle = load_bundle(store["results"] / "contended")
    said = contention_line(bundle)  # None: the worker did not warn
    assert said
    at = app("stability", query={"job": "contended"})
    assert not at.exception, at.exception
    # one line, the label of the fold that holds the figures (issue 37: not a box over it)
    assert contention_title(bundle) == said
    assert [said in unescape(e.label) for e in at.expander].count(True) == 1


def test_the_stable_count_says_which_stable_pairs_failed_the_run_audit(store, monkeypatch,
                                                                      app) -> None:
    """Issue 37: the matmul sweep's badges read "fp16 n=2048: 0/10 passed; failed clock (10)"
    and directly below "15 of 15 annotation × config pairs are stable": the count now says the
    RSD is over every recorded run and names the stable pairs whose runs failed the audit.
    Those 5 pairs' failures came from the job's pooled median clock (tensor-core GEMMs at a
    steady lower clock); the recorded runs pass, so 3 pairs get a planted clock drop."""
    from html import unescape

    from tests.scenarios import clock_drop_dir

    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"],
                   [("fp16", 2), ("fp16", 4), ("bf16", 4)])
    at = app("stability", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    (said,) = [unescape(c.value).replace("\\", "") for c in at.caption
               if "annotation × config pairs are stable" in c.value]
    assert said.startswith("15 of 15 annotation × config pairs are stable (RSD < 2 %), over "
                           "every recorded run; 3 of them have runs that failed the run audit")
    assert ("fp16 n=2048: 7/10 runs passed (clock 3: 1,503 MHz vs its config's median 1,664 MHz "
            "(-9.7 %; limit 5 %)") in said


def test_many_run_audit_badges_fold_under_one_line(store, app) -> None:
    """Issue 37: a contended cpu job's 9 failed badges took 5 rows over the Stability chart at
    1000x700. More than BADGES_IN_ROW badges are folded under one line that counts them; every
    badge is still drawn, in the fold."""
    from app.core.views.run_audit import badge_frame, badge_text
    from app.ui.run_audit import BADGES_IN_ROW, folded_label
    from profiling_worker.bundle.loader import load_bundle
    from tests.contended_cpu import README_JOB, record_contended_job

    assert folded_label([True, False, False]) == "2 of 3 annotation × config pairs failed"
    assert folded_label([True]) == "All 1 annotation × config pair passed"
    proc = record_contended_job(store["results"] / "busy9", README_JOB)
    assert proc.returncode == 0, proc.stderr[-2000:]
    bundle = load_bundle(store["results"] / "busy9")
    frame = badge_frame(bundle)
    assert len(frame) == 9 > BADGES_IN_ROW
    at = app("stability", query={"job": "busy9"})
    assert not at.exception, at.exception
    passed = (frame["Passed"] == frame["Runs"]).tolist()
    (fold,) = [p for p in at.get("popover") if p.proto.popover.label == folded_label(passed)]
    said = [unescape(m.value) for m in fold.markdown]  # a badge is markdown to AppTest
    assert len(said) == 9
    for r in frame.to_dict("records"):  # each pair's badge, its failed checks named
        text = badge_text(f"{r['Annotation']} {r['ConfigLabel']}", int(r["Passed"]),
                          int(r["Runs"]), str(r["Flags"]))
        assert sum(text in one for one in said) == 1, (text, said)


def test_the_tables_first_columns_are_the_pages_own(seeded, app) -> None:
    """Issue 37 (p_stability_1400.png): RSD, stable and CI95 were off screen right of Metric and
    MetricWords, which repeated one value on every row. The table now shows them right after
    the row's identity; a column of one value is left out (the CSV keeps it) and its value is
    said in a caption."""
    from app.core import table_text
    from app.core.views.stability import OWN_COLUMNS, StabilityOptions, stability_frame
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import columns as C

    at = app("stability")
    assert not at.exception, at.exception
    shown = at.dataframe[0].value
    assert list(shown.columns[:6]) == [C.ANNOTATION, C.CONFIG, "n", C.RSD, C.STABLE,
                                       C.CI95_HALF_PCT]
    assert C.METRIC not in shown.columns and "MetricWords" not in shown.columns
    bundle = load_bundle(seeded["results"] / JOB_ID)
    full = metric_roles.with_words(stability_frame(bundle, StabilityOptions(
        metric=bundle.duration_metric, time_unit="µs")), bundle.manifest)  # as the page's
    _, constant = table_text.page_columns_first(full, OWN_COLUMNS, ["n"])
    assert constant[C.METRIC] == bundle.duration_metric
    said = table_text.constant_caption(constant)
    assert said is not None and said in [c.value for c in at.caption]

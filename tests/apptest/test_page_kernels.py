"""Kernels page on the bundled H200 matmul sweep and a linear-backward copy whose kernels
change between runs."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts, trace_values, unescape

from tests.unit.app.bundled import extra, launches_variant
from tests.scenarios import SCENARIOS


def test_kernels_page(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("kernels", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    assert len(plotly_specs(at)) == 1 and len(at.dataframe) == 4
    assert "fp32 n=512 (2)" in texts(at)
    (spec,) = plotly_specs(at)
    # opens on the share of each region; no room above 100 %: no region's runs failed the run
    # audit (the job's pooled median clock failed 5, each run now reads its config's median)
    assert spec["layout"]["yaxis"]["range"] == [0, 100]
    at.segmented_control(key="kernels-bars").set_value("time").run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["type"] == "linear"  # stacked, so never log
    assert spec["layout"]["yaxis"]["title"]["text"] == "Mean time per run (µs)"


def test_kernels_page_when_kernels_change_between_runs(store, app) -> None:
    """Run 0 of backward config 0 has one extra 100 µs launch: the counts say 7–8 per run and
    that the kernels vary, and the chart's extra kernel is its mean over all 3 runs."""
    launches_variant(store["bundled"], "kv-extra", extra)
    at = app("kernels", query={"job": "kv-extra"})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "backward batch=4096, features=1024 (7–8)" in shown
    assert "differ between runs of some configs: backward batch=4096, features=1024." in shown
    at.segmented_control(key="kernels-bars").set_value("time").run()
    (spec,) = plotly_specs(at)
    (trace,) = [t for t in spec["data"] if t["customdata"][0][1] == "extra_kernel"]
    assert trace_values(trace, "y") == [pytest.approx(100_000 / 3 / 1000)]  # µs, over 3 runs


def test_kernel_names_are_shortened_in_the_middle_with_the_full_name_last(store, monkeypatch,
                                                                            app) -> None:
    """Issue 25: the column cut ``..._execute_kernel__5x_cublas`` and
    ``..._execute_split_k_kernel__5x_cublas`` before the part that tells them apart."""
    from app.core.table_text import FULL_NAME, SHORT_HELP

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("kernels", query={"job": "h200-ncu-matmul-sweep"})
    tables = [d for d in at.dataframe if "Kernel" in d.value.columns]
    assert tables
    for table in tables:
        frame = table.value
        assert FULL_NAME in frame.columns
        assert frame["Kernel"].nunique() == frame[FULL_NAME].nunique()
        for short, full in zip(frame["Kernel"], frame[FULL_NAME]):
            assert short == full or ("…" in short and short.endswith(full[-30:])), short
        assert SHORT_HELP in table.proto.columns  # the column config JSON the browser gets
    names = {n for t in tables for n in t.value[FULL_NAME]}
    assert any("execute_split_k_kernel" in n for n in names)  # the pair of the issue is shown


def test_joined_kernel_names_are_shortened_in_the_middle_with_the_full_names_last(
        store, monkeypatch, app) -> None:
    """Issue 37: the Kernel counts table cut its ' + '-joined cuBLAS names at the end (where
    ..._execute_kernel__5x_cublas and ..._execute_split_k_kernel__5x_cublas differ), with no
    way to read them; the rule digest cut each at 80 characters. Each name is now shortened in
    the middle, the full names are the last column, and the header's hover says so."""
    from app.core.table_text import FULL_NAMES, JOINED, SHORT_NAMES_HELP

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    for job in ("h200-ncu-matmul-sweep", "h200-ncu-matmul-rules"):
        at = app("kernels", query={"job": job})
        assert not at.exception, at.exception
        tables = [d for d in at.dataframe if FULL_NAMES in d.value.columns]
        assert tables, job  # the counts table (and the rule digest of the rules job)
        for table in tables:
            frame = table.value
            for short, full in zip(frame["Kernels"], frame[FULL_NAMES]):
                parts, names = short.split(JOINED), full.split(JOINED)
                assert len(parts) == len(names)
                for part, name in zip(parts, names):
                    assert part == name or ("…" in part and part.endswith(name[-20:])), part
            assert SHORT_NAMES_HELP in table.proto.columns
        full = {n for t in tables for cell in t.value[FULL_NAMES] for n in cell.split(JOINED)}
        assert any("execute_split_k_kernel__5x_cublas" in n for n in full), job


def test_regions_whose_runs_failed_the_run_audit_are_marked_and_named(store, monkeypatch,
                                                                      app) -> None:
    """The kernel bars mark the region x configs whose runs failed the run audit as the Size
    sweep marks its points: an × over the stacked bar, the caption naming them, the table's
    Run audit column."""
    from tests.scenarios import clock_drop_dir

    # the recorded runs pass (the clock check reads a run against its own config's
    # median; the job's pooled median failed 5 pairs): runs 0-2 of 3 pairs dropped
    flagged = {("fp16", 2048), ("fp16", 8192), ("bf16", 8192)}
    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"],
                   [(a, {2048: 2, 8192: 4}[n]) for a, n in flagged])
    at = app("kernels", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    (caption,) = [unescape(c.value) for c in at.caption if "failed the run audit" in c.value]
    for annotation, n in sorted(flagged):
        assert f"{annotation} n={n}: 7/10 runs passed (clock 3: " in caption
    assert "fp32" not in caption and "Results tables page" in caption
    (spec,) = plotly_specs(at)
    (marks,) = [t for t in spec["data"] if t["name"] == "runs failed the run audit"]
    assert set(trace_values(marks, "x")) == {f"{a} · n={n}" for a, n in flagged}
    table = at.dataframe[0].value
    audit = dict(zip(zip(table["Annotation"], table["n"]), table["Run audit"]))
    assert audit[("fp16", 8192)] == "⚠ 7/10 passed; failed clock (3)"
    assert audit[("fp32", 8192)] == "✓ 10/10 passed"

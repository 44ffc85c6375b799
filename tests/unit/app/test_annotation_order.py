"""Every view lists annotations in the job's order (fp32, fp16, bf16: the aggregated table's,
the spec's), the order of the colours and of the sweep's legend, not the alphabet nor the
order of the table a view reads (a fresh user's find: the Kernels chart's x order, the run
audit's badges and the "Every launch" table read bf16, fp16, fp32)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from bundled import bundled, launches_variant

from app.core.figures.kernels import build_kernels_figure
from app.core.metrics import annotation_order, in_job_order
from app.core.share.job import job_colors
from app.core.views.kernels import kernel_counts_frame, kernel_time_frame, launches_frame
from app.core.views.run_audit import badge_frame, failed_frame, flagged_frame
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C

SWEEP = "h200-ncu-matmul-sweep"
JOB_ORDER = ["fp32", "fp16", "bf16"]


def _order(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame[C.ANNOTATION]))


def test_the_job_order_is_the_aggregated_tables_and_the_colours_follow_it() -> None:
    bundle = bundled(SWEEP)
    assert annotation_order(bundle) == JOB_ORDER
    assert list(job_colors(bundle)) == JOB_ORDER


def test_the_run_audit_badges_and_details_follow_the_job_order() -> None:
    bundle = bundled(SWEEP)
    assert _order(badge_frame(bundle)) == JOB_ORDER
    assert _order(flagged_frame(bundle)) == JOB_ORDER
    failed = _order(failed_frame(bundle))
    assert failed == [a for a in JOB_ORDER if a in failed]


def test_every_launch_follows_the_job_order_within_a_launch() -> None:
    launches = launches_frame(bundled(SWEEP))
    first = launches[(launches[C.CONFIG] == 0) & (launches[C.RUN] == 0) & (launches[C.LAUNCH] == 0)]
    assert _order(first) == JOB_ORDER
    assert _order(launches) == JOB_ORDER


def test_kernel_views_follow_the_job_order_whatever_the_launches_tables_order(
        tmp_path: Path) -> None:
    root = launches_variant(tmp_path, "alphabetical", lambda t: t.sort_values(
        C.ANNOTATION, kind="stable", ignore_index=True), job=SWEEP)
    bundle = load_bundle(root)
    assert _order(bundle.table(C.TABLE_LAUNCHES)) == sorted(JOB_ORDER)  # the table's order
    times = kernel_time_frame(bundle)
    assert _order(times) == JOB_ORDER
    assert _order(kernel_counts_frame(bundle)) == JOB_ORDER
    assert _order(launches_frame(bundle)) == JOB_ORDER
    x = build_kernels_figure(times).layout.xaxis.categoryarray
    assert list(x[:3]) == ["fp32 · n=512", "fp16 · n=512", "bf16 · n=512"]


def test_in_job_order_puts_unknown_annotations_after_and_keeps_ties() -> None:
    bundle = bundled(SWEEP)
    frame = pd.DataFrame({C.ANNOTATION: ["zz", "bf16", "fp32", "aa", "bf16"], "i": range(5)})
    out = in_job_order(frame, bundle)
    assert list(out[C.ANNOTATION]) == ["fp32", "bf16", "bf16", "zz", "aa"]
    assert list(out["i"]) == [2, 1, 4, 0, 3]


def test_the_order_is_first_seen_with_gaps_and_repeats() -> None:
    """annotation_order reads the column with Series.unique() (issue 37: a Python step per row
    took 0.1 s at 10,000 configs): still first-seen order, missing values left out, the
    aggregated table first, else the runs table."""
    import dataclasses

    bundle = bundled(SWEEP)
    mixed = pd.DataFrame({C.ANNOTATION: pd.array(["bf16", None, "fp32", "bf16", "fp16", "fp32"],
                                                 dtype="string[pyarrow]")})
    tables = {**bundle.tables, C.TABLE_AGGREGATED: mixed}
    assert annotation_order(dataclasses.replace(bundle, tables=tables)) == ["bf16", "fp32", "fp16"]
    runs_only = {**bundle.tables, C.TABLE_AGGREGATED: pd.DataFrame(), C.TABLE_RUNS: mixed}
    assert annotation_order(dataclasses.replace(bundle, tables=runs_only)) == \
        ["bf16", "fp32", "fp16"]

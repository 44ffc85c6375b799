"""Regions measured differently by the two backends are shown (issue 11, case 1): kernel counts
per region compared between ncu and CUPTI, and launches that belong to no config listed."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from bundled import bundled

from app.core.views.backends import kernel_counts_differ
from app.core.views.kernels import unattributed_frame
from profiling_worker.bundle.schema import columns as C


def _as_ncu_with_only_the_fill_kernel_in_backward():
    """The CUPTI linear-backward bundle, relabelled ncu, its backward region cut to the first
    launch of each run: what Nsight Compute measured before the fix (one fill kernel, 1.6 µs,
    because autograd launched the GEMMs from its own thread)."""
    cupti = bundled("h200-cupti-linear-backward")
    launches = cupti.table(C.TABLE_LAUNCHES)
    cut = launches[(launches[C.ANNOTATION] != "backward") | (launches[C.LAUNCH] == 0)]
    manifest = {**cupti.manifest, "backend": {**cupti.manifest["backend"], "name": "ncu"}}
    return cupti, dataclasses.replace(cupti, manifest=manifest,
                                      tables={**cupti.tables, C.TABLE_LAUNCHES: cut})


def test_a_region_whose_kernel_count_differs_between_backends_is_listed() -> None:
    cupti, ncu = _as_ncu_with_only_the_fill_kernel_in_backward()
    differ = kernel_counts_differ(ncu, cupti)
    assert list(differ[C.ANNOTATION]) == ["backward"] * 3  # forward matches, every size
    assert (differ["NcuKernelsPerRun"] == 1).all() and (differ["CuptiKernelsPerRun"] >= 4).all()
    assert list(differ["features"]) == [1024, 2048, 4096]


def test_matching_regions_are_not_listed() -> None:
    assert kernel_counts_differ(bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16")).empty


def test_launches_outside_every_region_are_listed_with_the_l2_flush() -> None:
    """The recorded CUPTI linear-backward job: set-up kernels (randn, y.sum()) and the L2 flush
    before each of the 2 regions x 10 runs are outside every annotation, listed, not measured."""
    bundle = bundled("h200-cupti-linear-backward")
    out = unattributed_frame(bundle)
    assert set(out[C.ANNOTATION]) == {""} and set(out[C.CONFIG]) == {0, 1, 2}
    flush = out[out[C.KERNEL].str.contains("FillFunctorIh")]  # zeroing the uint8 buffer
    assert list(flush["Launches"]) == [20, 20, 20]
    assert flush["Launches"].sum() == bundle.manifest["backend"]["cache_flush"]["flushes"]


def test_unattributed_launches_are_counted_per_kernel_and_reason() -> None:
    stability = bundled("h200-cupti-stability")
    assert unattributed_frame(stability).empty  # recorded before the table existed
    rows = pd.DataFrame([
        {C.ANNOTATION: "backward", C.CONFIG: -1, C.KERNEL: "dgrad", C.GRID: None, C.BLOCK: None,
         C.METRIC: C.GPU_TIME, C.VALUE: v, C.UNIT: "ns", C.REASON: "outside every config"}
        for v in (100.0, 300.0)])
    with_rows = dataclasses.replace(stability,
                                    tables={**stability.tables, C.TABLE_UNATTRIBUTED: rows})
    out = unattributed_frame(with_rows)
    assert out[["Annotation", "Config", "Kernel", "Launches", "TotalNs"]].values.tolist() == [
        ["backward", -1, "dgrad", 2, 400.0]]


def test_recorded_linear_backward_measures_the_same_kernels_on_both_backends() -> None:
    """The H200 recordings after the fix: Nsight Compute's backward region holds autograd's
    GEMMs (was one 1.6 µs fill kernel), within 10 % of CUPTI for kernels of 100 µs and more."""
    ncu, cupti = bundled("h200-ncu-linear-backward"), bundled("h200-cupti-linear-backward")
    assert kernel_counts_differ(ncu, cupti).empty

    def per_launch(bundle):
        launches = bundle.table(C.TABLE_LAUNCHES)
        timed = launches[(launches[C.METRIC] == C.GPU_TIME) & (launches[C.ANNOTATION] == "backward")]
        return timed.groupby(["features", C.LAUNCH])[C.VALUE].mean()

    both = pd.concat([per_launch(ncu), per_launch(cupti)], axis=1, keys=["ncu", "cupti"])
    long = both[both["cupti"] >= 100_000]
    assert len(long) == 6  # two GEMMs (dX, dW) at each of 3 sizes
    assert ((long["ncu"] / long["cupti"] - 1).abs() <= 0.10).all()


def test_the_three_backend_table_refuses_a_job_that_is_not_an_events_job() -> None:
    import pytest

    from app.core.metrics import MissingData
    from app.core.views.backends import backends_frame, events_frame

    ncu, cupti = bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16")
    with pytest.raises(MissingData, match="measured with cupti backend, not events"):
        events_frame(backends_frame(ncu, cupti), cupti, cupti)


def test_the_events_gap_to_cupti_is_attributed_to_host_launch_time_on_recorded_h200_jobs() -> None:
    """J1 on events (device run "h200 1202-run7") beside J1 on CUPTI and ncu: each attribution
    column recomputed from the jobs' own files (launch tables, the events manifest)."""
    from app.core.views.backends import backends_frame, events_frame

    ncu, cupti, events = (bundled(f"h200-{b}-j1-fp16") for b in ("ncu", "cupti", "events"))
    three = events_frame(backends_frame(ncu, cupti), cupti, events).set_index("n")
    assert list(three.index) == [1024, 2048, 4096, 8192]

    def region_medians(bundle, metric):  # µs per n: the median over runs of each run's sum
        rows = bundle.table(C.TABLE_LAUNCHES)
        rows = rows[rows[C.METRIC] == metric]
        return rows.groupby(["n", C.RUN])[C.VALUE].sum().groupby("n").median() / 1e3

    ev, cu = region_medians(events, C.EVENTS_TIME), region_medians(cupti, C.GPU_TIME)
    host = {h["config"]: h for h in events.manifest["backend"]["host_launch"]}
    n_of = {i: c["n"] for i, c in enumerate(events.manifest["spec"]["configs"])}
    for config, record in host.items():
        row = three.loc[n_of[config]]
        assert row["EventsMedianUs"] == pytest.approx(ev[n_of[config]])
        assert row["CuptiMedianUs"] == pytest.approx(cu[n_of[config]])
        assert row["HostLaunchUs"] == pytest.approx(record["median_ns"] / 1e3)
        assert row["EndEventUs"] == pytest.approx(record["median_end_mark_ns"] / 1e3)
        after_launch = max(cu[n_of[config]], record["median_end_mark_ns"] / 1e3)
        residual = record["median_events_minus_host_ns"] / 1e3 - after_launch
        assert row["ResidualUs"] == pytest.approx(residual)
        assert row["ResidualPct"] == pytest.approx(residual / ev[n_of[config]] * 100)
    # (the recorded CUPTI J1 is of another device call; the residual's size on one call's jobs
    # is tests/gpu/test_events_gpu.py's)

"""Compare and backends views on the H200 bundles."""

from __future__ import annotations

import pytest
from bundled import bundled

from app.core.figures.backends import build_backends_figure
from app.core.figures.compare import build_compare_figure
from app.core.metrics import MissingData
from app.core.views.backends import backends_frame, wall_frame
from app.core import frame_columns as F
from app.core.views.compare import CompareOptions, compare_frame
from profiling_worker.bundle.schema import columns as C
from tests.fieller_reference import fieller_roots


def test_job_against_itself_is_ratio_one_inside_noise() -> None:
    job = bundled("h200-ncu-j1-fp16")
    frame = compare_frame(job, job, CompareOptions())
    assert len(frame) == 4 and (frame["Ratio"] == 1.0).all()
    assert frame["CIsOverlap"].all() and not frame["RatioExcludesOne"].any()
    assert (frame["RatioCI95Lower"] < 1).all() and (frame["RatioCI95Upper"] > 1).all()
    assert set(frame["Verdict"]) == {"same"} and (frame["DiffPct"] == 0).all()


def test_jobs_with_different_sizes_match_by_value() -> None:
    frame = compare_frame(bundled("h200-ncu-matmul-sweep"), bundled("h200-ncu-j1-fp16"),
                          CompareOptions())
    assert list(frame["n"]) == [1024, 2048, 4096, 8192] and set(frame[C.ANNOTATION]) == {"fp16"}
    assert frame["Ratio"].between(0.98, 1.02).all()  # same kernel, two recordings


def test_ratio_ci_formula() -> None:
    frame = compare_frame(bundled("h200-cupti-j1-fp16"), bundled("h200-ncu-j1-fp16"),
                          CompareOptions())
    row = frame[frame["n"] == 8192].iloc[0]
    # independent: the roots of Fieller's quadratic with scipy.stats' t
    expected = fieller_roots(*(row[f"{s}{k}"] for s in ("Baseline", "Candidate")
                               for k in ("Avg", "StdDev", "Runs")))
    assert (row["RatioCI95Lower"], row["RatioCI95Upper"]) == pytest.approx(expected, rel=1e-9)
    assert row["Verdict"] == "not comparable"  # the gate never compares two backends
    assert "backend: cupti vs ncu" in row["Reason"]


def test_the_ratio_interval_is_the_gate_s_interval_of_the_difference() -> None:
    """One interval, not two methods: on a pair the gate judges (two CUPTI jobs of one matmul),
    RatioCI95 - 1 is DiffCI95 / 100 on every row."""
    frame = compare_frame(bundled("h200-cupti-gate-base"), bundled("h200-cupti-gate-again"),
                          CompareOptions())
    assert len(frame) and frame["DiffCI95LowerPct"].notna().all()
    for side in ("Lower", "Upper"):
        assert list((frame[f"RatioCI95{side}"] - 1) * 100) == pytest.approx(
            list(frame[f"DiffCI95{side}Pct"]))


def test_two_recordings_a_day_apart_are_same_or_ambiguous() -> None:
    """fp16 matmul on the H200 recorded by two device runs (CUPTI, same tool versions): the
    gate calls the shared sizes same, except n=1024 whose interval (-0.49 .. +6.89 %, Fieller's;
    -0.50 .. +6.66 % before issue 34) straddles the 3 % allowed (issue 21: it was
    "indistinguishable" before)."""
    frame = compare_frame(bundled("h200-cupti-j1-fp16"), bundled("h200-cupti-matmul-sweep"),
                          CompareOptions())
    assert list(frame["n"]) == [1024, 2048, 4096, 8192]
    assert list(frame["Verdict"]) == ["ambiguous", "same", "same", "same"]
    assert frame["Reason"][0].startswith("+3.08 % (95 % CI -0.49 .. +6.89 %): the interval "
                                         "straddles ±3 %")
    assert (frame["DiffPct"].abs() < 3.5).all() and (frame["DetectablePct"] > 0).all()
    strict = compare_frame(bundled("h200-cupti-j1-fp16"), bundled("h200-cupti-matmul-sweep"),
                           CompareOptions(max_slowdown_pct=0.0))
    # without an allowed slowdown, differences beyond D are called (n=2048: +1.38 % > 0.56 %)
    assert "regressed" in set(strict["Verdict"])


def test_missing_metric() -> None:
    with pytest.raises(MissingData):
        compare_frame(bundled("h200-cupti-j1-fp16"), bundled("h200-ncu-matmul-sweep"),
                      CompareOptions(metric="dram__bytes_read.sum"))


def test_backends_agree_for_long_kernels() -> None:
    frame = backends_frame(bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16"))
    big = frame[frame["n"] == 8192].iloc[0]
    assert big["RatioNcuOverCupti"] == pytest.approx(1.0, abs=0.05)
    small = frame[frame["n"] == 1024].iloc[0]
    assert small["RatioNcuOverCupti"] > big["RatioNcuOverCupti"]  # few-µs kernels differ most
    sweep = backends_frame(bundled("h200-ncu-matmul-sweep"), bundled("h200-cupti-matmul-sweep"))
    assert len(sweep) == 15
    assert sweep[sweep["n"] == 8192]["RatioNcuOverCupti"].between(0.95, 1.05).all()
    walls = wall_frame(bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16"))
    assert list(walls["Backend"]) == ["ncu", "cupti"] and (walls["WallS"] > 0).all()


def test_backends_checks_the_backend() -> None:
    with pytest.raises(MissingData):
        backends_frame(bundled("h200-cupti-j1-fp16"), bundled("h200-ncu-j1-fp16"))


def test_figures() -> None:
    job = bundled("h200-ncu-j1-fp16")
    fig = build_compare_figure(compare_frame(job, job, CompareOptions()))
    assert fig.layout.yaxis.title.text == "candidate / baseline (ratio)"
    assert fig.data[0].marker.symbol[0] == "circle-open"  # indistinguishable
    assert fig.layout.yaxis.type == "log"  # a ratio: halving and doubling equally far from 1
    assert [(s.y0, s.name, s.showlegend) for s in fig.layout.shapes] == [
        (1.0, "equal (ratio 1)", True)]  # named in the legend: no label in log10 units
    assert not fig.layout.annotations
    fig = build_backends_figure(backends_frame(job, bundled("h200-cupti-j1-fp16")))
    assert fig.layout.yaxis.title.text == "ncu / cupti duration (ratio)" and len(fig.data) == 1
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.ticktext  # labelled in full
    # ratios 1.006-1.17: the line at 1 widens the axis and gets its tick (1.05-1.15 left it bare)
    assert fig.layout.yaxis.tickvals[0] == 1.0, fig.layout.yaxis.ticktext


def test_a_ratio_of_zero_keeps_the_ratio_axis_linear() -> None:
    """A log axis cannot draw a ratio of 0 (a counter that read 0 on the candidate): the axis
    stays linear rather than leave the point out."""
    job = bundled("h200-ncu-j1-fp16")
    frame = compare_frame(job, job, CompareOptions())
    frame.loc[frame.index[0], F.RATIO] = 0.0
    assert build_compare_figure(frame).layout.yaxis.type == "linear"


def test_default_candidate() -> None:
    from profiling_worker.bundle.schema.bundle_spec import read_spec
    from app.core.views.compare import JobSummary, default_candidate

    def job(job_id, created, kernels=("matmul",), backend="ncu", sizes=(1024, 4096),
            annotations=None):
        return JobSummary.of(job_id, created, read_spec({"kernels": list(kernels), "backend": backend,
                                               "configs": [{"n": n} for n in sizes],
                                               "annotations": annotations}))

    jobs = [job("base", "2026-01-01"), job("other-kernel", "2026-01-09", kernels=("softmax",)),
            job("cpu", "2026-01-08", backend="cpu"), job("old-twin", "2026-01-02"),
            job("new-twin", "2026-01-03"), job("cupti-twin", "2026-01-07", backend="cupti"),
            job("one-size", "2026-01-06", sizes=(4096, 8192))]
    assert default_candidate("base", jobs) == "new-twin"  # same backend, most recent
    assert default_candidate("base", [j for j in jobs if "twin" not in j.job_id or
                                      j.job_id == "cupti-twin"]) == "cupti-twin"
    assert default_candidate("base", jobs[:3]) == "cpu"  # same sizes; never itself ...
    assert default_candidate("base", jobs[:1]) == "base"  # ... unless it is the only job
    fp16 = [job("ncu-fp16", "1", annotations=["fp16"]), job("all", "3"),
            job("cupti-fp16", "2", backend="cupti", annotations=["fp16"])]
    assert default_candidate("ncu-fp16", fp16) == "cupti-fp16"  # same annotations first


def _runs_only(job, runs: set[int]):
    """The bundle with its aggregated table rebuilt by the worker from the chosen runs only."""
    import dataclasses

    from profiling_worker.bundle.stats.aggregate import aggregate_runs

    per_run = job.table(C.TABLE_RUNS)
    per_run = per_run[per_run[C.RUN].isin(runs)]
    tables = {**job.tables, C.TABLE_RUNS: per_run,
              C.TABLE_AGGREGATED: aggregate_runs(per_run, list(job.parameters))}
    return dataclasses.replace(job, tables=tables)


def test_one_run_a_side_is_not_enough_to_tell() -> None:
    """Issue 11, case 4: two single runs of the same config (30 runs of it spread 2,591-3,072 ns)
    get no faster/slower verdict and no ratio interval."""
    job = bundled("h200-cupti-stability")
    frame = compare_frame(_runs_only(job, {0}), _runs_only(job, {1}), CompareOptions())
    assert len(frame) == 3 and (frame["Ratio"] != 1.0).any()
    assert set(frame["Verdict"]) == {"not comparable"}
    assert set(frame["Reason"]) == {"baseline has 1 run and candidate has 1 run; at least "
                                    "2 needed for a spread"}
    assert not frame["EnoughRuns"].any() and not frame["CIsOverlap"].any()
    assert frame["RatioCI95Lower"].isna().all() and not frame["RatioExcludesOne"].any()
    two = compare_frame(_runs_only(job, {0, 1}), _runs_only(job, {2, 3}), CompareOptions())
    assert two["EnoughRuns"].all() and two["TimeOutcome"].notna().all()  # 2 runs give a verdict
    # ... but 2 of the 30 runs the spec asks is a truncated bundle (issue 21)
    assert set(two["Verdict"]) == {"not comparable"}
    assert all(r.startswith("baseline has 2 of the 30 runs its spec asks (a truncated bundle); "
                            "candidate has 2 of the 30") for r in two["Reason"])
    assert len(build_compare_figure(frame).data) == 1


def test_only_comparable_candidates_are_offered() -> None:
    from profiling_worker.bundle.schema.bundle_spec import read_spec
    from app.core.views.compare import JobSummary, candidates, why_not_comparable

    cpu = JobSummary.of("cpu", "2026-11-30", read_spec({"backend": "cpu", "kernels": ["matmul"],
                                              "configs": [{"n": 64}]}))
    gpu = JobSummary.of("gpu", "2026-11-29", read_spec({"backend": "ncu", "kernels": ["matmul"],
                                              "configs": [{"n": 64}, {"n": 128}]}))
    gpu2 = JobSummary.of("gpu2", "2026-11-28", read_spec({"backend": "cupti", "kernels": ["matmul"],
                                                "configs": [{"n": 128}]}))
    other = JobSummary.of("soft", "2026-11-27", read_spec({"backend": "ncu", "kernels": ["softmax"],
                                                 "configs": [{"n": 128}]}))
    sizes = JobSummary.of("big", "2026-11-27", read_spec({"backend": "ncu", "kernels": ["matmul"],
                                                "configs": [{"n": 8192}]}))
    assert "host wall-clock" in why_not_comparable(gpu, cpu)
    assert "no kernel in common" in why_not_comparable(gpu, other)
    assert "no config" in why_not_comparable(gpu, sizes)
    assert why_not_comparable(gpu, gpu2) is None
    offered, refused = candidates("gpu", [cpu, gpu, gpu2, other, sizes])
    assert offered == ["gpu2"] and set(refused) == {"cpu", "soft", "big"}
    assert candidates("cpu", [cpu, gpu, gpu2]) == ([], {
        "gpu": why_not_comparable(cpu, gpu), "gpu2": why_not_comparable(cpu, gpu2)})


def test_default_candidate_is_one_the_gate_can_judge() -> None:
    """Issue 37: the default candidate is measured like the baseline where such a job exists
    (the recorded H200 jobs: h200-cupti-matmul-sweep opened on the ncu rules job, another
    backend, although four CUPTI jobs of the same kernel were measured alike)."""
    import tempfile
    from pathlib import Path

    from app.core.views.compare import JobSummary, default_candidate, measured_unlike
    from app.services.result_store import list_bundles
    from tests.scenarios import SCENARIOS

    with tempfile.TemporaryDirectory() as empty:
        listed, _ = list_bundles(Path(empty), SCENARIOS)
    jobs = [JobSummary.of(b.job_id, b.created_at, b.spec, manifest=b.manifest) for b in listed]
    by_id = {j.job_id: j for j in jobs}
    for baseline in ("h200-cupti-matmul-sweep", "h200-ncu-j1-fp16", "h200-cupti-timeline"):
        chosen = default_candidate(baseline, jobs)
        assert chosen != baseline and not measured_unlike(by_id[baseline], by_id[chosen]), chosen
    # none measured alike: the fewest differences (the cache control alone)
    chosen = default_candidate("h200-ncu-elementwise", jobs)
    assert measured_unlike(by_id["h200-ncu-elementwise"], by_id[chosen]) == [
        "cache control: all vs none"]


def test_the_door_and_report_verdict_judges_each_sides_durations() -> None:
    """The agent door and the comparison report judge through gate_result as the CLI does:
    without a metric, an events job against a CUPTI one has its rows, never "only in the
    baseline", and the decision names both metrics."""
    from app.core.share.verdict import decision, judged

    result = judged(bundled("h200-cupti-j1-fp16"), bundled("h200-events-j1-fp16"))
    assert len(result.rows) == 4 and not result.rows["Reason"].str.contains("only in the").any()
    assert decision(result)["metric"] == f"{C.GPU_TIME} vs {C.EVENTS_TIME}"


def test_the_default_baseline_is_the_job_most_like_the_selected_one() -> None:
    """Compare opens on the selected job (the one just run) and the job most like it, the
    earlier of the two the baseline (test_the_default_pair_runs_forward_in_time); itself where
    no other job can be compared with it."""
    from app.core.views.compare import JobSummary, default_baseline, default_candidate

    def job(job_id: str, created: str, kernels: tuple[str, ...] = ("matmul",),
            sizes: tuple[int, ...] = (64, 128)) -> JobSummary:
        return JobSummary(job_id=job_id, created_at=created, kernels=kernels,
                          configs=tuple(((("n", n),)) for n in sizes))

    jobs = [job("first", "1"), job("other-kernel", "2", ("softmax",)),
            job("fewer-sizes", "3", sizes=(64,)), job("just-run", "4")]
    assert default_baseline("just-run", jobs) == "first"
    assert default_candidate("first", jobs) == "just-run"  # the pair, either way round
    assert default_baseline("other-kernel", jobs) == "other-kernel"


def test_the_job_with_the_same_configs_comes_before_a_newer_superset() -> None:
    """Session 26's fresh user: for a job of n = 64, 128, 256 Compare opened on a newer job of
    64-512 rather than an older one of the same three sizes (both share the three)."""
    from app.core.views.compare import default_baseline

    jobs = [_summary("same-sizes", "1", sizes=(64, 128, 256)),
            _summary("selected", "2", sizes=(64, 128, 256)),
            _summary("superset", "3", sizes=(64, 128, 256, 512))]
    assert default_baseline("selected", jobs) == "same-sizes"


def _summary(job_id: str, created: str, kernels: tuple[str, ...] = ("matmul",),
             sizes: tuple[int, ...] = (64, 128), manifest: dict | None = None):
    from app.core.views.compare import JobSummary

    return JobSummary(job_id=job_id, created_at=created, kernels=kernels,
                      configs=tuple(((("n", n),)) for n in sizes), manifest=manifest or {},
                      complete=not (manifest or {}).get("partial_configs"))


def test_the_default_pair_runs_forward_in_time() -> None:
    """Session 22's fresh user: with a running job selected, Compare showed the older job as
    Candidate against the newer as Baseline, so "below 1 is faster" read backwards. Whenever
    the page picks the pair, the earlier job is the baseline, whichever of the two is the
    selected one; on equal times the selected job is the candidate."""
    from app.core.views.compare import default_pair

    jobs = [_summary("old", "2026-12-01T10:00:00+00:00"),
            _summary("other-kernel", "2026-12-02T10:00:00+00:00", ("softmax",)),
            _summary("new", "2026-12-03T10:00:00+00:00")]
    assert default_pair("new", jobs) == ("old", "new")
    assert default_pair("old", jobs) == ("old", "new")  # the selected job is the earlier
    # a running job is not among the jobs compared: the newest of them and its most alike
    assert default_pair("20261204-running", jobs) == ("old", "new")
    assert default_pair(None, jobs) == ("old", "new")
    assert default_pair("other-kernel", jobs) == ("other-kernel", "other-kernel")  # alone
    twins = [_summary("a", "2026-12-01T10:00:00+00:00"), _summary("b", "2026-12-01T10:00:00")]
    assert default_pair("a", twins) == ("b", "a") and default_pair("b", twins) == ("a", "b")
    with pytest.raises(ValueError):
        default_pair("new", [])


def test_a_partial_job_is_offered_but_a_complete_one_preferred() -> None:
    """A job that kept part of its configs is compared (on the configs both measured), but the
    page's default partner is a complete job where one is as alike; its incomplete results are
    not held against it as a way of measuring (the gate says them apart)."""
    from app.core.views.compare import (comparable_job, default_baseline, is_partial,
                                        measured_unlike)
    from profiling_worker.bundle.schema.manifest import JobStatus

    done = {"status": "done", "spec": {"kernels": ["matmul"], "backend": "cpu"}}
    kept = {**done, "status": "cancelled",
            "partial_configs": {"measured": [0], "not_measured": [
                {"config": 1, "label": "n=128", "why": "not run: cancelled"}], "total": 2}}
    jobs = [_summary("done", "2026-12-01T10:00:00+00:00", manifest=done),
            _summary("partial", "2026-12-02T10:00:00+00:00", manifest=kept),
            _summary("new", "2026-12-03T10:00:00+00:00", manifest=done)]
    assert is_partial(kept) and not is_partial(done)
    assert comparable_job(JobStatus.CANCELLED, kept) and comparable_job(JobStatus.DONE, done)
    assert not comparable_job(JobStatus.CANCELLED, done)  # kept nothing
    assert not comparable_job(JobStatus.RUNNING, kept)
    assert measured_unlike(jobs[0], jobs[1]) == []
    assert default_baseline("new", jobs) == "done"  # not the partial job, newer as it is
    assert default_baseline("partial", jobs) in {"done", "new"}

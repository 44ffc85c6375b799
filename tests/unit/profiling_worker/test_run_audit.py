"""The validity audit of every run (profiling_worker/bundle/schema/run_audit.py, issue 36) on recorded
H200 bundles: the timeline's slow mode and power-capped runs, the stability bundles' missing L2
flush, gate-base clean, the events backend's launch-bound config, the timer floor."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.writer import bundle_tables
from profiling_worker.bundle.schema import columns as C, run_audit as A
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS, scenario_dir

def _audit(job: str, **replace: pd.DataFrame) -> pd.DataFrame:
    path = scenario_dir(job)
    return A.audit_runs({**bundle_tables(path), **replace}, read_manifest(path))

def _flags(audit: pd.DataFrame, check: str, config: int) -> pd.DataFrame:
    return audit[(audit[A.CHECK] == check) & (audit[C.CONFIG] == config)
                 & (audit[A.RESULT] == A.FLAG)]

def test_timeline_slow_mode_and_power_capped_runs_are_flagged() -> None:
    audit = _audit("h200-cupti-timeline")
    slow = _flags(audit, A.POPULATION, 1)  # n = 8192
    assert list(slow[C.RUN]) == list(range(39, 100))
    capped = _flags(audit, A.CLOCK, 1)
    assert len(capped) == 6 and all("SW power cap" in e for e in capped[A.EVIDENCE])
    summary = A.config_audits(audit)
    assert summary[("fp16", 1)].badge() == "39 of 100 runs passed (clock 6, population 61)"
    assert summary[("fp16", 1)].invalid == [A.POPULATION]
    assert summary[("fp16", 0)].badge() == "100 of 100 runs passed"

@pytest.mark.parametrize("job", ["h200-cupti-stability", "h200-cupti-stability-thermal-off"])
def test_stability_bundles_missing_l2_flush_is_flagged(job: str) -> None:
    l2 = _audit(job).query(f"{A.CHECK} == @A.L2")
    assert set(l2[A.RESULT]) == {A.FLAG}
    assert all("recorded without the L2 flush" in e and 'asks cache_control "all"' in e
               for e in l2[A.EVIDENCE])

def test_a_job_wide_checks_evidence_is_the_jobs_and_said_once() -> None:
    """A fresh user's find: a contended cpu job's note repeated the host-contention evidence
    for each of its 9 configs. A check of the whole job (its manifest: host contention, the L2
    state) is named per config by its runs alone, its evidence once for the job; a config's own
    evidence stays the config's (h200-cupti-stability: no L2 flush on all 3 configs)."""
    audit = _audit("h200-cupti-stability")
    l2 = audit[audit[A.CHECK] == A.L2]
    assert A.L2 in A.JOB_WIDE and A.HOST_CONTENTION in A.JOB_WIDE
    assert l2[A.EVIDENCE].nunique() == 1 and set(l2[A.RESULT]) == {A.FLAG}
    assert A.job_evidence(audit) == {A.L2: l2[A.EVIDENCE].iloc[0]}
    summaries = A.config_audits(audit)
    assert len(summaries) == 3
    for summary in summaries.values():
        said = summary.evidence_text().split(" | ")
        assert said[0] == f"l2_state {summary.runs}"  # no evidence: it is the job's
        assert all(part.split(": ", 1)[0].split(" ")[0] not in A.JOB_WIDE and ": " in part
                   for part in said[1:])  # per-config checks keep their evidence
        assert summary.evidence[A.L2] == l2[A.EVIDENCE].iloc[0]  # the gate's describe() reads it
    assert A.job_evidence(_audit("h200-cupti-gate-base")) == {}


def test_gate_base_passes_every_check_it_can_run() -> None:
    audit = _audit("h200-cupti-gate-base")
    assert set(audit[A.RESULT]) == {A.PASS, A.NOT_APPLICABLE}
    assert set(audit[audit[A.RESULT] == A.NOT_APPLICABLE][A.CHECK]) == {A.HOST_CONTENTION,
                                                                       A.LAUNCH_BOUND}

def test_events_launch_bound_config_and_what_cannot_be_checked() -> None:
    """h200-events-j1-fp16 n = 1024: the host spends 24.6 µs between the marks of a 37.2 µs
    events region (manifest backend.host_launch); no per-run clock nor launch times: said."""
    audit = _audit("h200-events-j1-fp16")
    bound = _flags(audit, A.LAUNCH_BOUND, 0)
    assert len(bound) == 10 and "24.6 µs vs events 37.2 µs" in bound[A.EVIDENCE].iloc[0]
    assert _flags(audit, A.LAUNCH_BOUND, 3).empty
    skipped = audit[audit[A.RESULT] == A.NOT_CHECKED]
    assert set(skipped[A.CHECK]) == {A.CLOCK, A.IDLE_GAP}

def test_a_time_below_the_physical_minimum_fails_the_timer_check() -> None:
    """The recorded gate-base runs pass; the same runs 1000x shorter are below what 2 n^3
    fp16 FLOPs need at the H200's dense FP16 roof, and the gate would not judge them."""
    runs = bundle_tables(SCENARIOS / "h200-cupti-gate-base")[C.TABLE_RUNS]
    fast = _audit("h200-cupti-gate-base",
                  **{C.TABLE_RUNS: runs.assign(**{C.VALUE: runs[C.VALUE] / 1000})})
    timer = fast[fast[A.CHECK] == A.TIMER]
    assert set(timer[A.RESULT]) == {A.FLAG}
    assert "NVIDIA H200" in timer[A.EVIDENCE].iloc[0] and "FP16" in timer[A.EVIDENCE].iloc[0]
    assert all(a.invalid == [A.TIMER] for a in A.config_audits(fast).values())

def test_a_run_without_a_duration_is_not_checked_the_others_are() -> None:
    """A damaged runs table's empty cell (text the loader read as a number): the population
    check gave its flags for the other runs only, one short, and the audit stopped; now that
    run is "not checked" by the checks that need its duration, the others as recorded."""
    runs = bundle_tables(SCENARIOS / "h200-cupti-gate-base")[C.TABLE_RUNS]
    timed = runs.index[runs[C.METRIC] == C.GPU_TIME]
    holed = runs.copy()
    holed.loc[timed[0], C.VALUE] = float("nan")
    audit, whole = _audit("h200-cupti-gate-base", **{C.TABLE_RUNS: holed}), _audit(
        "h200-cupti-gate-base")
    run = holed.loc[timed[0], [C.ANNOTATION, C.CONFIG, C.RUN]]
    mine = ((audit[C.ANNOTATION] == run[C.ANNOTATION]) & (audit[C.CONFIG] == run[C.CONFIG])
            & (audit[C.RUN] == run[C.RUN]) & audit[A.CHECK].isin([A.TIMER, A.POPULATION]))
    assert mine.sum() == 2 and set(audit.loc[mine, A.RESULT]) == {A.NOT_CHECKED}
    assert set(audit.loc[mine, A.EVIDENCE]) == {"no duration recorded for this run"}
    assert len(audit) == len(whole)
    assert (audit.loc[~mine, A.RESULT].to_numpy() == whole.loc[~mine, A.RESULT].to_numpy()).all()


def test_a_stored_audit_of_todays_checks_is_read_as_written_an_older_one_derived_again() -> None:
    """A worker-written table is read when the manifest says today's checks made it; one of
    older checks (no ``run_audit_rules``: the clock against the whole job's median) is not:
    the audit is derived again from the bundle's files. (Before, every stored table was read.)"""
    path = scenario_dir("h200-cupti-gate-base")
    tables, manifest = bundle_tables(path), read_manifest(path)
    stored = _audit("h200-cupti-gate-base").assign(**{A.EVIDENCE: "as the worker wrote it"})
    read = A.run_audit({**tables, C.TABLE_RUN_AUDIT: stored}, {**manifest, A.RULES_KEY: A.RULES})
    assert set(read[A.EVIDENCE]) == {"as the worker wrote it"}
    older = A.run_audit({**tables, C.TABLE_RUN_AUDIT: stored}, manifest)
    pd.testing.assert_frame_equal(older, _audit("h200-cupti-gate-base"))

_SWEEP, _GPC = "h200-ncu-matmul-sweep", "gpc__cycles_elapsed.avg.per_second"

def test_a_config_at_a_steady_lower_clock_passes_the_clock_check() -> None:
    """h200-ncu-matmul-sweep: fp16 n=2048 runs at about 1,666 MHz against fp32's 1,979 MHz
    (tensor-core GEMMs at a lower clock); its runs are judged against their own median, so
    all 10 pass (the job's pooled median failed them all, and the fp16/bf16 n >= 4096 ones)."""
    audit = _audit(_SWEEP)
    clock = audit[audit[A.CHECK] == A.CLOCK]
    assert set(clock[A.RESULT]) == {A.PASS}
    fp16_2048 = clock[(clock[C.ANNOTATION] == "fp16") & (clock[C.CONFIG] == 2)]
    assert len(fp16_2048) == 10
    assert fp16_2048[A.EVIDENCE].iloc[0].startswith(
        "1,670 MHz vs its config's median 1,666 MHz (+0.2 %; limit 5 %)")
    assert A.config_audits(audit)[("fp16", 2)].badge() == "10 of 10 runs passed"

def test_a_clock_drop_within_a_config_fails_with_its_evidence() -> None:
    """Run 3 of fp16 n=2048 planted at 1,500 MHz: 9.9 % below its config's median, flagged,
    the evidence naming the run's clock, the reference and how it was made, and the limit."""
    runs = bundle_tables(scenario_dir(_SWEEP))[C.TABLE_RUNS]
    at = ((runs[C.METRIC] == _GPC) & (runs[C.ANNOTATION] == "fp16") & (runs[C.CONFIG] == 2)
          & (runs[C.RUN] == 3))
    dropped = runs.copy()
    dropped.loc[at, C.VALUE] = 1.5e9
    flags = _flags(_audit(_SWEEP, **{C.TABLE_RUNS: dropped}), A.CLOCK, 2)
    assert list(zip(flags[C.ANNOTATION], flags[C.RUN])) == [("fp16", 3)]
    said = flags[A.EVIDENCE].iloc[0]
    assert said.startswith("1,500 MHz vs its config's median 1,665 MHz (-9.9 %; limit 5 %)")
    assert said.endswith("more than 5 % below its config's median")
    summary = A.config_audits(_audit(_SWEEP, **{C.TABLE_RUNS: dropped}))[("fp16", 2)]
    assert summary.evidence_text().startswith("clock 1: 1,500 MHz vs its config's median")

def test_configs_at_a_lower_clock_are_named_without_a_cause_the_files_do_not_show() -> None:
    """The sweep's fp16/bf16 configs ran below fp32 n=8192 (1,979 MHz): named with their
    clock, but Nsight Compute's clock metric carries no power and the manifest no power limit,
    so no cause is claimed."""
    path = scenario_dir(_SWEEP)
    slow = A.config_clocks(bundle_tables(path), read_manifest(path))
    row = slow[(slow[C.ANNOTATION] == "fp16") & (slow[C.CONFIG] == 4)].iloc[0]
    assert (row["FastestAnnotation"], row["FastestConfig"]) == ("fp32", 4)
    assert round(row["ClockMHz"]) == 1515 and round(row["FastestMHz"]) == 1979
    assert round(row["BelowPct"]) == 23
    # the job's NVML trace read power, but Nsight Compute's replays are not placed in it
    assert row["Cause"] == ("cause not shown (no power or thermal throttle reason at the runs; "
                            "the job's NVML trace read power, but no reading is matched to these "
                            "runs)")
    assert set(slow[C.ANNOTATION]) == {"fp16", "bf16"}

def test_an_nvml_trace_out_of_time_order_gives_the_clocks_of_the_ordered_one() -> None:
    """The clock check places each run on the trace sorted by time: the sampler's trace is
    in order and read as it is (issue 40), a trace in any other order is sorted first."""
    nvml = bundle_tables(SCENARIOS / "h200-cupti-timeline")[C.TABLE_NVML]
    as_recorded = _audit("h200-cupti-timeline")
    shuffled = nvml.sample(frac=1.0, random_state=0).reset_index(drop=True)
    assert not shuffled[C.TIME_S].is_monotonic_increasing
    pd.testing.assert_frame_equal(_audit("h200-cupti-timeline", **{C.TABLE_NVML: shuffled}),
                                  as_recorded)
    capped = _flags(as_recorded, A.CLOCK, 1)
    assert len(capped) == 6  # the power-capped runs, placed on their samples

def test_a_config_at_a_lower_clock_is_given_the_cause_its_runs_recorded() -> None:
    """h200-cupti-timeline's n=8192 runs at a planted steady 1,500 MHz (every NVML sample of
    its span) against n=1024's 1,980 MHz: its runs' own throttle reasons (the recorded SW power
    cap of 6 of them) name the cause; with them cleared and a power limit recorded, power at
    90 % of it or more does; with neither, no cause is claimed, and a trace without power
    says that no power reading was recorded."""
    path = scenario_dir("h200-cupti-timeline")
    tables, manifest = bundle_tables(path), read_manifest(path)
    times = tables[C.TABLE_LAUNCH_TIMES]
    start = (times[times[C.CONFIG] == 1][C.START_NS].min()
             - manifest["backend"]["nvml_trace_start_ns"]) / 1e9
    nvml = tables[C.TABLE_NVML].copy()
    nvml.loc[nvml[C.TIME_S] >= start, C.SM_CLOCK_MHZ] = 1500.0

    def cause(trace: pd.DataFrame, limit_w: float | None = None) -> str:
        gpus = [{**manifest["environment"]["gpus"][0], "power_limit_w": limit_w}]
        slow = A.config_clocks({**tables, C.TABLE_NVML: trace},
                               {**manifest, "environment": {**manifest["environment"],
                                                            "gpus": gpus}})
        assert list(zip(slow[C.ANNOTATION], slow[C.CONFIG])) == [("fp16", 1)]
        assert round(slow["BelowPct"].iloc[0]) == 24
        return str(slow["Cause"].iloc[0])

    assert cause(nvml) == "power management (NVML reported SW power cap at the runs)"
    quiet = nvml.assign(**{C.THROTTLE_REASONS: 0})
    drew = quiet[quiet[C.TIME_S] >= start][C.POWER_W].max()
    assert cause(quiet, limit_w=round(drew)).startswith("power management (the runs drew up to ")
    assert cause(quiet, limit_w=2 * round(drew)).startswith("cause not shown (no power or "
                                                            "thermal throttle reason")
    # a trace without power (plainly said: not "no power reading is placed on the runs")
    assert cause(quiet.drop(columns=C.POWER_W)).endswith(
        "; no power reading was recorded for these runs)")

def test_the_worker_records_which_checks_made_its_run_audit(tmp_path: Path) -> None:
    from profiling_worker.job import results

    path = scenario_dir("h200-cupti-gate-base")
    manifest = dict(read_manifest(path))
    tables = {k: v for k, v in bundle_tables(path).items() if k != C.TABLE_RUN_AUDIT}
    written = results.write_run_audit(tmp_path, tables, manifest)
    assert manifest[A.RULES_KEY] == A.RULES
    pd.testing.assert_frame_equal(A.run_audit(written, manifest), written[C.TABLE_RUN_AUDIT])


@pytest.mark.parametrize("columns", [
    {"a": ["x", "y"], "n": [1, 2]},  # typed: strings and ints
    {"a": ["x", None], "n": [1, 2.5]},  # left to inference: a missing name, a float
    {"a": ["x", 1], "b": [True, False], "n": [1, 2**70]},  # mixed, bools, an int past int64
    {"a": [], "n": []}])
def test_the_audit_frame_is_the_frame_pandas_infers(columns: dict[str, list[object]]) -> None:
    """run_audit._frame (typed arrays where a column is only strings or only ints) makes the
    frame pd.DataFrame infers from the same lists: values and dtypes."""
    pd.testing.assert_frame_equal(A._frame(columns), pd.DataFrame(columns), check_exact=True)

"""Issue 36 on the H200: a clock drop induced without touching clocks or power settings is
flagged by the run audit on exactly the runs it preceded (run by scripts/gpu_runaudit.sh after
recording ``h200-cupti-idle-gap`` into ``$KPROF_GPU_RESULTS``).

The job (tests/fixtures/kernel_files_idle/idle_gap.py, CUPTI, thermal_mode off so that no
pause of nsight-python's adds gaps of its own) sleeps 2 s on the host before every 10th call of
a config, each sleep logged to ``$KPROF_IDLE_LOG``. The induced runs are read from the bundle's
CUPTI launch times: the runs with 1 s or more without the job's kernels before them (the other
gaps are the flush and launch overhead, milliseconds). The audit's ``idle_gap`` check
(profiling_worker/bundle/schema/run_audit.py, docs/run-audit.md) must measure each of those gaps
and no other of a second or more, and its verdict on every run must be what the job's own NVML
trace says inside that run's gap, recomputed here from ``nvml_trace`` and the launch times by
the rule of docs/run-audit.md (:func:`nvml_says_idle`): flag when a sample reads "GPU idle" or a
clock more than 5 % below the median clock of the run's own annotation x config, pass otherwise.
The verdicts read are the audit as the app reads it (:func:`~profiling_worker.bundle.schema.
run_audit.run_audit`: the worker's table when made by today's rules, else derived now). Whether
the clock does drop is the GPU's choice (no setting is touched): on the H200 a 2 s gap did not
(1205-s9-runaudit, every sample 1980 MHz), so the sleep is ``KPROF_IDLE_S`` long, and
:func:`test_a_gap_that_dropped_the_clock_is_flagged` says which case the call produced."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import run_audit as A
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))
IDLE_LOG = Path(os.environ.get("KPROF_IDLE_LOG", "/nonexistent"))
JOB = "h200-cupti-idle-gap"
INDUCED_GAP_S = 1.0  # half the 2 s sleep: no launch or flush overhead comes near it
KEYS = [C.ANNOTATION, C.CONFIG, C.RUN]


def _table(name: str) -> pd.DataFrame:
    path = RESULTS / JOB / C.TABLES_DIR / f"{name}.parquet"
    if not path.exists():
        pytest.skip(f"{JOB} was not recorded in this device call ({path} missing)")
    return pd.read_parquet(path)


def _gaps_before_runs() -> pd.DataFrame:
    """:func:`gaps_before_runs` of the recorded job."""
    return gaps_before_runs(_table(C.TABLE_LAUNCH_TIMES))


def _audit() -> pd.DataFrame:
    """The job's idle_gap rows of the audit as the app reads it (module docstring)."""
    tables = {name: _table(name) for name in (C.TABLE_RUNS, C.TABLE_LAUNCH_TIMES, C.TABLE_NVML,
                                              C.TABLE_RUN_AUDIT)}
    audit = A.run_audit(tables, read_manifest(RESULTS / JOB))
    return audit[audit[A.CHECK] == A.IDLE_GAP]


def _nvml_says_idle(runs: pd.DataFrame) -> pd.Series:
    """:func:`nvml_says_idle` of the recorded job's trace."""
    start_ns = float((read_manifest(RESULTS / JOB).get("backend") or {})["nvml_trace_start_ns"])
    return nvml_says_idle(runs, _table(C.TABLE_NVML), start_ns)


def gaps_before_runs(launch_times: pd.DataFrame) -> pd.DataFrame:
    """Per annotation x config x run: its first start and last end (T0, T1, ns) and the time (s)
    without the job's kernels before the run's first kernel (CUPTI launch times: StartNs, EndNs
    on one clock); NaN for the job's first."""
    times = launch_times.dropna(subset=[C.START_NS, C.END_NS])
    g = times.groupby(KEYS)
    runs = pd.DataFrame({"T0": g[C.START_NS].min(), "T1": g[C.END_NS].max()}).reset_index()
    runs = runs.sort_values("T0").reset_index(drop=True)
    runs["GapS"] = (runs["T0"] - runs["T1"].shift(1)) / 1e9
    runs[C.CONFIG], runs[C.RUN] = runs[C.CONFIG].astype(int), runs[C.RUN].astype(int)
    return runs


def _keys(frame: pd.DataFrame) -> set[tuple[str, int, int]]:
    return {(str(a), int(c), int(r)) for a, c, r in frame[KEYS].itertuples(index=False)}


#: docs/run-audit.md's idle_gap rule: a clock more than 5 % below its config's median is low.
CLOCK_LOW = 0.95
IDLE_BIT = 0x1  # NVML's throttle reason "GPU idle"


def run_clocks(runs: pd.DataFrame, nvml: pd.DataFrame, start_ns: float) -> pd.Series:
    """Per run (rows of :func:`gaps_before_runs`): its SM clock (MHz) as docs/run-audit.md's
    clock check reads it for a CUPTI job with an NVML trace and no clock of its own: the first
    trace sample at or after its start when that comes no later than one sampling period (the
    trace's median step) after its end, else the last sample before its start; NaN before the
    trace."""
    trace = nvml.sort_values(C.TIME_S)[[C.TIME_S, C.SM_CLOCK_MHZ]].reset_index(drop=True)
    period = float(trace[C.TIME_S].diff().median())
    at = runs.assign(T0S=(runs["T0"] - start_ns) / 1e9, T1S=(runs["T1"] - start_ns) / 1e9)
    at = at.sort_values("T0S")
    after = pd.merge_asof(at, trace, left_on="T0S", right_on=C.TIME_S, direction="forward")
    before = pd.merge_asof(at, trace, left_on="T0S", right_on=C.TIME_S, direction="backward",
                           allow_exact_matches=False)
    during = after[C.TIME_S].to_numpy() <= at["T1S"].to_numpy() + period
    clock = np.where(during, after[C.SM_CLOCK_MHZ], before[C.SM_CLOCK_MHZ])
    return pd.Series(clock, index=at.index).reindex(runs.index)


def nvml_says_idle(runs: pd.DataFrame, nvml: pd.DataFrame, start_ns: float) -> pd.Series:
    """Per run (rows of :func:`gaps_before_runs`): True when an NVML sample inside the gap before
    it reads "GPU idle" (throttle bit 0x1) or an SM clock below :data:`CLOCK_LOW` of the median
    of :func:`run_clocks` over the runs of its annotation x config (none low where none of them
    has a clock); the trace's axis starts at ``start_ns``, the manifest's
    ``backend.nvml_trace_start_ns``."""
    t = nvml[C.TIME_S].to_numpy(float)
    clock = nvml[C.SM_CLOCK_MHZ].to_numpy(float)
    idle = nvml[C.THROTTLE_REASONS].fillna(0).to_numpy(int) & IDLE_BIT != 0
    median = run_clocks(runs, nvml, start_ns).groupby(
        [runs[C.ANNOTATION], runs[C.CONFIG]]).transform("median")
    t0 = (runs["T0"].to_numpy(float) - start_ns) / 1e9
    out = []
    for a, g, busy in zip(t0, runs["GapS"].to_numpy(float), median.to_numpy(float)):
        inside = (t > a - g) & (t < a)
        low = clock < CLOCK_LOW * busy if busy == busy else np.zeros(len(t), bool)
        out.append(bool((inside & (idle | low)).any()) if g == g else False)
    return pd.Series(out, index=runs.index)


def test_the_audit_measures_each_induced_gap_and_reads_its_verdict_from_nvml() -> None:
    runs = _gaps_before_runs()
    idle = _audit()
    induced = runs[runs["GapS"] >= INDUCED_GAP_S]
    slept = IDLE_LOG.read_text().splitlines() if IDLE_LOG.is_file() else []
    print(f"{len(slept)} sleeps logged; gaps before runs (s), largest:",
          runs.nlargest(len(slept) + 3, "GapS")[KEYS + ["GapS"]].to_dict("records"))
    print(idle[idle[A.RESULT] != A.PASS][KEYS + [A.RESULT, A.EVIDENCE]].to_dict("records"))
    assert slept, f"the kernel logged no sleep to {IDLE_LOG}: did the job run its file?"
    assert len(induced) == len(slept), "each sleep leaves one gap of a second or more"
    assert set(idle[A.RESULT]) <= {A.PASS, A.FLAG}, "every run placed in time and checked"
    by_key = dict(zip(_keys_list(idle), idle[A.EVIDENCE]))
    for key, gap_s in zip(_keys_list(induced), induced["GapS"]):  # the evidence states the gap
        ms = float(re.match(r"([\d.e+]+) ms", by_key[key]).group(1))  # type: ignore[union-attr]
        assert abs(ms - 1e3 * gap_s) <= 0.01 * 1e3 * gap_s + 1, (key, by_key[key], gap_s)
    says_idle = dict(zip(_keys_list(runs), _nvml_says_idle(runs)))
    for key, result in zip(_keys_list(idle), idle[A.RESULT]):
        assert result == (A.FLAG if says_idle.get(key) else A.PASS), (key, by_key[key])


def test_a_gap_that_dropped_the_clock_is_flagged() -> None:
    """Which case this call produced: the runs whose gap the NVML trace shows idle are exactly the
    flagged ones (none flagged when the clock held, as with 2 s on the H200)."""
    runs = _gaps_before_runs()
    idle = _audit()
    dropped = _keys(runs[_nvml_says_idle(runs)])
    flagged = _keys(idle[idle[A.RESULT] == A.FLAG])
    print(f"gaps the NVML trace shows idle: {sorted(dropped)}; flagged: {sorted(flagged)}")
    assert flagged == dropped
    for evidence in idle[idle[A.RESULT] == A.FLAG][A.EVIDENCE]:
        assert re.search(r"NVML read \d+ MHz.*long enough to drop the clock", evidence), evidence


def _keys_list(frame: pd.DataFrame) -> list[tuple[str, int, int]]:
    return [(str(a), int(c), int(r)) for a, c, r in frame[KEYS].itertuples(index=False)]


def test_no_clock_setting_was_changed_by_the_job() -> None:
    """The job ran with clock_control none (nothing locked; the drop came from the idle GPU)."""
    _table(C.TABLE_RUN_AUDIT)
    spec = read_manifest(RESULTS / JOB).get("spec") or {}
    assert spec.get("clock_control", "none") == "none"
    assert spec.get("backend") == "cupti"


def test_the_worker_wrote_its_audit_by_todays_rules() -> None:
    """The verdicts checked above are the worker's own table (the manifest's run_audit_rules is
    today's), not one derived on reading; the recording of 1205-s9 predates the rules, so its CPU
    twin (tests/unit/profiling_worker/test_idle_gap_recorded.py) reads the derived one."""
    _table(C.TABLE_RUN_AUDIT)
    assert read_manifest(RESULTS / JOB).get(A.RULES_KEY) == A.RULES

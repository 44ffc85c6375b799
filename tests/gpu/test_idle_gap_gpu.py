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
trace says inside that run's gap, recomputed here from ``nvml_trace`` and the launch times: flag
when a sample reads "GPU idle" or a clock below 90 % of the job's median, pass otherwise. Whether
the clock does drop is the GPU's choice (no setting is touched): on the H200 a 2 s gap did not
(1205-s9-runaudit, every sample 1980 MHz), so the sleep is ``KPROF_IDLE_S`` long, and
:func:`test_a_gap_that_dropped_the_clock_is_flagged` says which case the call produced."""

from __future__ import annotations

import os
import re
from pathlib import Path

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
    """Per annotation x config x run: the time (s) without the job's kernels before the run's
    first kernel (CUPTI launch times: StartNs, EndNs on one clock); NaN for the job's first."""
    times = _table(C.TABLE_LAUNCH_TIMES).dropna(subset=[C.START_NS, C.END_NS])
    g = times.groupby(KEYS)
    runs = pd.DataFrame({"T0": g[C.START_NS].min(), "T1": g[C.END_NS].max()}).reset_index()
    runs = runs.sort_values("T0").reset_index(drop=True)
    runs["GapS"] = (runs["T0"] - runs["T1"].shift(1)) / 1e9
    runs[C.CONFIG], runs[C.RUN] = runs[C.CONFIG].astype(int), runs[C.RUN].astype(int)
    return runs


def _keys(frame: pd.DataFrame) -> set[tuple[str, int, int]]:
    return {(str(a), int(c), int(r)) for a, c, r in frame[KEYS].itertuples(index=False)}


def _nvml_says_idle(runs: pd.DataFrame) -> pd.Series:
    """Per run (rows of :func:`_gaps_before_runs`): True when an NVML sample inside the gap before
    it reads "GPU idle" (throttle bit 0x1) or an SM clock below 90 % of the trace's median; the
    trace's axis starts at the manifest's ``backend.nvml_trace_start_ns``."""
    nvml = _table(C.TABLE_NVML)
    start_ns = float((read_manifest(RESULTS / JOB).get("backend") or {})["nvml_trace_start_ns"])
    t = nvml[C.TIME_S].to_numpy(float)
    busy = float(nvml[C.SM_CLOCK_MHZ].median())
    low = (nvml[C.SM_CLOCK_MHZ].to_numpy(float) < 0.9 * busy) | (
        nvml[C.THROTTLE_REASONS].fillna(0).to_numpy(int) & 0x1 != 0)
    t0 = (runs["T0"].to_numpy(float) - start_ns) / 1e9
    gap = runs["GapS"].to_numpy(float)
    return pd.Series([bool(low[(t > a - g) & (t < a)].any()) if g == g else False
                      for a, g in zip(t0, gap)], index=runs.index)


def test_the_audit_measures_each_induced_gap_and_reads_its_verdict_from_nvml() -> None:
    runs = _gaps_before_runs()
    audit = _table(C.TABLE_RUN_AUDIT)
    idle = audit[audit[C.CHECK] == A.IDLE_GAP]
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
    idle = _table(C.TABLE_RUN_AUDIT)
    idle = idle[idle[C.CHECK] == A.IDLE_GAP]
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

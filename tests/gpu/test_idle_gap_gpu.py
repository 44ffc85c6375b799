"""Issue 36 on the H200: a clock drop induced without touching clocks or power settings is
flagged by the run audit on exactly the runs it preceded (run by scripts/gpu_runaudit.sh after
recording ``h200-cupti-idle-gap`` into ``$KPROF_GPU_RESULTS``).

The job (tests/fixtures/kernel_files_idle/idle_gap.py, CUPTI, thermal_mode off so that no
pause of nsight-python's adds gaps of its own) sleeps 2 s on the host before every 10th call of
a config, each sleep logged to ``$KPROF_IDLE_LOG``. The induced runs are read from the bundle's
CUPTI launch times: the runs with 1 s or more without the job's kernels before them (the other
gaps are the flush and launch overhead, milliseconds). The audit's ``idle_gap`` check
(profiling_worker/bundle/schema/run_audit.py, docs/run-audit.md) must flag those and no other run, and
name a clock below the job's busy clock or "GPU idle" as its evidence."""

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


def test_the_audit_flags_exactly_the_runs_after_an_induced_idle_gap() -> None:
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
    assert (induced["GapS"] < 2.0 + 1.0).all(), "a gap longer than a sleep: another pause"
    flagged = idle[idle[A.RESULT] == A.FLAG]
    assert _keys(flagged) == _keys(induced)
    assert set(idle[A.RESULT]) <= {A.PASS, A.FLAG}, "every run placed in time and checked"
    for evidence in flagged[A.EVIDENCE]:
        assert re.search(r"NVML read \d+ MHz.*long enough to drop the clock", evidence), evidence


def test_no_clock_setting_was_changed_by_the_job() -> None:
    """The job ran with clock_control none (nothing locked; the drop came from the idle GPU)."""
    _table(C.TABLE_RUN_AUDIT)
    spec = read_manifest(RESULTS / JOB).get("spec") or {}
    assert spec.get("clock_control", "none") == "none"
    assert spec.get("backend") == "cupti"

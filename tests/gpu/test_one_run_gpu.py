"""One run per config on the H200 (run by scripts/gpu_check.sh after recording into
$KPROF_GPU_RESULTS): the worker's aggregated table has the mean of the one run and no spread,
no CI95 and no relative std dev (undefined with n - 1 = 0), and never calls it stable."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))


@pytest.mark.parametrize("job", ["h200-cupti-one-run", "h200-ncu-one-run"])
def test_one_run_has_a_mean_and_no_spread(job: str) -> None:
    if not (RESULTS / job / C.MANIFEST_FILE).exists():
        pytest.skip(f"{job} was not recorded in this device call")
    assert read_manifest(RESULTS / job)["status"] == "done"
    tables = RESULTS / job / C.TABLES_DIR
    agg = pd.read_parquet(tables / f"{C.TABLE_AGGREGATED}.parquet")
    runs = pd.read_parquet(tables / f"{C.TABLE_RUNS}.parquet")
    agg, runs = (t[t[C.METRIC] == C.GPU_TIME] for t in (agg, runs))
    print(agg[[C.ANNOTATION, "n", C.NUM_RUNS, C.AVG, C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD,
               C.STABLE]].to_string())
    assert len(agg) == 2 and (agg[C.NUM_RUNS] == 1).all()
    by_config = runs.groupby(C.CONFIG)[C.VALUE].sum()  # the one run of each config (ns)
    assert agg.set_index(C.CONFIG)[C.AVG].to_dict() == pytest.approx(by_config.to_dict())
    assert agg[[C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all().all()
    assert not agg[C.STABLE].any()

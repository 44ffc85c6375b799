"""Spec ``ignore_kernels``: validated by field, applied to the launches the worker extracts so no
value includes an ignored launch, recorded in the manifest and the ``unattributed`` table.

Input: the real H200 report ``ncu_plain/plain.ncu-rep.gz`` (4 ``torch.randn`` fills, 3 x unfused
``a + b * c`` (mul, add), 3 fp16 matmuls ``nvjet_sm90_*``: 13 launches), read by the worker's own
report reader; and a real cpu-backend worker run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.backends.base import Collection
from profiling_worker.bundle.errors import ProfilingFailed
from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.extract.ignored import leave_out_ignored
from profiling_worker.importing import ncu_rep as R
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.kernel_filter import IGNORED_REASON
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

REPORT = Path(__file__).resolve().parents[2] / "fixtures" / "h200_import" / "ncu_plain" \
    / "plain.ncu-rep.gz"
FILL = "re:distribution_elementwise"
NVJET = "nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT"
METRICS = (C.GPU_TIME, "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed")


def test_spec_accepts_names_and_patterns_and_names_a_bad_one() -> None:
    base = {"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "cpu"}
    spec = validate_spec({**base, "ignore_kernels": [NVJET, " " + FILL, NVJET]})
    assert spec.ignore_kernels == (NVJET, FILL)
    assert validate_spec({**base, "ignore_kernels": []}).spec_hash() == \
        validate_spec(base).spec_hash()  # jobs without the field keep their hash
    assert spec.spec_hash() != validate_spec(base).spec_hash()
    with pytest.raises(SpecInvalid) as err:
        validate_spec({**base, "ignore_kernels": [NVJET, "re:([a-z"]})
    assert [e.field for e in err.value.errors] == ["ignore_kernels[1]"]
    assert "regular expression" in str(err.value)


@pytest.fixture(scope="module")
def report_launches() -> pd.DataFrame:
    """The report's 13 launches as one run of one region (Launch = launch order)."""
    rows, _, _ = R.read_report(REPORT, METRICS)
    rows = rows.copy()
    order = {k: i for i, k in enumerate(dict.fromkeys(zip(rows[C.KERNEL], rows[C.RUN])))}
    rows[C.LAUNCH] = [order[k] for k in zip(rows[C.KERNEL], rows[C.RUN])]
    rows[C.ANNOTATION], rows[C.CONFIG], rows[C.RUN] = "script", 0, 0
    assert len(order) == 13
    return rows.reset_index(drop=True)


def _duration(frame: pd.DataFrame) -> float:
    return float(frame.loc[frame[C.METRIC] == C.GPU_TIME, C.VALUE].sum())


def test_ignoring_the_fills_removes_exactly_their_launches(report_launches) -> None:
    launches = report_launches
    fills = launches[launches[C.KERNEL].str.contains("distribution_elementwise")]
    assert fills[C.LAUNCH].nunique() == 4
    result = leave_out_ignored(Collection(launches), [FILL])
    kept = result.launches
    assert len(kept) == len(launches) - len(fills)
    assert not kept[C.KERNEL].str.contains("distribution_elementwise").any()
    assert sorted(kept[C.LAUNCH].unique()) == sorted(set(launches[C.LAUNCH]) - set(fills[C.LAUNCH]))
    moved = result.unattributed
    assert moved is not None and (moved[C.REASON] == IGNORED_REASON).all()
    assert len(moved[moved[C.METRIC] == C.GPU_TIME]) == 4
    assert result.backend_info["ignored_kernels"] == [
        {"entry": FILL, "kernels": sorted(set(fills[C.KERNEL])), "launches": 4}]
    assert "4 launches" in result.warnings[-1]
    # the aggregated duration is the sum of the 9 other launches' own durations, nothing else
    agg = aggregate_runs(launches_to_runs(kept, []), []).set_index(C.METRIC)
    full = aggregate_runs(launches_to_runs(launches, []), []).set_index(C.METRIC)
    assert agg.loc[C.GPU_TIME, C.AVG] == pytest.approx(_duration(launches) - _duration(fills))
    assert full.loc[C.GPU_TIME, C.AVG] == pytest.approx(_duration(launches))
    bytes_kept = kept.loc[kept[C.METRIC] == "dram__bytes_read.sum", C.VALUE].sum()
    assert agg.loc["dram__bytes_read.sum", C.AVG] == pytest.approx(bytes_kept)


def test_exact_name_matches_only_that_kernel(report_launches) -> None:
    result = leave_out_ignored(Collection(report_launches), [NVJET, "nvjet"])
    summary = {s["entry"]: s["launches"] for s in result.backend_info["ignored_kernels"]}
    assert summary == {NVJET: 3, "nvjet": 0}  # an exact name is the whole name
    assert not (result.launches[C.KERNEL] == NVJET).any()
    assert result.launches[C.LAUNCH].nunique() == 10


def test_matching_every_launch_is_an_error_naming_the_field(report_launches) -> None:
    with pytest.raises(ProfilingFailed, match="ignore_kernels matches every launch"):
        leave_out_ignored(Collection(report_launches), ["re:."])


def test_cpu_worker_leaves_the_ignored_kernel_out(tmp_path) -> None:
    from tests.unit.profiling_worker.test_worker_run_cpu import run_worker

    job = tmp_path / "cpu-ignore"
    proc = run_worker(job, {"kernels": ["fusion"], "configs": [{"n": 32}], "runs": 2,
                            "backend": "cpu", "ignore_kernels": ["host:fused"]})
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = read_manifest(job)
    assert manifest["backend"]["ignored_kernels"] == [
        {"entry": "host:fused", "kernels": ["host:fused"], "launches": 2}]
    agg = pd.read_parquet(job / C.TABLES_DIR / "aggregated.parquet")
    assert set(agg[C.ANNOTATION]) == {"unfused"}
    moved = pd.read_parquet(job / C.TABLES_DIR / "unattributed.parquet")
    assert list(moved[C.KERNEL]) == ["host:fused"] * 2 and (moved[C.CONFIG] == 0).all()

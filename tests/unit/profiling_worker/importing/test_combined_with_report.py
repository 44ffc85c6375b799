"""Case 4 with the report given: per-run rows nsight-python combined across kernels (``a|b``,
``combine_kernel_metrics=lambda x, y: x + y``) are recomputed per launch with the metric-aware
rules, so durations and bytes add and percentages are duration-weighted.

Input: the real H200 report ``ncu_plain/plain.ncu-rep.gz`` (3 iterations of unfused ``a + b * c``:
a mul launch then an add launch). No nsight-python output with a report of a combined region
was kept (too big), so the per-run CSV is written here exactly as nsight-python 0.9.6 writes it
with that lambda: one row per run and metric, Value = mul + add, Kernel = ``mul|add``; and the
report's launches are given the region and launch order nsight-python's NVTX range would.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.importing import ncu_rep as R
from profiling_worker.importing.csv_job import from_csvs
from profiling_worker.importing.report_job import add_launch_rows
from profiling_worker.importing.sniff import sniff
from profiling_worker.bundle.schema import columns as C

REPORT = Path(__file__).resolve().parents[3] / "fixtures" / "h200_import" / "ncu_plain" \
    / "plain.ncu-rep.gz"
DUR = C.GPU_TIME
PCTS = ("dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed")
BYTES = ("dram__bytes_read.sum", "dram__bytes_write.sum")
N = 1048576


@pytest.fixture(scope="module")
def launches() -> pd.DataFrame:
    """The 6 mul/add launches of the report in launch order, as one region ``unfused``: Run =
    the launch's sequence number (what a per-instance NVTX range gives), Annotation set."""
    rows, device, _ = R.read_report(REPORT, (DUR, *PCTS, *BYTES))
    pick = rows[rows[C.KERNEL].str.contains("MulFunctor|CUDAFunctor_add")].copy()
    order = {k: i for i, k in enumerate(dict.fromkeys(zip(pick[C.KERNEL], pick[C.RUN])))}
    pick[C.RUN] = [order[k] for k in zip(pick[C.KERNEL], pick[C.RUN])]
    pick = pick.sort_values(C.RUN, kind="stable")
    assert len(order) == 6 and list(pick.drop_duplicates(C.RUN)[C.KERNEL].str.contains(
        "MulFunctor")) == [True, False] * 3  # mul, add, three times
    pick[C.ANNOTATION] = "unfused"
    return pick.reset_index(drop=True)


def _per_launch(launches: pd.DataFrame) -> dict[tuple[int, str], list[float]]:
    """{(run, metric): [mul value, add value]} straight from the report's launch rows."""
    out: dict[tuple[int, str], list[float]] = {}
    for seq, metric, value in zip(launches[C.RUN], launches[C.METRIC], launches[C.VALUE]):
        out.setdefault((seq // 2, metric), []).append(float(value))
    return out


def _write_combined_csv(path: Path, per_launch: dict) -> None:
    """nsight-python 0.9.6's profiled_data with combine_kernel_metrics=lambda x, y: x + y."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Annotation", "Value", "Metric", "Kernel", "GPU", "Host", "ComputeClock",
                    "MemoryClock", "n"])
        for (run, metric), (mul, add) in sorted(per_launch.items(), key=lambda kv: kv[0][::-1]):
            w.writerow(["unfused", mul + add, metric, "mul|add", "NVIDIA H200", "vm", 1980000,
                        3201000, N])


def test_per_launch_recompute_matches_the_reports_own_launches(tmp_path, launches) -> None:
    per_launch = _per_launch(launches)
    csv_path = tmp_path / "profiled_data-unfused-0.csv"
    _write_combined_csv(csv_path, per_launch)
    job = from_csvs([sniff(csv_path)], None)
    csv_only = job.runs.set_index([C.RUN, C.METRIC])[C.VALUE]
    for run in range(3):  # CSV alone: a summed % is re-derived or missing, never the sum
        for metric in PCTS:
            assert not csv_only[(run, metric)] == pytest.approx(sum(per_launch[(run, metric)]))
    job = add_launch_rows(job, launches, REPORT.name, {})
    assert job.provenance["launches"]["attribution"] == R.ATTRIBUTED_ORDER
    assert job.launches is not None and len(job.launches[[C.RUN, C.LAUNCH]]
                                            .drop_duplicates()) == 6
    runs = job.runs.set_index([C.RUN, C.METRIC])[C.VALUE]
    for run in range(3):
        d_mul, d_add = per_launch[(run, DUR)]
        assert runs[(run, DUR)] == pytest.approx(d_mul + d_add, rel=1e-12)
        for metric in BYTES:
            assert runs[(run, metric)] == pytest.approx(sum(per_launch[(run, metric)]), rel=1e-12)
        for metric in PCTS:
            p_mul, p_add = per_launch[(run, metric)]
            weighted = (p_mul * d_mul + p_add * d_add) / (d_mul + d_add)
            assert runs[(run, metric)] == pytest.approx(weighted, rel=1e-12)
            assert runs[(run, metric)] < p_mul + p_add  # not the CSV's sum
    assert any("recomputed from the report's launches" in n for n in job.notes)
    agg = job.agg.set_index(C.METRIC)
    assert agg.loc[DUR, "AvgValue"] == pytest.approx(
        sum(sum(per_launch[(r, DUR)]) for r in range(3)) / 3, rel=1e-12)

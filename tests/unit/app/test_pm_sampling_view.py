"""The kernel's own timeline (issue 28), app side: the worker's PM-sampling rows of the H200
full-set report (fp16 matmul n = 4096, tests/fixtures/bundles) as the deep-dive page's frames
and figure. Expected figures are recomputed from the rows the worker read."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from app.core.figures.pm_sampling import build_pm_figure
from app.core.views import pm_sampling as P
from profiling_worker.extract.ncu_sections import deep_dive
from tests.scenarios import scenario_report

REPORT = scenario_report("h200-ncu-deepdive-fp16-4096")


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    plain = tmp_path_factory.mktemp("rep") / "full.ncu-rep"
    plain.write_bytes(gzip.decompress(REPORT.read_bytes()))
    return deep_dive(plain, other_ranges=False)["pm_sampling"]


def test_timeline_of_one_launch(rows: list[dict]) -> None:
    mine = [r for r in rows if r["launch_id"] == 1]
    line = P.timeline(rows, 1)
    assert line is not None and line.time == P.TIME
    assert len(line.frame) == sum(len(r["t_ns"]) for r in mine)
    assert line.duration_ns == mine[0]["duration_ns"] and line.interval_ns == mine[0]["interval_ns"]
    names = {r["metric"] for r in mine}
    # this report samples no occupancy and no stall series: named, not drawn as zeros
    assert not any("warps_active" in n or "stalled" in n for n in names)
    assert line.missing == (P.OCCUPANCY, P.STALLS)
    means = {r["metric"]: np.mean(r["values"]) for r in mine
             if r["unit"] == "%" and "pct_of_peak" in r["metric"]}
    top = sorted(means, key=means.__getitem__, reverse=True)[:8]
    assert P.default_metrics(line) == top
    assert top[0].startswith("sm__pipe_tensor_cycles_active")  # an fp16 matmul: tensor pipe first
    assert P.timeline(rows, 7) is None


def test_table_and_summary_hold_the_samples(rows: list[dict]) -> None:
    line = P.timeline(rows, 0)
    assert line is not None
    chosen = P.default_metrics(line)[:3]
    wide = P.wide(line, chosen)
    by_name = {r["metric"]: r for r in rows if r["launch_id"] == 0}
    assert list(wide[P.TIME]) == by_name[chosen[0]]["t_ns"]
    for name in chosen:
        assert list(wide[f"{name} (%)"]) == by_name[name]["values"]
    summary = P.summary(line).set_index(P.METRIC)
    for name, r in by_name.items():
        assert summary.loc[name, "Mean"] == pytest.approx(np.mean(r["values"]))
        assert summary.loc[name, "Max"] == max(r["values"])


def test_figure_axes_carry_units(rows: list[dict]) -> None:
    line = P.timeline(rows, 0)
    assert line is not None
    chosen = [*P.default_metrics(line)[:2], "sm__cycles_active.avg"]
    fig = build_pm_figure(line.frame, line.time, line.duration_ns, chosen).to_plotly_json()
    layout = fig["layout"]
    assert layout["yaxis"]["title"]["text"] == "% of peak" and layout["yaxis"]["range"] == [0, 100]
    assert layout["yaxis2"]["title"]["text"] == "per sample"
    assert layout["xaxis2"]["title"]["text"] == "Time from kernel start (ns)"
    assert {t["name"] for t in fig["data"]} == {*chosen[:2], "sm__cycles_active.avg (cycle)"}
    lines = [s["x0"] for s in layout["shapes"]]  # kernel start and end, in both panels
    assert sorted(lines) == [0.0, 0.0, line.duration_ns, line.duration_ns]

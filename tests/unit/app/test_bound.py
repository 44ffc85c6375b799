"""Bound and roofline views and figures on the H200 bundles."""

from __future__ import annotations

import pytest
from bundled import bundled

from app.core.figures.bound import build_bound_figure, build_roofline_figure
from app.core.figures.common import AUDIT_BARS_NAME
from app.core.metrics import MissingData
from app.core.views.bound import BoundOptions, bound_frame, limited_by
from app.core.views.roofline import (RooflineOptions, counter_flops, roofline_ceilings,
                                     roofline_frame, roofline_table)
from profiling_worker.bundle.schema import columns as C


def _row(frame, annotation, n):
    return frame[(frame[C.ANNOTATION] == annotation) & (frame["n"] == n)].iloc[0]


def test_limited_by_rule() -> None:
    assert limited_by(90, 20) == "compute (SM)"
    assert limited_by(5, 85) == "memory (DRAM)"
    assert limited_by(38, 8).startswith("latency / launch")
    assert limited_by(38, 8, threshold=30) == "compute (SM)"


def test_matmul_bound() -> None:
    frame = bound_frame(bundled("h200-ncu-matmul-sweep"), BoundOptions())
    assert (frame["DramPct"] <= 100).all() and (frame["SmPct"] <= 100).all()
    assert _row(frame, "fp16", 8192)["LimitedBy"] == "compute (SM)"
    assert _row(frame, "fp16", 512)["LimitedBy"].startswith("latency / launch")
    row = _row(frame, "fp16", 4096)
    assert 1400 < row["SmClockMHz"] < 1700  # power-limited tensor GEMM, not the 1980 MHz rating
    assert row["DatasheetGBps"] == 4800 and "h200" in row["PeakSource"]
    assert frame["CounterGBps"].isna().all()  # this job did not collect dram__bytes.sum.peak_sustained


def test_elementwise_is_memory_bound_and_gbps_agrees_with_dram_pct() -> None:
    frame = bound_frame(bundled("h200-ncu-elementwise"), BoundOptions())
    big = frame[frame["n"] == 2**26]
    assert (big["LimitedBy"] == "memory (DRAM)").all()
    assert (frame["DramPct"] <= 100).all()
    # bytes/time against 4.8 TB/s matches ncu's own DRAM % within a few points
    assert ((big["PctOfDatasheetGBps"] - big["DramPct"]).abs() < 3).all()
    assert (big["MeasuredDramGBps"] > 4000).all() and (big["MeasuredDramGBps"] < 4800).all()


def test_cupti_job_has_no_bound_metrics() -> None:
    with pytest.raises(MissingData) as err:
        bound_frame(bundled("h200-cupti-matmul-sweep"), BoundOptions())
    assert "bound metric preset" in err.value.hint and "ncu backend" in err.value.hint


def test_roofline_matmul() -> None:
    frame = roofline_frame(bundled("h200-ncu-matmul-sweep"), RooflineOptions())
    fp16 = _row(frame, "fp16", 4096)
    assert fp16["Roof"] == "FP16 tensor core, dense" and fp16["DatasheetTFLOPs"] == 989.4
    assert fp16["FlopsSource"].startswith("analytic") and fp16["BytesSource"].startswith("measured")
    assert 700 < fp16["AchievedTFLOPs"] < 800
    assert fp16["PctOfClockPeak"] > fp16["PctOfDatasheet"]  # ran below the rated clock
    assert 85 < fp16["PctOfClockPeak"] < 95  # about 90 % of the dense peak at the clock it ran at
    fp32 = _row(frame, "fp32", 8192)
    assert fp32["DatasheetTFLOPs"] == 67.0 and 70 < fp32["PctOfDatasheet"] < 80
    analytic = roofline_frame(bundled("h200-ncu-matmul-sweep"),
                              RooflineOptions(bytes_source="analytic"))
    # measured GEMM traffic exceeds the analytic minimum: intensity moves left
    assert (_row(analytic, "fp16", 8192)["ArithmeticIntensity"]
            > _row(frame, "fp16", 8192)["ArithmeticIntensity"])
    ceilings = roofline_ceilings(frame)
    assert set(ceilings["Value"]) == {4800.0, 67.0, 989.4}
    assert "FP16 tensor core, dense / BF16 tensor core, dense (datasheet)" in set(ceilings["Ceiling"])


def test_the_roofline_table_takes_its_charts_flops_unit() -> None:
    """The table and CSV of a roofline are in its chart's FLOP/s unit: TFLOP/s beside the roofs
    (a GPU job's frame as it is), else the unit its median fits, named in the headers (a cpu
    job's 4.2e-5 TFLOP/s read 0.000042 in AchievedTFLOPs under an MFLOP/s axis)."""
    frame = roofline_frame(bundled("h200-ncu-matmul-sweep"), RooflineOptions())
    ceilings = roofline_ceilings(frame)
    assert roofline_table(frame, ceilings) is frame
    slow = frame.assign(AchievedTFLOPs=frame["AchievedTFLOPs"] * 1e-7,
                        UsefulTFLOPs=frame["UsefulTFLOPs"] * 1e-7)  # host-timed: no roofs
    table = roofline_table(slow, ceilings.iloc[0:0])
    assert "AchievedTFLOPs" not in table and "UsefulTFLOPs" not in table
    assert table["AchievedMFLOPs"].tolist() == pytest.approx(
        (frame["AchievedTFLOPs"] * 1e-1).tolist(), rel=1e-12)
    assert table["UsefulMFLOPs"].tolist() == pytest.approx(
        (frame["UsefulTFLOPs"] * 1e-1).tolist(), rel=1e-12)
    assert table["DatasheetTFLOPs"].equals(frame["DatasheetTFLOPs"])  # the roofs' unit
    fig = build_roofline_figure(slow, ceilings.iloc[0:0])
    assert fig.layout.yaxis.title.text == "Achieved throughput (MFLOP/s)"


def test_roofline_cupti_uses_analytic_bytes() -> None:
    frame = roofline_frame(bundled("h200-cupti-matmul-sweep"), RooflineOptions())
    assert set(frame["BytesSource"]) == {"analytic minimum bytes"}
    assert frame["ClockPeakTFLOPs"].isna().all()



@pytest.mark.parametrize(("options", "named", "fix"), [
    (RooflineOptions(bytes_source="measured"), "no measured DRAM bytes (dram__bytes_read.sum",
     "Or choose Bytes: auto or analytic."),
    (RooflineOptions(flops_source="counter"), "no FLOP counters (sm__ops_path_tensor_src_fp16",
     "Or choose FLOPs: auto or analytic.")])
def test_a_chosen_source_the_job_lacks_is_named(options: RooflineOptions, named: str,
                                               fix: str) -> None:
    """A tester's find: Bytes "measured" on a CUPTI job gave BytesSource "measured DRAM bytes"
    with every Bytes and intensity empty, no note; counted FLOPs on a job without counters said
    its kernels declare no FLOPs (they do)."""
    with pytest.raises(MissingData) as err:
        roofline_frame(bundled("h200-cupti-gate-tf32"), options)
    assert named in str(err.value) and err.value.hint.endswith(fix)

def test_counter_flops() -> None:
    flops, formula = counter_flops({"sm__ops_path_tensor_src_fp16.sum": 2 * 4096**3})
    assert flops == 2 * 4096**3 and "tensor_src_fp16" in formula
    flops, _ = counter_flops({"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 10.0,
                              "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 1.0,
                              "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 2.0})
    assert flops == 23.0
    assert counter_flops({})[1] == ""


def test_figures() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    bars = build_bound_figure(bound_frame(bundle, BoundOptions()), 60.0)
    assert [t.name for t in bars.data[:2]] == ["SM throughput", "DRAM throughput"]
    assert bars.layout.yaxis.title.text == "Throughput (% of peak)"
    assert any(s.y0 == 100 for s in bars.layout.shapes)
    frame = roofline_frame(bundle, RooflineOptions())
    roof = build_roofline_figure(frame, roofline_ceilings(frame))
    assert roof.layout.xaxis.type == "log" and roof.layout.yaxis.type == "log"
    assert roof.layout.xaxis.title.text == "Arithmetic intensity (FLOP/byte)"
    names = [t.name for t in roof.data]
    assert "DRAM roof 4,800 GB/s" in names and {"fp32", "fp16", "bf16"} <= set(names)
    fp16 = next(t for t in roof.data if t.name == "fp16")
    assert len(fp16.x) == 5  # one trajectory across the five sizes


def test_roofline_job_with_counters() -> None:
    bundle = bundled("h200-ncu-roofline")
    frame = roofline_frame(bundle, RooflineOptions())
    fp16 = _row(frame, "fp16", 4096)
    assert fp16["Flops"] == 2 * 4096**3  # tensor counter counts an FMA as 2 FLOPs
    assert fp16["FlopsSource"] == "counters: sm__ops_path_tensor_src_fp16.sum"
    assert "hgmma_src_fp16_sparsity_off" in fp16["ClockPeakSource"]
    assert 85 < fp16["PctOfClockPeak"] < 95 and fp16["PctOfDatasheet"] < 80
    fp32 = _row(frame, "fp32", 8192)
    assert "ffma" in fp32["FlopsSource"] and fp32["Flops"] == pytest.approx(2 * 8192**3, rel=1e-3)
    bound = bound_frame(bundle, BoundOptions())
    assert bound["CounterGBps"].between(4700, 4850).all()  # 1504 B/cycle x 3.2 GHz
    assert "peak_sustained" in bound["PeakSource"].iloc[0]


def test_bound_limiter_is_a_marker_not_colliding_text() -> None:
    bundle = bundled("h200-ncu-roofline")
    frame = bound_frame(bundle, BoundOptions())
    fig = build_bound_figure(frame, 60.0)
    assert not [t for t in fig.data if t.type == "scatter" and "text" in (t.mode or "")]
    marks = {t.name: t for t in fig.data if t.type == "scatter" and t.mode == "markers"
             and t.name != AUDIT_BARS_NAME}  # the × over pairs that failed the run audit
    assert set(marks) == {"limited by compute (SM)", "latency / launch bound"}
    assert sum(len(t.x) for t in marks.values()) == len(frame)
    latency = marks["latency / launch bound"]
    assert set(latency.x) == {"fp16 · n=1024", "bf16 · n=1024"}
    assert all(str(c[2]).startswith("latency / launch") for c in latency.customdata)
    assert "latency threshold 60 %" in [t.name for t in fig.data]
    assert "LimitedBy" in frame  # the table keeps the words


def test_roofline_labels_only_the_ends_of_each_trajectory() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    frame = roofline_frame(bundle, RooflineOptions())
    fig = build_roofline_figure(frame, roofline_ceilings(frame))
    for name in ("fp32", "fp16", "bf16"):
        trace = next(t for t in fig.data if t.name == name)
        assert all(t == "" for t in list(trace.text)[1:-1])  # no label mid-trajectory
        assert "n=" in trace.hovertemplate or "customdata[0]" in trace.hovertemplate
    fp32 = next(t for t in fig.data if t.name == "fp32")
    assert list(fp32.text)[0] == "n=512" and list(fp32.text)[-1] == "n=8192"
    fp16 = next(t for t in fig.data if t.name == "fp16")
    assert list(fp16.text)[0] == "n=512"  # moved below right of the point, not dropped
    bf16 = next(t for t in fig.data if t.name == "bf16")
    assert list(bf16.text)[-1] == ""  # same label at the same spot as fp16 n=8192


def _lab(hex_or_rgba: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of ``#rrggbb`` or ``rgba(r,g,b,a)`` (alpha ignored)."""
    if hex_or_rgba.startswith("#"):
        rgb = [int(hex_or_rgba[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    else:
        rgb = [float(v) / 255 for v in hex_or_rgba[5:-1].split(",")[:3]]
    r, g, b = (((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb)
    xyz = ((r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047, r * 0.2126 + g * 0.7152 + b * 0.0722,
           (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883)
    fx, fy, fz = (v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _delta_e(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5


def test_sm_and_dram_bars_never_take_an_annotation_colour() -> None:
    from app.core.figures import common, theme
    from app.core.figures.bound import LIMITER_COLOR

    frame = bound_frame(bundled("h200-ncu-matmul-sweep"), BoundOptions())
    fig = build_bound_figure(frame, 10.0)
    bars = {t.name: t.marker.color for t in fig.data if t.type == "bar"}
    assert bars == {"SM throughput": theme.BOUND_COLORS[0], "DRAM throughput": theme.BOUND_COLORS[1]}
    job_colors = theme.annotation_colors(frame[C.ANNOTATION]).values()
    assert set(bars.values()).isdisjoint(job_colors)
    for bar in bars.values():  # far from every annotation colour and from the greys, not just unequal
        assert min(_delta_e(bar, c) for c in theme.LONG_COLORS) > 15
        assert min(_delta_e(bar, c) for c in (LIMITER_COLOR, common.REFERENCE)) > 15
    assert _delta_e(*theme.BOUND_COLORS) > 40  # SM and DRAM apart


def test_the_roofline_reads_its_rows_without_a_series_each(monkeypatch) -> None:
    """Issue 37: a pandas Series per point (twice) and a string search of its index per point
    were most of a 1,000-config sweep's roofline frame (3,000 points; 30,000 at 10,000
    configs). The same frame comes from the rows read as dicts and columns."""
    import pandas as pd

    bundle = bundled("h200-ncu-matmul-sweep")
    before = roofline_frame(bundle, RooflineOptions())

    def no_iterrows(*_: object) -> None:
        raise AssertionError("roofline_frame made a Series per row")

    monkeypatch.setattr(pd.DataFrame, "iterrows", no_iterrows)
    pd.testing.assert_frame_equal(roofline_frame(bundled("h200-ncu-matmul-sweep"),
                                                 RooflineOptions()), before)

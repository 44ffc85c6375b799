"""Bound (SM % vs DRAM % of peak, limited-by label, GB/s against the device peak) and roofline."""

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C, plausibility as P
from profiling_worker.bundle.schema.view_metrics import BOUND as BOUND_METRICS

from app.core import derived, frame_columns as F
from app.core.table_text import header
from app.core.figures.bound import build_bound_figure, build_roofline_figure, drawn_points
from app.core.metrics import MissingData
from app.core.views.bound import LATENCY_THRESHOLD_PCT, BoundOptions, bound_frame
from app.core.views.roofline import (RATE_COLUMNS, RooflineOptions, rate_column,
                                     roofline_ceilings, roofline_frame, roofline_table)
from app.core.metrics import SM_HZ
from app.ui import (analysis, cached, deep_dive_action, job_status, notes, panels, rule_digest,
                    run_audit, state)

BOUND = "bound"
ROOFLINE = "roofline"

st.header("Bound and roofline")
bundle = analysis.selected_bundle()
deep_dive_action.offer(bundle, "bound")
notes.show(bundle, "bound", [bundle.duration_metric, *BOUND_METRICS.metrics, SM_HZ],
           extra_checks=(P.ABOVE_ROOF,))  # SM_HZ: the clock the roofline's peaks are taken at

st.subheader("What limits each region")
analysis.how_to_read(
    "**SM %** (`sm__throughput.avg.pct_of_peak_sustained_elapsed`) and **DRAM %** "
    "(`dram__throughput...`) are Nsight Compute's speed-of-light numbers: how busy the busiest SM "
    "unit and the DRAM interface were, as % of their peak. The larger of the two names the "
    f"limiter. When **both are below {LATENCY_THRESHOLD_PCT:g} %** neither unit is saturated: the "
    "region is bound by latency, launch overhead or too little parallelism (small sizes), and "
    "making it 'more compute-efficient' will not help. The marker above each pair says which "
    f"(▲ compute, ■ memory, ○ latency / launch; the hover and the {header(F.LIMITED_BY)} "
    "column give it in words). For regions of several kernels the percentages are "
    "duration-weighted means, never sums.\n\n"
    f"**DRAM GB/s (measured bytes / time)**, column {header(F.ACHIEVED_GBPS)}, = "
    "(`dram__bytes_read.sum` + "
    f"`dram__bytes_write.sum`) / duration, compared "
    "with the datasheet DRAM bandwidth of this GPU (H200: 4.8 TB/s) and, when the job collected "
    "`dram__bytes.sum.peak_sustained` and `dram__cycles_elapsed.avg.per_second`, with the peak "
    f"at the DRAM clock it ran at. The table's {header(F.PEAK_SOURCE)} says which.")
# the default options first: a job without the chart's data (a queued one, a CUPTI one) gets
# the message and no control that would act on nothing
try:
    frame = bound_frame(bundle, BoundOptions())
except MissingData as exc:
    analysis.missing(exc, stop=False)
else:
    threshold = st.slider("Latency threshold (% of peak)", 10, 90, int(LATENCY_THRESHOLD_PCT),
                          5, key=state.key(BOUND, "threshold"))
    if threshold != LATENCY_THRESHOLD_PCT:
        frame = bound_frame(bundle, BoundOptions(latency_threshold_pct=float(threshold)))
    analysis.figure_panel(cached.figure(build_bound_figure, frame, float(threshold),
                                        bundle.host_timer), frame, key=BOUND,
                          filename=f"{bundle.job_id}-bound.csv",
                          note=run_audit.chart_note(bundle, frame))  # pairs marked ×

rule_digest.show(bundle, "bound")

st.subheader("Roofline")
analysis.how_to_read(
    "Each point is one annotation × config: x = **arithmetic intensity** (FLOPs per DRAM byte), "
    "y = **achieved FLOP/s**. Points of one annotation are joined in size order, so the line shows "
    "how the kernel moves as the problem grows; only its first and last sizes are labelled "
    "(hover any point for its size, intensity and FLOP/s). The dashed diagonal is the DRAM roof, "
    "the flat "
    "lines the compute roofs of the dtypes in the job: FP32 is the CUDA-core rate (no TF32), "
    "FP16/BF16/TF32/FP8 the **dense** tensor-core rates (NVIDIA's headline numbers are the 2:4 "
    "sparse ones, twice as high; they are never used here). Roofs come from the datasheet "
    "(source in the hover and in the ceilings table). Each point's efficiency is given twice: "
    "against the datasheet peak and against the **clock-adjusted** peak (per-cycle peak × the "
    "clock the kernel ran at, from `*.peak_sustained` counters when collected, else the datasheet "
    "scaled by `gpc__cycles_elapsed.avg.per_second`); tensor GEMMs on the H200 run power-limited "
    "near 1.5 GHz, so the two differ by 15–25 %.\n\n"
    "FLOPs are counter FLOPs when the job collected them, else the kernel's analytic count; "
    "bytes are measured DRAM bytes when collected, else the analytic minimum (the "
    f"{header(F.FLOPS_SOURCE)} and {header(F.BYTES_SOURCE)} columns say which). Measured bytes "
    "of a GEMM exceed the minimum (tiles re-read), "
    "so its measured intensity sits left of the analytic one.")
try:
    # the job's state as the caption says it: the manager's, which the manifest lags
    points = roofline_frame(bundle, RooflineOptions(), job_status.shown_status(bundle))
except MissingData as exc:
    analysis.missing(exc)
cols = st.columns(2)
flops_source = cols[0].segmented_control("FLOPs", ["auto", "analytic", "counter"], default="auto",
                                         key=state.key(ROOFLINE, "flops")) or "auto"
bytes_source = cols[1].segmented_control("Bytes", ["auto", "measured", "analytic"],
                                         default="auto", key=state.key(ROOFLINE, "bytes")) or "auto"
chosen = RooflineOptions(flops_source=flops_source, bytes_source=bytes_source)
if chosen != RooflineOptions():
    try:
        points = roofline_frame(bundle, chosen, job_status.shown_status(bundle))
    except MissingData as exc:
        analysis.missing(exc)
undrawn = points[F.ARITHMETIC_INTENSITY].isna() | points[F.ACHIEVED_TFLOPS].isna()
if undrawn.any():
    st.info(f"{int(undrawn.sum())} of {counted(len(points), 'point')} "
            f"{'is' if undrawn.sum() == 1 else 'are'} not drawn: no FLOP count or no "
            f"bytes from the chosen sources (FLOPs: {flops_source}, Bytes: {bytes_source}): "
            + ", ".join(points.loc[undrawn, F.CONFIG_LABEL].astype(str)
                        .radd(points.loc[undrawn, C.ANNOTATION].astype(str) + " ")) + ".",
            icon=":material/info:")
padded = points[F.COUNTED_OVER_USEFUL].astype(float)
ceilings = roofline_ceilings(points)
# the table and its CSV in the chart's FLOP/s unit (MFLOP/s for a cpu job), named in the header
table = roofline_table(points, ceilings)
rate_unit = derived.roofline_rate_step(points, with_roofs=not ceilings.empty)[1]
achieved, useful = (rate_column(c, rate_unit) for c in RATE_COLUMNS)
st.caption(f"{header(achieved)}: the chosen FLOPs over the mean time, the throughput every "
           "page shows (Size sweep included)"
           + (", in the chart's unit (the CSV too); the datasheet and clock-adjusted peaks "
              "stay in TFLOP/s." if achieved != F.ACHIEVED_TFLOPS else ".")
           + (f" Counted FLOPs exceed the kernel's useful FLOPs (its formula) by up to "
              f"{100 * (padded.max() - 1):.4g} % ({header(F.COUNTED_OVER_USEFUL)}): the library "
              f"does padded work, e.g. cuBLAS tiles; {header(F.USEFUL_FLOPS)} and "
              f"{header(useful)} are the formula's work "
              "over the same time." if (padded > 1).any() else ""))
if ceilings.empty:
    st.warning("No datasheet ceilings: a host-timed job ran on no GPU, so the points are drawn "
               "without roofs." if bundle.host_timer else
               "No datasheet ceilings for this GPU or dtype: the points are drawn without roofs.")
analysis.figure_panel(cached.figure(build_roofline_figure, points, ceilings, bundle.host_timer),
                      table, key=ROOFLINE, filename=f"{bundle.job_id}-roofline.csv",
                      note=run_audit.chart_note(bundle, drawn_points(points)),  # marked ×
                      # the point's two coordinates first: Achieved was the 11th column, off
                      # screen at 1000 px behind sources that read the same on every row
                      lead=(achieved, F.ARITHMETIC_INTENSITY), parameters=bundle.parameters)
if not ceilings.empty:  # a host-timed job has none (said above): no table reading "empty"
    st.caption("Ceilings drawn")
    panels.table_with_csv(ceilings, state.key(ROOFLINE, "ceilings"),
                          f"{bundle.job_id}-roofline-ceilings.csv")

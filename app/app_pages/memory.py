"""Memory bytes and fusion: DRAM read/write per annotation beside the analytic minimum, and the
fused vs unfused traffic and time ratios."""

import streamlit as st

from profiling_worker.bundle.schema import columns as C, plausibility as P
from profiling_worker.bundle.schema.view_metrics import MEMORY as MEMORY_METRICS

from app.core.figures.memory import build_fusion_figure, build_memory_figure
from app.core.kernel_catalog import builtin_kernels
from app.core.metrics import MissingData
from app.core.views.memory import MemoryOptions, fusion_frame, fusion_pairs, memory_frame
from app.core.views.chart_units import memory_table
from app.core.views.sweep import sweep_x
from app.ui import analysis, cached, notes, panels, run_audit, state
from app.core.markdown import esc
from app.core import frame_columns as F

PAGE = "memory"  # widget keys of this page: state.key(PAGE, field)
FUSION = "fusion"

st.header("Memory traffic and fusion")
bundle = analysis.selected_bundle()
notes.show(bundle, "memory", [bundle.duration_metric, *MEMORY_METRICS.metrics],
           extra_checks=(P.ABOVE_ROOF,))
analysis.how_to_read(
    "Bars are the DRAM bytes Nsight Compute counted inside each annotated region "
    "(`dram__bytes_read.sum`, `dram__bytes_write.sum`; summed over the region's kernels); the "
    "diamond is the kernel catalog's **analytic minimum** (every input read once, every output "
    "written once). They differ for known reasons, shown per row in *GapNote*:\n"
    "- **below the minimum**: output still dirty in the L2 (60 MiB on the H200) when the region "
    "ends is written back later, outside it, so writes are under-counted; small working sets may "
    "write nothing at all;\n"
    "- **above the minimum**: GEMM tiles are re-read from DRAM, split-K writes partial sums, and "
    "an unfused sequence writes and re-reads its intermediate array.\n\n"
    "The fusion chart divides the fused region by the unfused one per size: below 1 the fusion "
    "saved traffic / time. Ratios are of mean values. Only pairs of regions that compute the "
    "same result are offered, as the kernel declares them (`fusion_pairs` in the catalog or in "
    "`@kernel(...)`): two regions that compute different things (an fp32 and an fp16 matmul) "
    "are not a fusion, and their bytes 'saved' would mean nothing.")
options = MemoryOptions()
counted = True  # the job has DRAM byte counters; without them the fusion shows its time ratio
try:
    frame = memory_frame(bundle, options)
except MissingData as exc:
    analysis.missing(exc, stop=False)
    counted = False
if counted:
    labels = dict(zip(frame[C.CONFIG], frame[F.CONFIG_LABEL]))
    config = st.selectbox("Config", state.keep_if_offered(state.key(PAGE, "config"), labels,
                                                          list(labels)[-1]),
                          key=state.key(PAGE, "config"),
                          format_func=lambda c: labels[c])
    shown = frame[frame[C.CONFIG] == config]
    analysis.figure_panel(cached.figure(build_memory_figure, shown, bundle.host_timer),
                          memory_table(shown),
                          key=PAGE, filename=f"{bundle.job_id}-memory.csv",
                          note=run_audit.chart_note(bundle, shown))  # pairs marked ×

st.subheader("Fusion")
pairs = fusion_pairs(bundle, {**builtin_kernels(), **cached.kernel_catalog()[0]})
if not pairs:
    st.info("None of this job's kernels declares two regions that compute the same result "
            "(an unfused and a fused version), so there is no fusion to compare. The `fusion` "
            "catalog kernel declares one; a user kernel declares its own with "
            "`@kernel(..., fusion_pairs=[(\"unfused\", \"fused\")])`.")
    panels.stop_page()
unfused, fused = st.selectbox("Unfused → fused", state.keep_if_offered(
                                  "memory-fusion-pair", pairs), key=state.key(PAGE, "fusion-pair"),
                              format_func=lambda p: f"{p[0]} → {p[1]}")
fusion = fusion_frame(bundle, MemoryOptions(unfused=unfused, fused=fused))
if fusion.empty:
    st.info(f"{esc(unfused)} and {esc(fused)} share no config.")
else:
    if not counted:
        st.caption("Time ratio only: the DRAM bytes ratio (traffic saved) needs the DRAM byte "
                   "counters this job lacks (see above); the time ratio needs only durations.")
    analysis.figure_panel(cached.figure(build_fusion_figure, fusion, sweep_x(bundle),
                                        bundle.host_timer), fusion, key=FUSION,
                          filename=f"{bundle.job_id}-fusion.csv")

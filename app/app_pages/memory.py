"""Memory bytes and fusion: DRAM read/write per annotation beside the analytic minimum, and the
fused vs unfused traffic and time ratios."""

import streamlit as st

from profiling_worker.schema import columns as C, plausibility as P

from app.core.figures.memory import build_fusion_figure, build_memory_figure
from app.core.metrics import DRAM_READ, DRAM_WRITE, MissingData, annotation_order
from app.core.views.memory import MemoryOptions, fusion_frame, memory_frame
from app.core.views.sweep import sweep_x
from app.ui import analysis, notes

st.header("Memory traffic and fusion")
bundle = analysis.selected_bundle()
notes.show(bundle, "memory", [bundle.duration_metric, DRAM_READ, DRAM_WRITE],
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
    "saved traffic / time. Ratios are of mean values.")
options = MemoryOptions()
try:
    frame = memory_frame(bundle, options)
except MissingData as exc:
    analysis.missing(exc)
labels = dict(zip(frame[C.CONFIG], frame["ConfigLabel"]))
config = st.selectbox("Config", list(labels), index=len(labels) - 1, key="memory-config",
                      format_func=lambda c: labels[c])
shown = frame[frame[C.CONFIG] == config]
analysis.figure_panel(build_memory_figure(shown, bundle.host_timer), shown, key="memory",
                      filename=f"{bundle.job_id}-memory.csv")

st.subheader("Fusion")
names = annotation_order(bundle)
cols = st.columns(2)
unfused = cols[0].selectbox("Unfused annotation", names, key="memory-unfused",
                            index=names.index("unfused") if "unfused" in names else 0)
fused = cols[1].selectbox("Fused annotation", names, key="memory-fused",
                          index=names.index("fused") if "fused" in names else min(1, len(names) - 1))
fusion = fusion_frame(bundle, MemoryOptions(unfused=unfused, fused=fused))
if fusion.empty or unfused == fused:
    st.info("Pick two different annotations of this job (the fusion kernel records "
            "'unfused' and 'fused').")
else:
    analysis.figure_panel(build_fusion_figure(fusion, sweep_x(bundle), bundle.host_timer), fusion,
                          key="fusion", filename=f"{bundle.job_id}-fusion.csv")

"""Deep dive: one point's Nsight Compute sections (speed of light, memory workload, occupancy,
warp stalls, launch statistics, source hot spots) and rule results, read by the worker."""

import pandas as pd
import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import backends as B, metrics as M
from profiling_worker.bundle.schema.manifest import JobStatus

from app.core import derived, metric_roles, numbers
from app.core.bundle_files import explains_launches
from app.core.figures.deep_dive import build_bars
from app.core.markdown import code, esc
from app.core.views import deep_dive as D
from app.ui import (analysis, baselines, cached, deep_dive_action, job_status, panels, pm_timeline,
                    rule_digest, state)

PAGE = "deep-dive"  # widget keys of this page: state.key(PAGE, field)

st.header("Deep dive")
bundle = analysis.selected_bundle()
analysis.how_to_read(
    "One profiled launch explained with Nsight Compute's **sections**, as its Details page "
    "groups them: **speed of light** (how busy compute and each memory level were, % of peak), "
    "**memory workload** (bytes moved at L1, L2 and DRAM, cache hit rates), **occupancy** "
    "(warps the launch could keep resident per SM against what it achieved, and the resource "
    "that limits it), **warp states** (cycles a warp waited per issued instruction, by reason), "
    "**launch statistics** and **source hot spots** (program counters with the most warp "
    "samples), the **kernel's own timeline** (PM sampling: throughput and other counters sampled "
    "while it ran) and **baselines** (pin a launch, of any job, and see every metric of another "
    "against it). A sweep job collects a few metrics; use *Deep dive one point* on a sweep page to "
    "profile one point with `--set full`. A report made with fewer sections (an import, the "
    "default set) shows what it has and names what it lacks; nothing missing is drawn as zero.")


@st.fragment(run_every=3)
def _wait_for(job_id: str) -> None:
    """Say that the job has not ended, in the state the caption says (the job manager's, which
    the manifest lags), until it ends; then run the page again."""
    job = cached.bundle_for(job_id)
    status = job_status.state_of(job_id, job.status if job is not None else JobStatus.QUEUED)
    if status.finished:
        st.rerun()
    st.info(f"Job {code(job_id)} is {esc(status.value)}: this page shows its deep dive when it "
            "is done.", icon=":material/hourglass_top:")


if not job_status.shown_status(bundle).finished:
    _wait_for(bundle.job_id)
    panels.stop_page()
if not explains_launches(bundle):
    st.info(f"This job has no Nsight Compute report (backend {code(bundle.backend)}). Pick an "
            "ncu job" + (", or profile one of its points:" if B.on_gpu(bundle.backend) else "."),
            icon=":material/info:")
    deep_dive_action.offer(bundle, "deep-dive", expanded=True, say_why=True)
    panels.stop_page()
answer = cached.report_answer("deepdive", bundle)
if not answer.ok:
    st.warning(f"The report could not be read: {esc(answer.message)}", icon=":material/warning:")
    panels.stop_page()
data = answer.data()
section_set = (bundle.manifest.get("backend") or {}).get("ncu_section_set")
st.caption(f"Report {code(data['report'])}: {counted(len(data['launches']), 'launch', 'launches')}"
           + (f", profiled with {code(section_set)}" if section_set else "")
           + (f"; {data['truncated']} more left out" if data.get("truncated") else "") + ".")
for problem in data.get("problems") or ():
    st.warning(f"Part of the report could not be read: {esc(problem)}")
labels = D.launch_labels(data, D.config_labeler(bundle.spec.configs if bundle.spec else ()))
if not labels:
    st.info("The report holds no profiled launch.")
    panels.stop_page()
launch = st.selectbox("Launch", list(labels), format_func=labels.__getitem__,
                      key=state.key(PAGE, "launch"))
sections = D.section_names(data, launch)
# folded: the names of a full set's 20 sections took six lines over the first chart, below the
# fold at 1000x700 (issue 37)
with st.expander(f"Sections in this report for this launch ({len(sections)})",
                 icon=":material/list:"):
    st.caption(", ".join(code(s) for s in sections) or "none")


def _panel(panel: D.Panel, key: str) -> None:
    """The section's table and its CSV (named by job, launch and section), or what is missing."""
    if panel.missing:
        st.info(panel.missing, icon=":material/visibility_off:")
    if not panel.frame.empty:  # in the units and words the other pages use (µs, MHz)
        shown = metric_roles.with_words(derived.rows_in_shown_units(panel.frame),
                                        bundle.manifest)
        panels.table_with_csv(shown, state.key(PAGE, key),
                              f"{bundle.job_id}-deep-dive-launch-{launch}-{key}.csv")


st.subheader("Speed of light")
sol = D.metric_panel(data, launch, "speed of light", (M.GPU_TIME, M.GPC_HZ, *M.SPEED_OF_LIGHT))
pct = sol.frame[sol.frame[D.UNIT] == "%"]
if not pct.empty:  # each bar by its words (SM throughput), the raw name in its hover and the table
    bars = pct.assign(**{D.LABEL: pct[D.METRIC].map(
        lambda metric: metric_roles.words(bundle.manifest, metric))})
    st.plotly_chart(build_bars(bars, D.LABEL, D.VALUE, "Throughput, % of peak", "%", 100,
                               raw=D.METRIC), key=state.key(PAGE, "sol-chart"))
_panel(sol, "sol")

st.subheader("Memory workload")
_panel(D.metric_panel(data, launch, "memory", M.MEMORY_WORKLOAD), "memory")

st.subheader("Occupancy")
occ, limiter = D.occupancy(data, launch)
values = dict(zip(occ.frame[D.METRIC], occ.frame[D.VALUE]))
tiles = st.columns([1, 1, 3])  # room for a tie: "registers and shared memory"
OCCUPANCY_TILES = (("Theoretical (%)", M.THEORETICAL_OCCUPANCY_PCT),
                   ("Achieved (%)", M.WARPS_ACTIVE_PCT))
for tile, (title, name) in zip(tiles, OCCUPANCY_TILES):  # "—" fits a narrow tile; said below
    tile.metric(title, numbers.fmt(values[name], sig=3) if name in values else "—",
                help=name, border=True)
tiles[2].metric("Limited by", limiter[0] if limiter else "—", border=True,
                help="The resource that allows the fewest blocks per SM (launch__occupancy_limit_*)"
                + (f": {limiter[1]:g} blocks" if limiter else ""))
absent = [f"{title} ({code(name)})" for title, name in OCCUPANCY_TILES if name not in values]
absent += [f"Limited by ({code('launch__occupancy_limit_*')})"] if not limiter else []
if absent:
    st.caption("Not in this report, shown as —: " + ", ".join(absent) + ".")
_panel(occ, "occupancy")

st.subheader("Warp state stalls")
stalls = D.stalls(data, launch)
if not stalls.frame.empty:
    st.plotly_chart(build_bars(stalls.frame.head(12), D.REASON, D.CYCLES, "Where warps wait",
                               "cycles / issued instr."), key=state.key(PAGE, "stall-chart"))
_panel(stalls, "stalls")
pm_timeline.show(bundle, D.present(data, launch), launch)

st.subheader("Launch statistics")
_panel(D.metric_panel(data, launch, "launch", M.LAUNCH_STATISTICS), "launch")

st.subheader("Source hot spots")
_panel(D.table(data, "hot_spots", launch, "source"), "hot-spots")
markers = D.table(data, "markers", launch)
if not markers.frame.empty:
    st.caption("Source lines the rules point at")
    _panel(markers, "markers")

st.subheader("Rule results of this launch")
rules = D.table(data, "rules", launch)
_panel(rules if not rules.frame.empty else D.Panel(pd.DataFrame(), "No rule results for this "
       "launch (rules run only when sections were collected)."), "launch-rules")
if (box := panels.fold("Every section metric of this launch",
                       state.key(PAGE, "sections-open"))) is not None:
    with box:
        _panel(D.table(data, "sections", launch), "sections")
baselines.show(bundle.job_id, data, launch)
rule_digest.show(bundle, "deep-dive")
deep_dive_action.offer(bundle, "deep-dive", say_why=True)  # another point of the job

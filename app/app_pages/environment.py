"""What this machine can run (the worker's env report) and where the selected job ran."""

import pandas as pd
import streamlit as st

from profiling_worker.bundle.schema import columns as C

from app import settings
from app.core import frame_columns as F
from app.core.environment import environment_rows
from app.ui import cached, job_status, panels, state
from app.core.markdown import code, esc

PAGE = "environment"  # widget keys of this page: state.key(PAGE, field)

st.header("Environment")
report = cached.env_report()
st.subheader("This machine")
st.caption(f"Worker interpreter: {code(settings.worker_python())} · results: "
           f"{code(settings.results_dir())}")
if report.get("error"):
    st.error(esc(report["error"]), icon=":material/error:")
rows = [{F.BACKEND: name, F.CAN_RUN: bool(info.get("available")),
         C.REASON: info.get("reason") or "", F.FIX: info.get("fix") or ""}
        for name, info in cached.backend_reports().items()]
panels.table(pd.DataFrame(rows), key=state.key(PAGE, "backends"))
by_fix: dict[str, list[str]] = {}  # one warning per fix, naming its backends: the table
for name, info in cached.backend_reports().items():  # above already says each one's reason
    if not info.get("available"):
        by_fix.setdefault(info.get("fix") or "", []).append(f"**{esc(name)}**")
for fix, names in by_fix.items():
    st.warning(f"Cannot run here: {', '.join(names)} (the table says why)."
               + (f" Fix: {esc(fix)}" if fix else ""))
env = cached.environment()
can_run = [name for name, info in cached.backend_reports().items() if info.get("available")]
panels.table(pd.DataFrame(environment_rows(env, None, 0, can_run)),  # this machine: its first GPU
             key=state.key(PAGE, "here"))
st.button("Probe again", key=state.key(PAGE, "reprobe"), on_click=cached.reprobe_environment,
          icon=":material/refresh:", help="After installing ncu or a driver, ask the worker again")
if (box := panels.fold("Full report (JSON)", state.key(PAGE, "report-open"))) is not None:
    box.json(report, expanded=False)

st.subheader("Selected job")
bundle = cached.bundle_for(state.selected_job_id())
if bundle is None:
    st.info("No job selected.")
    panels.stop_page()
manifest = bundle.manifest
backend = {k: v for k, v in (manifest.get("backend") or {}).items() if k != "device_attributes"}
st.caption(f"Job {code(bundle.job_id)} · {esc(job_status.shown_status(bundle))} · durations: "
           f"{esc(bundle.measurement)}")
panels.pass_note(bundle)
panels.table(pd.DataFrame(environment_rows(manifest.get("environment") or {}, backend,
                                           bundle.gpu_index)),
             key=state.key(PAGE, "job"))
left, right = st.columns(2)
with left:
    st.markdown("**Provenance**")
    st.json(manifest.get("provenance") or {}, expanded=True)
with right:
    st.markdown("**Backend**")
    st.json(backend, expanded=True)
if (box := panels.fold("Recorded environment (JSON)",
                       state.key(PAGE, "recorded-open"))) is not None:
    box.json(manifest.get("environment") or {}, expanded=False)

"""Every bundle (this server's and the bundled ones): status, kernel, backend, date, GPU."""

import pandas as pd
import streamlit as st

from app.ui import cached, panels, state

st.header("History")
bundles, problems = cached.list_bundles()
if not bundles:
    st.info("No results yet. Submit a job from the sidebar.")
frame = pd.DataFrame([{
    "Job": b.job_id, "Status": b.status, "Kernels": ", ".join(b.kernels), "Backend": b.backend,
    "Created": b.created_at, "GPU": b.gpu_name, "Source": b.source, "Label": b.label,
} for b in bundles], columns=["Job", "Status", "Kernels", "Backend", "Created", "GPU", "Source",
                              "Label"])


def _open_selected(job_ids: list[str]) -> None:
    """Selection callback (runs before the rerun, so the sidebar selector may be changed)."""
    rows = st.session_state["history-table"]["selection"]["rows"]
    if rows:
        state.select_job(job_ids[rows[0]])


st.dataframe(frame, key="history-table", hide_index=True, width="stretch",
             on_select=lambda: _open_selected(frame["Job"].tolist()),
             selection_mode="single-row")
st.caption("Select a row to open that job on every page.")
panels.download_csv(frame, key="history-csv", filename="history.csv")

if problems:
    st.subheader("Directories that are not readable results")
    for problem in problems:
        st.warning(f"`{problem.path}`: {problem.reason}")

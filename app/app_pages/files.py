"""Every file of the selected bundle with its size and a download (read only on click)."""

import streamlit as st

from app.ui import cached, panels, state

st.header("Files")
bundle = cached.bundle_for(state.selected_job_id())
if bundle is None:
    panels.no_job_selected()
    st.stop()
panels.bundle_caption(bundle)
st.caption(f"Directory: `{bundle.path}`")

for i, item in enumerate(bundle.files):
    left, mid, right = st.columns([6, 2, 2], vertical_alignment="center")
    left.markdown(f"`{item.relpath}`")
    mid.caption(f"{item.size:,} bytes")
    right.download_button("Download", data=panels.read_lazily(bundle.path / item.relpath),
                          file_name=item.relpath.replace("/", "_"), key=f"files-download-{i}",
                          mime="application/octet-stream", on_click="ignore",
                          icon=":material/download:")

log = bundle.path / "worker.log"
if log.is_file():
    with st.expander("worker.log (last 200 lines)"):
        st.code("\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-200:]),
                language="text")

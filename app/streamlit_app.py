"""Entry point: ``streamlit run app/streamlit_app.py``.

Page config, the shared sidebar (job selector, job builder, job panel), the no-GPU banner and
``st.navigation`` over ``app/app_pages/``. The body is in :func:`run` so that tests and a
packaged launcher can import this module without drawing anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    _root = str(Path(__file__).resolve().parent.parent)
    if _root not in sys.path:
        sys.path.insert(0, _root)

import streamlit as st  # noqa: E402

PAGES_DIR = Path(__file__).resolve().parent / "app_pages"
NO_GPU_BANNER = ("No GPU here: showing results recorded on an NVIDIA H200 by this project's "
                 "worker")


def _pages() -> list[st.Page]:
    return [
        st.Page(PAGES_DIR / "sweep.py", title="Size sweep", icon=":material/show_chart:",
                default=True),  # the default page lives at the root URL
        st.Page(PAGES_DIR / "stability.py", title="Stability", icon=":material/bar_chart:",
                url_path="stability"),
        st.Page(PAGES_DIR / "cache_clock.py", title="Cache and clock control",
                icon=":material/tune:", url_path="cache-clock"),
        st.Page(PAGES_DIR / "bound_roofline.py", title="Bound and roofline",
                icon=":material/speed:", url_path="bound"),
        st.Page(PAGES_DIR / "memory.py", title="Memory and fusion", icon=":material/memory_alt:",
                url_path="memory"),
        st.Page(PAGES_DIR / "clocks_thermal.py", title="Clocks and thermal",
                icon=":material/thermostat:", url_path="clocks"),
        st.Page(PAGES_DIR / "kernels.py", title="Kernels", icon=":material/view_list:",
                url_path="kernels"),
        st.Page(PAGES_DIR / "one_kernel.py", title="One kernel",
                icon=":material/center_focus_strong:", url_path="one-kernel"),
        st.Page(PAGES_DIR / "compare.py", title="Compare jobs", icon=":material/compare_arrows:",
                url_path="compare"),
        st.Page(PAGES_DIR / "backends.py", title="CUPTI vs Nsight Compute",
                icon=":material/balance:", url_path="backends"),
        st.Page(PAGES_DIR / "results.py", title="Results tables", icon=":material/table:",
                url_path="results"),
        st.Page(PAGES_DIR / "files.py", title="Files", icon=":material/folder:", url_path="files"),
        st.Page(PAGES_DIR / "history.py", title="History", icon=":material/history:",
                url_path="history"),
        st.Page(PAGES_DIR / "import_files.py", title="Import", icon=":material/upload_file:",
                url_path="import"),
        st.Page(PAGES_DIR / "environment.py", title="Environment", icon=":material/memory:",
                url_path="environment"),
    ]


def run() -> None:
    """Draw the app frame and the selected page."""
    from app.services import worker_client
    from app.sidebar.job_builder import render_job_builder
    from app.sidebar.job_panel import render_job_panel
    from app.sidebar.job_selector import render_job_selector
    from app.ui import cached

    st.set_page_config(page_title="Kernel profiler", page_icon=":material/speed:", layout="wide")
    report = cached.env_report()
    gpu_here = worker_client.gpu_backend_available(report)
    page = st.navigation(_pages())
    bundles, _problems = cached.list_bundles()
    with st.sidebar:
        render_job_selector(bundles, gpu_here)
        st.subheader("New job")
        render_job_builder(worker_client.best_backend(report))
        st.subheader("Jobs")
        render_job_panel(cached.job_manager())
    if not gpu_here:
        st.info(NO_GPU_BANNER, icon=":material/info:")
    page.run()


if __name__ == "__main__":
    run()

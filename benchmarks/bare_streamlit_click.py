"""The bare two-page Streamlit app a dashboard click is measured against (benchmarks/page_speed.py).

Issue 40 asks for a click (a link to another chart page, from the click event to that page's
chart drawn) within 200 ms. This app is what any Streamlit app pays for the same click: two
pages, each a link to the other (``st.page_link``, as the dashboard's link bar) and one plotly
chart with its table, read from the bundled h200-ncu-matmul-sweep job's tables; no sidebar, no
project code. "Time vs n" is :mod:`bare_streamlit_page`'s chart; "Run-to-run spread" draws every
run's duration per config and annotation, as the dashboard's Stability page does.
"""

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bare_streamlit_page import time_vs_n  # the script's folder is on sys.path

TABLES = Path(__file__).resolve().parents[1] / "app" / "bundled" / "h200-ncu-matmul-sweep" / "tables"
DURATION = "gpu__time_duration.sum"


def sweep() -> None:
    """Mean duration vs n per annotation, CI95 error bars, log axes, and its table."""
    st.page_link(spread, label="Run-to-run spread")
    table = pd.read_parquet(TABLES / "aggregated.parquet")
    table = table[table["Metric"] == DURATION]
    st.plotly_chart(time_vs_n(table), width="stretch", theme="streamlit")
    st.dataframe(table, hide_index=True, width="stretch")


def stability() -> None:
    """Every run's duration (µs) per config, one box per annotation and n, and its table."""
    st.page_link(size_sweep, label="Size sweep")
    runs = pd.read_parquet(TABLES / "runs.parquet")
    runs = runs[runs["Metric"] == DURATION]
    fig = go.Figure()
    for annotation, group in runs.groupby("Annotation", sort=False):
        fig.add_trace(go.Box(x=group["n"].astype(str), y=group["Value"] / 1e3,
                             name=str(annotation), boxpoints="all"))
    fig.update_layout(title="Run-to-run spread", boxmode="group")
    fig.update_yaxes(type="log", title="Time (µs)")
    st.plotly_chart(fig, width="stretch", theme="streamlit")
    st.dataframe(runs, hide_index=True, width="stretch")


st.set_page_config(page_title="bare", layout="wide")
size_sweep = st.Page(sweep, title="Size sweep", url_path="", default=True)
spread = st.Page(stability, title="Stability", url_path="stability")
st.navigation([size_sweep, spread], position="hidden").run()

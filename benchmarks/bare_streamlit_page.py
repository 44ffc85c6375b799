"""The bare Streamlit page the dashboard is measured against (benchmarks/page_speed.py).

It reads the same parquet table as the dashboard's default view (the aggregated table of the
bundled h200-ncu-matmul-sweep job), draws the same plotly chart (mean duration vs n per
annotation, CI95 error bars, log y) and its table, and nothing else: no sidebar, no navigation,
no project code.
"""

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

TABLE = (Path(__file__).resolve().parents[1] / "app" / "bundled" / "h200-ncu-matmul-sweep"
         / "tables" / "aggregated.parquet")


def time_vs_n(table: pd.DataFrame) -> go.Figure:
    """Mean duration (µs) vs n per annotation of the aggregated ``table``'s duration rows, CI95
    error bars, log axes: the chart of this page (and of ``bare_streamlit_click.py``)."""
    fig = go.Figure()
    for annotation, group in table.groupby("Annotation", sort=False):
        avg = group["AvgValue"] / 1e3
        fig.add_trace(go.Scatter(
            x=group["n"], y=avg, mode="lines+markers", name=str(annotation),
            error_y={"type": "data", "symmetric": False, "array": group["CI95_Upper"] / 1e3 - avg,
                     "arrayminus": avg - group["CI95_Lower"] / 1e3}))
    fig.update_xaxes(type="log", title="n")
    fig.update_yaxes(type="log", title="Time (µs)")
    fig.update_layout(title="Time vs n")
    return fig


if __name__ == "__main__":  # streamlit run; imported by bare_streamlit_click.py for the figure
    st.set_page_config(page_title="bare", layout="wide")
    st.header("Size sweep")
    table = pd.read_parquet(TABLE)
    table = table[table["Metric"] == "gpu__time_duration.sum"]
    st.plotly_chart(time_vs_n(table), width="stretch", theme="streamlit")
    st.dataframe(table, hide_index=True, width="stretch")

"""A bare four-page Streamlit app drawing the dashboard's own figures (issue 40's click).

``python benchmarks/click_cpu.py this=. bare4=benchmarks/bare_figures_app --rounds 5 --json F``
pairs the dashboard's clicks with this app's: the same four URLs (the Size sweep, Stability,
Kernels, One kernel), each page its four links, the dashboard's figure of that page for
h200-ncu-matmul-sweep (plotly JSON dumped from the dashboard at its default controls, in
``figures/``, same theme and config) and a table; no sidebar, no controls, no project code. So
what the dashboard adds to a click beyond its charts is the difference (session 17).
"""

from pathlib import Path

import pandas as pd
import plotly.io as pio
import streamlit as st

HERE = Path(__file__).resolve().parents[1]
TABLES = HERE.parents[1] / "app" / "bundled" / "h200-ncu-matmul-sweep" / "tables"
CONFIG = {"displaylogo": False,
          "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "x"}}


def page(figure: str, table: str):  # type: ignore[no-untyped-def]
    """A page: the links, the figure ``figures/<figure>`` and the first 200 rows of ``table``."""
    def draw() -> None:
        for p in PAGES:
            st.page_link(p)
        st.plotly_chart(pio.from_json((HERE / "figures" / figure).read_text(), skip_invalid=True),
                        width="stretch", theme="streamlit", config=CONFIG)
        st.dataframe(pd.read_parquet(TABLES / table).head(200), hide_index=True, width="stretch")
    return draw


st.set_page_config(page_title="bare", layout="wide")
PAGES = [st.Page(page("fig_sweep.json", "aggregated.parquet"), title="Size sweep", default=True),
         st.Page(page("fig_stab.json", "aggregated.parquet"), title="Stability",
                 url_path="stability"),
         st.Page(page("fig_kern.json", "runs.parquet"), title="Kernels", url_path="kernels"),
         st.Page(page("fig_one.json", "runs.parquet"), title="One kernel", url_path="one-kernel")]
st.navigation(PAGES, position="hidden").run()

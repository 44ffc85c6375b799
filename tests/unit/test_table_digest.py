"""The content key of a prepared table (app.ui.panels.frame_digest, issue 40)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.ui.panels import frame_digest


def test_equal_frames_built_apart_share_a_digest() -> None:
    def build() -> pd.DataFrame:
        return pd.DataFrame({"Kernel": ["gemm", "axpy"], "Duration": [1.5, np.nan]})

    assert frame_digest(build()) == frame_digest(build())


def test_what_a_table_shows_differently_changes_the_digest() -> None:
    """pandas' hash_pandas_object (Streamlit's cache key) writes None and "None", 1 and "1"
    alike in an object column; the table shows them differently ("—" vs "None")."""
    base = pd.DataFrame({"a": ["x", None], "b": [1.0, 2.0]})
    others = [pd.DataFrame({"a": ["x", "None"], "b": [1.0, 2.0]}),
              pd.DataFrame({"a": ["x", 1], "b": [1.0, 2.0]}).astype({"a": object}),
              pd.DataFrame({"a": ["x", None], "c": [1.0, 2.0]}),
              pd.DataFrame({"a": ["x", None], "b": [1, 2]}),
              pd.DataFrame({"a": ["x", None], "b": [1.0, 2.5]})]
    one = pd.DataFrame({"a": ["x", 1], "b": [1.0, 2.0]}).astype({"a": object})
    text = pd.DataFrame({"a": ["x", "1"], "b": [1.0, 2.0]}).astype({"a": object})
    assert frame_digest(one) != frame_digest(text)
    assert len({frame_digest(f) for f in [base, *others]}) == 1 + len(others)

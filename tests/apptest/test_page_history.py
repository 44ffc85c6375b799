"""History page: every bundle with status, kernel, backend; broken dirs flagged."""

from __future__ import annotations

import json

import pandas as pd

from apptest_helpers import texts


def test_history_lists_bundles_and_problems(seeded, app) -> None:
    (seeded["results"] / "half-written").mkdir()
    at = app("history")
    assert not at.exception
    frame = at.dataframe[0].value
    assert frame["Job"].tolist() == ["20261129-230000-matmul-0001"]
    row = frame.iloc[0]
    assert (row["Status"], row["Kernels"], row["Backend"]) == ("done", "matmul", "cpu")
    assert "half-written" in texts(at) and "no manifest.json" in texts(at)
    # issue 37: Created was the raw ISO text; now a UTC datetime (sortable) shown as such
    created = row["Created"]
    assert isinstance(created, pd.Timestamp) and str(created.tz) == "UTC"
    manifest = json.loads((seeded["results"] / row["Job"] / "manifest.json").read_text("utf-8"))
    assert created == pd.Timestamp(manifest["created_at"])
    config = json.loads(at.dataframe[0].proto.columns)["Created"]
    assert config["type_config"]["format"] == "YYYY-MM-DD HH:mm:ss [UTC]", config

"""History page: every bundle with status, kernel, backend; broken dirs flagged."""

from __future__ import annotations

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

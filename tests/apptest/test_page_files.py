"""Files page: every bundle file with its size and a lazy download."""

from __future__ import annotations

from apptest_helpers import texts


def test_every_file_listed_with_download(seeded, app) -> None:
    at = app("files")
    assert not at.exception
    text = texts(at)
    for name in ("manifest.json", "spec.json", "events.jsonl", "tables/runs.parquet",
                 "tables/aggregated.csv"):
        assert f"`{name}`" in text
    files = [m.value for m in at.markdown if m.value.startswith("`")]
    assert len(at.get("download_button")) == len(files)
    assert "bytes" in text

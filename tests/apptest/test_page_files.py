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
    assert len(at.get("download_button")) == len(files) + 1  # + the whole bundle as a zip
    assert "bytes" in text
    assert "Download the whole bundle (zip" in at.get("download_button")[0].proto.label


def test_ncu_bundle_offers_ncu_rep_and_summary(store, monkeypatch, app) -> None:
    from pathlib import Path

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(Path(__file__).resolve().parents[2] / "app" / "bundled"))
    at = app("files", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("Download .ncu-rep") == 1
    assert ".ncu-rep summary" in [h.value for h in at.subheader]
    overview, kernels = (d.value for d in at.dataframe)
    assert dict(zip(overview["Item"], overview["Value"]))["Launches"] == "160"
    assert len(kernels) == 13 and kernels["Launches"].sum() == 160
    assert "Rule results: none" in texts(at)

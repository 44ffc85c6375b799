"""Results page: the aggregated, per-run and work tables of the selected job, with CSVs."""

from __future__ import annotations

from apptest_helpers import open_folds, texts

from app.core import derived


def test_tables_and_downloads(seeded, app) -> None:
    at = app("results")
    assert not at.exception
    assert len(at.get("download_button")) == 3  # the run audit's table and CSV: in its fold
    assert [len(df.value) for df in at.dataframe] == [6, 18, 6]  # aggregated, runs, work
    frames = [df.value for df in open_folds(at).dataframe]
    assert [len(f) for f in frames][:4] == [6, 18, 6, 6]  # and the run audit, once opened
    assert {"AvgValue", "CI95_Lower", "CI95_Upper"} <= set(frames[0].columns)
    assert len(at.get("download_button")) == 4
    assert "host wall-clock, not GPU" in texts(at)
    captions = [c.value for c in at.caption if "per annotation × config" in c.value]
    times = f"times in {derived.DEFAULT_TIME_UNIT}"  # as every other page (issue 37), not ns
    assert len(captions) == 3 and times in captions[0] and times in captions[1]
    assert "times in" not in captions[2] and "FLOPs and bytes" in captions[2]  # no times there
    assert {"ns"} & set(frames[0]["Unit"]) == set() and derived.DEFAULT_TIME_UNIT in set(
        frames[0]["Unit"])
    # issue 37: the CI95 columns say how they differ from nsight-python's (Student-t vs 1.96)
    assert "Student-t CI95" in captions[0] and "use 1.96·s/√n" in captions[0]


def test_no_job(store, app) -> None:
    at = app("results")
    assert not at.exception and "No job selected" in texts(at)

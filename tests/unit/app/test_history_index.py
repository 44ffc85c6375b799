"""The SQLite history index on real bundles: sync (incremental), filters, tags, delete."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from app.services import history_index as H
from app.services import result_store
from profiling_worker.bundle.schema.manifest import read_manifest, write_manifest
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def dirs(tmp_path: Path, cpu_bundle_src: Path) -> dict[str, Path]:
    results, bundled = tmp_path / "results", tmp_path / "bundled"
    shutil.copytree(cpu_bundle_src, results / "job-a")
    for name in ("h200-ncu-j1-fp16", "h200-cupti-elementwise"):
        shutil.copytree(SCENARIOS / name, bundled / name)
    return {"results": results, "bundled": bundled}


def test_sync_indexes_both_roots_in_wal_mode(dirs) -> None:
    got = H.sync(dirs["results"], dirs["bundled"])
    assert sorted(got.added) == ["h200-cupti-elementwise", "h200-ncu-j1-fp16", "job-a"]
    conn = sqlite3.connect(H.index_path(dirs["results"]))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    rows = {r.job_id: r for r in H.rows(dirs["results"])}
    a, j1 = rows["job-a"], rows["h200-ncu-j1-fp16"]
    assert (a.source, a.backend, a.status, a.kernels) == ("local", "cpu", "done", ("matmul",))
    assert len(a.spec_hash) == 16
    assert (j1.source, j1.gpu, j1.backend) == ("bundled", "NVIDIA H200", "ncu")


def test_sync_is_incremental_by_manifest_stamp(dirs, monkeypatch) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    calls: list[str] = []
    real = result_store.read_info
    monkeypatch.setattr(result_store, "read_info",
                        lambda p, s: calls.append(p.name) or real(p, s))
    assert H.sync(dirs["results"], dirs["bundled"]).added == [] and calls == []
    bundle = dirs["results"] / "job-a"
    before = (bundle / "manifest.json").stat()
    data = read_manifest(bundle)
    data["status"] = "failed"
    write_manifest(bundle, data)
    # the second write within one tick of a coarse clock (1 s on some NFS servers)
    os.utime(bundle / "manifest.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    got = H.sync(dirs["results"], dirs["bundled"])
    assert got.updated == ["job-a"] and calls == ["job-a"]
    assert H.rows(dirs["results"], H.HistoryFilter(statuses=("failed",)))[0].job_id == "job-a"


def test_an_index_of_the_mtime_schema_is_rebuilt_with_its_tags(dirs) -> None:
    dirs["results"].mkdir(exist_ok=True)
    conn = sqlite3.connect(H.index_path(dirs["results"]))
    conn.executescript(_SCHEMA_1)
    conn.execute("INSERT INTO bundles VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 ("job-a", "local", str(dirs["results"] / "job-a"), "[]", "", "cpu", "",
                  "done", "", "", 1.0))
    conn.execute("INSERT INTO tags VALUES ('job-a', 'baseline')")
    conn.commit()
    conn.close()
    assert sorted(H.sync(dirs["results"], dirs["bundled"]).added) == [
        "h200-cupti-elementwise", "h200-ncu-j1-fp16", "job-a"]
    rows = {r.job_id: r for r in H.rows(dirs["results"])}
    assert rows["job-a"].kernels == ("matmul",) and rows["job-a"].tags == ("baseline",)


#: The index as written before SCHEMA_VERSION 2 (its cache key the manifest's mtime in s).
_SCHEMA_1 = """
CREATE TABLE bundles (
    job_id TEXT PRIMARY KEY, source TEXT NOT NULL, path TEXT NOT NULL, kernels TEXT NOT NULL,
    gpu TEXT NOT NULL, backend TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL,
    spec_hash TEXT NOT NULL, label TEXT NOT NULL, mtime REAL NOT NULL);
CREATE TABLE tags (job_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (job_id, tag));
"""


def test_filters_and_text_search(dirs) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    ids = lambda **kw: [r.job_id for r in H.rows(dirs["results"], H.HistoryFilter(**kw))]
    assert ids(backends=("cpu",)) == ["job-a"]
    assert sorted(ids(gpus=("NVIDIA H200",))) == ["h200-cupti-elementwise", "h200-ncu-j1-fp16"]
    assert sorted(ids(kernels=("matmul",))) == ["h200-ncu-j1-fp16", "job-a"]
    assert ids(kernels=("matmul",), backends=("cpu",)) == ["job-a"]
    assert ids(text="J1 h200") == ["h200-ncu-j1-fp16"]
    assert ids(text="no such thing") == []
    facets = H.facets(H.rows(dirs["results"]))
    assert "cpu" in facets["backends"] and "NVIDIA H200" in facets["gpus"]


def test_tags_live_in_the_index_and_filter(dirs) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    before = sorted(p.name for p in (dirs["bundled"] / "h200-ncu-j1-fp16").rglob("*"))
    H.add_tag(dirs["results"], "h200-ncu-j1-fp16", "baseline")
    H.add_tag(dirs["results"], "job-a", "baseline")
    H.add_tag(dirs["results"], "job-a", "cpu smoke")
    assert sorted(p.name for p in (dirs["bundled"] / "h200-ncu-j1-fp16").rglob("*")) == before
    tagged = H.rows(dirs["results"], H.HistoryFilter(tags=("cpu smoke",)))
    assert [(r.job_id, r.tags) for r in tagged] == [("job-a", ("baseline", "cpu smoke"))]
    H.remove_tag(dirs["results"], "job-a", "baseline")
    assert H.rows(dirs["results"], H.HistoryFilter(text="job-a"))[0].tags == ("cpu smoke",)
    H.sync(dirs["results"], dirs["bundled"])  # a sync keeps tags
    assert H.rows(dirs["results"], H.HistoryFilter(tags=("baseline",)))[0].job_id == \
        "h200-ncu-j1-fp16"


@pytest.mark.parametrize("tag", ["", " ", "x" * 41, "a;drop", "<b>"])
def test_bad_tags_are_refused(dirs, tag) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    with pytest.raises(H.InvalidTag):
        H.add_tag(dirs["results"], "job-a", tag)


def test_tag_of_unknown_job_is_refused(dirs) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    with pytest.raises(KeyError):
        H.add_tag(dirs["results"], "nope", "x")


def test_delete_removes_local_bundle_row_and_tags_only(dirs) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    H.add_tag(dirs["results"], "job-a", "old")
    with pytest.raises(H.NotDeletable, match="read-only"):
        H.delete(dirs["results"], "h200-ncu-j1-fp16")
    assert (dirs["bundled"] / "h200-ncu-j1-fp16" / "manifest.json").is_file()
    H.delete(dirs["results"], "job-a")
    assert not (dirs["results"] / "job-a").exists()
    assert [r.job_id for r in H.rows(dirs["results"]) if r.job_id == "job-a"] == []
    with pytest.raises(H.NotDeletable):
        H.delete(dirs["results"], "job-a")


def test_running_job_is_not_deleted(dirs) -> None:
    manifest = dirs["results"] / "job-a" / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "status": "running"}))
    H.sync(dirs["results"], dirs["bundled"])
    with pytest.raises(H.NotDeletable, match="running"):
        H.delete(dirs["results"], "job-a")
    assert manifest.is_file()


def test_removed_and_broken_directories(dirs) -> None:
    H.sync(dirs["results"], dirs["bundled"])
    H.add_tag(dirs["results"], "job-a", "t")
    shutil.rmtree(dirs["results"] / "job-a")
    (dirs["results"] / "half-written").mkdir()
    got = H.sync(dirs["results"], dirs["bundled"])
    assert got.removed == ["job-a"]
    assert [p.path.name for p in got.problems] == ["half-written"]
    with H.connect(dirs["results"]) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tags").fetchone()[0] == 0


def test_unsafe_ids_never_escape_the_results_dir(dirs, tmp_path) -> None:
    with pytest.raises(result_store.InvalidJobId):
        result_store.delete_bundle(dirs["results"], "../bundled")
    with pytest.raises(FileNotFoundError):
        result_store.delete_bundle(dirs["results"], "h200-ncu-j1-fp16")


def test_a_bundle_zip_among_the_job_folders_is_said_with_what_reopens_it(dirs) -> None:
    """A fresh user's find: the Files page's zip copied into the results (or bundled) folder was
    skipped without a word, as any file is. It is no job until reopened, so it is listed as a
    problem saying so and what reopens it (into the results folder); other zips and files are
    not the store's business. The index and the listing (History's fallback) say the same."""
    from app.core.bundle_files import zip_bundle
    from tests.scenarios import scenario

    here, there = dirs["results"] / "shared.zip", dirs["bundled"] / "h200-cupti-gate-base.zip"
    here.write_bytes(zip_bundle(scenario("h200-cupti-gate-base")).read())
    there.write_bytes(here.read_bytes())
    (dirs["results"] / "empty.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # a zip, no bundle
    (dirs["results"] / "readme.txt").write_text("notes")
    got = H.sync(dirs["results"], dirs["bundled"])
    listed, problems = result_store.list_bundles(dirs["results"], dirs["bundled"])
    for said in (got.problems, problems):
        assert [p.path for p in said] == [here, there]
        assert all(p.reason.startswith("a dashboard bundle's zip (the Files page's download), "
                                       "not a job's folder: the results list job folders only. "
                                       "Reopen it as its job on the Import page, or: python -m "
                                       "profiling_worker import ") for p in said)
        assert said[0].reason.endswith(f"import {here} --out {dirs['results'] / 'shared'}; then "
                                       "remove the zip from here")
        assert f"--out {dirs['results'] / 'h200-cupti-gate-base'};" in said[1].reason
    assert "h200-cupti-gate-base" not in {b.job_id for b in listed}
    assert sorted(r.job_id for r in H.rows(dirs["results"])) == sorted(b.job_id for b in listed)

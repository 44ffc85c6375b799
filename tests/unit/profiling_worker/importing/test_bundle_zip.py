"""A job shared as the Files page's zip is reopened as the job it is (``import`` of a bundle zip),
and a zip that could write outside its folder, a link, a bomb or a broken manifest is refused
before anything is kept."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from app.core.bundle_files import made_csvs, table_csv_file, zip_bundle
from app.services import import_client
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.importing import bundle_zip
from profiling_worker.importing.sniff import upload_refusal
from tests.scenarios import scenario

REPO = Path(__file__).resolve().parents[4]
JOB = "h200-cupti-elementwise"


def _files_page_zip(tmp_path: Path, name: str = JOB) -> Path:
    """The zip the Files page's "Download the whole bundle" gives (its own function)."""
    out = tmp_path / f"{name}.zip"
    out.write_bytes(zip_bundle(scenario(name)).read())
    return out


def _import(zip_path: Path, results: Path, reserved: list[Path] | None = None) -> dict:
    return bundle_zip.import_bundle_zip(zip_path, results, reserved=reserved or [])


def _left(results: Path) -> list[str]:
    return sorted(p.name for p in results.iterdir()) if results.exists() else []


def test_round_trip_the_job_loads_with_the_same_tables(tmp_path) -> None:
    zipped = _files_page_zip(tmp_path)
    event = _import(zipped, tmp_path / "results")
    assert event["event"] == "result" and event["note"] == ""
    assert Path(event["bundle"]) == tmp_path / "results" / JOB
    got, want = load_bundle(event["bundle"]), scenario(JOB)
    assert got.job_id == JOB and got.manifest["job_id"] == JOB
    assert got.manifest["reopened"]["zip"] == zipped.name
    for name in (*C.TABLES, *C.OPTIONAL_TABLES):
        pd.testing.assert_frame_equal(got.table(name), want.table(name))
    # the bundle holds Parquet tables only (as a bundle written since issue 40): the zip adds
    # each table's CSV, made from its Parquet file, and the reopened job keeps them as files
    made = made_csvs(want)
    assert made and all(f.relpath.endswith(".parquet") for f in want.files
                        if f.relpath.startswith(f"{C.TABLES_DIR}/"))
    assert {f.relpath for f in got.files} == {f.relpath for f in want.files} | set(made)
    for relpath in made:
        with table_csv_file(want.path, relpath) as csv:
            assert (got.path / relpath).read_bytes() == csv.read()
    assert made_csvs(got) == []
    assert got.spec_json == want.spec_json


def test_a_table_that_cannot_be_read_has_no_csv_in_the_zip_and_the_others_have(
        tmp_path) -> None:
    src = tmp_path / JOB
    shutil.copytree(scenario(JOB).path, src)
    (src / C.TABLES_DIR / "runs.parquet").write_bytes(b"not parquet")
    with zipfile.ZipFile(zip_bundle(load_bundle(src))) as archive:
        names = set(archive.namelist())
    assert f"{JOB}/tables/runs.parquet" in names and f"{JOB}/tables/runs.csv" not in names
    assert f"{JOB}/tables/aggregated.csv" in names


def test_a_zip_with_the_manifest_at_its_root_is_a_bundle_too(tmp_path) -> None:
    src = scenario(JOB)
    flat = tmp_path / "flat.zip"
    with zipfile.ZipFile(flat, "w") as zf:
        for f in src.files:
            zf.write(src.path / f.relpath, f.relpath)
    event = _import(flat, tmp_path / "results")
    assert event["event"] == "result" and load_bundle(event["bundle"]).job_id == JOB


def test_an_id_taken_by_a_different_job_gets_a_suffix_said_in_the_note(tmp_path) -> None:
    results = tmp_path / "results"
    other = results / JOB
    other.mkdir(parents=True)
    (other / C.MANIFEST_FILE).write_text(json.dumps(
        {"schema_version": 1, "job_id": JOB, "status": "done", "note": "another job"}))
    event = _import(_files_page_zip(tmp_path), results)
    assert event["event"] == "result" and Path(event["bundle"]).name == f"{JOB}-2"
    assert "taken on this dashboard by a different job" in event["note"]
    assert f"imported as {JOB}-2" in event["note"]
    assert load_bundle(event["bundle"]).manifest["job_id"] == f"{JOB}-2"
    assert json.loads((other / C.MANIFEST_FILE).read_text())["note"] == "another job"


def test_the_same_job_already_here_is_not_imported_twice(tmp_path) -> None:
    zipped, results = _files_page_zip(tmp_path), tmp_path / "results"
    first = _import(zipped, results)
    again = _import(zipped, results)
    assert again["event"] == "result" and again["bundle"] == first["bundle"]
    assert "already on this dashboard" in again["note"] and _left(results) == [JOB]
    bundled = scenario(JOB).path  # a bundled job of that id: shown, nothing copied
    shown = _import(zipped, tmp_path / "other", reserved=[bundled])
    assert Path(shown["bundle"]) == bundled and _left(tmp_path / "other") == []


def _zip_with(tmp_path: Path, extra: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    """The Files page's zip of the job with ``extra`` entries appended."""
    out = _files_page_zip(tmp_path)
    with zipfile.ZipFile(out, "a") as zf:
        for info, data in extra:
            zf.writestr(info, data)
    return out


def _deflated(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _refused(event: dict, words: str, results: Path) -> None:
    assert event["event"] == "error", event
    assert words in event["message"], event["message"]
    assert event["hint"]
    assert _left(results) == [], "a refused zip leaves nothing, not even its temporary folder"


@pytest.mark.parametrize("entry", [f"{JOB}/../../evil.txt", "/etc/evil", f"{JOB}\\..\\evil",
                                   "C:/evil.txt", "../evil.txt"])
def test_a_zip_slip_entry_is_refused(tmp_path, entry) -> None:
    results = tmp_path / "results"
    event = _import(_zip_with(tmp_path, [(entry, b"x")]), results)
    _refused(event, "leads out of the folder", results)
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path.parent / "evil.txt").exists()


def test_a_symlink_entry_is_refused(tmp_path) -> None:
    link = zipfile.ZipInfo(f"{JOB}/tables/linked.csv")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    results = tmp_path / "results"
    event = _import(_zip_with(tmp_path, [(link, b"/etc/passwd")]), results)
    _refused(event, "a symbolic link", results)


def test_an_entry_beside_the_bundle_folder_is_refused(tmp_path) -> None:
    results = tmp_path / "results"
    event = _import(_zip_with(tmp_path, [("elsewhere/x.txt", b"x")]), results)
    _refused(event, "outside the bundle's folder", results)


def test_a_bomb_is_refused_by_its_declared_size(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bundle_zip, "inflate_cap", lambda path: 4 * 1024**2)
    results = tmp_path / "results"
    bomb = _zip_with(tmp_path, [(_deflated(f"{JOB}/nsight/zeros.bin"), b"\0" * (5 << 20))])
    assert bomb.stat().st_size < 1024**2  # 5 MiB of zeros deflate to a few kB
    _refused(_import(bomb, results), "expands to more than 4 MiB", results)


def test_a_bomb_that_lies_about_its_size_stops_at_the_cap(tmp_path, monkeypatch) -> None:
    """The sizes a zip declares are not trusted: the bytes written are counted."""
    monkeypatch.setattr(bundle_zip, "inflate_cap", lambda path: 4 * 1024**2)
    monkeypatch.setattr(bundle_zip, "check_entries", lambda *a: None)  # as if it declared 0
    results = tmp_path / "results"
    bomb = _zip_with(tmp_path, [(_deflated(f"{JOB}/nsight/zeros.bin"), b"\0" * (5 << 20))])
    _refused(_import(bomb, results), "expands to more than 4 MiB", results)


def test_the_cap_is_the_gzip_bomb_cap() -> None:
    from profiling_worker.bundle import inflate

    assert bundle_zip.inflate_cap is inflate.inflate_cap


@pytest.mark.parametrize("manifest, words", [
    (b"{not json", "manifest.json is not valid"),
    (json.dumps({"job_id": JOB}).encode(), "lacks schema_version, job_id, status"),
    (json.dumps({"schema_version": 1, "job_id": JOB, "status": "exploded"}).encode(),
     "unknown status"),
])
def test_a_zip_with_a_broken_manifest_is_refused(tmp_path, manifest, words) -> None:
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(_files_page_zip(tmp_path)) as src, zipfile.ZipFile(broken, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, manifest if info.filename == f"{JOB}/manifest.json"
                         else src.read(info))
    results = tmp_path / "results"
    _refused(_import(broken, results), words, results)


def test_a_job_id_that_is_a_path_is_refused(tmp_path) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("manifest.json", json.dumps(
            {"schema_version": 1, "job_id": "../../escape", "status": "done"}))
    results = tmp_path / "results"
    _refused(_import(bad, results), "not a plain folder name", results)


def test_a_zip_that_is_no_bundle_keeps_its_refusal(tmp_path) -> None:
    plain = tmp_path / "csvs.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr("profiled_data-x.csv", "a,b\n1,2\n")
        zf.writestr("deep/er/manifest.json", "{}")  # two folders deep: not the Files page's
    assert bundle_zip.bundle_root(plain) is None
    why = upload_refusal(plain.name, plain.read_bytes())
    assert why is not None and why.what.startswith("a zip archive")
    assert "unzip FILE" in why.fix


def test_an_upload_of_a_bundle_zip_is_taken_and_saved_as_zip(tmp_path) -> None:
    data = _files_page_zip(tmp_path).read_bytes()
    assert upload_refusal(f"{JOB}.zip", data) is None
    (tmp_path / "up").mkdir()
    saved, rejected = import_client.save_uploads([(f"{JOB}.zip", data)], tmp_path / "up")
    assert not rejected and [p.name for p in saved] == [f"{JOB}.zip"]
    with pytest.raises(import_client.UploadRejected, match="dashboard bundle \\(zip\\) of"):
        import_client._checked_name(f"{JOB}.zip", data, max_mb=0)  # the upload limit holds


def test_the_cli_reopens_a_bundle_zip_beside_other_files(tmp_path) -> None:
    zipped = _files_page_zip(tmp_path)
    results, bundled = tmp_path / "results", tmp_path / "bundled"
    bundled.mkdir()
    raw = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "raw.csv"
    env = {**os.environ, "KPROF_BUNDLED_DIR": str(bundled), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(zipped),
                           str(raw), "--out", str(results / "import-x"), "--each"],
                          capture_output=True, text=True, env=env, check=False, cwd=REPO)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [(e["event"], Path(e["bundle"]).name) for e in events] == [
        ("result", JOB), ("result", "import-x")]


def test_a_folders_bundle_zip_is_reopened_not_left_out_as_no_bundle(tmp_path) -> None:
    """A fresh user's find: ``import DIR`` left a bundle zip of the folder out as "a zip archive
    with no manifest.json at its root or one folder deep", which it has. The folder's bundle
    zips are reopened as their jobs, as when each is named; the folder's other files make their
    own import, which notes the zip as reopened; a folder of bundle zips alone is no import."""
    from profiling_worker.importing.sniff import gather

    folder = tmp_path / "shared"
    folder.mkdir()
    zipped = _files_page_zip(folder)
    raw = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "raw.csv"
    assert bundle_zip.split_sources([folder]) == ([zipped], [])
    (folder / "raw.csv").write_bytes(raw.read_bytes())
    assert bundle_zip.split_sources([folder]) == ([zipped], [folder])
    found, left = gather([folder])
    assert [s.path.name for s in found] == ["raw.csv"]
    assert left == [f"{JOB}.zip: a dashboard bundle (zip), reopened as its own job"]


def test_the_cli_reopens_the_bundle_zip_of_a_folder(tmp_path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    _files_page_zip(folder)
    (folder / "raw.csv").write_bytes(
        (REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "raw.csv").read_bytes())
    results, bundled = tmp_path / "results", tmp_path / "bundled"
    bundled.mkdir()
    env = {**os.environ, "KPROF_BUNDLED_DIR": str(bundled), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(folder),
                           "--out", str(results / "import-x"), "--each"],
                          capture_output=True, text=True, env=env, check=False, cwd=REPO)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [(e["event"], Path(e["bundle"]).name) for e in events] == [
        ("result", JOB), ("result", "import-x")]
    assert load_bundle(results / JOB).job_id == JOB

"""Uploaded files -> worker import -> bundle: names, limits, argv, outcomes (real worker)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import settings
from profiling_worker.bundle.loader import load_bundle
from app.services import import_client as I
from app.services import result_store
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS, scenario_report

REPO = Path(__file__).resolve().parents[3]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul"
V11 = SCENARIOS / "h200-cupti-elementwise" / "nsight" / "c0"
REPORT_GZ = scenario_report("h200-ncu-j1-fp16")
#: A real nsight-python CSV (0.9.6): content the importer takes, whatever the test's name.
CSV = next(iter(sorted(REF.glob("*.csv")))).read_bytes()


@pytest.mark.parametrize("name, want", [
    ("profiled_data-mm-0.csv", "profiled_data-mm-0.csv"),
    ("../../etc/x.csv", "x.csv"),
    ("C:\\Users\\me\\a b.ncu-rep", "a_b.ncu-rep"),
    (".hidden.ncu-rep.gz", "hidden.ncu-rep.gz"),
    ("r$(rm -rf).csv", "r_rm_-rf_.csv"),
    ("profiled.data.v2.csv", "profiled.data.v2.csv"),  # dotted: the dots stay
    ("...profiled_data-x-0.csv", "profiled_data-x-0.csv"),  # never a hidden file
    ("..csv", "upload.csv"),
    ("données résumé 日本語.csv", "données_résumé_日本語.csv"),  # unicode letters stay
    ("CON.csv", "CON_.csv"),  # a reserved Windows name
])
def test_safe_name(name: str, want: str) -> None:
    assert I.safe_name(name) == want


@pytest.mark.parametrize("name", ["a" * 302 + ".csv", "." + "b" * 202 + ".csv",
                                  "x." * 150 + "ncu-rep.gz", "é" * 300 + ".ncu-rep"])
def test_long_names_are_cut_keeping_the_extension(name: str, tmp_path: Path) -> None:
    """A 306-character name was an error and a 206-character one became a hidden file."""
    clean = I.safe_name(name)
    assert len(clean.encode()) <= I.MAX_NAME_BYTES and not clean.startswith(".")
    assert clean.lower().endswith(next(e for e in I.NAME_EXTENSIONS if name.endswith(e)))
    data = REPORT_GZ.read_bytes() if name.endswith(".gz") else CSV  # a .gz holds gzip
    (path,), rejected = I.save_uploads([(name, data)], tmp_path)
    assert rejected == []
    assert path.name == clean and path.read_bytes() == data


@pytest.mark.parametrize("name", ["evil.py", "data.pkl", "x.csv.gz", "report", "a.sh"])
def test_other_files_are_refused(name: str) -> None:
    with pytest.raises(I.UploadRejected) as err:
        I.safe_name(name)
    assert err.value.hint


def _xlsx() -> bytes:
    """A zip holding a workbook's entries, as Excel writes them first."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    return out.getvalue()


@pytest.mark.parametrize("name", ["notes.xlsx", "Runs.XLSX", "sheet.csv"])
def test_a_spreadsheet_is_refused_with_save_it_as_csv(name: str, tmp_path: Path) -> None:
    """The Import page says ".xlsx: save as CSV"; the refusal says the same, of the content
    (a workbook named .csv too)."""
    paths, (refused,) = I.save_uploads([(name, _xlsx())], tmp_path)
    assert paths == [] and "Excel workbook" in refused.message
    assert "save each sheet as CSV" in refused.hint


def test_save_uploads_dedupes_and_limits(tmp_path: Path) -> None:
    paths, rejected = I.save_uploads([("a.csv", CSV), ("a.csv", CSV)], tmp_path)
    assert [p.name for p in paths] == ["a.csv", "a-1.csv"] and rejected == []
    assert all(p.parent == tmp_path for p in paths)
    with pytest.raises(I.UploadRejected, match="no file"):
        I.save_uploads([], tmp_path)


def test_a_refused_upload_is_named_and_the_others_are_saved(tmp_path: Path) -> None:
    rows = CSV.split(b"\n", 1)[1]
    big = CSV + rows * (1024**2 // len(rows) + 1)  # rows past 1 MB
    paths, rejected = I.save_uploads([("big.csv", big), ("ok.csv", CSV),
                                      ("e.csv", b""), ("evil.py", CSV)], tmp_path, max_mb=1)
    assert [p.name for p in paths] == ["ok.csv"] and paths[0].read_bytes() == CSV
    assert [r.name for r in rejected] == ["big.csv", "e.csv", "evil.py"]
    assert "expected at most 1 MB" in rejected[0].message and "empty" in rejected[1].message
    assert "named .py" in rejected[2].message and "`evil.csv`" in rejected[2].hint
    assert all(r.message.startswith(r.name) and r.hint for r in rejected)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["ok.csv"]


def test_argv_is_the_worker_import_command(tmp_path: Path) -> None:
    argv = I.import_argv("/py", [tmp_path / "a.csv"], tmp_path / "out" / "id")
    assert argv == ["/py", "-m", "profiling_worker", "import", str(tmp_path / "a.csv"),
                    "--out", str(tmp_path / "out" / "id"), "--each", "--nvtx", "innermost"]
    assert I.import_argv("/py", [], tmp_path, "stack")[-2:] == ["--nvtx", "stack"]
    assert result_store.JOB_ID_RE.match(I.new_job_id())


def _upload(sources: list[Path], tmp_path: Path) -> list[Path]:
    paths, rejected = I.save_uploads([(p.name, p.read_bytes()) for p in sources],
                                     tmp_path / "up")
    assert rejected == []
    return paths


@pytest.mark.parametrize("sources, params", [
    (sorted(REF.glob("*.csv")), ("n",)),        # nsight-python 0.9.6, no Unit column
    (sorted(V11.glob("*.csv")), ("n",)),        # nsight-python 1.1, Unit column
    ([REPORT_GZ], ("config_index",)),           # a real .ncu-rep from the H200
])
def test_import_opens_as_a_listed_bundle(tmp_path: Path, sources, params) -> None:
    (tmp_path / "up").mkdir()
    results = tmp_path / "results"
    (outcome,) = I.run_import(_upload(sources, tmp_path), results, sys.executable,
                              settings.worker_env())
    assert outcome.ok, outcome
    assert outcome.files == tuple(p.name for p in sources)
    bundle = load_bundle(results / outcome.job_id)
    assert bundle.status == "done" and bundle.parameters == params
    assert not bundle.table(C.TABLE_AGGREGATED).empty
    listed, problems = result_store.list_bundles(results)
    assert [b.job_id for b in listed] == [outcome.job_id] and problems == []
    if sources == [REPORT_GZ]:
        assert not bundle.table(C.TABLE_LAUNCHES).empty
        assert listed[0].gpu_name == "NVIDIA H200"


def test_failed_import_reports_message_and_hint(tmp_path: Path) -> None:
    bad = tmp_path / "profiled_data-x-0.csv"  # the upload check would refuse it: the worker too
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    (outcome,) = I.run_import([bad], tmp_path / "results", sys.executable, settings.worker_env())
    assert not outcome.ok and outcome.files == ("profiled_data-x-0.csv",)
    assert "profiled_data-x-0.csv" in outcome.message and outcome.hint
    assert not (tmp_path / "results" / outcome.job_id).exists()


def test_worker_that_cannot_start(tmp_path: Path) -> None:
    (outcome,) = I.run_import([tmp_path / "a.csv"], tmp_path / "r", str(tmp_path / "no-python"))
    assert not outcome.ok and "could not start" in outcome.message
    assert outcome.files == ("a.csv",)


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "h200_import" / "ncu_plain"


@pytest.mark.parametrize("name", ["default_set.ncu-rep", "plain.ncu-rep.gz", "raw.csv",
                                  "details.csv"])
def test_upload_names_of_every_importer_format_pass(name: str) -> None:
    """The uploader has no browser filter (it refused plain .ncu-rep); the name check on
    import passes the fixtures' names, plain .ncu-rep included, keeping their extension."""
    assert (FIXTURES / name).is_file()
    assert I.UPLOAD_TYPES is None
    assert I.safe_name(name) == name


def _fake_worker(tmp_path: Path, then: str) -> str:
    """A worker that imports the first group (one ``result`` event for a.csv), then ``then``."""
    script = tmp_path / "fake-worker"
    event = '{"event": "result", "status": "done", "bundle": "/r/imp-1", "files": ["a.csv"]}'
    script.write_text(f"#!/bin/sh\necho '{event}'\n{then}\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("then, timeout_s, cause", [
    ("exit 3", 300, "the worker exited with code 3 before importing these"),
    # the first group's line must come before the timeout, also on a busy machine
    ("exec sleep 600", 8, "the import took longer than 8 s"),
])
def test_a_worker_that_dies_midway_keeps_what_it_imported(tmp_path: Path, then: str,
                                                         timeout_s: int, cause: str) -> None:
    files = [tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.ncu-rep"]
    outcomes = I.run_import(files, tmp_path / "r", _fake_worker(tmp_path, then),
                            timeout_s=timeout_s)
    assert [(o.ok, o.job_id, o.files) for o in outcomes] == [
        (True, "imp-1", ("a.csv",)), (False, outcomes[1].job_id, ("b.csv", "c.ncu-rep"))]
    assert outcomes[1].message == cause and outcomes[1].hint

"""Import page: upload real nsight output, import through the worker, the bundle is selected."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from apptest_helpers import texts, unescape

from app.services.import_client import MAX_UPLOAD_MB
from app.services import history_index
from app.core.markdown import code
from app.ui import importing
from app.ui.importing import one_limit_css
from app.ui.panels import TEXT_WIDTH_MAX, text_width
from profiling_worker.bundle.number_text import when_text
from tests.scenarios import SCENARIOS, scenario_report

REPO = Path(__file__).resolve().parents[2]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul"
REPORT_GZ = scenario_report("h200-ncu-j1-fp16")
IMPORTED = re.compile(r"Imported as \*\*(import-[0-9a-f-]+)\*\*")


def _upload(at, paths: list[Path]):
    at.file_uploader(key="import-files").set_value(
        [(p.name, p.read_bytes(), "application/octet-stream") for p in paths])
    return at.run()


def test_page_draws_uploader_with_limit(store, app) -> None:
    at = app("import_files")
    assert not at.exception
    up = at.file_uploader(key="import-files")
    assert up.accept_multiple_files
    # no browser-side type filter: Streamlit's drop area drops extensions with a hyphen
    # (.ncu-rep); names are checked server-side when Import is clicked (import_client)
    assert not up.allowed_type
    assert "Nsight Compute CSV exports" in texts(at)
    assert "200 MB" in texts(at)
    # one limit, said once (a fresh user of session 21 read Streamlit's "200MB per file" in the
    # drop zone beside the page's own caption): the caption says it, the help does not, and
    # the drop zone's own words are hidden on this uploader
    per_file = f"{MAX_UPLOAD_MB} MB per file"
    assert (texts(at) + up.help).count(per_file) == 1, up.help
    styles = [el.proto.body for el in at.get("html")]
    assert one_limit_css("import-files") in styles, styles
    # the session cap's 413 shows only 'AxiosError ... 413' in the uploader: the page says why
    assert "400 MB for all the files chosen and not yet imported" in texts(at)
    assert "413" in texts(at)
    assert at.button(key="import-run").disabled


@pytest.mark.parametrize("sources", [sorted(REF.glob("*.csv")), [REPORT_GZ]],
                         ids=["csv-0.9.6", "ncu-rep"])
def test_import_selects_the_new_bundle(store, app, sources) -> None:
    at = _upload(app("import_files"), sources)
    at.button(key="import-run").click().run()
    assert not at.exception
    job = at.query_params["job"]
    job = job[0] if isinstance(job, list) else job
    assert job.startswith("import-") and (store["results"] / job / "manifest.json").is_file()
    assert at.session_state["sidebar-job"] == job
    assert f"Imported as **{job}** (" in texts(at) and "selected on every page" in texts(at)
    assert [r.job_id for r in history_index.rows(store["results"])] == [job]
    banner = next(i.value for i in at.info if i.value.startswith("Imported job"))
    assert all(f"`{p.name}`" in banner for p in sources[:4])  # says what it is, not "recorded"
    assert "showing results recorded" not in texts(at)
    at.switch_page("app_pages/sweep.py").run()  # the views open it
    assert not at.exception


def test_a_report_cut_short_is_marked_on_the_pages(store, app, tmp_path) -> None:
    data = gzip.decompress(REPORT_GZ.read_bytes())
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:len(data) // 2])  # an interrupted copy
    at = _upload(app("import_files"), [cut])
    at.button(key="import-run").click().run()
    assert not at.exception
    for page in ("app_pages/kernels.py", "app_pages/sweep.py", "app_pages/stability.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert "cut short" in texts(at), page


def test_bad_upload_shows_message_and_hint(store, app) -> None:
    at = _upload(app("import_files"), [])
    at.file_uploader(key="import-files").set_value(
        [("profiled_data-x-0.csv", b"a,b\n1,2\n", "text/csv")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "profiled_data-x-0.csv" in unescape(at.error[0].value)
    assert "Fix:" in at.error[0].value
    assert list(store["results"].glob("import-*")) == []


def test_unknown_backend_is_stated_on_the_pages(store, app) -> None:
    from app.ui.panels import UNKNOWN_BACKEND_NOTE
    from profiling_worker.importing import import_nsight_output

    cupti = SCENARIOS / "h200-cupti-stability" / "nsight" / "c0"
    import_nsight_output(sorted(cupti.glob("*.csv")), store["results"], "cupti-1-1")
    at = app("stability", query={"job": "cupti-1-1"})
    assert not at.exception, at.exception
    assert UNKNOWN_BACKEND_NOTE in [i.value for i in at.info]
    assert "backend unknown" in texts(at)


def test_several_reports_and_bad_files_each_get_their_own_job_or_message(store, app) -> None:
    """Two reports, a CSV pair of one nsight-python call, a text file that is no table and an
    empty file in one upload: three jobs, two errors, each naming its files."""
    plain = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "plain.ncu-rep.gz"
    at = app("import_files")
    at.file_uploader(key="import-files").set_value(
        [(p.name, p.read_bytes(), "application/octet-stream")
         for p in (plain, *sorted(REF.glob("*.csv")), REPORT_GZ)]
        + [("notes.txt", b"profiled on the H200\n", "text/plain"), ("empty.csv", b"", "text/csv")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    done = [unescape(s.value) for s in at.success]
    jobs = [IMPORTED.search(d).group(1) for d in done]
    assert len(done) == 3 and len(set(jobs)) == 3
    assert "`plain.ncu-rep.gz`" in done[0] and "selected on every page" in done[0]
    assert "`processed_data-mm-0.csv`, `profiled_data-mm-0.csv`" in done[1]
    assert f"`{REPORT_GZ.name}`" in done[2] and "pick it in the job selector" in done[2]
    assert at.session_state["sidebar-job"] == jobs[0]
    assert sorted(r.job_id for r in history_index.rows(store["results"])) == sorted(jobs)
    listed = at.selectbox(key="sidebar-job").options  # labels "<job id> · <backend> · done"
    assert all(any(o.startswith(f"{j} ") for o in listed) for j in jobs)  # each its own job
    errors = [unescape(e.value) for e in at.error]
    assert len(errors) == 2
    # each box names its file once, in its title (session 22: the name was said twice)
    assert errors[0].startswith("**import of notes.txt failed**: text that is not a table")
    assert errors[1].startswith("**import of empty.csv failed**: an empty file (0 bytes)")
    assert errors[0].count("notes.txt") == 1 and errors[1].count("empty.csv") == 1
    # issue 37: the fix says what a valid file has, not only "upload the file again"
    assert "export it again from the tool that wrote it" in errors[1]
    assert "starts with its header row" in errors[1]
    assert "3 of 5 file groups imported; 2 not, for 2 reasons below." in texts(at)


def test_a_mixed_upload_shows_one_box_per_reason(store, app) -> None:
    """Issue 37: a mixed upload showed a red box per file, each repeating the same long reason,
    with the one success screens below. Now: the count, the success, one box naming the files."""
    at = app("import_files")
    at.file_uploader(key="import-files").set_value(
        [(REPORT_GZ.name, REPORT_GZ.read_bytes(), "application/octet-stream")]
        + [(f"empty{i}.csv", b"", "text/csv") for i in range(4)])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    assert len(at.success) == 1
    (error,) = [unescape(e.value) for e in at.error]
    assert error.startswith("**import of empty0.csv, empty1.csv, empty2.csv, empty3.csv failed**")
    assert "1 of 5 file groups imported; 4 not, for 1 reason below." in texts(at)
    assert not [w for w in at.warning if "not read" in w.value]  # each report read in its job


def test_an_export_without_a_device_name_says_so(store, app) -> None:
    from profiling_worker.importing import import_nsight_output

    details = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "details.csv"
    import_nsight_output([details], store["results"], "details")  # Device column = index only
    at = app("kernels", query={"job": "details"})
    assert not at.exception, at.exception
    assert "GPU not named in the files" in texts(at) and "· no GPU ·" not in texts(at)


def test_sweep_throughput_of_a_file_with_derived_tflops_points_to_them(store, app) -> None:
    from profiling_worker.importing import import_nsight_output

    derived = REPO / "tests" / "fixtures" / "h200_import" / "nspy096" / "derived"
    import_nsight_output([derived], store["results"], "derived")  # derive_metric=compute_tflops
    at = app(query={"job": "derived"})
    at.segmented_control(key="sweep-quantity").set_value("tflops").run()
    assert not at.exception, at.exception
    (box,) = at.error
    assert "no analytic Flops" in box.value  # the catalog has no FLOP count for a file's regions
    assert "compute_tflops" in texts(at) and "stability and compare pages" in texts(at)


def test_a_spreadsheet_upload_is_refused_with_save_it_as_csv(store, app, tmp_path) -> None:
    """The page text says ".xlsx: save as CSV"; the refusal of one says the same."""
    sheet = tmp_path / "notes.xlsx"
    sheet.write_bytes(b"PK\x03\x04 not read")
    at = _upload(app("import_files"), [sheet])
    at.button(key="import-run").click().run()
    assert not at.exception
    (error,) = [unescape(e.value) for e in at.error]
    assert error.startswith("**import of notes.xlsx failed**: an Excel workbook"), error
    assert error.count("notes.xlsx") == 1 and "save each sheet as CSV" in error
    assert not [p for p in store["results"].iterdir() if p.is_dir()]  # nothing imported


def test_the_page_shows_how_each_file_was_read(store, app) -> None:
    """Issue 20: per file, its kind, page, units, regions source and configs, at a glance;
    the NVTX choice reaches the import (whole stack: outer > inner)."""
    cases = REPO / "tests" / "fixtures" / "import_cases"
    details = cases / "08-details-rule-columns" / "ranges_details_base.csv"
    nested = cases / "14-nvtx-nested" / "nested_raw.csv"
    at = _upload(app("import_files"), [details, nested])
    at.radio(key="import-nvtx").set_value("stack").run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    assert len(at.success) == 2
    # a column per file, a row per field (issue 37: a row per file put nine columns side by
    # side, ~1,900 px, and the page cut Units, the fifth, at its right edge)
    tables = {name: df for df in at.dataframe if df.value.columns[0] == "Read"
              for name in df.value.columns[1:]}
    row = tables[details.name].value.set_index("Read")[details.name]
    widths = json.loads(tables[details.name].proto.columns)
    longest = max(len(v) for v in row)
    assert widths[details.name]["width"] == text_width(longest, TEXT_WIDTH_MAX)
    # one file's reading fits a 1,400 px window beside the sidebar (the main area: ~870 px),
    # Units whole: its column at least as wide as its value
    assert widths["Read"]["width"] + widths[details.name]["width"] <= 870
    assert widths[details.name]["width"] >= text_width(len(row["Units"]), 10_000)
    assert row["Kind"] == "Nsight Compute CSV export" and row["Page"] == "details"
    assert row["Units"].startswith("base units")
    assert row["Regions from"].startswith("NVTX push/pop (whole stack)")
    assert row["Configs found"] == "1" and row["Launches"] == "12"
    # issue 35: the rule that grouped the launches, at a glance
    assert row["Launches grouped by"].startswith("kernel, grid, block; then ")
    assert row["Launches grouped by"].endswith("outlier runs kept in its config")
    nested_row = tables[nested.name].value.set_index("Read")[nested.name]
    assert nested_row["Regions from"].startswith("NVTX push/pop and start/end")
    assert "How each file was read" in texts(at)


def test_uploads_are_released_from_memory_once_imported(store, app, monkeypatch) -> None:
    """Issue 26: Streamlit held every upload until the browser session ended. Import removes
    the session's uploaded files from the server's upload manager (AppTest registers them
    again before each run, so the removal itself is what is checked) and the page says so."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    removed: list[str] = []
    real_remove = MemoryUploadedFileManager.remove_file

    def remove(self, session_id: str, file_id: str) -> None:
        real_remove(self, session_id, file_id)
        removed.append(file_id)
        assert self.get_files(session_id, [file_id]) == []

    monkeypatch.setattr(MemoryUploadedFileManager, "remove_file", remove)
    csv = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "raw.csv"
    at = _upload(app("import_files"), [csv])
    (uploaded,) = at.file_uploader(key="import-files").value
    at.button(key="import-run").click().run()
    assert not at.exception
    assert any(m.value.startswith("Imported as") for m in at.success)
    assert removed == [uploaded.file_id]
    assert "released from the server's memory" in texts(at)


def test_after_an_import_the_uploader_is_empty_and_import_cannot_be_pressed_again(
        store, app) -> None:
    """A new user pressed Import twice: the released files came back from the uploader as
    placeholders without a name and the page ended in an AttributeError. Now the uploader is a
    new, empty one and Import is disabled until files are chosen again; a second import works."""
    csv = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "raw.csv"
    at = _upload(app("import_files"), [csv])
    at.button(key="import-run").click().run()
    assert not at.exception and len(at.success) == 1
    (uploader,) = at.file_uploader
    assert uploader.key == "import-files-1" and not uploader.value
    assert at.button(key="import-run").disabled
    uploader.set_value([(csv.name, csv.read_bytes(), "text/csv")])
    at.run()
    assert not at.button(key="import-run").disabled
    at.button(key="import-run").click().run()
    assert not at.exception and len(at.success) == 1
    assert at.file_uploader[0].key == "import-files-2" and not at.file_uploader[0].value


def test_a_session_may_hold_at_most_400_mb_of_uploads() -> None:
    from starlette.exceptions import HTTPException
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from app.streamlit_patches import server_guard

    server_guard.install()
    manager = MemoryUploadedFileManager("/upload")
    big = bytes(150 * 10**6)
    manager.add_file("s1", UploadedFileRec("a", "a.ncu-rep", "x", big))
    manager.add_file("s1", UploadedFileRec("b", "b.ncu-rep", "x", big))
    with pytest.raises(HTTPException) as err:
        manager.add_file("s1", UploadedFileRec("c", "c.ncu-rep", "x", big))
    assert err.value.status_code == 413
    assert ("c.ncu-rep (150.0 MB) was refused: this tab's files not yet imported hold 300.0 MB"
            in err.value.detail and "at most 400 MB" in err.value.detail)
    assert server_guard.upload_refusal("s1") == err.value.detail  # kept for the page, once
    manager.add_file("s2", UploadedFileRec("c", "c.ncu-rep", "x", big))  # another session
    manager.remove_file("s1", "a")
    manager.add_file("s1", UploadedFileRec("c", "c.ncu-rep", "x", big))  # room again


@pytest.mark.parametrize("names", [
    ("import_cases/13-two-runs-one-upload/live_raw.csv",
     "import_cases/10-two-launches-per-pass/ranges.ncu-rep.gz"),  # case 13: CSV + report
    ("h200_import/ncu_plain/raw.csv", "h200_import/ncu_plain/live_raw.csv")],  # two CSVs
    ids=["csv-and-report", "two-csvs"])
def test_two_runs_uploaded_together_are_two_jobs(store, app, names) -> None:
    """Two profiles of one program (case 13): a job each, each with its file's values, so
    Compare can put them side by side; none is dropped as 'the same launches'."""
    from profiling_worker.bundle.loader import read_table
    from profiling_worker.bundle.schema import columns as C

    paths = [REPO / "tests" / "fixtures" / n for n in names]
    at = _upload(app("import_files"), paths)
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    done = [unescape(s.value) for s in at.success]
    jobs = [IMPORTED.search(d).group(1) for d in done]
    assert len(jobs) == 2 and len(set(jobs)) == 2
    assert all(f"`{p.name}`" in d for p, d in zip(paths, done))
    times = []
    for job in jobs:
        launches = read_table(store["results"] / job, C.TABLE_LAUNCHES)
        times.append(sorted(launches[launches[C.METRIC] == C.GPU_TIME][C.VALUE]))
    assert times[0] != times[1] and len(times[0]) == len(times[1])  # same launches, two runs
    assert not [w for w in at.warning if "not read" in w.value]


def test_how_runs_were_read_is_shown_on_the_pages(store, app) -> None:
    """Case 10: two_gemms launches one GEMM twice a pass; the pages say it was read as 3 runs
    of 2 launches and name the other reading."""
    from profiling_worker.importing import import_nsight_output

    report = REPO / "tests" / "fixtures" / "import_cases" / "10-two-launches-per-pass" / \
        "ranges.ncu-rep.gz"
    import_nsight_output([report], store["results"], "ranges")
    for page in ("stability", "results"):
        at = app(page, query={"job": "ranges"})
        assert not at.exception, at.exception
        assert "two_gemms: its launches come in stretches" in texts(at), page
        assert "read as 3 runs of 2 launches" in texts(at), page


@pytest.mark.parametrize("page", ["sweep", "stability", "results", "kernels", "files"])
def test_an_import_of_derived_values_only_opens_every_page(store, app, page) -> None:
    """Case 03 (nsight-python 0.9.5, a ``Transformed`` compute_tflops column): its tables hold
    no Unit for the derived rows, and the table panel's Unit width read NaN and raised."""
    from profiling_worker.importing import import_nsight_output

    case = REPO / "tests" / "fixtures" / "import_cases" / "03-derived-0.9.5"
    import_nsight_output(sorted(case.glob("*.csv")), store["results"], "derived-095")
    at = app(page, query={"job": "derived-095"})
    assert not at.exception, at.exception


@pytest.mark.parametrize(("cap", "told"), [
    ("session", ["hold 0.6 MB", "at most 1 MB", "Import the files chosen, or remove some"]),
    ("server", ["every tab open on this server hold 0.6 MB (0.6 MB of them this tab's)",
                "at most 1 MB, the server-wide limit", "wait until other tabs import theirs",
                "may raise KPROF_SERVER_UPLOAD_MB"])])
def test_an_upload_past_a_cap_says_why_on_the_page(store, app, monkeypatch, tmp_path,
                                                   cap, told) -> None:
    """The uploader shows only 'AxiosError ... 413' (issue 41): the page names the file, what
    the tab (or every tab of the server) holds, the cap and what to do. The tab's cap, or the
    server's (``KPROF_SERVER_UPLOAD_MB``), is made 1 MB here; the files are real nsight-python
    output (the reference CSV) repeated to 0.6 MB each."""
    from starlette.exceptions import HTTPException

    from app.streamlit_patches import server_guard

    if cap == "session":
        monkeypatch.setattr(server_guard, "SESSION_UPLOAD_MB", 1)
    else:
        monkeypatch.setenv(server_guard.SERVER_UPLOAD_ENV, "1")
    csv = next(iter(sorted(REF.glob("*.csv"))))
    text = csv.read_bytes()
    blob = text * (600_000 // len(text) + 1)
    at = app("import_files")
    up = at.file_uploader(key="import-files")
    first = ("profiled_data-a-0.csv", blob, "text/csv")
    with pytest.raises(HTTPException, match="413"):  # the upload request's answer
        up.set_value([first, ("profiled_data-b-0.csv", blob, "text/csv")]).run()
    # the browser keeps the refused file out of the widget's value; the server's rerun shows why
    at = at.file_uploader(key="import-files").set_value([first]).run()
    shown = " ".join(e.value for e in at.error)
    assert "profiled_data-b-0.csv (0.6 MB) was refused" in shown, shown
    assert all(phrase in shown for phrase in told), shown
    assert not at.run().error  # shown once, then forgotten


def test_importing_the_same_files_again_names_the_earlier_job(store, app) -> None:
    """A fresh user's find: importing the same files twice made a second job without a word.
    The second import still happens (a copy may be meant), and its outcome names the earlier
    job and when it was imported; the files are compared by content (the SHA-256 the importer
    records of each file), so a browser's renamed copy (``name (1).csv``) counts as the same."""
    import hashlib
    import json

    case = sorted((REPO / "tests" / "fixtures" / "import_cases" / "03-derived-0.9.5").glob("*.csv"))
    at = _upload(app("import_files"), case)
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    first = IMPORTED.search(texts(at))[1]
    assert "Same files as job" not in texts(at)  # nothing to name yet
    manifest = json.loads((store["results"] / first / "manifest.json").read_text())
    assert manifest["provenance"]["source_sha256"] == {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in case}
    when = when_text(manifest["timings"]["imported_at"])  # the page's time, never ISO 8601

    at.file_uploader(key="import-files-1").set_value(  # the uploader is a new one after each import
        [(p.stem + " (1).csv", p.read_bytes(), "text/csv") for p in case]).run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    second = IMPORTED.search(texts(at))[1]
    assert second != first and (store["results"] / second / "manifest.json").is_file()
    said = [unescape(i.value) for i in at.info if "Same files as job" in i.value]
    assert said == [f"Same files as job **{first}**, imported at {when} (every file's SHA-256 "
                    f"matches): **{second}** is a second copy of it."], said


def test_a_refused_sqlite_file_shows_one_fix_with_its_commands_as_code(store, app) -> None:
    """A fresh user's find: an SQLite file (named .csv) showed the ncu commands in its message
    and the supported kinds as its fix, two fixes in one box; the supported list and the
    hints wrote commands as plain text."""
    at = _upload(app("import_files"), [])
    at.file_uploader(key="import-files").set_value(
        [("report.csv", b"SQLite format 3\x00" + bytes(200), "application/octet-stream")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    (error,) = [e.value for e in at.error]
    assert error.count("Fix:") == 1 and error.count("ncu --nvtx -o report") == 1, error
    assert "`ncu --nvtx -o report python3 app.py`" in error  # a code span, not escaped text
    assert "nsight-python 0.9.4" not in error  # nor the supported kinds as a second fix
    listed = next(m.value for m in at.markdown if "Several files at once" in m.value)
    assert "`ncu --csv --page raw`" in listed and "`ncu --nvtx python3 app.py > log`" in listed


def test_each_bad_file_gets_one_message_by_its_content_and_the_good_ones_import(
        store, app, tmp_path) -> None:
    """A fresh user's finds: a plain SQLite named .sqlite was called an Nsight Systems report,
    .zip, .json, .png and an empty .json got the general message by their extension, a CSV
    without its Metric column and a text .ncu-rep got the whole formats list. Now one box per
    bad file names what it is by its content and what was expected, with one fix whose
    commands are code; the good files of the same upload import and the earlier job stays."""
    import io
    import sqlite3
    import zipfile

    earlier = _upload(app("import_files"), [REPORT_GZ])
    earlier.button(key="import-run").click().run()
    (first,) = [IMPORTED.search(unescape(s.value))[1] for s in earlier.success]

    db = tmp_path / "plain.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, value REAL)")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("profiled_data-mm-0.csv", "x")
    rows = [ln.split(",") for ln in sorted(REF.glob("profiled*.csv"))[0].read_text().splitlines()]
    drop = rows[0].index("Metric")
    no_metric = "\n".join(",".join(f for i, f in enumerate(r) if i != drop) for r in rows)
    bad = {  # name: (content, what the box must say it is)
        "plain.sqlite": (db.read_bytes(), "an SQLite database (tables runs), not an Nsight "
                                          "Systems or Nsight Compute file"),
        "results.zip": (archive.getvalue(), "a zip archive"),
        "manifest.json": ((SCENARIOS / "h200-cupti-timeline" / "manifest.json").read_bytes(),
                          "JSON text"),
        "icon.png": ((REPO / "app" / "assets" / "icon.png").read_bytes(), "a PNG image"),
        "empty.json": (b"", "an empty file (0 bytes)"),
        "profiled_data-edited-0.csv": (no_metric.encode(), "without its Metric column"),
        "fake.ncu-rep": (b"not a report at all\n", "not an Nsight Compute report"),
    }
    at = earlier  # the same session: its uploader is a new one after the first import
    at.file_uploader(key="import-files-1").set_value(
        [(n, data, "application/octet-stream") for n, (data, _) in bad.items()]
        + [(p.name, p.read_bytes(), "text/csv") for p in sorted(REF.glob("*.csv"))])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    (done,) = [unescape(s.value) for s in at.success]  # the good pair, visible
    assert "`processed_data-mm-0.csv`, `profiled_data-mm-0.csv`" in done
    errors = [e.value for e in at.error]
    assert len(errors) == len(bad), errors  # one message per bad file
    for (name, (_, what)), error in zip(bad.items(), errors):
        text = unescape(error)
        # its name once, in the title (session 22: "<title>: <name>: ..." said it twice)
        title = f"**import of {name} failed**: "
        assert text.startswith(title) and not text.startswith(f"{title}{name}: "), text
        assert what in text and "; expected " in text, text
        assert error.count("**Fix:**") == 1 and "supported:" not in text, text
        fix = text.split("**Fix:**", 1)[1]
        assert "ncu -" not in "".join(fix.split("`")[::2]), fix  # commands as code only
    assert "`output_csv=True`" in errors[list(bad).index("empty.json")]
    assert "8 file groups" in texts(at) and "1 of 8 file groups imported" in texts(at)
    jobs = {r.job_id for r in history_index.rows(store["results"])}
    assert first in jobs and len(jobs) == 2  # the earlier job stays beside the new one


def _files_page_zip(tmp_path: Path, name: str) -> Path:
    """The zip the Files page's "Download the whole bundle" gives of a recorded job."""
    from app.core.bundle_files import zip_bundle
    from tests.scenarios import scenario

    out = tmp_path / f"{name}.zip"
    out.write_bytes(zip_bundle(scenario(name)).read())
    return out


def test_a_shared_bundle_zip_is_reopened_as_its_job(store, app, tmp_path) -> None:
    """A job shared by its zip opens on another dashboard under its own id, selected, its pages
    drawn; a second zip of another job with that id gets ``-2``, said on the page."""
    name = "h200-cupti-elementwise"
    zipped = _files_page_zip(tmp_path, name)
    at = _upload(app("import_files"), [zipped])
    at.button(key="import-run").click().run()
    assert not at.exception
    assert f"Imported as **{name}** (" in unescape(texts(at)), texts(at)
    assert at.session_state["sidebar-job"] == name
    assert (store["results"] / name / "manifest.json").is_file()
    at.switch_page("app_pages/sweep.py").run()
    assert not at.exception
    manifest = json.loads((store["results"] / name / "manifest.json").read_text())
    manifest["note"] = "a different job of the same id"
    (store["results"] / name / "manifest.json").write_text(json.dumps(manifest))
    at.switch_page("app_pages/import_files.py").run()
    at.file_uploader(key="import-files-1").set_value(
        [(zipped.name, zipped.read_bytes(), "application/zip")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception
    assert f"Imported as **{name}-2** (" in unescape(texts(at))
    assert any(f"taken on this dashboard by a different job: imported as {name}-2"
               in unescape(i.value) for i in at.info)


def test_the_same_bundle_zip_twice_says_already_here_not_imported(store, app, tmp_path) -> None:
    """A second upload of the same job's zip imports nothing: the page says the job is already
    here (no success box claiming an import), and the store holds one copy."""
    name = "h200-cupti-elementwise"
    zipped = _files_page_zip(tmp_path, name)
    at = _upload(app("import_files"), [zipped])
    at.button(key="import-run").click().run()
    assert f"Imported as **{name}** (" in unescape(texts(at))
    at.file_uploader(key="import-files-1").set_value(
        [(zipped.name, zipped.read_bytes(), "application/zip")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception
    said = unescape(texts(at))
    assert f"Already here as **{name}** (" in said and "Imported as" not in said, said
    assert not any("Imported as" in s.value for s in at.success)
    # one box says it (the worker's note said the same in a second box: session 22)
    (box,) = [unescape(i.value) for i in at.info if name in unescape(i.value)]
    assert box == unescape(importing.already_here_text(
        name, code(zipped.name), "it is selected on every page")), box
    assert not (store["results"] / f"{name}-2").exists()


def test_a_zip_that_is_no_bundle_keeps_its_refusal(store, app, tmp_path) -> None:
    import zipfile

    plain = tmp_path / "outputs.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr("profiled_data-x.csv", "a,b\n1,2\n")
    at = _upload(app("import_files"), [plain])
    at.button(key="import-run").click().run()
    assert not at.exception
    assert "a zip archive with no manifest.json" in unescape(texts(at))
    assert not any(store["results"].iterdir())


def test_an_imported_negative_duration_is_a_warning_on_the_pages(store, app) -> None:
    """A new user's find: a processed_data row of -5 ns imported as a "done" job without a
    word. The plausibility note names the row and its value on the page drawing it."""
    at = _upload(app("import_files"), [])
    at.file_uploader(key="import-files").set_value([(
        "processed_data-x-0.csv", b"Annotation,n,Metric,AvgValue,StdDev,NumRuns\n"
        b"fp32,64,gpu__time_duration.sum,-5,3,10\nfp32,128,gpu__time_duration.sum,4,1,10\n",
        "text/csv")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception
    at.switch_page("app_pages/sweep.py").run()
    assert not at.exception, at.exception
    assert "gpu__time_duration.sum reads -5 ns in the aggregated table" in texts(at)


def test_a_binary_file_of_no_known_kind_is_one_box_naming_it_once_and_its_bytes(
        store, app, tmp_path) -> None:
    """Session 22's fresh user read ``garbage.csv`` twice in one box and its first bytes as a
    cut Python literal (``b'\\x00\\x01garbag'``): the name once, in the title; the bytes in hex."""
    from profiling_worker.importing.sniff import first_bytes

    junk = tmp_path / "garbage.csv"
    junk.write_bytes(b"\x00\x01garbage, not a table")
    at = _upload(app("import_files"), [junk])
    at.button(key="import-run").click().run()
    assert not at.exception
    (error,) = [unescape(e.value) for e in at.error]
    assert error.startswith("**import of garbage.csv failed**: a binary file"), error
    assert error.count("garbage.csv") == 1 and first_bytes(junk.read_bytes()) in error
    assert "b'" not in error


def test_how_read_wraps_long_cells_and_counts_every_files_launches(store, app) -> None:
    """Issue 37 (13_crop_table.png): a .ncu-rep's "Regions from" was cut at the column's
    480 px and its Launches cell was empty, as an nsight-python CSV's. Long cells now wrap (a
    row tall enough for them) and every file's Launches cell says its count or why it has
    none."""
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.importing.how_read import NO_LAUNCHES
    from app.ui.panels import wrapped_row_height

    plain = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "plain.ncu-rep.gz"
    at = _upload(app("import_files"), [plain, *sorted(REF.glob("*.csv"))])
    at.button(key="import-run").click().run()
    assert not at.exception, at.exception
    jobs = [IMPORTED.search(unescape(s.value)).group(1) for s in at.success]
    tables = {df.value.columns[1]: df for df in at.dataframe if df.value.columns[0] == "Read"}
    report = tables[plain.name].value.set_index("Read")[plain.name]
    launches = load_bundle(store["results"] / jobs[0]).table(C.TABLE_LAUNCHES)
    counted = len(launches.drop_duplicates([C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH]))
    assert counted > 0 and report["Launches"] == str(counted)
    longest = max(len(v) for v in report)
    assert longest * 7.2 + 24 > TEXT_WIDTH_MAX  # "Regions from" is longer than the column
    assert tables[plain.name].proto.row_height == wrapped_row_height(longest) > 64
    for name, table in tables.items():
        if name != plain.name:  # the nsight-python CSVs: no launches in them, said so
            assert table.value.set_index("Read")[name]["Launches"] == NO_LAUNCHES

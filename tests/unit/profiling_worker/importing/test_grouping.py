"""Several reports and tables in one import: one bundle each, the files nsight-python writes for
one call kept together, raw and details exports of one profile kept together, a bad file
failing alone. Inputs: the H200 recordings in tests/fixtures (h200_import, bundles,
import_cases), none made by the project's importer."""

from __future__ import annotations

import shutil
from pathlib import Path

from profiling_worker.bundle.loader import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing.grouping import group_sources, import_each
from profiling_worker.importing.nsight_csv import nsight_call
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import scenario_report

FIX = Path(__file__).resolve().parents[3] / "fixtures"
PLAIN = FIX / "h200_import" / "ncu_plain"
TWO_CALLS = FIX / "h200_import" / "nspy096" / "two_calls"
J1 = scenario_report("h200-ncu-j1-fp16")
RENAMED = FIX / "import_cases" / "02-browser-renamed"
NOT_A_TABLE = FIX / "h200_import" / "README.md"


def _names(groups: list[list[Path]]) -> list[list[str]]:
    return [[p.name for p in g] for g in groups]


def test_nsight_call_reads_nsight_pythons_names() -> None:
    calls = {"bench_profiled_data-smem_ops-0 (1).csv": "smem_ops-0",
             "processed_data-scale-1.csv": "scale-1",
             "ncu-output-scale-1.ncu-rep.gz": "scale-1",
             "bench_ncu-output-combined-0.log": "combined-0",
             "plain.ncu-rep.gz": None, "raw.csv": None}
    assert {name: nsight_call(Path(name)) for name in calls} == calls


def test_each_call_and_each_report_is_a_group_of_its_own() -> None:
    two_calls = sorted(TWO_CALLS.iterdir())  # 2 calls: profiled, processed, report, log each
    given = [PLAIN / "plain.ncu-rep.gz", *two_calls, J1, PLAIN / "raw.csv",
             *sorted(RENAMED.iterdir()), PLAIN / "details_units_base.csv", NOT_A_TABLE]
    assert _names(group_sources(given)) == [
        # two pages exported from the report (ncu -i plain.ncu-rep --csv): one profile, one
        # bundle naming all three (issue 35)
        ["plain.ncu-rep.gz", "raw.csv", "details_units_base.csv"],
        [p.name for p in two_calls if "scale-0" in p.name],
        [p.name for p in two_calls if "scale-1" in p.name],
        [J1.name],
        ["processed_data-mm-0.csv", "profiled_data-mm-0 (1).csv"],  # a browser's rename
        ["README.md"]]
    assert all(len(g) == 4 for g in group_sources(two_calls))


def test_two_reports_give_two_bundles_each_with_its_own_launches(tmp_path: Path) -> None:
    events = list(import_each([PLAIN / "plain.ncu-rep.gz", J1], tmp_path, "up"))
    assert [(e["event"], e["files"]) for e in events] == [
        ("result", ["plain.ncu-rep.gz"]), ("result", [J1.name])]
    bundles = [Path(e["bundle"]) for e in events]
    assert [b.name for b in bundles] == ["up-1", "up-2"]
    for bundle, report in zip(bundles, (PLAIN / "plain.ncu-rep.gz", J1)):
        alone = import_nsight_output([report], tmp_path / "alone", bundle.name)
        assert set(read_table(bundle, C.TABLE_LAUNCHES)[C.KERNEL]) == \
            set(read_table(alone, C.TABLE_LAUNCHES)[C.KERNEL])
        manifest = read_manifest(bundle)
        assert manifest["provenance"]["imported_from"] == [report.name]
        assert not any("not read" in w for w in manifest["warnings"])


def test_a_bad_file_fails_alone_and_names_itself(tmp_path: Path) -> None:
    cut = tmp_path / "in" / "cut.csv"  # a per-run CSV whose required column is gone
    cut.parent.mkdir()
    header, *rows = (RENAMED / "profiled_data-mm-0 (1).csv").read_text().splitlines()
    cut.write_text("\n".join([header.replace("Metric", "Measure"), *rows]) + "\n")
    shutil.copy(NOT_A_TABLE, tmp_path / "in" / "notes.md")
    given = [cut, PLAIN / "raw.csv", tmp_path / "in" / "notes.md", J1]
    events = list(import_each(given, tmp_path / "out", "up"))
    assert [(e["event"], e["files"]) for e in events] == [
        ("error", ["cut.csv"]), ("result", ["raw.csv"]), ("error", ["notes.md"]),
        ("result", [J1.name])]
    assert events[0]["message"].startswith("cut.csv:") and events[0]["hint"]
    assert events[2]["message"].startswith("notes.md:") and events[2]["hint"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["up-2", "up-4"]


def test_one_group_keeps_the_given_id(tmp_path: Path) -> None:
    (event,) = import_each(sorted(RENAMED.iterdir()), tmp_path, "mm")
    assert event["event"] == "result" and Path(event["bundle"]) == tmp_path / "mm"
    assert read_manifest(tmp_path / "mm")["provenance"]["imported_from"] == [
        "processed_data-mm-0.csv", "profiled_data-mm-0 (1).csv"]


def test_renamed_csvs_are_paired_by_content_as_the_importer_pairs_them(tmp_path: Path) -> None:
    """Case 02 renamed beyond nsight-python's pattern: the processed file still joins the
    per-run file it was written from (6 aggregated rows, not 12); a processed file of another
    call (two_calls, scale-1) does not join scale-0's renamed runs."""
    runs, summary = tmp_path / "mm runs.csv", tmp_path / "summary.csv"
    shutil.copy(RENAMED / "profiled_data-mm-0 (1).csv", runs)
    shutil.copy(RENAMED / "processed_data-mm-0.csv", summary)
    scale0 = tmp_path / "scale0.csv"
    shutil.copy(TWO_CALLS / "profiled_data-scale-0.csv", scale0)
    other_call = TWO_CALLS / "processed_data-scale-1.csv"
    groups = group_sources([summary, scale0, other_call, runs])
    assert _names(groups) == [["scale0.csv"], [other_call.name], ["mm runs.csv", "summary.csv"]]
    events = list(import_each([summary, runs], tmp_path / "out", "mm"))
    assert [e["event"] for e in events] == ["result"]
    agg = read_table(Path(events[0]["bundle"]), C.TABLE_AGGREGATED)
    assert len(agg) == 6 and not agg.duplicated([C.ANNOTATION, C.CONFIG, C.METRIC]).any()


def test_each_ncu_export_is_parsed_once_by_grouping_and_import(tmp_path: Path,
                                                               monkeypatch) -> None:
    """An export's raw and details pages of one profile (ncu 2025.3, H200): grouping (their
    launches, their values) and the import read each file's table once (it was 3 times)."""
    from profiling_worker.importing import ncu_csv, ncu_rows

    parsed: list[str] = []
    real = ncu_rows.parse_csv

    def counting(s):  # noqa: ANN001, ANN202
        parsed.append(s.path.name)
        return real(s)

    monkeypatch.setattr(ncu_rows, "parse_csv", counting)
    ncu_csv._read_once.cache_clear()
    sources = [PLAIN / "raw.csv", PLAIN / "details.csv"]
    events = list(import_each(sources, tmp_path / "store", "pages"))
    assert [e["event"] for e in events] == ["result"] and events[0]["files"] == [
        "raw.csv", "details.csv"]
    assert sorted(parsed) == ["details.csv", "raw.csv"]


def _record_report_readers(tmp_path: Path, monkeypatch) -> Path:  # noqa: ANN001
    """A file to which every ncu_report.load_report call appends its process id (children
    inherit the patch)."""
    import os

    from profiling_worker.extract import ncu_report_reader

    readers = tmp_path / "readers.txt"
    real = ncu_report_reader.ncu_report.load_report

    def load_report(path: str):  # noqa: ANN202
        with open(readers, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(path)

    monkeypatch.setattr(ncu_report_reader.ncu_report, "load_report", load_report)
    return readers


def _named_j1(tmp_path: Path) -> Path:
    """The J1 scenario's report under its job's name, as a user's upload would carry it (the
    tests below name the file in their assertions)."""
    import shutil

    named = tmp_path / "h200-ncu-j1-fp16.ncu-rep.gz"
    if not named.exists():
        shutil.copyfile(J1, named)
    return named


def test_several_reports_are_each_read_in_a_process_of_their_own(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """ncu_report keeps every launch it has read until its process ends, so each group of an
    upload of several is imported in a child: the importing process never holds a report's
    launches, and one report's memory is returned before the next is read."""
    import os

    readers = _record_report_readers(tmp_path, monkeypatch)
    sources = [_named_j1(tmp_path), PLAIN / "plain.ncu-rep.gz"]
    events = list(import_each(sources, tmp_path / "store", "two"))
    assert [e["event"] for e in events] == ["result", "result"]
    assert [Path(e["bundle"]).name for e in events] == ["two-1", "two-2"]
    launches = [read_table(Path(e["bundle"]), C.TABLE_LAUNCHES) for e in events]
    assert all(len(t) for t in launches)
    pids = readers.read_text(encoding="utf-8").split()
    assert len(pids) == 2 and len(set(pids)) == 2 and str(os.getpid()) not in pids


def test_a_group_whose_process_dies_is_an_error_and_the_next_goes_on(tmp_path: Path,
                                                                      monkeypatch) -> None:
    """A child killed before it answers (as the kernel's out-of-memory killer would): its
    files get an error naming them and the exit status, the next group is imported."""
    import os

    from profiling_worker.importing import grouping

    real = grouping._import_group

    def dies_on_j1(files, *args):  # noqa: ANN001, ANN202 - runs in the forked child
        if files[0].name.startswith("h200-ncu-j1"):
            os._exit(137)
        return real(files, *args)

    monkeypatch.setattr(grouping, "_import_group", dies_on_j1)
    sources = [_named_j1(tmp_path), PLAIN / "plain.ncu-rep.gz"]
    first, second = import_each(sources, tmp_path / "store", "two")
    assert first["event"] == "error" and first["files"] == ["h200-ncu-j1-fp16.ncu-rep.gz"]
    assert "ended without a result (its process exited with 137" in first["message"]
    assert second["event"] == "result" and second["files"] == ["plain.ncu-rep.gz"]


def test_the_further_reports_of_one_bundle_are_checked_in_another_process(
        tmp_path: Path, monkeypatch) -> None:
    """``import`` without ``--each`` reads the first report and opens the others: they are
    opened in a child (their launches not kept here); a broken one is still refused by name."""
    import os

    import pytest

    from profiling_worker.bundle.errors import ImportFailed

    readers = _record_report_readers(tmp_path, monkeypatch)
    j1 = _named_j1(tmp_path)
    import_nsight_output([PLAIN / "plain.ncu-rep.gz", j1], tmp_path / "store", "two")
    checked, read = readers.read_text(encoding="utf-8").split()
    assert read == str(os.getpid()) and checked != read
    cut = tmp_path / "cut.ncu-rep.gz"
    cut.write_bytes(j1.read_bytes()[:1000])  # an interrupted copy
    with pytest.raises(ImportFailed, match=r"^cut\.ncu-rep\.gz: "):
        import_nsight_output([PLAIN / "plain.ncu-rep.gz", cut], tmp_path / "store", "cut")

"""Several reports and tables in one import: one bundle each, the files nsight-python writes for
one call kept together, raw and details exports of one profile kept together, a bad file
failing alone. Inputs: the H200 recordings in tests/fixtures (h200_import, bundles,
import_cases), none made by the project's importer."""

from __future__ import annotations

import shutil
from pathlib import Path

from profiling_worker.bundle_writer import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing.grouping import group_sources, import_each
from profiling_worker.importing.nsight_csv import nsight_call
from profiling_worker.schema import columns as C
from profiling_worker.schema.manifest import read_manifest
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
        ["plain.ncu-rep.gz"],
        [p.name for p in two_calls if "scale-0" in p.name],
        [p.name for p in two_calls if "scale-1" in p.name],
        [J1.name],
        ["raw.csv", "details_units_base.csv"],  # two pages of one profile: read once
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

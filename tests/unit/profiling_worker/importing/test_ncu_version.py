"""Issue 20: the import records the Nsight Compute version where the file carries it, and says
"ncu version: not in file" where it does not. Inputs are files ncu wrote (tests/fixtures); the
expected version is read from the ``ncu --version`` banner ncu printed in the same recording
session (``record.log``), never from the importer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from profiling_worker.importing import import_nsight_output
from profiling_worker.importing.ncu_version import NOT_IN_FILE
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

from app.core.bundle_files import summary_tables

FIX = Path(__file__).resolve().parents[4] / "tests" / "fixtures"
PLAIN = FIX / "h200_import" / "ncu_plain"
CASES = FIX / "import_cases"


def _recorded_version(log: Path) -> str:
    """The version line ``ncu --version`` printed at the head of the recording's log."""
    match = re.search(r"(?m)^Version (\S+ \(build \d+\) \(\S+\))$", log.read_text())
    assert match, log
    return match.group(1)


def _tool_version(tmp_path: Path, source: Path) -> str:
    bundle = import_nsight_output([source], tmp_path / "store", "job")
    how = read_manifest(bundle)["provenance"]["how_read"]
    return str(how[source.name]["tool_version"])


def test_a_report_gives_the_version_of_the_ncu_that_wrote_it(tmp_path: Path) -> None:
    import ncu_report

    expected = _recorded_version(PLAIN / "record.log")  # 2025.3.1.0 (build 36398880) ...
    assert _tool_version(tmp_path, PLAIN / "plain.ncu-rep.gz") == f"ncu {expected}"
    # ncu_report's get_version() is the library's own version (2026.3.1 here), not the report's
    ctx = ncu_report.load_report(str(PLAIN / "default_set.ncu-rep"))
    assert not expected.startswith(ctx.get_version())
    manifest = read_manifest(tmp_path / "store" / "job")
    assert manifest["provenance"]["ncu_versions"] == {"plain.ncu-rep.gz": expected}
    summary = json.loads((tmp_path / "store" / "job" / C.REPORT_SUMMARY_FILE).read_text())
    assert summary["ncu_version"] == expected  # the Files page's summary shows it
    assert summary_tables(summary).overview.iloc[-1].tolist() == ["ncu version", expected]


@pytest.mark.parametrize("source", [
    CASES / "08-details-rule-columns" / "ranges_details_base.csv",  # ncu 2025.3 details page
    CASES / "09-nvtx-in-csv" / "ranges_raw.csv",  # printed live: ==PROF== lines, raw page
    CASES / "12-ncu-console-text" / "ranges_text.log",  # console text, ncu 2025.3
    CASES / "15-ncu-2020-details" / "nsight_cfd_097K_excerpt.log",  # a public 2020.1 export
    CASES / "16-ncu-2020-console" / "hw4_2a.txt",  # public nv-nsight-cu-cli 2020 output
], ids=lambda p: p.parent.name)
def test_csv_and_console_text_without_a_version_say_so(tmp_path: Path, source: Path) -> None:
    assert NOT_IN_FILE == "ncu version: not in file"
    assert _tool_version(tmp_path, source) == NOT_IN_FILE


def test_console_text_after_the_version_banner_gives_it(tmp_path: Path) -> None:
    """What ``{ ncu --version; ncu --nvtx python3 app.py; } > log`` writes: the banner of the
    recording session (record.log's first three lines) then ncu's console text (case 12)."""
    banner = "".join((PLAIN / "record.log").read_text().splitlines(keepends=True)[:3])
    log = tmp_path / "with_banner.log"
    text = (CASES / "12-ncu-console-text" / "ranges_text.log").read_text(encoding="utf-8")
    log.write_text(banner + text, encoding="utf-8")
    expected = _recorded_version(PLAIN / "record.log")
    assert _tool_version(tmp_path, log) == f"ncu {expected}"


def test_a_report_beside_nsight_pythons_csvs_gives_its_version(tmp_path: Path) -> None:
    """What nsight-python 0.9.6 wrote for one call on the H200 (its CSVs, log and report)."""
    folder = FIX / "h200_import" / "nspy096" / "normalized"
    bundle = import_nsight_output([folder], tmp_path / "store", "job")
    how = read_manifest(bundle)["provenance"]["how_read"]
    assert how["ncu-output-scale-0.ncu-rep.gz"]["tool_version"] == (
        "ncu " + _recorded_version(PLAIN / "record.log"))  # README: all by Nsight Compute 2025.3.1
    assert how["profiled_data-scale-0.csv"]["tool_version"].startswith("nsight-python 0.9.6")

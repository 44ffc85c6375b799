"""The Files page's refusal check of a ``.ncu-rep.gz`` download (issue 26): what the file's
first and last bytes already tell is refused without inflating anything; the rest is walked."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from app.core import bundle_files
from tests.scenarios import scenario_report

REPORT = scenario_report("h200-ncu-j1-fp16")


@pytest.fixture
def no_inflation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("inflated: the trailer alone should have refused it")

    monkeypatch.setattr(bundle_files, "check_inflates", refuse)


def test_a_gz_declaring_more_than_the_cap_is_refused_from_its_trailer(
        tmp_path: Path, no_inflation: None) -> None:
    bomb = tmp_path / "bomb.ncu-rep.gz"
    with gzip.open(bomb, "wb", 9) as fh:
        for _ in range(100):
            fh.write(bytes(1 << 20))  # 100 MiB of zeros in ~100 kB
    problem = bundle_files.report_download_problem(bomb)
    assert problem == ("bomb.ncu-rep.gz: declares 104.9 MB once decompressed, more than the "
                       "67.1 MB a download may take; copy it from the bundle folder on the "
                       "server and decompress it there (gunzip)")


def test_a_file_that_is_not_gzip_is_refused_from_its_first_bytes(
        tmp_path: Path, no_inflation: None) -> None:
    plain = tmp_path / "plain.ncu-rep.gz"
    plain.write_bytes(gzip.decompress(REPORT.read_bytes()))  # the report itself, not gzip
    assert "not a readable gzip file" in str(bundle_files.report_download_problem(plain))


def test_a_recorded_report_and_a_padded_one_are_walked(tmp_path: Path) -> None:
    assert bundle_files.report_download_problem(REPORT) is None
    padded = tmp_path / "padded.ncu-rep.gz"
    shutil.copyfile(REPORT, padded)
    with gzip.open(tmp_path / "z.gz", "wb", 9) as fh:
        fh.write(bytes(1 << 20))  # declares 1 MiB: the trailer passes, the walk refuses
    padded.write_bytes(padded.read_bytes() + (tmp_path / "z.gz").read_bytes())
    assert "not an Nsight Compute report layout" in str(
        bundle_files.report_download_problem(padded))

"""The Files page's refusal check of a ``.ncu-rep.gz`` download (issues 26, 41): a file that is
not gzip is refused from its first bytes without inflating anything; the rest is inflated once
within inflate.py's cap and walked (a cut, padding and a bomb each named as such)."""

from __future__ import annotations

import gzip
import shutil
import struct
from pathlib import Path

import pytest

from app.core import bundle_files
from tests.scenarios import scenario_report

REPORT = scenario_report("h200-ncu-j1-fp16")


@pytest.fixture
def no_inflation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("inflated: its first bytes alone should have refused it")

    monkeypatch.setattr(bundle_files, "check_inflates", refuse)


def test_a_bomb_is_refused_after_a_capped_inflation(tmp_path: Path) -> None:
    """A report header and one block declaring a 1 GiB payload, then 100 MiB of zeros in
    ~100 kB: the walk cannot tell, the ratio cap stops the inflation at 64 MiB."""
    head = b"NVR\x00" + struct.pack("<I", 2) + b"\x08\x07"
    block = b"\x08\x01\x28" + bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # field 5 = 1 GiB
    bomb = tmp_path / "bomb.ncu-rep.gz"
    with gzip.open(bomb, "wb", 9) as fh:
        fh.write(head + struct.pack("<I", len(block)) + block)
        for _ in range(100):
            fh.write(bytes(1 << 20))
    problem = str(bundle_files.report_download_problem(bomb))
    assert "expands to more than 64 MiB" in problem  # the ratio cap: 64 MiB inflated at most


def test_a_report_cut_short_is_called_cut_short_not_a_size_its_last_bytes_declare(
        tmp_path: Path) -> None:
    """Issue 41: the last 4 bytes of a cut file are not a gzip trailer; read as one they
    'declared' 4,142.3 MB and the Files page refused the report for its size."""
    cut = tmp_path / "cut.ncu-rep.gz"
    cut.write_bytes(REPORT.read_bytes()[:len(REPORT.read_bytes()) // 2])
    problem = str(bundle_files.report_download_problem(cut))
    assert "a gzip file cut short" in problem and "declares" not in problem, problem


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

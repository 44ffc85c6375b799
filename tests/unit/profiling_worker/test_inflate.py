"""The capped, streamed path for every ``.gz`` and report (profiling_worker/bundle/inflate.py,
report_walk.py), on the recorded H200 reports and on the padded copies issue 26 describes:
``cat plain.ncu-rep.gz z.gz > padded64.ncu-rep.gz`` took the import worker to 4.7 GB and 84 s
before the walk (measured here: ``/usr/bin/time -v python -m profiling_worker import ...``)."""

from __future__ import annotations

import gzip
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling_worker.bundle import inflate
from profiling_worker.bundle.inflate import InflateError, plain_file, scratch_dir

ROOT = Path(__file__).resolve().parents[3]
PLAIN_GZ = ROOT / "tests/fixtures/h200_import/ncu_plain/plain.ncu-rep.gz"
PLAIN_BYTES = 10_388_668  # gzip -dc plain.ncu-rep.gz | wc -c
REPORTS = sorted(ROOT.glob("tests/fixtures/**/*.ncu-rep*"))


def _zeros_gz(path: Path, mib: int) -> bytes:
    with gzip.open(path, "wb", 9) as fh:
        for _ in range(mib):
            fh.write(bytes(1 << 20))
    return path.read_bytes()


@pytest.fixture(scope="module")
def padded64(tmp_path_factory) -> Path:
    """The issue's reproduction: a valid .ncu-rep.gz followed by a gzip member of 64 MiB of
    zeros (1.1 MB on disk)."""
    d = tmp_path_factory.mktemp("padded")
    out = d / "padded64.ncu-rep.gz"
    out.write_bytes(PLAIN_GZ.read_bytes() + _zeros_gz(d / "z.gz", 64))
    return out


def test_every_recorded_report_passes_the_walk() -> None:
    assert len(REPORTS) >= 10
    for report in REPORTS:
        with plain_file(report) as plain:
            assert plain.stat().st_size > 0, report


def test_a_padded_report_is_refused_at_the_padding_within_seconds(padded64) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    with pytest.raises(InflateError) as err, plain_file(padded64):
        pass
    assert time.monotonic() - start < 5
    assert f"at byte {PLAIN_BYTES:,}" in err.value.message
    assert "a header of 0 bytes" in err.value.message and "nothing appended" in err.value.hint
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB
    assert not any(scratch_dir().iterdir())  # the partial inflation is gone


def test_a_plain_padded_report_is_refused_before_ncu_report(tmp_path) -> None:
    padded = tmp_path / "padded.ncu-rep"
    padded.write_bytes(gzip.decompress(PLAIN_GZ.read_bytes()) + bytes(8 << 20))
    with pytest.raises(InflateError, match=f"at byte {PLAIN_BYTES:,}"), plain_file(padded):
        pass


def _padded_with_blocks(path: Path, block: bytes, count: int) -> Path:
    """The recorded report followed by ``count`` well-formed blocks ``block``, gzipped."""
    with gzip.open(path, "wb", 9) as fh:
        fh.write(gzip.decompress(PLAIN_GZ.read_bytes()))
        fh.write(block * count)
    return path


@pytest.mark.parametrize("block, count, why", [
    # u32 length 2, header field 5 = 0: a valid 6-byte block with no payload (issue 41)
    (struct.pack("<I", 2) + b"\x28\x00", 1 << 20, "more than 256 blocks with no payload"),
    # the same with a 1-byte payload: 7-byte blocks, not empty
    (struct.pack("<I", 2) + b"\x28\x01" + b"\x00", 600_000, "more than 500,000 blocks"),
], ids=["empty-6-byte-blocks", "7-byte-blocks"])
def test_a_report_padded_with_valid_blocks_is_refused_quickly_in_little_memory(
        tmp_path, block: bytes, count: int, why: str) -> None:
    """Before: the walk accepted them and ncu_report took ~22 MB per MiB of such padding
    (a 7.6 MB upload took the import worker to 2.4 GB)."""
    padded = _padded_with_blocks(tmp_path / "blocks.ncu-rep.gz", block, count)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    with pytest.raises(InflateError) as err, plain_file(padded):
        pass
    assert time.monotonic() - start < 60  # a busy machine; ~1 s idle
    assert why in err.value.message and f"at byte {PLAIN_BYTES:,}" not in err.value.message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB
    assert not any(scratch_dir().iterdir())


def test_one_huge_zero_block_stops_at_twenty_times_the_file(tmp_path) -> None:
    """A well-formed header declaring a 1 GiB payload of zeros: the walk cannot tell, the ratio
    cap does (64 MiB floor: a 1 MB file may take at most 64 MiB of temporary disk)."""
    head = b"NVR\x00" + struct.pack("<I", 2) + b"\x08\x07"
    block = b"\x08\x01\x28" + bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # field 5 = 1 GiB
    bomb = tmp_path / "bomb.ncu-rep.gz"
    with gzip.open(bomb, "wb", 9) as fh:
        fh.write(head + struct.pack("<I", len(block)) + block)
        for _ in range(256):
            fh.write(bytes(1 << 20))
    assert bomb.stat().st_size < 1 << 20
    start = time.monotonic()
    with pytest.raises(InflateError, match=r"expands to more than 64 MiB \(\d+x its"), \
            plain_file(bomb):
        pass
    assert time.monotonic() - start < 5
    assert inflate.inflate_cap(bomb) == inflate.MIN_CAP_BYTES
    big = tmp_path / "big.gz"
    big.write_bytes(bytes(200 << 20))  # the upload cap: 20x would be 4 GB
    assert inflate.inflate_cap(big) == inflate.MAX_INFLATED_BYTES


def test_a_killed_process_leaves_its_scratch_folder_to_the_next(tmp_path) -> None:
    """SIGKILL while the report is inflated (ncu_report reading it): the folder named by the
    pid stays; the next worker command (any of them: here ``kernels``) removes it."""
    code = ("import sys, time; from pathlib import Path; from profiling_worker.bundle.inflate import "
            "plain_file\nwith plain_file(Path(sys.argv[1])) as p:\n print(p, flush=True)\n "
            "time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(PLAIN_GZ)],
                             stdout=subprocess.PIPE, text=True)
    inflated = Path(child.stdout.readline().strip())  # type: ignore[union-attr]
    assert inflated.stat().st_size == PLAIN_BYTES
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert inflated.exists()
    subprocess.run([sys.executable, "-m", "profiling_worker", "kernels"], check=True,
                   capture_output=True, timeout=120)
    assert not inflated.exists() and not (scratch_dir().parent / str(child.pid)).exists()


def test_the_import_cli_refuses_the_padded_report_with_sizes(padded64, tmp_path) -> None:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(padded64),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=60)
    assert time.monotonic() - start < 10
    event = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 1 and event["event"] == "error"
    assert f"padded64.ncu-rep.gz: not an Nsight Compute report layout at byte {PLAIN_BYTES:,}" \
        in event["message"]
    assert "Traceback" not in proc.stderr


def test_a_gz_upload_that_is_not_gzip_is_named_as_such(tmp_path) -> None:
    """Before: pandas inflated it by its name and the import said 'free disk space or choose a
    writable results folder'."""
    from profiling_worker.bundle.errors import ImportFailed
    from profiling_worker.importing.assemble import import_nsight_output

    fake = tmp_path / "raw.csv.gz"
    fake.write_bytes((ROOT / "tests/fixtures/h200_import/ncu_plain/raw.csv").read_bytes())
    with pytest.raises(ImportFailed, match="raw.csv.gz: Nsight Compute CSV export, named .gz but not gzip") as err:
        import_nsight_output([fake], tmp_path / "results", "job")
    assert "rename it without .gz" in err.value.hint
    assert not (tmp_path / "results" / "job").exists()


def test_an_import_bundle_is_readable_like_a_job_bundle(tmp_path) -> None:
    """Before: mkdtemp's 0700 survived the rename (job bundles are 0755)."""
    from profiling_worker.bundle.file_mode import process_umask
    from profiling_worker.importing.assemble import import_nsight_output

    csv = ROOT / "tests/fixtures/h200_import/ncu_plain/raw.csv"
    bundle = import_nsight_output([csv], tmp_path / "results", "job")
    assert bundle.stat().st_mode & 0o777 == 0o777 & ~process_umask() == 0o755
    job = tmp_path / "results" / "made-by-mkdir"
    job.mkdir()
    assert bundle.stat().st_mode & 0o777 == job.stat().st_mode & 0o777

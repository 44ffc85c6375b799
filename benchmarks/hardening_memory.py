"""Memory, temporary disk and time of the inputs issue 26 found unbounded, as the worker and the
app meet them now (each in a fresh process; peak resident set from ``ru_maxrss``, peak
temporary disk by polling the worker's scratch folder every 5 ms).

- ``import``: ``python -m profiling_worker import FILE`` of the recorded H200 report
  (tests/fixtures/h200_import/ncu_plain/plain.ncu-rep.gz), of it padded with a gzip member of
  64 MiB and of 1 GiB of zeros (the issue's reproduction), and of a well-formed report block
  that declares 1 GiB of zeros in one member;
- ``download``: the Files page's ``.ncu-rep`` download (``bundle_files.gunzip_file``) and the
  bundle zip (``zip_bundle``) of the largest bundled job, memory above the interpreter's start.

Usage: ``python benchmarks/hardening_memory.py`` (from the repository root; about a minute,
70 MB of temporary disk).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAIN = ROOT / "tests/fixtures/h200_import/ncu_plain/plain.ncu-rep.gz"
BUNDLE = ROOT / "app/bundled/h200-ncu-elementwise"
TIMED = """
import resource, subprocess, sys, time
t0 = time.monotonic()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{peak / 1024:.0f} {time.monotonic() - t0:.2f} {proc.returncode}")
print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:])
"""
DOWNLOAD = """
import resource, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from app.core.bundle_files import gunzip_file, zip_bundle
from profiling_worker.bundle.loader import load_bundle
bundle = load_bundle(Path({bundle!r}))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with ({what} if {what!r} == "zip_bundle(bundle)" else gunzip_file(bundle.path / {report!r})) as f:
    size = f.seek(0, 2)
print(f"{{(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024:.0f}} {{size}}")
"""


def _zeros_member(mib: int) -> bytes:
    with tempfile.TemporaryFile() as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as fh:
            for _ in range(mib):
                fh.write(bytes(1 << 20))
        raw.seek(0)
        return raw.read()


def _one_huge_block(path: Path) -> None:
    head = b"NVR\x00" + struct.pack("<I", 2) + b"\x08\x07"
    block = b"\x08\x01\x28" + bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # payload: 1 GiB
    with gzip.open(path, "wb", 9) as fh:
        fh.write(head + struct.pack("<I", len(block)) + block)
        for _ in range(1024):
            fh.write(bytes(1 << 20))


def _scratch_peak(stop: threading.Event, out: list[int]) -> None:
    root = Path(tempfile.gettempdir()) / f"kprof-scratch-{os.getuid()}"
    peak = 0
    while not stop.is_set():
        try:
            used = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        except OSError:
            used = 0
        peak = max(peak, used)
        time.sleep(0.005)
    out.append(peak)


def _import(path: Path, out_dir: Path) -> str:
    stop, disk = threading.Event(), []
    watcher = threading.Thread(target=_scratch_peak, args=(stop, disk))
    watcher.start()
    cmd = [sys.executable, "-c", TIMED, sys.executable, "-m", "profiling_worker", "import",
           str(path), "--out", str(out_dir)]
    lines = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.splitlines()
    stop.set()
    watcher.join()
    rss, wall, code = lines[0].split()
    event = json.loads(lines[1]) if lines[1].startswith("{") else {"message": lines[1]}
    said = "imported" if code == "0" else f"refused: {event.get('message', '')[:110]}"
    return (f"{path.stat().st_size / 1e6:6.2f} MB file | peak RSS {rss:>5} MiB | temp disk "
            f"{disk[0] / 2**20:5.1f} MiB | {float(wall):5.1f} s | {said}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        cases = {"recorded report": PLAIN}
        for mib in (64, 1024):
            padded = t / f"padded{mib}.ncu-rep.gz"
            padded.write_bytes(PLAIN.read_bytes() + _zeros_member(mib))
            cases[f"padded, {mib} MiB of zeros"] = padded
        _one_huge_block(t / "block.ncu-rep.gz")
        cases["one 1 GiB zero block"] = t / "block.ncu-rep.gz"
        print("import (python -m profiling_worker import FILE):")
        for i, (name, path) in enumerate(cases.items()):
            print(f"  {name:26s} {_import(path, t / f'out{i}')}")
            shutil.rmtree(t / f"out{i}", ignore_errors=True)
    report = "nsight/ncu-output-profiled-0.ncu-rep.gz"
    print(f"download ({BUNDLE.name}, {sum(p.stat().st_size for p in BUNDLE.rglob('*') if p.is_file()) / 1e6:.1f} MB):")
    for what in ("gunzip_file(report)", "zip_bundle(bundle)"):
        code = DOWNLOAD.format(root=str(ROOT), bundle=str(BUNDLE), what=what, report=report)
        grown, size = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, check=True).stdout.split()
        print(f"  {what:22s} {int(size) / 1e6:6.1f} MB built on disk, memory +{grown} MiB")


if __name__ == "__main__":
    main()

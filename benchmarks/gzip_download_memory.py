"""Peak memory of the Files page's ".ncu-rep" download of a gzip bomb, before and after.

A 1 MiB ``.ncu-rep.gz`` that expands to 1 GiB (issue 15: the server grew from 264 MB to 2.3 GB).
Each way runs in its own fresh interpreter and reports its peak resident set (``ru_maxrss``):

- ``before``: ``gzip.open(path).read()`` (the download as it was: the whole file in memory);
- ``after``: ``app.core.bundle_files.gunzip_file`` (streamed to a temporary file, refused past
  :data:`MAX_INFLATED_BYTES`).

Usage: ``python benchmarks/gzip_download_memory.py`` (from the repository root; ~10 s, 1.2 GB
of memory and 256 MB of temporary disk at most).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import resource, sys
sys.path.insert(0, {root!r})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
path = {path!r}
outcome = "read"
if {way!r} == "before":
    import gzip
    data = gzip.open(path).read()
    outcome = f"read {{len(data) / 2**20:.0f}} MiB"
else:
    from app.core.bundle_files import MAX_INFLATED_BYTES, gunzip_file
    from profiling_worker.bundle.inflate import InflateError
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # after the imports
    try:
        gunzip_file(path).close()
    except InflateError as exc:
        outcome = f"refused: {{exc}}"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{{(peak - base) / 1024:.0f}} MiB above the interpreter's start; {{outcome}}")
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.ncu-rep.gz"
        with gzip.open(bomb, "wb", compresslevel=9) as fh:
            for _ in range(1024):
                fh.write(bytes(1024**2))
        print(f"{bomb.name}: {bomb.stat().st_size / 2**20:.2f} MiB, expands to 1024 MiB")
        for way in ("before", "after"):
            code = PROBE.format(root=str(ROOT), path=str(bomb), way=way)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout.strip()
            print(f"{way:6s}: peak {out}")


if __name__ == "__main__":
    main()

"""Peak memory of importing a large nsight-python per-run CSV (issue 15: at most ~5x the file).

Builds ``profiled_data-bench-0.csv`` files of the requested sizes from the real H200 rows in
tests/fixtures/reference/h200-nsight-0.9.6-matmul (the rows repeated over more configs ``n``, so
the file has nsight-python's exact layout), imports each in a fresh interpreter and reports the
peak resident memory above that interpreter's baseline (after importing the small reference
file, so every library an import loads is in the baseline), divided by the file size.

Usage: python benchmarks/import_memory.py [MB ...]   (default: 20 50)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul" / "profiled_data-mm-0.csv"
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from profiling_worker.importing import import_nsight_output
# The baseline includes every library an import loads: a small import first (the reference).
import_nsight_output([Path(sys.argv[3])], Path(sys.argv[2]), "warm-up")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
import_nsight_output([Path(sys.argv[1])], Path(sys.argv[2]), "bench")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kib": base, "peak_kib": peak, "s": time.perf_counter() - t0}))
"""


def make_csv(path: Path, mb: float) -> int:
    """Write a per-run CSV of about ``mb`` MB; returns its size in bytes."""
    lines = REF.read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    col = header.split(",").index("n")
    with path.open("w", encoding="utf-8") as out:
        out.write(header + "\n")
        n, size = 0, 0
        while size < mb * 1e6:
            n += 1
            for row in rows:
                fields = row.split(",")
                fields[col] = str(n)
                line = ",".join(fields) + "\n"
                out.write(line)
                size += len(line)
    return path.stat().st_size


def measure(mb: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "profiled_data-bench-0.csv"
        size = make_csv(csv, mb)
        proc = subprocess.run([sys.executable, "-c", CHILD, str(csv), str(Path(tmp) / "out"),
                               str(REF)],
                              capture_output=True, text=True, cwd=REPO, check=True)
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    extra = (got["peak_kib"] - got["base_kib"]) * 1024
    return {"file_mb": round(size / 1e6, 1), "extra_peak_mb": round(extra / 1e6, 1),
            "ratio": round(extra / size, 2), "seconds": round(got["s"], 1)}


if __name__ == "__main__":
    for mb in [float(a) for a in sys.argv[1:]] or [20.0, 50.0]:
        print(json.dumps(measure(mb)), flush=True)

"""Peak memory and time of importing a large file (issue 15: a CSV within ~5x the file; issue
20: a 17 MB report within 5x and 2 s).

CSV: builds ``profiled_data-bench-0.csv`` files of the requested sizes from the real H200 rows
in tests/fixtures/reference/h200-nsight-0.9.6-matmul (the rows repeated over more configs
``n``, so the file has nsight-python's exact layout).

Report: the largest report bundled with the dashboard, ``h200-ncu-roofline`` (recorded on the
H200 by the worker: 60 launches, 16.9 MB once inflated), inflated to a plain ``.ncu-rep``.

Each file is imported in a fresh interpreter; the figure is the peak resident memory above
that interpreter's baseline after a small warm-up import of the same kind (the reference CSV,
or the 0.7 MB J1 report), so every library an import loads -- and ncu_report's one-time
set-up, about 115 MB on the first launch it reads of any report -- is in the baseline; the
peak above the interpreter with the libraries imported but nothing read ("cold") is printed
too. Times are wall clock and CPU (user + system) seconds of the import alone: on a shared
machine the CPU time is the steadier figure.

Usage: python benchmarks/import_memory.py [MB ...]   (default: 20 50)
       python benchmarks/import_memory.py report [REPORT]
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul" / "profiled_data-mm-0.csv"
SMALL_REPORT = REPO / "tests" / "fixtures" / "bundles" / "h200-ncu-j1-fp16" / "nsight" / "ncu-output-profiled-0.ncu-rep.gz"
BIG_REPORT = REPO / "app" / "bundled" / "h200-ncu-roofline" / "nsight" / "ncu-output-profiled-0.ncu-rep.gz"
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import ncu_report, pandas, pyarrow
from profiling_worker.importing import import_nsight_output
cold = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[4] == "warm":  # the baseline includes every library and set-up an import needs
    import_nsight_output([Path(sys.argv[3])], Path(sys.argv[2]), "warm-up")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), cpu()
import_nsight_output([Path(sys.argv[1])], Path(sys.argv[2]), "bench")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"cold_kib": cold, "base_kib": base, "peak_kib": peak,
                  "s": time.perf_counter() - t0, "cpu_s": cpu() - c0}))
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


def _child(path: Path, warm_up: Path, tmp: str, mode: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(Path(tmp) / mode),
                           str(warm_up), mode],
                          capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _figures(path: Path, warm_up: Path, tmp: str) -> dict:
    """Peak above the warm baseline (and above the cold one, in a second interpreter)."""
    size = path.stat().st_size
    warm, cold = _child(path, warm_up, tmp, "warm"), _child(path, warm_up, tmp, "cold")
    extra = (warm["peak_kib"] - warm["base_kib"]) * 1024
    cold_extra = (cold["peak_kib"] - cold["cold_kib"]) * 1024
    return {"file_mb": round(size / 1e6, 1), "extra_peak_mb": round(extra / 1e6, 1),
            "ratio": round(extra / size, 2), "seconds": round(warm["s"], 2),
            "cpu_seconds": round(warm["cpu_s"], 2),
            "cold_extra_peak_mb": round(cold_extra / 1e6, 1),
            "cold_seconds": round(cold["s"], 2), "cold_cpu_seconds": round(cold["cpu_s"], 2)}


def measure(mb: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "profiled_data-bench-0.csv"
        make_csv(csv, mb)
        return _figures(csv, REF, tmp)


def measure_report(report: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / report.name.removesuffix(".gz")
        with gzip.open(report) if report.name.endswith(".gz") else report.open("rb") as src, \
                plain.open("wb") as out:
            shutil.copyfileobj(src, out)
        return {"report": report.name, **_figures(plain, SMALL_REPORT, tmp)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["report"]:
        print(json.dumps(measure_report(Path(sys.argv[2]) if len(sys.argv) > 2 else BIG_REPORT)))
    else:
        for mb in [float(a) for a in sys.argv[1:]] or [20.0, 50.0]:
            print(json.dumps(measure(mb)), flush=True)

"""Where a report import's memory goes (issue 26: a valid report needs many times its size in
the worker), stage by stage, each report in a fresh interpreter.

Resident set (``VmRSS``) above the interpreter with pandas, pyarrow, ncu_report and the importer
imported ("base"), taken:

- ``inflated``: after the ``.gz`` is inflated to a temporary file (streamed, 1 MiB at a time);
- ``first launch``: after ncu_report loads the report and its first launch (its fixed set-up);
- ``all launches``: after the last launch was read (what ncu_report keeps per launch: it holds
  every launch it has loaded until the process ends, ``del`` and ``malloc_trim`` return none);
- ``rows``: after the importer's per-launch table is built (``read_report`` returned);
- ``bundle``: after the whole import (tables written, plausibility checks).

Then, in a second fresh interpreter, the peak of every Python allocation of the import
(tracemalloc): what the importer itself holds, as opposed to ncu_report's C++ memory.

Usage: python benchmarks/report_memory_stages.py [REPORT.ncu-rep[.gz] ...]
       (default: the bundled J1, roofline and elementwise reports; about 30 s)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [REPO / "tests/fixtures/ncu_rep/h200-ncu-j1-fp16.ncu-rep.gz",
           REPO / "app/bundled/h200-ncu-roofline/nsight/ncu-output-profiled-0.ncu-rep.gz",
           REPO / "app/bundled/h200-ncu-elementwise/nsight/ncu-output-profiled-0.ncu-rep.gz"]
CHILD = r"""
import json, sys, tempfile, tracemalloc
from pathlib import Path
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
import ncu_report, pandas, pyarrow
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing import ncu_rep as R
from profiling_worker.extract import ncu_report_reader as RR
from profiling_worker.bundle import inflate as I
out = {"base": rss()}
src, mode = Path(sys.argv[1]), sys.argv[2]
if mode == "stages":
    gunzip, actions, read = I.gunzip_to, RR._actions, R.read_report
    def gunzip_to(*a, **k):
        got = gunzip(*a, **k); out["inflated"] = rss(); out["plain_bytes"] = got.stat().st_size
        return got
    def _actions(path):
        n = 0
        for action in actions(path):
            n += 1
            if n == 1:
                out["first launch"] = rss()
            yield action
        out["all launches"], out["launches"] = rss(), n
    def read_report(*a, **k):
        got = read(*a, **k); out["rows"] = rss()
        return got
    I.gunzip_to, RR._actions, R.read_report = gunzip_to, _actions, read_report
    import_nsight_output([src], Path(tempfile.mkdtemp()), "bench")
    out["bundle"] = rss()
else:
    tracemalloc.start()
    import_nsight_output([src], Path(tempfile.mkdtemp()), "bench")
    out["python_peak"] = tracemalloc.get_traced_memory()[1] / 2**20
print(json.dumps(out))
"""
STAGES = ("inflated", "first launch", "all launches", "rows", "bundle")


def _child(report: Path, mode: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(report), mode], cwd=REPO,
                          capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main(argv: list[str]) -> None:
    reports = [Path(a) for a in argv] or DEFAULT
    print("| report | launches | inflated MB | " + " | ".join(STAGES)
          + " | Python peak (tracemalloc) |")
    print("|" + " --- |" * (len(STAGES) + 4))
    for report in reports:
        got = _child(report, "stages")
        python = _child(report, "trace")["python_peak"]
        base = got["base"]
        steps = " | ".join(f"+{got[s] - base:.0f}" for s in STAGES if s in got)
        print(f"| {report.parent.parent.name if report.parent.name == 'nsight' else report.name}"
              f" | {got.get('launches', 0):.0f} | {got.get('plain_bytes', 0) / 1e6:.1f} | "
              f"{steps} | {python:.1f} |")
    print("(MiB above the interpreter with the libraries imported; each stage includes the ones "
          "before it)")


if __name__ == "__main__":
    main(sys.argv[1:])

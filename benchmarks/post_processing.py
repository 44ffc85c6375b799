"""The worker's own share of a warm job, rebuilt from a recorded H200 bundle, in one process.

A warm job's post-processing is everything after the backend's collection: the bundle's tables
(``results.write_result_tables``: runs, aggregated, work, every table as Parquet + CSV) and
``results.finish_bundle`` (plausibility notes, file list, manifest). Its inputs are what the
backend hands over: the per-launch table (CUPTI activity records; nsight-python's own CSVs under
``nsight/`` hold only per-run sums), the NVML trace, collectors, unattributed launches and launch
times. The bundle stores each of them as written (``tables/<name>.parquet``), so a recorded
bundle gives the real inputs of a real job, and its tables and notes the outputs to match.

Each repeat writes a fresh copy of the bundle (its non-table files copied beforehand, not timed)
and times the two calls; the first repeat warms the process up (imports, caches) and is not
counted. Prints the median and min-max wall time in ms per job, the median CPU time of the
process (less swayed by other processes on a shared machine) and whether the rebuilt tables,
CSV text, notes and file list equal the recorded ones.

Usage: ``python benchmarks/post_processing.py [BUNDLE ...] [--repeats 30] [--json OUT]
[--keep DIR] [--against CHECKOUT --rounds 4]`` (default bundle: app/bundled/h200-cupti-j1-fp16,
job J1). ``--against``: before (that checkout, e.g. ``git archive main | tar -x -C
/tmp/base``) and after (this one) interleaved in one run; ``--json`` then holds every round's
rows of both sides (``before``, ``after``).
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # after PYTHONPATH: a "before" checkout given there wins

from profiling_worker.job import results  # noqa: E402
from profiling_worker.bundle import writer  # noqa: E402
from profiling_worker.bundle.writer import empty_table  # noqa: E402
from profiling_worker.catalog.registry import Registry, load_registry  # noqa: E402
from profiling_worker.bundle.schema import columns as C  # noqa: E402
from profiling_worker.bundle.schema.spec import JobSpec, load_spec  # noqa: E402

J1_BUNDLE = REPO / "app" / "bundled" / "h200-cupti-j1-fp16"
EXPECTED = REPO / "tests" / "fixtures" / "post_processing"
#: What the finished bundle adds to the manifest the run path hands to finish_bundle.
_FINISHED_KEYS = ("notes", "files")


@dataclass
class Recorded:
    """One recorded bundle as the run path has it before writing: spec, the backend's frames,
    the manifest without what finish_bundle adds."""

    bundle: Path
    spec: JobSpec
    registry: Registry
    annotations: dict[str, tuple[str, ...]]
    inputs: dict[str, Any]  # write_result_tables' keyword arguments
    manifest: dict[str, Any]


def _table(bundle: Path, name: str) -> pd.DataFrame | None:
    path = bundle / C.TABLES_DIR / f"{name}.parquet"
    return pd.read_parquet(path) if path.is_file() else None


def _or_none(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """None for an absent or empty table: the backend returned none (the writer writes the
    empty layout, or nothing for an optional table)."""
    return None if frame is None or frame.empty else frame


def load_recorded(bundle: Path) -> Recorded:
    """The inputs of ``bundle``'s post-processing (see the module docstring).

    Raises:
        FileNotFoundError: the bundle has no spec.json, manifest.json or launches table.
    """
    from profiling_worker.job.runner import _annotations  # the run path's own

    registry = load_registry()
    spec = load_spec(str(bundle / C.SPEC_FILE), registry.kernels)
    launches = _table(bundle, C.TABLE_LAUNCHES)
    if launches is None:
        raise FileNotFoundError(f"{bundle}: no tables/{C.TABLE_LAUNCHES}.parquet")
    nvml = _table(bundle, C.TABLE_NVML)
    inputs = {"launches": launches,
              "nvml": nvml if nvml is not None else empty_table(C.TABLE_NVML),
              "collectors": _or_none(_table(bundle, C.TABLE_COLLECTORS)),
              "unattributed": _or_none(_table(bundle, C.TABLE_UNATTRIBUTED)),
              "launch_times": _or_none(_table(bundle, C.TABLE_LAUNCH_TIMES))}
    manifest = json.loads((bundle / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    for key in ("schema_version", *_FINISHED_KEYS):
        manifest.pop(key, None)
    return Recorded(bundle, spec, registry, _annotations(spec, registry), inputs, manifest)


def _fresh_copy(rec: Recorded, root: Path) -> Path:
    """A job folder holding the bundle's files except its tables and manifest (what the run
    path has on disk when it starts writing)."""
    job = Path(tempfile.mkdtemp(prefix="job-", dir=root))
    for path in rec.bundle.iterdir():
        if path.name in (C.TABLES_DIR, C.MANIFEST_FILE):
            continue
        if path.is_dir():
            shutil.copytree(path, job / path.name)
        else:
            shutil.copy2(path, job / path.name)
    return job


def post_process(rec: Recorded, job: Path) -> None:
    """The run path's post-processing of one job (runner.profile_and_write's writing, with the
    result-ready manifest after runs and aggregated where the checkout writes one, then
    runner.run_job's run audit and finish_bundle)."""
    manifest = dict(rec.manifest)
    # a checkout from before issue 40's result-ready mark writes the tables alone
    ready = ({"ready": lambda: results.mark_result_ready(job, manifest)}
             if hasattr(results, "mark_result_ready") else {})
    written = results.write_result_tables(job, rec.spec, rec.registry, rec.annotations,
                                          **rec.inputs, **ready)
    if hasattr(results, "write_run_audit"):  # a checkout from before the audit has none
        written = results.write_run_audit(job, written, manifest)
    # a checkout from before finish_bundle took the written tables reads them back itself
    given: dict[str, Any] = ({"tables": written} if "tables" in
                             inspect.signature(results.finish_bundle).parameters else {})
    results.finish_bundle(job, manifest, **given)


def differences(rec: Recorded, job: Path, expected: Path | None = None) -> list[str]:
    """How the rebuilt bundle ``job`` differs from the recorded one: table files (Parquet
    schema and values; a recorded CSV's text against the CSV made from the rebuilt Parquet
    file), notes and file list; [] when they are the same.

    ``expected``: a folder whose ``tables/<file>`` and ``finished.json`` (notes, files) replace
    the recorded bundle's where the writer of today differs from the recorder's
    (tests/fixtures/post_processing/README.md)."""
    import pyarrow.parquet as pq

    def want(name: str) -> Path:
        given = expected / C.TABLES_DIR / name if expected else None
        return given if given is not None and given.is_file() else rec.bundle / C.TABLES_DIR / name

    out = []
    # the expected folder may add tables the recorder did not write (the run audit)
    recorded = sorted({p.name for p in (rec.bundle / C.TABLES_DIR).iterdir()}
                      | ({p.name for p in (expected / C.TABLES_DIR).iterdir()}
                         if expected and (expected / C.TABLES_DIR).is_dir() else set()))
    rebuilt = sorted(p.name for p in (job / C.TABLES_DIR).iterdir())
    # since issue 40 the writer writes Parquet only: a recorded CSV is the expected text of the
    # CSV made from the rebuilt Parquet file (a checkout before that, "--against", wrote it)
    if [n for n in recorded if not n.endswith(".csv")] != [n for n in rebuilt
                                                            if not n.endswith(".csv")]:
        out.append(f"table files {rebuilt} != recorded {recorded} (the CSVs aside)")
    for name in recorded:
        a, b = want(name), job / C.TABLES_DIR / name
        if name.endswith(".csv") and (b.read_bytes() if b.is_file() else writer.table_csv(
                job, name.removesuffix(".csv"))) != a.read_bytes():
            out.append(f"{name}: CSV text differs")
        if (name.endswith(".parquet") and b.is_file()
                and not pq.read_table(a).equals(pq.read_table(b))):
            out.append(f"{name}: Parquet schema or values differ")
    finished = expected / "finished.json" if expected else None
    old = json.loads((finished if finished is not None and finished.is_file()
                      else rec.bundle / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    new = json.loads((job / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    out += [f"manifest {key} differs" for key in _FINISHED_KEYS if old.get(key) != new.get(key)]
    return out


def bench(bundle: Path, repeats: int, root: Path, keep: Path | None = None) -> dict[str, Any]:
    """Time ``repeats`` post-processings of ``bundle`` after one warm-up; ms per job. The
    warm-up's bundle is compared with the recorded one (with EXPECTED/<bundle name> where
    there is one); ``keep``: copy it to ``keep/<bundle name>``."""
    rec = load_recorded(bundle)
    times, cpu = [], []
    for i in range(repeats + 1):
        job = _fresh_copy(rec, root)
        t0, c0 = time.perf_counter(), time.process_time()
        post_process(rec, job)
        elapsed, used = time.perf_counter() - t0, time.process_time() - c0
        if i:
            times.append(elapsed * 1e3)
            cpu.append(used * 1e3)
        else:
            diff = differences(rec, job, EXPECTED / bundle.name)
            if keep is not None:
                shutil.copytree(job, keep / bundle.name, dirs_exist_ok=True)
        shutil.rmtree(job)
    return {"bundle": bundle.name, "rows": len(rec.inputs["launches"]),
            "median_ms": statistics.median(times), "min_ms": min(times),
            "max_ms": max(times), "cpu_median_ms": statistics.median(cpu), "repeats": repeats, "same_as_recorded": not diff,
            "differences": diff, "code": str(Path(results.__file__).resolve().parent.parent)}


def against(base: Path, rounds: int, argv: list[str], out_json: Path | None = None) -> int:
    """Before/after in one run: this benchmark in a fresh process per side, ``base`` (another
    checkout: before) and this one (after), interleaved ``rounds`` times (A B A B), so drift
    on a shared machine hits both alike; prints each side's per-round medians and its fastest
job (ms per job)."""
    import os
    import subprocess

    sides = {"before": str(base.resolve()), "after": str(REPO)}
    got: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="post-processing-ab-") as tmp:
        for i in range(rounds):
            for side, path in sides.items():
                out = Path(tmp) / f"{side}-{i}.json"
                subprocess.run([sys.executable, __file__, *argv, "--json", str(out)],
                               env={**os.environ, "PYTHONPATH": path}, check=False,
                               stdout=subprocess.DEVNULL)
                got[side] += json.loads(out.read_text())
    if out_json is not None:  # raw, for a paired ratio (benchmarks/doc_figures.py)
        out_json.write_text(json.dumps({
            "rounds": rounds, "args": argv, "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "finished_utc": time.strftime(
                "%Y-%m-%d %H:%M UTC", time.gmtime()),
            # the side's name, not the checkout's path on this machine
            **{side: [{**r, "code": side} for r in rows] for side, rows in got.items()}},
            indent=1))
    for side, rows in got.items():
        for name in dict.fromkeys(r["bundle"] for r in rows):
            mine = [r for r in rows if r["bundle"] == name]
            wall = ", ".join(f"{r['median_ms']:.1f}" for r in mine)
            cpu = ", ".join(f"{r['cpu_median_ms']:.1f}" for r in mine)
            least = min(r["min_ms"] for r in mine)
            same = all(r["same_as_recorded"] for r in mine)
            print(f"{side:6s} {name}: wall median per round {wall} ms (fastest job {least:.1f});"
                  f" CPU {cpu} ms; same as recorded: {same}  [{sides[side]}]")
    return 0 if all(r["same_as_recorded"] for rows in got.values() for r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bundles", nargs="*", type=Path, default=[J1_BUNDLE])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="copy each rebuilt bundle into this folder")
    ap.add_argument("--against", type=Path, help="another checkout (before): A B A B")
    ap.add_argument("--rounds", type=int, default=4, help="with --against")
    args = ap.parse_args(argv)
    if args.against:
        return against(args.against, args.rounds,
                       [*map(str, args.bundles), "--repeats", str(args.repeats)], args.json)
    with tempfile.TemporaryDirectory(prefix="post-processing-") as tmp:
        rows = [bench(b, args.repeats, Path(tmp), args.keep) for b in args.bundles]
    for r in rows:
        print(f"{r['bundle']}: {r['rows']} launch rows, {r['median_ms']:.1f} ms median "
              f"({r['min_ms']:.1f}-{r['max_ms']:.1f}, {r['repeats']} repeats; CPU "
              f"{r['cpu_median_ms']:.1f} ms), same as recorded: "
              f"{r['same_as_recorded']} {'; '.join(r['differences'])}  [{r['code']}]")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(r["same_as_recorded"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

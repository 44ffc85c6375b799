"""Server time of the result pages on a 23k-row job (issue 6: < 1 s per page).

Builds a SCALE-TEST bundle (not a measurement: real H200 per-run rows of
app/bundled/h200-ncu-matmul-sweep tiled to 64 configs x 3 annotations x 20 runs x 6 metrics =
23,040 rows; its manifest says so), then times each page's script run with Streamlit's AppTest
(load, compute the frame, build the figure, serialise), after one warm-up run per page.

Usage: ``python benchmarks/results_page_scale.py [--repeats 3]``; prints seconds per page.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SOURCE = REPO / "app" / "bundled" / "h200-ncu-matmul-sweep"
PAGES = ("sweep", "stability", "results", "bound_roofline", "memory", "kernels")


def build_scale_bundle(out: Path, configs: int = 64, runs: int = 20) -> int:
    """Write the scale-test bundle to ``out`` as the worker writes a finished job's
    (``profiling_worker.job.runner.run_job``: :func:`~profiling_worker.job.results.
    write_result_tables`, :func:`~profiling_worker.job.results.write_run_audit`,
    :func:`~profiling_worker.job.results.finish_bundle`), from the source's per-launch rows
    tiled to ``configs`` configs x ``runs`` runs and its NVML trace; the work table is the
    source's, tiled alike (the kernel's formulas at n = size + c would credit the size's
    durations with more FLOPs than they did, and the run audit's timer check would fail them);
    returns its number of per-run rows."""
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.bundle.schema.spec import validate_spec
    from profiling_worker.catalog.registry import load_registry
    from profiling_worker.job import results
    from profiling_worker.job.runner import _annotations  # the run path's own
    from profiling_worker.bundle.writer import write_table

    real = pd.read_parquet(SOURCE / "tables" / "launches.parquet")
    n_real = sorted(real["n"].unique())
    # config c: the launches of size n_real[c % 5], its run r being the real run r % 10, renamed
    # to Config c and n = that size + c; taken by index arrays (10,000 configs in seconds)
    blocks = [pd.concat([real[(real["n"] == n) & (real["Run"] == r % 10)].assign(Run=r)
                         for r in range(runs)], ignore_index=True) for n in n_real]
    launches = _tiled(blocks, configs, n_real)
    manifest = json.loads((SOURCE / "manifest.json").read_text())
    raw_spec = {**manifest["spec"], "runs": runs,  # the spec of the tiled rows
                "configs": [{"n": int(n_real[c % len(n_real)]) + c} for c in range(configs)]}
    registry = load_registry()
    # checked on its first config: one job's spec takes at most 4,096 (a 10,000-config bundle
    # is beyond what the worker records in one job), then given them all
    spec = dataclasses.replace(validate_spec({**raw_spec, "configs": raw_spec["configs"][:1]},
                                             registry.kernels),
                               configs=tuple(raw_spec["configs"]))
    out.mkdir(parents=True)
    tables = results.write_result_tables(
        out, spec, registry, _annotations(spec, registry), launches,
        pd.read_parquet(SOURCE / "tables" / "nvml_trace.parquet"), None)
    real_work = pd.read_parquet(SOURCE / "tables" / "work.parquet")
    tables[C.TABLE_WORK] = _tiled([real_work[real_work["n"] == n] for n in n_real], configs,
                                  n_real)
    write_table(out, C.TABLE_WORK, tables[C.TABLE_WORK])
    manifest.update(job_id=out.name, status="done", label="SCALE TEST, not a measurement: "
                    f"real H200 rows tiled to {configs:,} configs x {runs} runs", files=[],
                    spec=raw_spec)
    (out / "spec.json").write_text(json.dumps(raw_spec))
    # as every run ends: the run audit and the plausibility notes stored (without them the
    # dashboard derives both at each load: 11 s and 7 s at 1,000 configs)
    tables = results.write_run_audit(out, tables, manifest)
    results.finish_bundle(out, manifest, tables=tables)
    return len(tables[C.TABLE_RUNS])


def _tiled(blocks: list[pd.DataFrame], configs: int, n_real: list[int]) -> pd.DataFrame:
    """Config c takes ``blocks[c % len(blocks)]`` as Config c, n = its size + c."""
    sizes = np.array([len(b) for b in blocks])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pick = np.arange(configs) % len(blocks)
    take = np.concatenate([np.arange(starts[b], starts[b] + sizes[b]) for b in pick])
    rows = pd.concat(blocks, ignore_index=True).iloc[take].reset_index(drop=True)
    return rows.assign(Config=np.repeat(np.arange(configs), sizes[pick]),
                       n=np.repeat(np.asarray(n_real)[pick] + np.arange(configs), sizes[pick]))


def time_pages(results: Path, job_id: str, repeats: int) -> dict[str, list[float]]:
    """Seconds per AppTest script run of each page, after one warm-up run."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(KPROF_RESULTS_DIR=str(results), KPROF_BUNDLED_DIR=str(results / "none"))
    out: dict[str, list[float]] = {}
    for page in PAGES:
        at = AppTest.from_file(str(REPO / "app" / "streamlit_app.py"), default_timeout=120)
        at.query_params["job"] = job_id
        at.run()
        at.switch_page(f"app_pages/{page}.py").run()  # warm-up: caches filled
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        assert not at.exception, (page, at.exception)
        out[page] = times
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="scale-"))
    job_id = "scale-test-23k"
    rows = build_scale_bundle(root / job_id)
    print(f"scale-test bundle: {rows} per-run rows")
    for page, times in time_pages(root, job_id, args.repeats).items():
        print(f"{page:16s} median {statistics.median(times):.3f} s  max {max(times):.3f} s")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

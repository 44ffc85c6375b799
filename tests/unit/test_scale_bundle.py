"""The scale-test bundle of the benchmarks (benchmarks/results_page_scale.py, issue 37) is written
as the worker writes a finished job's: its pages are timed on what a recorded job holds, the
stored run audit included (without it the app derived the audit at every load: 11 of 18.7 s
of the Results page at 1,000 configs)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.results_page_scale import SOURCE, build_scale_bundle
from profiling_worker.bundle.schema import columns as C, run_audit as A


def test_the_scale_bundle_stores_the_run_audit_the_loader_reads(tmp_path: Path) -> None:
    from app.core.views.run_audit import STORED, audit_frame, audit_source
    from profiling_worker.bundle.gate.sides import beside_tables
    from profiling_worker.bundle.loader import load_bundle

    rows = build_scale_bundle(tmp_path / "scale-20-configs", configs=20, runs=3)
    bundle = load_bundle(tmp_path / "scale-20-configs")
    assert audit_source(bundle) == STORED
    tables = beside_tables(bundle)
    assert A.stored_audit(tables, bundle.manifest) is not None
    # the stored table is what the loader would derive: the same checks of the same rows
    pd.testing.assert_frame_equal(
        audit_frame(bundle).reset_index(drop=True),
        A.audit_runs(tables, bundle.manifest).reset_index(drop=True), check_dtype=False)
    runs = tables[C.TABLE_RUNS]
    assert rows == len(runs) and runs[C.CONFIG].nunique() == 20
    assert set(runs[C.RUN]) == {0, 1, 2}
    assert len(bundle.manifest["spec"]["configs"]) == 20
    assert not [w for w in bundle.manifest.get("warnings", []) if "run audit" in w]
    # the launches the worker turned into runs are the source's, tiled (n = its size + config)
    launches = pd.read_parquet(tmp_path / "scale-20-configs" / "tables" / "launches.parquet")
    source = pd.read_parquet(SOURCE / "tables" / "launches.parquet")
    assert len(launches) == 3 / 10 * 4 * len(source)  # 20 configs = 4 x 5 sizes, 3 of 10 runs

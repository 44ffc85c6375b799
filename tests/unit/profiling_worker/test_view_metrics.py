"""Each view's metric set is declared once (bundle/schema/view_metrics.py): the sidebar's presets, the
"run it with the ... preset" hints and the views read it, and a metric declared ``shown`` is a
column of the view. Checked on a real Nsight Compute report (tests/fixtures/h200_import)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema import columns as C, metrics as M, spec, view_metrics as V

from app.core import metrics as app_metrics
from profiling_worker.bundle.loader import load_bundle
from app.core.views import bound
from app.core.views.bound import BoundOptions, bound_frame

PLAIN = Path(__file__).resolve().parents[2] / "fixtures" / "h200_import" / "ncu_plain"


def test_presets_and_hints_derive_from_the_views() -> None:
    assert spec.METRIC_PRESETS is V.METRIC_PRESETS and app_metrics.PRESET_OF is V.PRESET_OF
    named = {v for k, v in vars(M).items() if k.isupper() and isinstance(v, str)}
    for view in V.VIEWS:
        preset = V.METRIC_PRESETS[view.preset]
        assert preset[0] == C.GPU_TIME and len(set(preset)) == len(preset), view.preset
        assert set(view.needs) | set(view.collects) <= set(preset)
        assert set(preset) - {C.GPU_TIME} <= named, f"{view.preset}: a metric not in metrics.py"
        assert all(V.PRESET_OF[m] == view.preset for m in view.needs), view.preset
    collected = [m for v in V.VIEWS for m in (*v.needs, *v.collects)]
    assert len(collected) == len(set(collected)), "a metric collected by two presets: which hint?"


@pytest.fixture(scope="module")
def plain_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_nsight_output([PLAIN / "plain.ncu-rep.gz"], tmp_path_factory.mktemp("s"), "p")


def test_a_shown_metric_is_a_column_of_the_view(plain_report: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = load_bundle(plain_report)
    before = bound_frame(bundle, BoundOptions())
    monkeypatch.setattr(bound, "BOUND", replace(
        V.BOUND, reads=(*V.BOUND.reads, M.L2_HIT_PCT),
        shown={**V.BOUND.shown, "DramReadAsIs": M.DRAM_READ, "L2HitPct": M.L2_HIT_PCT}))
    after = bound_frame(bundle, BoundOptions())
    assert [c for c in after.columns if c in before] == list(before.columns)
    assert set(after.columns) - set(before.columns) == {"DramReadAsIs", "L2HitPct"}
    agg = bundle.table(C.TABLE_AGGREGATED)
    read = agg[agg[C.METRIC] == M.DRAM_READ].set_index([C.ANNOTATION, C.CONFIG])[C.AVG]
    got = after.set_index([C.ANNOTATION, C.CONFIG])["DramReadAsIs"]
    pd.testing.assert_series_equal(got, read.reindex(got.index).astype(float), check_names=False)
    assert after["L2HitPct"].isna().all()  # the report did not collect it: NaN, no error

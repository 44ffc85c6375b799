"""In a real browser, on the bundled H200 sweep: the sweep's CSV (written only when its button is
clicked) is the table behind the chart, byte for byte; the "Deep dive one point" expander sends
its point picker only once opened, and then offers the job's points (screenshot
``tests/artifacts/views/sweep-deep-dive-open.png``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from profiling_worker.bundle.schema import columns as C

from app.core import derived, frame_columns as F
from profiling_worker.bundle.loader import load_bundle
from app.core.deep_dive_request import sweep_points
from app.core.views.sweep import SweepOptions, sweep_frame, sweep_x
from app.ui.panels import csv_bytes
from tests.e2e.conftest import AppServer, get_by_key, open_app, wait_for_app_run, wait_for_elements
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e
JOB = "h200-ncu-matmul-sweep"
BUNDLE = SCENARIOS / JOB


def test_sweep_csv_is_the_table_behind_the_chart(
        page, bundled_app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    open_app(page, bundled_app_server.url, f"?job={JOB}")
    wait_for_elements(page)
    with page.expect_download() as info:
        get_by_key(page, "sweep-csv").get_by_role("button").click()
    download = info.value
    bundle = load_bundle(BUNDLE)
    frame = sweep_frame(bundle, SweepOptions(x=sweep_x(bundle, None)))
    expected = csv_bytes(frame.assign(Measurement=bundle.measurement))
    assert download.suggested_filename == f"{JOB}-sweep-{derived.TIME}.csv"
    assert Path(download.path()).read_bytes() == expected


def test_deep_dive_expander_sends_its_picker_only_when_opened(
        page, bundled_app_server: AppServer, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    open_app(page, bundled_app_server.url, f"?job={JOB}")
    wait_for_elements(page)
    picker = get_by_key(page, "sweep-deep-point")
    expect(picker).to_have_count(0)  # closed: not drawn
    get_by_key(page, "sweep-deep-open").get_by_text("Deep dive one point").click()
    wait_for_app_run(page)
    expect(picker.get_by_role("combobox")).to_be_visible(timeout=60_000)
    first = sweep_points(load_bundle(BUNDLE)).iloc[0]
    expect(picker.get_by_role("combobox")).to_have_value(
        f"{first[C.ANNOTATION]} · {first[F.CONFIG_LABEL]}")
    expect(get_by_key(page, "sweep-deep-run").get_by_role("button")).to_be_disabled()  # no GPU
    wait_for_elements(page)
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "sweep-deep-dive-open.png"))

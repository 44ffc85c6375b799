"""The "Deep dive one point" action's Point picker follows the job selected in the sidebar, in a
real browser: a point of the job shown before that the new job does not have is not kept (the
browser keeps a keyed selectbox's value over the ``index`` the server sends, Streamlit 1.67;
``state.keep_if_offered`` now writes the value into the session state, as ``state.job_picker``
did for the Compare pickers), and a point both jobs have stays. The same for the other pickers
``keep_if_offered`` serves, e.g. the Size sweep's Normalise to."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, get_by_key, open_app, wait_for_app_run
from tests.e2e.test_pickers_follow_job import _select_job, _type_pick

pytestmark = pytest.mark.e2e

POINT = "sweep-deep-point"
FIRST, THEN = "h200-ncu-matmul-sweep", "h200-ncu-j1-fp16"  # THEN: fp16 only, n=1024..8192


def _point(page):  # type: ignore[no-untyped-def]
    return get_by_key(page, POINT).get_by_role("combobox")


def _open_action(page) -> None:  # type: ignore[no-untyped-def]
    """Open the expander on the Size sweep (its content is drawn only while open)."""
    page.get_by_test_id("stMain").get_by_text("Deep dive one point").click()
    wait_for_app_run(page)
    expect(_point(page)).to_be_visible()


@pytest.mark.parametrize("picked, then", [
    ("bf16 · n=512", "fp16 · n=1024"),  # not a point of THEN: its first point
    ("fp16 · n=2048", "fp16 · n=2048"),  # a point of both: kept
])
def test_the_point_picker_follows_the_sidebar_job(  # type: ignore[no-untyped-def]
        page, bundled_app_server: AppServer, artifacts_dir: Path, picked: str,
        then: str) -> None:
    open_app(page, bundled_app_server.url, f"?job={FIRST}")
    _open_action(page)
    expect(_point(page)).to_have_value("fp32 · n=512")
    _type_pick(page, POINT, picked)
    wait_for_app_run(page)
    expect(_point(page)).to_have_value(picked)
    _select_job(page, THEN)
    if not _point(page).count():  # the expander drawn closed for the new job
        _open_action(page)
    expect(_point(page)).to_have_value(then)
    expect(page.get_by_test_id("stMain").get_by_text(f"Queues a job for this point alone"))\
        .to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(views / f"deep-dive-point-follows-{then.split()[-1]}.png"))


def test_the_sweeps_normalise_to_follows_the_sidebar_job(  # type: ignore[no-untyped-def]
        page, bundled_app_server: AppServer) -> None:
    """bf16 of the matmul sweep is no annotation of THEN (fp16 alone): absolute values."""
    box = get_by_key(page, "sweep-baseline").get_by_role("combobox")
    open_app(page, bundled_app_server.url, f"?job={FIRST}")
    _type_pick(page, "sweep-baseline", "bf16")
    wait_for_app_run(page)
    expect(box).to_have_value("bf16")
    _select_job(page, THEN)
    expect(box).to_have_value("— absolute values —")
    assert page.locator("[data-testid='stException']").count() == 0

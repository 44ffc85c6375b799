"""The job pickers of Compare, CUPTI vs Nsight Compute, Clocks and thermal and the Files page's
Replica follow the job selected in the sidebar, in a real browser: a fresh user's find was that
they kept the pair of the job shown before until a reload, while AppTest
(tests/apptest/test_page_pickers_follow_job.py) showed the new pair. The browser keeps a keyed
selectbox's value over the index the server sends (``state.job_picker``). A user's own pick on
a page stays while the sidebar's job does not change, and comes back with its job."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.views.compare import pair_line
from tests.e2e.conftest import (AppServer, get_by_key, open_app, open_list,
                                wait_for_app_run, wait_for_elements)

pytestmark = pytest.mark.e2e

#: page path -> (picker keys, first job and its pair, job selected next and its pair): the
#: pages' default pairs over the recorded scenarios (as in the AppTest).
FOLLOW = {
    "compare": (("compare-baseline", "compare-candidate"),  # the earlier job: the baseline
                "h200-ncu-elementwise", ("h200-ncu-elementwise",
                                         "h200-ncu-elementwise-cache-none"),
                "h200-ncu-j1-fp16", ("h200-ncu-j1-fp16", "h200-ncu-gate-base")),
    "backends": (("backends-ncu", "backends-cupti"),
                 "h200-ncu-j1-fp16", ("h200-ncu-j1-fp16", "h200-cupti-j1-fp16"),
                 "h200-cupti-matmul-sweep", ("h200-ncu-matmul-sweep",
                                             "h200-cupti-matmul-sweep")),
    "clocks": (("clocks-thermal-a", "clocks-thermal-b"),
               "h200-cupti-stability", ("h200-cupti-stability",
                                        "h200-cupti-stability-thermal-off"),
               "h200-cupti-stability-thermal-off", ("h200-cupti-stability-thermal-off",
                                                    "h200-cupti-stability")),
    "files": (("files-replica",),
              "h200-cupti-gate-base", ("h200-cupti-gate-again",),
              "h200-cupti-gate-again", ("h200-cupti-gate-base",)),
}


def _expect_picks(page, keys: tuple[str, ...],  # type: ignore[no-untyped-def]
                  jobs: tuple[str, ...]) -> None:
    for key, job in zip(keys, jobs, strict=True):
        expect(get_by_key(page, key).get_by_role("combobox")).to_have_value(job)


def _type_pick(page, key: str, job: str) -> None:  # type: ignore[no-untyped-def]
    """Pick ``job`` in the job box ``key`` as a user does: its list opened, the id typed (the
    list holds every recorded job, more than it draws), its option clicked."""
    box = get_by_key(page, key).get_by_role("combobox")
    wait_for_app_run(page)
    open_list(box)
    box.press_sequentially(job)
    page.get_by_role("option").filter(
        has_text=re.compile(rf"^\s*{re.escape(job)}(?: ·|\s*$)")).first.click()


def _select_job(page, job: str) -> None:  # type: ignore[no-untyped-def]
    """Pick ``job`` in the sidebar's Job box (:func:`_type_pick`); then the app's run."""
    _type_pick(page, "sidebar-job", job)
    expect(page).to_have_url(re.compile(rf"[?&]job={re.escape(job)}(?:[&#]|$)"))
    wait_for_app_run(page)


def _rerun(page) -> None:  # type: ignore[no-untyped-def]
    """Another run of the page that changes no picker: the browser sends every widget's value
    again (the old pair came back so before the fix)."""
    box = get_by_key(page, "compare-max-slowdown").locator("input")
    box.fill("4")
    box.press("Tab")
    expect(page.get_by_test_id("stMain").get_by_text("allowed slowdown 4 %")).to_be_visible()
    wait_for_app_run(page)


@pytest.mark.parametrize("path", list(FOLLOW))
def test_pickers_follow_the_sidebar_job(  # type: ignore[no-untyped-def]
        page, bundled_app_server: AppServer, artifacts_dir: Path, path: str) -> None:
    keys, first, first_pair, then, then_pair = FOLLOW[path]
    open_app(page, f"{bundled_app_server.url}/{path}", f"?job={first}")
    _expect_picks(page, keys, first_pair)
    _select_job(page, then)
    _expect_picks(page, keys, then_pair)
    if path == "compare":
        pair = pair_line(then_pair[1], then_pair[0])  # bundled: each label is the id
        expect(page.get_by_test_id("stMain").get_by_text(pair)).to_be_visible()
        _rerun(page)
        _expect_picks(page, keys, then_pair)
    get_by_key(page, keys[0]).scroll_into_view_if_needed()
    wait_for_elements(page)
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(views / f"pickers-follow-job-{path}.png"))


def test_own_pick_kept_while_the_job_is_unchanged(  # type: ignore[no-untyped-def]
        page, bundled_app_server: AppServer) -> None:
    keys = ("compare-baseline", "compare-candidate")
    job, own = "h200-ncu-j1-fp16", "h200-cupti-j1-fp16"  # own: the user's pick of baseline
    open_app(page, f"{bundled_app_server.url}/compare", f"?job={job}")
    _expect_picks(page, keys, (job, "h200-ncu-gate-base"))  # recorded first: the baseline
    _type_pick(page, keys[0], own)
    wait_for_app_run(page)
    _expect_picks(page, keys, (own, job))
    _rerun(page)  # another run of the page
    _expect_picks(page, keys, (own, job))
    page.get_by_role("link", name="Results tables").click()  # another page and back
    wait_for_app_run(page)
    page.get_by_role("link", name="Compare jobs").click()
    _expect_picks(page, keys, (own, job))
    _select_job(page, "h200-ncu-elementwise")  # another job: its own pair
    _expect_picks(page, keys, ("h200-ncu-elementwise", "h200-ncu-elementwise-cache-none"))
    _select_job(page, job)  # back: the user's pick for it
    _expect_picks(page, keys, (own, job))


def test_a_new_baseline_keeps_the_picked_candidate(  # type: ignore[no-untyped-def]
        page, bundled_app_server: AppServer) -> None:
    """Issue 37: a fresh user picked a Candidate, then another Baseline, and the Candidate went
    back to the sidebar's job though offered with the new Baseline; the browser shows the pick
    kept, over another run of the page too."""
    keys = ("compare-baseline", "compare-candidate")
    job, picked, base = "h200-ncu-j1-fp16", "h200-ncu-matmul-rules", "h200-ncu-gate-base"
    open_app(page, f"{bundled_app_server.url}/compare", f"?job={job}")
    _expect_picks(page, keys, (job, base))
    _type_pick(page, keys[1], picked)
    wait_for_app_run(page)
    _expect_picks(page, keys, (job, picked))
    _type_pick(page, keys[0], base)  # it read (base, job): the sidebar's job
    wait_for_app_run(page)
    _expect_picks(page, keys, (base, picked))
    _rerun(page)
    _expect_picks(page, keys, (base, picked))

"""``benchmarks/page_speed``'s clicks (issue 40, session 21): a click whose link or chart does
not come is a failure of its round, counted, and the page is clicked again in the next round;
until then the page was skipped for the rest of the run, and the link bar, drawn after the
page's chart, was often not there yet at the first click."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import page_speed  # noqa: E402


class _Locator:
    """What ``click_times`` asks of a Playwright locator; the link of ``absent`` never comes."""

    def __init__(self, page: _Page, selector: str = "") -> None:
        self.page, self.selector = page, selector

    def __getattr__(self, _name: str) -> Any:  # .first, .filter(), .locator(): the same
        return self

    def __call__(self, *_args: Any, **_kwargs: Any) -> _Locator:
        return self

    def wait_for(self, **_kwargs: Any) -> None:
        if self.page.absent and f"[href='{self.page.absent}']" in self.selector:
            raise PlaywrightTimeout("no link")

    def click(self, **_kwargs: Any) -> None:
        self.page.clicks += 1


class _Page:
    def __init__(self, absent: str | None) -> None:
        self.absent, self.clicks = absent, 0

    def goto(self, _url: str) -> None:
        pass

    def locator(self, selector: str, **_kwargs: Any) -> _Locator:
        return _Locator(self, selector)

    def evaluate(self, script: str) -> float:
        return 1000.0 * self.clicks  # the click event's time stamp, ms

    def wait_for_function(self, *_args: Any, **_kwargs: Any) -> Any:
        drawn = 1000.0 * self.clicks + 150.0  # each chart drawn 150 ms after its click
        return type("Handle", (), {"json_value": lambda _self: drawn})()


class _Context:
    def __init__(self, absent: str | None) -> None:
        self.absent = absent

    def new_page(self) -> _Page:
        return _Page(self.absent)


def test_a_failed_click_counts_in_its_round_and_the_page_is_clicked_again() -> None:
    """One round without the kernels link: that click is None and its failure said; the next
    round clicks every page again (before: the page was added to a set and skipped)."""
    failed: list[str] = []
    first = page_speed.click_times(_Context("kernels"), "http://x", failed)
    assert [t is None for t in first] == [path == "kernels" for path in page_speed.CLICK_PAGES]
    assert failed == ["kernels: no link within 30 s"]
    again: list[str] = []
    second = page_speed.click_times(_Context(None), "http://x", again)
    assert not again and [t[0] for t in second if t] == pytest.approx([0.15] * 4)


def test_clicks_pair_by_round_and_page_and_by_round_against_the_bare_app() -> None:
    """``paired``: dash / base only where both timed the same round's page; ``round_medians``:
    one pair a round, each side's median click of that round, failures left out."""
    dash = [[0, "a", 0.2, 0.3], [0, "b", None, None], [1, "a", 0.4, 0.5], [1, "b", 0.6, 0.7]]
    base = [[0, "a", 0.1, 0.2], [0, "b", 0.3, 0.4], [1, "a", 0.2, 0.3], [1, "b", None, None]]
    samples = {f"{side}_{kind}": [1.0, 2.0] for side in ("dash", "base")
               for kind in ("cold", "warm")}
    out = page_speed.paired(samples, {"dash_click": dash, "base_click": base})
    assert out["click"]["ratios"] == pytest.approx([2.0, 2.0])
    bare = [[0, "s", 0.1, 0.1], [0, "", 0.3, 0.3], [1, "s", 0.4, 0.4]]
    mine, theirs = page_speed.round_medians(dash, bare)
    assert mine == pytest.approx([0.2, 0.5]) and theirs == pytest.approx([0.2, 0.4])

"""Every page that shows an interval names its method and its coverage in a caption beside it
(``interval_words.line``), the method the page shows (mean CI95, or Fieller's ratio), and on a
cpu job says the H200 coverage does not apply."""

from __future__ import annotations

import shutil

import pytest
from apptest_helpers import unescape
from streamlit.testing.v1 import AppTest

from profiling_worker.bundle.schema import interval_words as W
from tests.scenarios import SCENARIOS


def captions(at: AppTest) -> str:
    """The page's captions (not its expanders' markdown), as read."""
    assert not at.exception, at.exception
    return "\n".join(unescape(str(c.value)) for c in at.caption)


@pytest.mark.parametrize("page,job,method", [
    ("stability", "h200-cupti-stability", W.MEAN),
    ("results", "h200-cupti-stability", W.MEAN),
    ("compare", "h200-cupti-gate-base", W.RATIO),
    ("backends", "h200-ncu-j1-fp16", W.RATIO),
    ("files", "h200-cupti-gate-base", W.RATIO90),  # the replication verdict's DiffCI90
])
def test_an_h200_page_captions_its_methods_coverage(page: str, job: str, method: str,
                                                    store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    shown = captions(app(page, query={"job": job}))
    assert W.line(method) in shown
    other = W.RATIO if method == W.MEAN else W.MEAN
    assert W.line(other) not in shown


def test_the_size_sweep_says_the_mean_ci_then_the_ratio_when_normalised(store, monkeypatch,
                                                                        app) -> None:
    """The Size sweep said the three methods' pooled range beside its mean CI95."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(query={"job": "h200-cupti-matmul-sweep"})
    shown = captions(at)
    assert W.line(W.MEAN) in shown and W.line(W.RATIO) not in shown
    at.selectbox(key="sweep-baseline").set_value("fp32").run()
    shown = captions(at)
    assert W.line(W.RATIO) in shown and W.line(W.MEAN) not in shown


@pytest.mark.parametrize("page", [None, "stability", "results"])
def test_a_cpu_job_says_its_coverage_is_not_known(page: str | None, seeded, app) -> None:
    shown = captions(app(page))
    assert W.line(W.MEAN, host_timer=True) in shown
    assert "H200 GPU timings at" not in shown


def test_two_cpu_jobs_compared_say_the_ratios_coverage_is_not_known(seeded, app) -> None:
    (job_dir,) = seeded["results"].iterdir()
    shutil.copytree(job_dir, seeded["results"] / "cpu-again")
    shown = captions(app("compare", query={"baseline": job_dir.name, "candidate": "cpu-again"}))
    assert W.line(W.RATIO, host_timer=True) in shown
    assert "H200 GPU timings at" not in shown


@pytest.mark.parametrize("job", ["h200-cupti-stability", None])
def test_the_one_kernel_duration_card_says_it_beside_its_ci95(job: str | None, store,
                                                              monkeypatch, seeded, app) -> None:
    """The card's help holds the interval: the line is there, for a cpu job without H200
    figures (``None``: the seeded cpu job)."""
    if job:
        monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("one_kernel", query={"job": job} if job else None)
    assert not at.exception, at.exception
    (card,) = [m for m in at.metric if m.label.startswith("Duration")]
    assert W.line(W.MEAN, host_timer=job is None) in card.proto.help, card.proto.help

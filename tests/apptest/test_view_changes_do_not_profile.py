"""Changing unit, quantity, baseline or page recomputes from the stored tables: it never starts
a profiling run (issue 6: "0 profiling runs caused by view changes", counted here)."""

from __future__ import annotations

import subprocess

import pytest


@pytest.fixture
def profiling_starts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every worker process started to profile (``run`` or ``serve``), recorded, then started."""
    started: list[list[str]] = []
    real = subprocess.Popen

    def counting(argv, *args, **kwargs):
        words = [str(a) for a in argv] if isinstance(argv, (list, tuple)) else [str(argv)]
        if "profiling_worker" in words and ({"run", "serve"} & set(words)):
            started.append(words)
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting)
    return started


def test_view_changes_start_no_profiling(seeded, app, profiling_starts) -> None:
    at = app()
    for quantity in ("tflops", "gbps", "time"):
        at.segmented_control(key="sweep-quantity").set_value(quantity).run()
    at.segmented_control(key="sweep-time-unit").set_value("ms").run()
    for baseline in ("fp32", "bf16", None):
        at.selectbox(key="sweep-baseline").set_value(baseline).run()
    assert not at.exception
    for page in ("stability", "results", "bound_roofline", "memory", "kernels"):
        assert not app(page).exception
    assert profiling_starts == []


def test_the_counter_sees_a_submitted_job(seeded, app, profiling_starts) -> None:
    """The same counter does count a real submission, so the zero above means something."""
    from apptest_helpers import submit_cpu_matmul, wait_until
    from app.ui import cached

    at = app()
    job_id = submit_cpu_matmul(at, "32", 2)
    wait_until(lambda: not cached.job_manager().get(job_id).active)
    assert len(profiling_starts) == 1

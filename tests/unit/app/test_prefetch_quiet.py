"""app/ui/prefetch.py computes each part when no script run is in progress (a page load that
starts meanwhile does not share the GIL with it)."""

from __future__ import annotations

import threading
import time

from app.ui import prefetch


def test_no_run_in_progress_is_quiet_and_a_run_is_not() -> None:
    assert prefetch._wait_for_quiet(0.01)
    with prefetch.script_run():
        assert not prefetch._wait_for_quiet(0.01)
        with prefetch.script_run():  # two sessions' runs
            pass
        assert not prefetch._wait_for_quiet(0.01)
    assert prefetch._wait_for_quiet(0.01)


def test_a_run_that_raises_still_ends() -> None:
    try:
        with prefetch.script_run():
            raise RuntimeError("a page's error")
    except RuntimeError:
        pass
    assert prefetch._wait_for_quiet(0.01)


def test_a_waiting_part_goes_on_when_the_run_ends() -> None:
    got: list[bool] = []
    with prefetch.script_run():
        waiter = threading.Thread(target=lambda: got.append(prefetch._wait_for_quiet(30)))
        waiter.start()
        time.sleep(0.1)
        assert waiter.is_alive() and got == []  # waits while the run is in progress
    waiter.join(5)
    assert got == [True]


def test_each_part_of_charts_waits_for_a_quiet_moment(monkeypatch) -> None:  # type: ignore
    order: list[str] = []
    monkeypatch.setattr(prefetch, "_wait_for_quiet", lambda: order.append("wait") or True)
    for name in ("_stability", "_kernels", "_one_kernel", "_tables"):
        monkeypatch.setattr(prefetch, name, lambda bundle, name=name: order.append(name))
    monkeypatch.setattr(prefetch, "_below", lambda: [])
    prefetch.charts(object())  # type: ignore[arg-type]
    assert order == ["wait", "_stability", "wait", "_kernels", "wait", "_one_kernel", "wait",
                     "_tables"]

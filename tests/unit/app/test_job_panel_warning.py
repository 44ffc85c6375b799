"""A job's warnings in its card of the sidebar's job panel: the head, the whole in the help."""

from __future__ import annotations

from profiling_worker.bundle.schema import backends as B

from app.sidebar.job_panel import warning_head


def test_a_contention_warning_takes_one_clause_of_its_card() -> None:
    """A fresh user's find: each cpu job's card repeated the nine-line contention sentence, so
    five jobs took several screens. The card now shows its first clause; the caption's help
    holds the whole warning, figures and all."""
    full = B.waited_for_cpu(1.36, B.contention_detail(4.8e8, 3.5e8, 0.05, 2), whose="the job's")
    head = warning_head(full)
    assert head == ("the time the job's threads waited for a CPU adds up to 1.36 x the timing "
                    "loop's elapsed time …")
    assert full.startswith(head[:-2])


def test_a_short_warning_is_shown_whole() -> None:
    assert warning_head("the host was busy") == "the host was busy"
    assert warning_head("no NVML: clocks not sampled (driver)") == "no NVML: clocks not sampled …"

"""The job panel says what each job's contention warning holds of its own, and what every such
warning says alike once under the list (issue 37: two cpu jobs of a busy host repeated the same
400 characters each)."""

from __future__ import annotations

from app.sidebar.job_panel import own_part
from profiling_worker.backends.cpu import contention_warning
from profiling_worker.bundle.schema.backends import CONTENTION_ADVICE


def test_each_job_keeps_its_figures_and_leaves_the_advice_to_the_list() -> None:
    wall = 2_000_000_000
    # the two jobs: 0.96 and 1.41 s waited for a CPU per second of the loop
    warnings = [contention_warning(f, int(f * wall), wall, 3.0, 2) for f in (0.96, 1.41)]
    assert all(w is not None and w.endswith(CONTENTION_ADVICE) for w in warnings)
    own = [own_part(str(w)) for w in warnings]
    assert "waited 0.96 s for a CPU" in own[0] and "waited 1.41 s for a CPU" in own[1]
    assert all(CONTENTION_ADVICE not in o and o.endswith("contended CPU (below)") for o in own)


def test_other_warnings_are_shown_whole() -> None:
    said = contention_warning(None, None, 2_000_000_000, 5.3, 2)  # the load-average fallback
    assert said is not None and own_part(said) == said
    assert own_part("a collector failed: nvml") == "a collector failed: nvml"

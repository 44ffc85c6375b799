"""Compare keeps the pair the user picks (issue 37: a fresh user picked Candidate
``candidate``, then another Baseline, and the Candidate went back to the sidebar's job though
the page offered the one picked): a new Baseline keeps the picked Candidate wherever it is
offered with it, a new Candidate keeps the Baseline."""

from __future__ import annotations

import shutil

from apptest_helpers import JOB_ID
from test_page_compare import _labelled_copy
from tests.scenarios import SCENARIOS


def _pair(at) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    assert not at.exception, at.exception
    return (at.selectbox(key="compare-baseline").value,
            at.selectbox(key="compare-candidate").value)


def _pick(at, side: str, job: str):  # type: ignore[no-untyped-def]
    return at.selectbox(key=f"compare-{side}").set_value(job).run()


def test_a_new_baseline_keeps_the_picked_candidate(seeded, app,
                                                   no_session_state_warning) -> None:
    """README's gate pair (``base``, ``candidate``) and another run of its spec, with the
    sidebar on the job run first; two bundled ncu jobs, which the cpu jobs cannot be compared
    with."""
    results = seeded["results"]
    for job, label in (("base", "gate baseline"), ("candidate", "gate candidate"),
                       ("again", "")):
        _labelled_copy(results, job, label)
    for job in ("h200-ncu-j1-fp16", "h200-ncu-gate-base"):
        shutil.copytree(SCENARIOS / job, seeded["bundled"] / job)
    at = app("compare", query={"job": JOB_ID})
    assert JOB_ID in _pair(at)
    _pick(at, "baseline", "base")
    _pick(at, "candidate", "candidate")
    assert _pair(at) == ("base", "candidate")
    # it read ("again", JOB_ID): the sidebar's job, though "candidate" was offered
    _pick(at, "baseline", "again")
    assert "candidate" in at.selectbox(key="compare-candidate").options
    assert _pair(at) == ("again", "candidate")
    # a baseline it cannot be compared with brings one that can; the pick comes back with a
    # baseline it can be compared with again
    _pick(at, "baseline", "h200-ncu-j1-fp16")
    offered = at.selectbox(key="compare-candidate").options
    assert "candidate" not in offered and _pair(at)[1] in offered
    assert _pair(at)[1] != "h200-ncu-j1-fp16"
    _pick(at, "baseline", "base")
    assert _pair(at) == ("base", "candidate")
    # a new candidate keeps the baseline the user picked
    _pick(at, "candidate", "again")
    assert _pair(at) == ("base", "again")
    # the picked candidate as baseline: never compared with itself by default
    _pick(at, "baseline", "again")
    assert _pair(at)[0] == "again" and _pair(at)[1] != "again"

"""CUPTI vs Nsight Compute: a pair measured under other conditions than the backend is named
(the regression gate's measurement context), and matching CUPTI jobs are offered first."""

from __future__ import annotations

import copy

from bundled import bundled

from app.core.views.backends import context_mismatch, cupti_choices, tool_version_difference
from app.core.views.compare import JobSummary

CUPTI_JOBS = ("h200-cupti-elementwise-cache-none", "h200-cupti-elementwise", "h200-cupti-j1-fp16")


def _manifest(job: str) -> dict:
    return bundled(job).manifest


def test_cache_control_difference_is_named() -> None:
    ncu = _manifest("h200-ncu-elementwise")
    differs = context_mismatch(ncu, _manifest("h200-cupti-elementwise-cache-none"))
    assert "cache control: all vs none" in differs
    assert not any(d.startswith(("backend", "Nsight Compute", "cupti-python")) for d in differs)
    matching = context_mismatch(ncu, _manifest("h200-cupti-elementwise"))
    assert not any("cache control" in d for d in matching)
    assert len(matching) == len(differs) - 1


def test_clock_control_difference_is_named_only_where_in_force() -> None:
    """CUPTI takes no clock_control: a CUPTI spec's ``base`` locked nothing, so it is no
    difference; an ncu job that locked its clock is one."""
    ncu = _manifest("h200-ncu-elementwise")
    cupti = copy.deepcopy(_manifest("h200-cupti-elementwise"))
    cupti["spec"]["clock_control"] = "base"
    assert not any("clock control" in d for d in context_mismatch(ncu, cupti))
    locked = copy.deepcopy(ncu)
    locked["spec"]["clock_control"] = "base"
    assert "clock control: base vs none" in context_mismatch(locked, _manifest("h200-cupti-elementwise"))


def test_matching_cupti_job_is_offered_first() -> None:
    for ncu_id, first in (("h200-ncu-elementwise", "h200-cupti-elementwise"),
                          ("h200-ncu-elementwise-cache-none", "h200-cupti-elementwise-cache-none")):
        jobs = (ncu_id, *CUPTI_JOBS)
        summaries = [JobSummary.of(j, "", bundled(j).spec) for j in jobs]
        choices = cupti_choices(ncu_id, summaries, {j: _manifest(j) for j in jobs})
        assert choices[0] == first
        assert choices[-1] == "h200-cupti-j1-fp16"  # other kernels: no config in common
        assert sorted(choices) == sorted(CUPTI_JOBS)



def test_the_matching_pair_is_not_warned_about_its_nsight_python_versions() -> None:
    """A helper's note: every bundled ncu/CUPTI pair differs in nsight-python (0.9.6 for ncu's
    launch mode with Nsight Compute 2025.3, 1.1.0 for CUPTI), so a warning on that alone would
    be on every pair; it is named in a caption instead."""
    ncu, cupti = _manifest("h200-ncu-j1-fp16"), _manifest("h200-cupti-j1-fp16")
    assert context_mismatch(ncu, cupti) == []
    assert tool_version_difference(ncu, cupti) == "nsight-python version: 0.9.6 vs 1.1.0"
    assert tool_version_difference(ncu, ncu) is None

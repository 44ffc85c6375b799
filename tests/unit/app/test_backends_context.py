"""CUPTI vs Nsight Compute: a pair measured under other conditions than the backend is named
(the regression gate's measurement context), and matching CUPTI jobs are offered first."""

from __future__ import annotations

import copy

from bundled import bundled

from app.core.views.backends import (context_mismatch, cupti_choices, default_pair,
                                     spec_differences, tool_version_difference)
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


def test_default_pair_ties_on_the_spec_not_the_name() -> None:
    """A CUPTI job's ncu pair: the ncu job that ranks it highest; on a tie the one whose spec
    is the CUPTI job's but for the backend (matmul-rules ranks the CUPTI sweep first too, with
    3 runs, not 10), whatever the jobs are called (a job-id rule, -ncu- for -cupti-, decided
    it before)."""
    ncu_ids = ["h200-ncu-matmul-rules", "h200-ncu-matmul-sweep", "h200-ncu-j1-fp16"]
    cupti_ids = ["h200-cupti-matmul-sweep", "h200-cupti-j1-fp16"]
    manifests = {j: _manifest(j) for j in ncu_ids + cupti_ids}
    summaries = [JobSummary.of(j, "", bundled(j).spec) for j in ncu_ids + cupti_ids]
    sweep = manifests["h200-cupti-matmul-sweep"]
    assert spec_differences(manifests["h200-ncu-matmul-sweep"], sweep) == 0
    assert spec_differences(manifests["h200-ncu-matmul-rules"], sweep) == 1  # runs
    assert default_pair("h200-cupti-matmul-sweep", ncu_ids, cupti_ids, summaries, manifests) \
        == ("h200-ncu-matmul-sweep", "h200-cupti-matmul-sweep")
    # renamed, the pair is the same: the spec decides, not the name
    renamed = {"h200-ncu-matmul-sweep": "sweep-a", "h200-ncu-matmul-rules": "rules-b",
               "h200-cupti-matmul-sweep": "timing-c"}
    ids = [renamed.get(j, j) for j in ncu_ids], [renamed.get(j, j) for j in cupti_ids]
    summaries = [JobSummary.of(renamed.get(j, j), "", bundled(j).spec) for j in ncu_ids + cupti_ids]
    manifests = {renamed.get(j, j): m for j, m in manifests.items()}
    assert default_pair("timing-c", *ids, summaries, manifests) == ("sweep-a", "timing-c")
    assert default_pair("sweep-a", *ids, summaries, manifests) == ("sweep-a", "timing-c")
    assert default_pair("h200-cupti-j1-fp16", *ids, summaries, manifests) \
        == ("h200-ncu-j1-fp16", "h200-cupti-j1-fp16")
    assert default_pair(None, *ids, summaries, manifests) == ("h200-ncu-j1-fp16", None)

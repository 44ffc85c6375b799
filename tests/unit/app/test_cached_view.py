"""cached.view: a view's frame computed once per job and arguments, recomputed when the job's
manifest changes, errors never cached."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import streamlit as st

from profiling_worker.bundle.loader import load_bundle
from app.core.metrics import MissingData
from app.core.share.job import job_colors
from app.core.views.kernels import kernel_counts_frame
from app.ui import cached
from tests.scenarios import SCENARIOS

BUNDLED = SCENARIOS / "h200-ncu-matmul-sweep"
CALLS: list[str] = []


def counted(bundle, label: str = ""):  # type: ignore[no-untyped-def]
    CALLS.append(label)
    if label == "missing":
        raise MissingData("no such values", "pick another job")
    return kernel_counts_frame(bundle)


def test_view_is_computed_once_per_job_and_arguments(tmp_path) -> None:
    st.cache_data.clear()
    CALLS.clear()
    job = tmp_path / BUNDLED.name
    shutil.copytree(BUNDLED, job)
    bundle = load_bundle(job)
    first = cached.view(counted, bundle)
    again = cached.view(counted, bundle)
    assert CALLS == [""] and again.equals(first) and again is not first  # a copy
    cached.view(counted, bundle, "other")
    assert CALLS == ["", "other"]
    manifest = job / "manifest.json"
    os.utime(manifest, (manifest.stat().st_atime, manifest.stat().st_mtime + 5))
    cached.view(counted, bundle)  # the job changed: read again
    assert CALLS == ["", "other", ""]
    for _ in range(2):
        with pytest.raises(MissingData):
            cached.view(counted, bundle, "missing")
    assert CALLS.count("missing") == 2


def counted_figure(frame, title: str = ""):  # type: ignore[no-untyped-def]
    from app.core.figures.kernels import build_kernels_figure

    CALLS.append(f"figure {title} {len(frame)}")
    return build_kernels_figure(frame, host_timer=False)


def test_figure_is_built_once_per_content_of_its_frame() -> None:
    from app.core.views.kernels import kernel_time_frame

    st.cache_data.clear()
    CALLS.clear()
    times = kernel_time_frame(load_bundle(BUNDLED))
    first = cached.figure(counted_figure, times, "a")
    again = cached.figure(counted_figure, times.copy(), "a")  # another frame, same content
    assert CALLS == [f"figure a {len(times)}"] and again is not first  # a copy
    assert json.loads(again.to_json()) == json.loads(first.to_json())
    # made from the cached dict without plotly's validation: what the browser gets is unchanged
    built = counted_figure(times, "a")
    assert json.loads(first.to_json()) == json.loads(built.to_json())
    CALLS.pop()
    again.data[0].marker.color = "#000000"  # colouring one copy leaves the cached one alone
    third = cached.figure(counted_figure, times, "a")
    assert json.loads(third.to_json()) == json.loads(first.to_json())
    cached.figure(counted_figure, times.iloc[:-1], "a")  # other values: built again
    cached.figure(counted_figure, times, "b")
    assert len(CALLS) == 3


def test_each_caller_of_bundle_for_changes_only_its_own_copy(
        tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """bundle_for holds one bundle per server (a 10,000-config sweep's unpickled copy per call
    cost about 1 s, twice a page): each call still gets a copy that its page may change
    without changing what another page or session reads."""
    st.cache_resource.clear()
    results = tmp_path / "results"
    shutil.copytree(BUNDLED, results / BUNDLED.name)
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(results))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(tmp_path / "none"))
    first, second = cached.bundle_for(BUNDLED.name), cached.bundle_for(BUNDLED.name)
    assert first is not None and second is not None and first is not second
    runs = first.table("runs")
    runs["Value"] = -1.0  # a page's in-place change of its copy
    runs.loc[0, "Annotation"] = "changed"
    first.manifest["status"] = "failed"
    fresh = load_bundle(results / BUNDLED.name)
    for other in (second, cached.bundle_for(BUNDLED.name)):
        assert other is not None and other.table("runs").equals(fresh.table("runs"))
        assert other.manifest["status"] == fresh.manifest["status"] != "failed"
    st.cache_resource.clear()


def test_job_colors_read_the_shared_bundle_without_a_copy(
        tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every chart's colours (panels.chart_with_table) come from the one cached bundle: the
    colours of a page's own copy, without making one (its manifest's deep copy cost 10 ms of
    CPU at 10,000 configs on every run, issue 37); {} for no job or an unknown one."""
    st.cache_resource.clear()
    results = tmp_path / "results"
    shutil.copytree(BUNDLED, results / BUNDLED.name)
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(results))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(tmp_path / "none"))
    own = cached.bundle_for(BUNDLED.name)
    assert own is not None
    expected = job_colors(own)
    copies: list[str] = []
    monkeypatch.setattr(cached, "_own_copy", lambda bundle: copies.append("copy") or bundle)
    assert cached.job_colors(BUNDLED.name) == expected and len(expected) == 3
    assert copies == []
    assert cached.job_colors(None) == {} and cached.job_colors("no-such-job") == {}
    st.cache_resource.clear()


def with_defaults(bundle: object, unit: str = "µs", rows: int = 3, *,
                  key: str = "k") -> tuple[object, str, int, str]:
    return bundle, unit, rows, key


def test_the_key_fills_defaults_from_one_signature_read_per_function(monkeypatch) -> None:
    """Review (session 23): the key's defaults came from inspect.signature on every call. Read
    once per function and count of arguments, the key is the one a fresh read gives: a call
    that leaves a default out and one that passes it are one entry; keyword-only parameters
    are not in it."""
    import inspect

    reads: list[object] = []
    signature = inspect.signature

    def counting(fn):  # type: ignore[no-untyped-def]
        reads.append(fn)
        return signature(fn)

    cached._defaults_after.cache_clear()
    monkeypatch.setattr(cached.inspect, "signature", counting)
    for _ in range(3):
        assert cached._with_defaults(with_defaults, ()) == ("µs", 3)
        assert cached._with_defaults(with_defaults, ("ms",)) == ("ms", 3)
        assert cached._with_defaults(with_defaults, ("µs", 3)) == ("µs", 3)
    assert reads == [with_defaults] * 3  # once per count of arguments given
    assert cached._with_defaults(kernel_counts_frame, ()) == ()


def _containers(value: object) -> list[object]:
    """Every dict and list inside ``value``, itself included."""
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


def test_a_bundle_copy_has_its_own_manifest_equal_to_the_loaded_one() -> None:
    bundle = load_bundle(BUNDLED)
    copied = cached._own_copy(bundle).manifest
    assert copied == bundle.manifest
    mine = {id(c) for c in _containers(copied)}
    assert mine and not mine & {id(c) for c in _containers(bundle.manifest)}
    odd = {"when": (1, [2]), "list": [{"a": 1.5}]}  # a tuple is not JSON: deep-copied all the same
    copy_of_odd = cached._plain_copy(odd)
    assert copy_of_odd == odd and copy_of_odd["when"][1] is not odd["when"][1]

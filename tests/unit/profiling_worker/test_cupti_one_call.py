"""One nsight-python call of all configs on the CUPTI backend (backends/cupti.py, issue 24)
without a GPU: a stand-in for nsight-python 1.1 that runs the profiled function per config and
run, "launches" each run's kernels on one clock with the run starts (CUPTI's CPU timestamps),
attributes them by the annotation open at launch, hands its extraction the per-annotation
lists (refusing, as nsight-python 1.1 does, a count that does not divide by the runs) and
writes its two CSVs. The real collector runs in the GPU tests (tests/gpu)."""

from __future__ import annotations

import inspect
import itertools
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
import pytest

from profiling_worker.backends import cupti
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import validate_spec
from tests.unit.profiling_worker.test_cupti_times import (KERNEL, _attribute, _KernelRecord,
                                                         _LaunchRecord)
from tests.unit.profiling_worker.test_nsight_options import VERSIONS

#: kernels(config values, run) -> the kernel names one run of that config launches.
Kernels = Callable[[tuple[Any, ...], int], list[str]]


def stand_in_nsight(monkeypatch: pytest.MonkeyPatch, kernels: Kernels) -> tuple[Any, list]:
    """The stand-in nsight module and the list of each call's (options, configs)."""
    clock = itertools.count(1000, 10)
    monkeypatch.setattr(cupti, "_cupti_clock", lambda: lambda: next(clock))
    calls: list[tuple[dict[str, Any], list[tuple[Any, ...]]]] = []
    name = "one_call_nsight"
    collection = types.ModuleType(f"{name}.collection.cupti")
    registered: dict[str, Any] = {}
    collection.cupti = SimpleNamespace(  # type: ignore[attr-defined]
        ActivityKind=SimpleNamespace(CONCURRENT_KERNEL=KERNEL),
        activity_register_callbacks=lambda req, done: registered.update(done=done))
    collection._attribute_kernels = _attribute  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, collection.__name__, collection)
    module = types.SimpleNamespace(__name__=name, __version__="1.1.0",
                                   annotate=lambda _n: None)

    def extract(data: dict[str, list[Any]], configs: int, runs: int) -> None:
        for launches in data.values():  # nsight/extraction.py, 1.1.0
            if len(launches) % (configs * runs):
                raise RuntimeError("Expect same number of kernels per run. Got average of "
                                   f"{len(launches) / (configs * runs)} per run")

    def kernel(**options: Any) -> Any:
        def decorate(func: Any) -> Any:
            def run(configs: list[tuple[Any, ...]]) -> None:
                calls.append((options, configs))
                collection.cupti.activity_register_callbacks(None, lambda _records: None)
                markers, launches, records = [], [], []
                for values in configs:
                    for r in range(options["runs"]):
                        func(*values)  # the worker notes the run's start here
                        start = next(clock)
                        for kernel_name in kernels(values, r):
                            corr = len(launches) + 1
                            launches.append(_LaunchRecord(corr, next(clock)))
                            gpu = 100 * corr
                            records.append(SimpleNamespace(kind=KERNEL, correlation_id=corr,
                                                           name=kernel_name, start=gpu,
                                                           end=gpu + 7 * corr))
                        markers.append(("fp16", start, next(clock)))
                registered["done"](records)
                found = [_KernelRecord(a.correlation_id, a.name, a.end - a.start)
                         for a in records]
                data: dict[str, list[Any]] = {}
                for annotation, kernel_name, ns in collection._attribute_kernels(
                        markers, launches, found):
                    data.setdefault(annotation, []).append(
                        SimpleNamespace(name=kernel_name, values=np.array([float(ns)])))
                module.extraction.extract_df_from_data(data, len(configs), options["runs"])
                out = Path(options["output_prefix"])
                out.mkdir(parents=True, exist_ok=True)
                for csv in ("profiled_data-profiled-0.csv", "processed_data-profiled-0.csv"):
                    (out / csv).write_text("nsight-python's CSV\n")
            return run
        return decorate

    kernel.__signature__ = inspect.signature(VERSIONS["1.1.0"])  # type: ignore[attr-defined]
    module.analyze = types.SimpleNamespace(kernel=kernel)
    module.extraction = types.SimpleNamespace(extract_df_from_data=extract)
    return module, calls


@pytest.fixture(autouse=True)
def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a new worker: no job shapes refused earlier."""
    monkeypatch.setattr(cupti, "_NOT_KEPT", set())


SPEC = {"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
        "configs": [{"n": 256}, {"n": 1024}], "runs": 3, "cache_control": "none"}


def _collect(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kernels: Kernels,
             **spec: Any) -> tuple[Any, list, list]:
    module, calls = stand_in_nsight(monkeypatch, kernels)
    events: list[tuple[str, dict[str, Any]]] = []
    result = cupti.collect_cupti(module, validate_spec({**SPEC, **spec}), [], tmp_path,
                                 lambda kind, **fields: events.append((kind, fields)))
    return result, calls, events


def test_equal_counts_make_one_call_of_every_config(monkeypatch, tmp_path) -> None:
    result, calls, events = _collect(monkeypatch, tmp_path, lambda values, r: ["gemm"])
    assert [configs for _options, configs in calls] == [[(256,), (1024,)]]
    assert calls[0][0]["output_prefix"].endswith(f"/{cupti.ONE_CALL_DIR}/")
    assert sorted(p.name for p in (tmp_path / cupti.ONE_CALL_DIR).iterdir()) == [
        "processed_data-profiled-0.csv", "profiled_data-profiled-0.csv"]
    launches = result.launches
    assert launches.groupby(C.CONFIG)[C.RUN].apply(list).to_dict() == {0: [0, 1, 2],
                                                                       1: [0, 1, 2]}
    assert launches[C.VALUE].tolist() == [7.0 * corr for corr in range(1, 7)]  # in order
    # the launch times' table is made when asked for (issue 40: after the result-ready write)
    assert callable(result.launch_times)
    times = result.launch_times()
    assert times[C.START_NS].tolist() == [100 * corr for corr in range(1, 7)]
    assert [e for e in events if e[0] == "progress"][-1][1]["done"] == 6
    assert not result.warnings


def test_counts_that_do_not_divide_are_measured_one_config_per_call(monkeypatch,
                                                                    tmp_path) -> None:
    """nsight-python refuses 9 launches over 6 runs: the call is not kept, its runs are
    measured again config by config, and the log says why."""
    def kernels(values: tuple[Any, ...], _r: int) -> list[str]:
        return ["gemm"] if values == (256,) else ["splitk", "reduce"]

    result, calls, events = _collect(monkeypatch, tmp_path, kernels)
    assert [configs for _o, configs in calls] == [[(256,), (1024,)], [(256,)], [(1024,)]]
    assert not (tmp_path / cupti.ONE_CALL_DIR).exists()
    assert (tmp_path / "c0").is_dir() and (tmp_path / "c1").is_dir()
    per_run = result.launches.groupby([C.CONFIG, C.RUN])[C.KERNEL].apply(list)
    assert per_run.loc[(1, 2)] == ["splitk", "reduce"] and per_run.loc[(0, 0)] == ["gemm"]
    assert len(result.launches) == 9
    logs = [f["message"] for kind, f in events if kind == "log"]
    assert any("not kept" in m and "launches over 6 runs" in m for m in logs), logs
    done = [f["done"] for kind, f in events if kind == "progress"]
    assert done == [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6]  # counted again from the first run

    # the same job again in this (warm) worker: per config at once, not measured twice
    again, calls, events = _collect(monkeypatch, tmp_path / "again", kernels)
    assert [configs for _o, configs in calls] == [[(256,)], [(1024,)]]
    assert again.launches[C.VALUE].tolist() == result.launches[C.VALUE].tolist()
    assert any("as in this worker's earlier job" in f["message"]
               for kind, f in events if kind == "log")
    _other, calls, _e = _collect(monkeypatch, tmp_path / "other", kernels, runs=2)
    assert len(calls) == 2  # runs do not change the kernel counts: still per config
    _other, calls, _e = _collect(monkeypatch, tmp_path / "third", kernels,
                                 configs=[{"n": 256}, {"n": 512}])
    assert len(calls) == 3  # other configs: one call tried first


def test_counts_that_divide_but_differ_are_not_split_positionally(monkeypatch,
                                                                  tmp_path) -> None:
    """3 + 1 launches per run divide into 2 a run: nsight-python would give run 0 of config 0
    two of its three kernels and the third to run 1. The launch times show the real runs."""
    def kernels(values: tuple[Any, ...], _r: int) -> list[str]:
        return ["a", "b", "c"] if values == (256,) else ["d"]

    result, calls, events = _collect(monkeypatch, tmp_path, kernels)
    assert len(calls) == 3
    per_run = result.launches.groupby([C.CONFIG, C.RUN])[C.KERNEL].apply(list)
    assert per_run.loc[(0, 1)] == ["a", "b", "c"] and per_run.loc[(1, 0)] == ["d"]
    assert any("differs between runs" in f["message"] for k, f in events if k == "log")


@pytest.mark.parametrize("spec", [{"warmup": 0}, {"configs": [{"n": 256}]},
                                  {"runs": "auto", "run_target": {"rel_ci95_pct": 2.0,
                                                                  "min_runs": 2,
                                                                  "max_runs": 4}}],
                         ids=["no-warm-up", "one-config", "runs-auto"])
def test_calls_of_their_own_where_one_call_does_not_apply(monkeypatch, tmp_path,
                                                          spec: dict[str, Any]) -> None:
    _result, calls, _events = _collect(monkeypatch, tmp_path, lambda v, r: ["gemm"], **spec)
    assert all(len(configs) == 1 for _o, configs in calls)


def test_a_kernel_launched_before_the_first_run_keeps_the_calls_per_config() -> None:
    starts = cupti.RunStarts(iter([100, 200]).__next__)
    starts("c0r0"), starts("c1r0")
    actions = {"r": [SimpleNamespace(name="k", values=None)] * 2}
    seen = cupti.Attribution(times=[("r", "k", None, None)] * 2, launched=[110, 210],
                             outside=[("flush", 5)], outside_launched=[90])
    assert "before the first run" in cupti.split_one_call(actions, seen, starts, 2, 1)
    seen.outside_launched = [None]  # no launch record: a CUDA graph's kernel, say
    assert "has no launch record" in cupti.split_one_call(actions, seen, starts, 2, 1)
    seen.outside_launched = [150]
    shares = cupti.split_one_call(actions, seen, starts, 2, 1)
    assert not isinstance(shares, str) and shares[0][2] == [("flush", 5)] and not shares[1][2]

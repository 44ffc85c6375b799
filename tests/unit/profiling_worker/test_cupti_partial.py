"""A CUPTI job keeps the whole configs measured before a cancel or a kernel that raised
(backends/cupti.py, issue 37), as the cpu and events backends do (region_timer.py), without a
GPU: the stand-in nsight-python of test_cupti_one_call.py runs the profiled function per config
and run, and its kernel list raises where the worker's signal handler or a kernel body would.
Also the plan of nsight-python calls (:func:`cupti.plan_calls`, a pure function of each
config's warm-up time and the runs; the timed warm-up: test_backends_registry.py). The real
collector is cancelled in tests/gpu/test_partial_gpu.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.backends import cupti
from profiling_worker.bundle.errors import Cancelled, KernelFailed
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.spec import validate_spec
from tests.unit.profiling_worker.test_cupti_one_call import Kernels, stand_in_nsight

HOW = "SIGTERM at 2026-12-07T15:00:00+00:00"
SPEC = {"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
        "configs": [{"n": n} for n in (256, 512, 1024, 2048)], "runs": 3,
        "cache_control": "none"}
#: Each config's warm-up call (s): (0.3 + RUN_OVERHEAD_S) x 3 runs = 0.9 s, two a call.
TWO_A_CALL = [0.3] * 4


@pytest.fixture(autouse=True)
def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a new worker: no job shapes refused earlier."""
    monkeypatch.setattr(cupti, "_NOT_KEPT", set())


def gemm(values: tuple[Any, ...], _run: int) -> list[str]:
    return ["gemm"]


def raising(exc: Exception, at: tuple[Any, ...], run: int = 0, then: Kernels = gemm) -> Kernels:
    """Kernels that raise ``exc`` in run ``run`` of the config of values ``at`` (where the
    signal handler raises Cancelled, or a kernel body KernelFailed), ``then`` elsewhere."""
    def kernels(values: tuple[Any, ...], r: int) -> list[str]:
        if values == at and r >= run:
            raise exc
        return then(values, r)
    return kernels


def _collect(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kernels: Kernels,
             warm_up_s: list[float] | None = None, bodies: list[Any] | None = None,
             **spec: Any) -> tuple[Any, list, list]:
    module, calls = stand_in_nsight(monkeypatch, kernels)
    events: list[tuple[str, dict[str, Any]]] = []
    result = cupti.collect_cupti(module, validate_spec({**SPEC, **spec}), bodies or [], tmp_path,
                                 lambda kind, **fields: events.append((kind, fields)),
                                 warm_up_s=warm_up_s)
    return result, calls, events


def _configs(calls: list) -> list[list[int]]:
    index = {(c["n"],): i for i, c in enumerate(SPEC["configs"])}
    return [[index[values] for values in configs] for _options, configs in calls]


def _folders(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


def _measured(result: Any) -> dict[int, list[int]]:
    return result.launches.groupby(C.CONFIG)[C.RUN].apply(sorted).to_dict()


# the plan of calls --------------------------------------------------------------------------

def test_a_j1_sized_job_is_one_call() -> None:
    """J1 (benchmarks/warm_stages.py): 4 configs x 10 runs, 16.6 ms of kernels in all."""
    assert cupti.plan_calls([0.0001, 0.0003, 0.0005, 0.0018], 4, 10) == [[0, 1, 2, 3]]


def test_calls_hold_configs_while_their_estimated_runs_fit_the_budget() -> None:
    estimates = [0.05, 0.05, 0.05, 0.05, 0.5, 0.001, 0.05]
    calls = cupti.plan_calls(estimates, len(estimates), 10)
    assert calls == [[0, 1, 2], [3], [4], [5, 6]]  # 0.51 s each; 5.01 s alone; 0.02 + 0.51 s
    for configs in calls:
        seconds = sum((estimates[i] + cupti.RUN_OVERHEAD_S) * 10 for i in configs)
        assert len(configs) == 1 or seconds <= cupti.CHUNK_BUDGET_S
    assert cupti.plan_calls(estimates, len(estimates), 10, budget_s=100.0) == [
        list(range(len(estimates)))]


@pytest.mark.parametrize("estimates", [None, [0.1, float("nan"), 0.1], [0.1], [0.1, -1.0, 0.1]],
                         ids=["none", "nan", "one-short", "negative"])
def test_without_an_estimate_per_config_a_call_holds_chunk_runs(estimates) -> None:
    size = cupti.CHUNK_RUNS // 10
    calls = cupti.plan_calls(estimates, 3 if estimates else 2 * size + 5, 10)
    if estimates:
        assert calls == [[0, 1, 2]]
    else:
        assert [len(c) for c in calls] == [size, size, 5]
        assert sum(calls, []) == list(range(2 * size + 5))
    assert cupti.plan_calls(None, 3, cupti.CHUNK_RUNS + 1) == [[0], [1], [2]]
    assert cupti.plan_calls([], 0, 10) == []


def test_each_call_has_its_folder() -> None:
    assert cupti.call_dir([0, 1, 2], 3) == cupti.ONE_CALL_DIR
    assert cupti.call_dir([2, 3], 6) == "configs2-3"


# calls of several configs -------------------------------------------------------------------

def test_configs_are_measured_in_the_planned_calls(monkeypatch, tmp_path) -> None:
    result, calls, events = _collect(monkeypatch, tmp_path, gemm, TWO_A_CALL)
    assert _configs(calls) == [[0, 1], [2, 3]]
    assert _folders(tmp_path) == ["configs0-1", "configs2-3"]
    (plan,) = [f for kind, f in events if kind == "log" and "calls" in f]
    assert plan["calls"] == [[0, 1], [2, 3]]
    assert plan["message"] == cupti.plan_text([[0, 1], [2, 3]], 4, True)
    assert _measured(result) == {i: [0, 1, 2] for i in range(4)}
    assert [f["done"] for kind, f in events if kind == "progress"] == list(range(1, 13))
    assert result.shortfall is None


def test_a_cancel_keeps_the_calls_finished_before_it(monkeypatch, tmp_path) -> None:
    """The cancel lands in run 1 of n=2048, the second config of the second call: that call is
    lost (n=1024 had run all its runs in it), the first call's two configs are kept."""
    cancel = Cancelled("the job was cancelled", "", HOW)
    result, calls, _events = _collect(monkeypatch, tmp_path, raising(cancel, (2048,), 1),
                                      TWO_A_CALL)
    assert _configs(calls) == [[0, 1], [2, 3]]
    short = result.shortfall
    assert (short.measured, short.cancelled, short.cut, short.failed) == ([0, 1], HOW, 3, {})
    assert short.lost == cupti.lost_text([2], SPEC["configs"]) and "n=1024" in short.lost
    assert _measured(result) == {0: [0, 1, 2], 1: [0, 1, 2]}
    assert _folders(tmp_path) == ["configs0-1"]  # the cut call's folder removed
    record = partial.manifest_entries(short, SPEC["configs"])[partial.CONFIGS_KEY]
    assert [m["config"] for m in record["not_measured"]] == [2, 3]
    assert short.lost in partial.note_of(record)


def test_a_cancel_in_the_first_call_keeps_nothing(monkeypatch, tmp_path) -> None:
    cancel = Cancelled("the job was cancelled", "", HOW)
    with pytest.raises(Cancelled) as raised:
        _collect(monkeypatch, tmp_path, raising(cancel, (512,)), TWO_A_CALL)
    assert raised.value is cancel


def test_a_cancel_is_never_taken_for_a_refused_call(monkeypatch, tmp_path) -> None:
    """A cancel in the only call must stop the job, not send it to calls per config."""
    cancel = Cancelled("the job was cancelled", "", HOW)
    module, calls = stand_in_nsight(monkeypatch, raising(cancel, (2048,), 2))
    spec = validate_spec(SPEC)
    with pytest.raises(Cancelled):
        cupti.collect_cupti(module, spec, [], tmp_path, lambda *a, **k: None)
    assert len(calls) == 1 and not cupti._NOT_KEPT


def test_a_kernel_that_raises_in_a_call_sends_its_configs_per_config(monkeypatch,
                                                                    tmp_path) -> None:
    """n=512 runs out of memory inside the first call: its configs are measured in calls of
    their own (n=512 skipped, a warning says so), the second call still holds two configs."""
    oom = KernelFailed("kernel matmul at config n=512 ran out of memory: CUDA out of memory",
                       "choose smaller sizes")
    result, calls, events = _collect(monkeypatch, tmp_path, raising(oom, (512,)), TWO_A_CALL)
    assert _configs(calls) == [[0, 1], [0], [1], [2, 3]]
    short = result.shortfall
    assert (short.measured, short.failed, short.cancelled) == ([0, 2, 3], {1: oom.message}, None)
    assert _measured(result) == {i: [0, 1, 2] for i in (0, 2, 3)}
    assert any(kind == "warning" and oom.message in f["message"] for kind, f in events)
    assert "configs2-3" in _folders(tmp_path) and "configs0-1" not in _folders(tmp_path)


def test_a_refused_call_sends_the_later_ones_per_config(monkeypatch, tmp_path) -> None:
    """n=1024 launches two kernels a run: the second call (n=1024, 2048) cannot be split; it
    and the third are measured per config, and the progress counts its runs again."""
    def kernels(values: tuple[Any, ...], _r: int) -> list[str]:
        return ["splitk", "reduce"] if values == (1024,) else ["gemm"]

    configs = [{"n": n} for n in (256, 512, 1024, 2048, 4096, 8192)]
    result, calls, events = _collect(monkeypatch, tmp_path, kernels, [0.3] * 6,
                                     configs=configs)
    assert [c for _o, c in calls] == [[(256,), (512,)], [(1024,), (2048,)], [(1024,)],
                                      [(2048,)], [(4096,)], [(8192,)]]
    assert _folders(tmp_path) == ["c2", "c3", "c4", "c5", "configs0-1"]
    assert result.shortfall is None and len(result.launches) == 7 * 3
    logs = [f["message"] for kind, f in events if kind == "log"]
    assert any("configs 2-3 not kept" in m and "launches over 6 runs" in m for m in logs), logs
    done = [f["done"] for kind, f in events if kind == "progress"]
    assert done == [*range(1, 13), *range(7, 19)]  # config 2 and 3's runs counted again
    assert cupti._NOT_KEPT  # a repeat of this job goes per config at once


# calls of their own -------------------------------------------------------------------------

def test_a_cancel_on_the_per_config_path_keeps_the_configs_before(monkeypatch,
                                                                  tmp_path) -> None:
    cancel = Cancelled("the job was cancelled", "", HOW)
    result, calls, _events = _collect(monkeypatch, tmp_path, raising(cancel, (1024,)),
                                      warmup=0)
    short = result.shortfall
    assert (short.measured, short.cut, short.lost) == ([0, 1], 2, "")
    assert _measured(result) == {0: [0, 1, 2], 1: [0, 1, 2]}
    assert _folders(tmp_path) == ["c0", "c0-1", "c1", "c1-1"]  # no warm-up: a cold first call


def test_a_cancel_after_a_configs_cold_first_call_drops_it_whole(monkeypatch, tmp_path) -> None:
    """Without warm-up a config's first run is a call of its own: a cancel in its other runs
    drops that first run and its folder too."""
    cancel = Cancelled("the job was cancelled", "", HOW)
    result, _calls, _events = _collect(monkeypatch, tmp_path, raising(cancel, (1024,), 1),
                                       warmup=0)
    assert (result.shortfall.measured, result.shortfall.cut) == ([0, 1], 2)
    assert _measured(result) == {0: [0, 1, 2], 1: [0, 1, 2]}
    assert _folders(tmp_path) == ["c0", "c0-1", "c1", "c1-1"]


def test_a_kernel_that_raises_on_the_per_config_path_is_skipped(monkeypatch, tmp_path) -> None:
    oom = KernelFailed("kernel matmul at config n=512 ran out of memory", "choose smaller sizes")
    result, _calls, _events = _collect(monkeypatch, tmp_path, raising(oom, (512,)), warmup=0)
    short = result.shortfall
    assert (short.measured, short.failed, short.cancelled) == ([0, 2, 3], {1: oom.message}, None)
    with pytest.raises(KernelFailed):  # no config measured: the first error, as before
        _collect(monkeypatch, tmp_path / "one", raising(oom, (256,)), warmup=0,
                 configs=SPEC["configs"][:1])


# the estimates ------------------------------------------------------------------------------

def test_a_slow_first_warm_up_call_is_timed_again(monkeypatch, tmp_path) -> None:
    """One warm-up call: config 0's paid the process's first use of its libraries (0.3 s), ten
    runs of it would fill a call alone; called once more it is fast, and J1 stays one call."""
    seen: list[tuple[Any, ...]] = []
    monkeypatch.setattr(cupti, "_cuda_sync", lambda: seen.append(("sync",)))

    def body(*values: Any, annotate: Any = None) -> None:
        seen.append(values)

    result, calls, events = _collect(monkeypatch, tmp_path, gemm, [0.3, 0.0003, 0.0005, 0.0018],
                                     bodies=[body], runs=10)
    assert seen[:3] == [("sync",), (256,), ("sync",)]  # config 0 once more, synchronised
    assert _configs(calls) == [[0, 1, 2, 3]] and _folders(tmp_path) == [cupti.ONE_CALL_DIR]
    assert not [f for kind, f in events if kind == "progress" and f["stage"] == "warm-up"]
    assert result.shortfall is None


def test_a_first_config_slow_again_keeps_a_call_of_its_own(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(cupti, "_cuda_sync", lambda: None)
    slow = (cupti.CHUNK_BUDGET_S / 10) * 1.1

    def body(*values: Any, annotate: Any = None) -> None:
        if values == (256,) and annotate is not None:
            time.sleep(slow)  # the warm-up's call only: the profiled runs pass annotate None

    _result, calls, _events = _collect(monkeypatch, tmp_path, gemm, [0.3, 0.001, 0.001, 0.001],
                                       bodies=[body], runs=10)
    assert _configs(calls) == [[0], [1, 2, 3]]


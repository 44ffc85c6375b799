"""runs "auto" on the CUPTI run loop (backends/cupti.py) without a GPU: a stand-in for
nsight-python 1.1's analyze.kernel that calls the profiled function ``runs`` times and hands
its extraction the recorded H200 durations (scenario h200-cupti-stability), as nsight-python
1.1's CUPTI collector does. The GPU test (tests/gpu/test_adaptive_gpu.py) runs the real one."""

import inspect
import sys
import types
from collections import namedtuple

from profiling_worker.backends import cupti
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import validate_spec
from tests.unit.profiling_worker.test_adaptive import recorded_runs
from tests.unit.profiling_worker.test_nsight_options import VERSIONS

Action = namedtuple("Action", "name values")


def stand_in_nsight(monkeypatch, name, launches):
    """An nsight module whose decorated call runs the function ``runs`` times per config, then
    hands its extraction ``launches(call_options, config_values)``: the (kernel, ns) pairs of
    that call, as nsight-python 1.1's CUPTI collector does. Returns the module and the list of
    each call's options."""
    calls = []
    module = types.SimpleNamespace(__name__=name, __version__="1.1.0", annotate=lambda _n: None)

    def kernel(**options):
        calls.append(options)

        def decorate(func):
            def run(configs):
                for values in configs:
                    for _ in range(options["runs"]):
                        func(*values)
                    module.extraction.extract_df_from_data(
                        {"fp16": [Action(k, [ns]) for k, ns in launches(options, values)]})
            return run
        return decorate

    kernel.__signature__ = inspect.signature(VERSIONS["1.1.0"])
    module.analyze = types.SimpleNamespace(kernel=kernel)
    module.extraction = types.SimpleNamespace(extract_df_from_data=lambda *a, **k: None)
    monkeypatch.setitem(sys.modules, f"{name}.collection.cupti", types.ModuleType("cupti"))
    return module, calls


def replaying_nsight(monkeypatch, recorded):
    """A stand-in nsight that extracts the next recorded durations of each config (config
    values -> index by n)."""
    taken = {c: 0 for c in recorded}
    index = {256: 0, 1024: 1, 8192: 2}

    def launches(options, values):
        config = index[values[0]]
        first = taken[config]
        taken[config] += options["runs"]
        return [("sm90_gemm", ns) for ns in recorded[config][first:taken[config]]]

    return stand_in_nsight(monkeypatch, "replay_nsight", launches)


def test_cupti_auto_runs_call_nsight_per_batch_and_number_runs_on(monkeypatch, tmp_path):
    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
                          "configs": [{"n": 256}, {"n": 1024}, {"n": 8192}], "runs": "auto",
                          "cache_control": "none",
                          "run_target": {"rel_ci95_pct": 2.0, "min_runs": 5, "max_runs": 30}})
    nsight, calls = replaying_nsight(monkeypatch, recorded_runs())
    result = cupti.collect_cupti(nsight, spec, [], tmp_path, lambda *a, **k: None)
    auto = result.backend_info["auto_runs"]["configs"]
    assert [c["runs"] for c in auto] == [20, 18, 5]  # as the replay of the rule alone
    assert all(c["target_met"] for c in auto)
    launches = result.launches
    for row in auto:
        mine = launches[launches[C.CONFIG] == row[C.CONFIG]]
        assert sorted(mine[C.RUN]) == list(range(row["runs"]))  # numbered on across calls
        assert mine[C.VALUE].tolist() == recorded_runs()[row[C.CONFIG]][:row["runs"]]
    assert [c["runs"] for c in calls[:3]] == [5, 5, 5]  # min_runs of each config first
    assert calls[0]["output_prefix"].endswith("/c0/") and calls[3]["output_prefix"].endswith("-1/")


def test_without_warm_up_the_first_run_is_a_call_of_its_own(monkeypatch, tmp_path):
    """A cold first call that launches 3 kernels (autotuning) and 1 after: in one call of 2 runs
    nsight-python's 4 launches would split 2 + 2; a call of its own keeps them 3 + 1."""
    def launches(options, _values):
        cold = len(calls) == 1  # the job's first call: autotuning kernels before the GEMM
        names = (["tune_a", "tune_b", "gemm"] if cold else []) + ["gemm"] * (options["runs"] - cold)
        return [(n, 1000.0) for n in names]

    module, calls = stand_in_nsight(monkeypatch, "cold_nsight", launches)
    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
                          "configs": [{"n": 1024}], "runs": 2, "warmup": 0,
                          "cache_control": "none"})
    launches = cupti.collect_cupti(module, spec, [], tmp_path, lambda *a, **k: None).launches
    assert [c["runs"] for c in calls] == [1, 1]
    per_run = launches.groupby(C.RUN)[C.KERNEL].apply(list).to_dict()
    assert per_run == {0: ["tune_a", "tune_b", "gemm"], 1: ["gemm"]}

"""app/core/preflight.py on recorded H200 CUPTI launches (tests/scenarios.py): launch counts per
annotation x config, the flags, and the estimates."""

import json
from pathlib import Path

import pandas as pd
import pytest

from app.core import preflight
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import validate_spec

from tests.scenarios import scenario_dir


def recorded(name):
    """Runs 0 and 1 of a bundled job (a pre-flight's two calls) and its manifest."""
    launches = pd.read_parquet(scenario_dir(name) / "tables" / "launches.parquet")
    manifest = json.loads((scenario_dir(name) / "manifest.json").read_text())
    return launches[launches[C.RUN] < 2], manifest


def test_preflight_spec_is_two_cold_calls_on_cupti_or_cpu():
    planned = validate_spec({"kernels": ["matmul"], "configs": [{"n": 1024}], "runs": 50,
                             "backend": "ncu", "warmup": 3, "gpu": 1, "label": "big sweep"})
    quick = preflight.preflight_spec(planned)
    assert (quick.backend, quick.runs, quick.warmup, quick.gpu) == ("cupti", 2, 0, 1)
    assert quick.label == "pre-flight of big sweep"
    cpu = preflight.preflight_spec(validate_spec({**planned.to_json(), "backend": "cpu",
                                                  "gpu": 0}))
    assert cpu.backend == "cpu"


def test_a_cpu_pass_times_with_the_planned_torch_threads():
    """A cpu job's times depend on its torch threads (profiling_worker/backends/cpu.py): its
    pass, whose host time the estimate multiplies, times with the same; a GPU job's pass has
    none to keep."""
    planned = validate_spec({"kernels": ["matmul"], "configs": [{"n": 64}], "runs": 20,
                             "backend": "cpu", "cpu_threads": 2})
    assert preflight.preflight_spec(planned).cpu_threads == 2
    gpu = validate_spec({**planned.to_json(), "backend": "cupti", "metrics": []})
    assert preflight.preflight_spec(gpu).cpu_threads == 1


def test_split_k_at_one_size_is_flagged_on_the_recorded_fp32_sweep():
    """cuBLAS launches 2 kernels for fp32 n=512 and 1 at 1024-8192 (H200, CUPTI)."""
    launches, manifest = recorded("h200-cupti-matmul-sweep")
    ncu = json.loads((scenario_dir("h200-ncu-matmul-sweep") / "manifest.json").read_text())
    planned = validate_spec(ncu["spec"])  # the same sweep on ncu, 6 metrics, 10 runs
    found = preflight.read_preflight(launches, manifest, planned)
    fp32 = found.counts[found.counts[C.ANNOTATION] == "fp32"]
    assert fp32[preflight.LATER].tolist() == [2, 1, 1, 1, 1]
    assert len(found.flags) == 1 and found.flags[0].startswith("fp32: launches per call differ")
    assert "n=512: 2" in found.flags[0]
    launches_planned = int(found.counts[preflight.LATER].sum()) * 10
    assert found.estimate["launches"] == launches_planned == 160  # the recorded ncu job's 160
    # the recorded ncu job took 44.6 s and wrote an 18.37 MB report (uncompressed)
    assert found.estimate["seconds"] == pytest.approx(ncu["wall_s"], rel=0.15)
    assert found.estimate["report_bytes"] == pytest.approx(18_371_641, rel=0.05)


def test_a_first_call_with_other_kernels_is_flagged_with_the_planned_warm_up():
    """Built from the recorded sweep: the n=512 call (split-K, 2 kernels) stands as the first
    call of n=1024 (1 kernel), as an autotuning first call looks."""
    launches, manifest = recorded("h200-cupti-matmul-sweep")
    fp32 = launches[launches[C.ANNOTATION] == "fp32"]
    first = fp32[(fp32[C.CONFIG] == 0) & (fp32[C.RUN] == 0)].assign(**{C.CONFIG: 1})
    later = fp32[(fp32[C.CONFIG] == 1) & (fp32[C.RUN] == 1)]
    planned = validate_spec({**manifest["spec"], "warmup": 0})
    flags = preflight.flags_of(preflight.count_frame(pd.concat([first, later]),
                                                     manifest["spec"]["configs"]), planned)
    assert flags and flags[0].startswith("First call launches other kernels than the second")
    assert "fp32 n=1024: 2 launches, then 1" in flags[0] and "no warm-up" in flags[0]


def test_auto_runs_estimate_is_bounded_by_the_budget():
    launches, manifest = recorded("h200-cupti-stability")
    planned = validate_spec({**manifest["spec"], "runs": "auto",
                             "run_target": {"max_runs": 10_000, "budget_s": 30}})
    est = preflight.read_preflight(launches, manifest, planned).estimate
    assert est["seconds"] == pytest.approx(5.6 + 30) and "at most" in est["note"]


def test_a_pilot_for_nsight_compute_runs_auto_on_cupti_from_two_cold_calls():
    twin = validate_spec({"kernels": ["matmul"], "configs": [{"n": 1024}, {"n": 8192}],
                          "backend": "cupti", "runs": "auto",
                          "run_target": {"rel_ci95_pct": 1.0, "max_runs": 50, "budget_s": 300}})
    pilot = preflight.preflight_spec(twin, pilot=True)
    assert (pilot.backend, pilot.warmup, pilot.runs) == ("cupti", 0, 50)
    assert pilot.run_target.min_runs == preflight.CALLS and pilot.run_target.rel_ci95_pct == 1.0
    assert pilot.run_target.budget_s == preflight.PILOT_BUDGET_S
    assert preflight.preflight_spec(twin).run_target is None  # a plain pre-flight: 2 calls


def test_ncu_runs_are_the_most_any_config_took(tmp_path):
    """On a real auto job's record (cpu worker): Nsight Compute runs every config alike."""
    import subprocess
    import sys

    job = tmp_path / "auto"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 16}, {"n": 64}],
        "backend": "cpu", "runs": "auto",
        "run_target": {"rel_ci95_pct": 5.0, "min_runs": 2, "max_runs": 12, "budget_s": 20}}))
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], timeout=300,
                   cwd=Path(__file__).resolve().parents[3], check=True, capture_output=True)
    manifest = json.loads((job / "manifest.json").read_text())
    runs, taken = preflight.ncu_runs(manifest)
    assert taken == [c["runs"] for c in manifest["backend"]["auto_runs"]["configs"]]
    assert runs == max(taken) and 2 <= runs <= 12
    assert preflight.ncu_runs({"backend": {}}) is None

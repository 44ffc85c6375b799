"""Environment summary rows from the worker's report layout (gpus list) and a flat one."""

from __future__ import annotations

from app.core.environment import environment_rows, gpu_name

H200 = {"gpus": [{"index": 0, "name": "NVIDIA H200", "driver": "580.159.04",
                  "compute_capability": "9.0", "memory_mib": 143771}],
        "ncu": {"path": "/usr/local/cuda/bin/ncu", "version": "2025.3.1.0"},
        "nsight_python": "0.9.6", "torch": "2.11.0", "host": "vm"}


def test_gpu_name_layouts() -> None:
    assert gpu_name(H200, 0) == "NVIDIA H200"
    assert gpu_name({"gpu_name": "NVIDIA H100"}, 0) == "NVIDIA H100"
    assert gpu_name({"gpus": []}, 0) == ""


def test_rows() -> None:
    rows = {r["Item"]: r["Value"] for r in environment_rows(H200, {"name": "ncu", "nsight_mode": "launch"},
                                                                  0)}
    assert rows["GPU"] == "NVIDIA H200" and rows["Driver"] == "580.159.04"
    assert rows["Memory"] == "143,771 MiB"
    assert rows["Nsight Compute (ncu)"] == "2025.3.1.0 /usr/local/cuda/bin/ncu"
    assert rows["nsight mode"] == "launch" and rows["cupti-python"] == "none"
    assert {r["Value"] for r in environment_rows({}, None, 0)} >= {"none"}


def test_a_machine_names_the_backends_it_can_run_not_a_backend_none() -> None:
    """New-user trial: This machine (no GPU) read "Backend none" although the cpu backend runs
    there; a machine's rows name what it can run, a job's its backend."""
    machine = {r["Item"]: r["Value"] for r in environment_rows({}, None, 0, ["cpu"])}
    assert machine["Backends it can run"] == "cpu"
    assert not {"Backend", "nsight mode", "Measures"} & set(machine)
    job = {r["Item"]: r["Value"] for r in environment_rows(H200, {"name": "ncu"}, 0)}
    assert job["Backend"] == "ncu" and "Backends it can run" not in job


def test_the_jobs_gpu_is_its_nvml_index_not_the_visible_index() -> None:
    """Issue 11 case 3: "gpu": 0 under CUDA_VISIBLE_DEVICES=1 ran on NVML GPU 1 (an H100 here
    beside an H200 would give the wrong peaks if the spec's index were used)."""
    from app.core.environment import gpu_name, job_gpu_index

    env = {"gpus": [{"index": 0, "name": "NVIDIA H200"}, {"index": 1, "name": "NVIDIA H100"}]}
    manifest = {"environment": env, "spec": {"gpu": 0},
                "gpu": {"index": 0, "nvml_index": 1, "uuid": "GPU-b", "visible_devices": "1"}}
    assert gpu_name(env, job_gpu_index(manifest)) == "NVIDIA H100"
    assert job_gpu_index({"spec": {"gpu": 1}, "gpu": {"index": 1, "uuid": "GPU-b"}}) == 1
    assert job_gpu_index({}, "x") == 0 and job_gpu_index({"spec": {"gpu": "x"}}) == 0


def test_the_host_cpu_the_gate_compares_is_shown() -> None:
    """environment.cpu (the worker's probe; what the gate compares for a cpu job) is a row;
    a bundle recorded before it has none (no "none" cell in a shared report)."""
    from profiling_worker.probes.environment import probe_environment

    env = probe_environment()
    rows = {r["Item"]: r["Value"] for r in environment_rows(env, {"name": "cpu"}, 0)}
    cpu = env["cpu"]
    assert rows["Host CPU"] == f"{cpu['model']} × {cpu['count']} ({cpu['machine']})"
    older = {r["Item"]: r["Value"] for r in environment_rows(H200, {"name": "ncu"}, 0)}
    assert "Host CPU" not in older

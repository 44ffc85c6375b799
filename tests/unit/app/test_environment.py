"""Environment summary rows from the worker's report layout (gpus list) and a flat one."""

from __future__ import annotations

from app.core.environment import environment_rows, gpu_name

H200 = {"gpus": [{"index": 0, "name": "NVIDIA H200", "driver": "580.159.04",
                  "compute_capability": "9.0", "memory_mib": 143771}],
        "ncu": {"path": "/usr/local/cuda/bin/ncu", "version": "2025.3.1.0"},
        "nsight_python": "0.9.6", "torch": "2.11.0", "host": "vm"}


def test_gpu_name_layouts() -> None:
    assert gpu_name(H200) == "NVIDIA H200"
    assert gpu_name({"gpu_name": "NVIDIA H100"}) == "NVIDIA H100"
    assert gpu_name({"gpus": []}) == ""


def test_rows() -> None:
    rows = {r["Item"]: r["Value"] for r in environment_rows(H200, {"name": "ncu", "nsight_mode": "launch"})}
    assert rows["GPU"] == "NVIDIA H200" and rows["Driver"] == "580.159.04"
    assert rows["Memory"] == "143,771 MiB"
    assert rows["Nsight Compute (ncu)"] == "2025.3.1.0 /usr/local/cuda/bin/ncu"
    assert rows["nsight mode"] == "launch" and rows["cupti-python"] == "none"
    assert {r["Value"] for r in environment_rows({})} >= {"none"}

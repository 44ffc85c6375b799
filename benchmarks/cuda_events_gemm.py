"""Time cuBLAS GEMMs with CUDA events, to cross-check profiler durations of >= 1 ms kernels.

Usage: ``python cuda_events_gemm.py OUT_JSON``. For each (dtype, n) it warms up 3 times, then
times 10 single ``a @ b`` calls, each between two CUDA events, and writes the mean and min (ns).
"""

import json
import sys

import torch

CASES = [("fp32", 4096), ("fp32", 8192), ("fp16", 8192), ("bf16", 8192)]
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def time_gemm(dtype: str, n: int, reps: int = 10) -> list[float]:
    """Durations (ns) of ``reps`` GEMMs of n x n matrices, one event pair each."""
    a = torch.randn(n, n, device="cuda", dtype=DTYPES[dtype])
    b = torch.randn(n, n, device="cuda", dtype=DTYPES[dtype])
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e6)
    return out


if __name__ == "__main__":
    result = {}
    for dtype, n in CASES:
        times = time_gemm(dtype, n)
        result[f"{dtype}-{n}"] = {"mean_ns": sum(times) / len(times), "min_ns": min(times)}
    with open(sys.argv[1], "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps(result))

"""NVML's total energy counter on this GPU: how often it changes (update period) and by how much
(resolution), read in a tight loop while the GPU idles and while fp16 matmuls keep it busy.
Writes a JSON file; docs/energy-h200.md is made from the H200's (scripts/energy_doc.py).

    python benchmarks/energy_counter.py OUT.json [--busy-s 4] [--idle-s 1.5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def read_loop(nv, handle, seconds: float) -> list[tuple[float, int]]:
    """(perf_counter s, counter mJ) at every read for ``seconds``."""
    out, end = [], time.perf_counter() + seconds
    while (now := time.perf_counter()) < end:
        out.append((now, nv.nvmlDeviceGetTotalEnergyConsumption(handle)))
    return out


def changes(reads: list[tuple[float, int]]) -> dict:
    """Update period and step of the counter from its reads: the times it changed, the
    intervals between changes (s) and the steps (mJ)."""
    at = [(t, e) for (t, e), (_, prev) in zip(reads[1:], reads) if e != prev]
    gaps = [b[0] - a[0] for a, b in zip(at, at[1:])]
    steps = [b[1] - a[1] for a, b in zip(at, at[1:])]
    span = reads[-1][0] - reads[0][0]
    return {"reads": len(reads), "span_s": span, "read_cost_us": 1e6 * span / len(reads),
            "changes": len(at),
            "update_period_ms_median": 1e3 * statistics.median(gaps) if gaps else None,
            "update_period_ms_min": 1e3 * min(gaps) if gaps else None,
            "update_period_ms_max": 1e3 * max(gaps) if gaps else None,
            "step_mj_median": statistics.median(steps) if steps else None,
            "step_mj_min": min(steps) if steps else None,
            "mean_power_w": (reads[-1][1] - reads[0][1]) / 1e3 / span if span else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--busy-s", type=float, default=4.0)
    parser.add_argument("--idle-s", type=float, default=1.5)
    args = parser.parse_args()
    import pynvml as nv
    import torch

    nv.nvmlInit()
    handle = nv.nvmlDeviceGetHandleByIndex(0)
    idle = read_loop(nv, handle, args.idle_s)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn_like(a)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    a @ b
    torch.cuda.synchronize()
    one_ms = 1e3 * (time.perf_counter() - t0)
    count = int(args.busy_s * 1e3 / max(one_ms, 0.1)) + 1
    for _ in range(count):  # queued: the GPU stays busy while the host reads the counter
        a @ b
    busy = read_loop(nv, handle, args.busy_s * 0.8)
    torch.cuda.synchronize()
    result = {"gpu": nv.nvmlDeviceGetName(handle), "driver": nv.nvmlSystemGetDriverVersion(),
              "counter": "nvmlDeviceGetTotalEnergyConsumption (mJ)",
              "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(handle) / 1e3,
              "matmul_fp16_8192_ms": one_ms, "queued_matmuls": count,
              "idle": changes(idle), "busy": changes(busy)}
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

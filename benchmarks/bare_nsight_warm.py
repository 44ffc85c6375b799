"""nsight-python's own floor for a warm repeat of job J1 on CUPTI (issue 24): what a bare script
that keeps its process (nsight imported, CUDA up, inputs made) pays for each repeat.

J1: fp16 ``a @ b`` at n = 1024..8192, 10 runs, durations. The inputs are made once per n,
outside the profiled function (as the worker's catalog kernel does). Each repeat times,
interleaved, from the decorated call to the DataFrame in hand:

- ``one_call``: one ``nsight.analyze.kernel`` call of the 4 configs (what a bare script does);
- ``per_config``: 4 calls of one config each (what the worker's CUPTI backend makes, so that
  configs with different kernel counts keep their own values and files).

Both write nsight-python's CSVs (``output_csv=True``), as the worker does. The first repeat
(CUDA and cuBLAS warm-up, nsight-python's first CUPTI session) is reported apart. Kernel
time = sum over configs of AvgValue x runs (ns).

Usage: ``python bare_nsight_warm.py OUT_JSON LIBCUPTI [--repeats 5]`` with nsight-python >= 1.1
and cupti-python >= 13.4 on the path; prints one line per repeat and the medians.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import tempfile
import time

SIZES = (1024, 2048, 4096, 8192)
RUNS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_json")
    parser.add_argument("libcupti", help="libcupti >= 13.4, loaded before torch's own")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ["NSPY_NCU_INIT_AT_IMPORT"] = "0"
    ctypes.CDLL(args.libcupti, mode=ctypes.RTLD_GLOBAL)
    import nsight  # before torch: nsight must come before CUDA
    import torch

    nsight.activate(nsight.Tool.CUPTI)
    inputs = {n: (torch.randn(n, n, device="cuda", dtype=torch.float16),
                  torch.randn(n, n, device="cuda", dtype=torch.float16)) for n in SIZES}
    out = tempfile.mkdtemp(prefix="bare-warm-")

    def mm(n: int) -> None:
        a, b = inputs[n]
        with nsight.annotate("fp16"):
            a @ b

    def profile(configs: tuple[int, ...], tag: str) -> float:
        """One nsight-python call of ``configs``; its kernel time (ns)."""
        decorated = nsight.analyze.kernel(configs=[(n,) for n in configs], runs=RUNS,
                                          output_prefix=f"{out}/{tag}/", output_csv=True)(mm)
        df = decorated().to_dataframe()
        return float((df["AvgValue"] * RUNS).sum())

    def one_call(i: int) -> float:
        return profile(SIZES, f"one-{i}")

    def per_config(i: int) -> float:
        return sum(profile((n,), f"per-{i}-{n}") for n in SIZES)

    samples: dict[str, list[float]] = {"one_call": [], "per_config": []}
    kernel_ns: dict[str, float] = {}
    for i in range(args.repeats + 1):
        for name, fn in (("one_call", one_call), ("per_config", per_config)):
            t0 = time.perf_counter()
            kernel_ns[name] = fn(i)
            wall = time.perf_counter() - t0
            if i:
                samples[name].append(wall)
            print(f"repeat {i}{' (first, apart)' if not i else ''} {name}: {wall * 1e3:.1f} ms, "
                  f"kernels {kernel_ns[name] / 1e6:.2f} ms", flush=True)
    result = {"repeats": args.repeats, "samples_s": samples, "kernel_ns": kernel_ns,
              "median_s": {k: statistics.median(v) for k, v in samples.items()},
              "nsight_python": getattr(nsight, "__version__", None),
              "torch": torch.__version__}
    for name, median in result["median_s"].items():
        print(f"median {name}: {median * 1e3:.1f} ms")
    with open(args.out_json, "w") as fh:
        json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()

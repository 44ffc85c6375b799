"""Job J1 as a bare nsight-python script: fp16 ``a @ b`` at n = 1024..8192, 10 runs, duration.

The reference the dashboard's worker is compared with (issue: "no overhead over bare
nsight-python"). Usage: ``python bare_nsight_j1.py ncu|cupti OUT_DIR [LIBCUPTI]``; writes
``OUT_DIR/bare_<backend>.json`` with AvgValue (ns) per n and the wall time of the script.
"""

import ctypes
import json
import os
import sys
import time

T0 = time.perf_counter()
BACKEND, OUT = sys.argv[1], sys.argv[2]
if BACKEND == "cupti":
    os.environ["NSPY_NCU_INIT_AT_IMPORT"] = "0"
    if len(sys.argv) > 3:
        ctypes.CDLL(sys.argv[3], mode=ctypes.RTLD_GLOBAL)  # libcupti >= 13.4 before torch's
import nsight  # noqa: E402  (before torch: nsight must come before CUDA)
import torch  # noqa: E402

if BACKEND == "cupti":
    nsight.activate(nsight.Tool.CUPTI)
SIZES = [1024, 2048, 4096, 8192]


@nsight.analyze.kernel(configs=SIZES, runs=10, output_prefix=f"{OUT}/bare_{BACKEND}/",
                       output_csv=True)
def mm(n):
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    with nsight.annotate("fp16"):
        a @ b


T1 = time.perf_counter()
df = mm().to_dataframe()
T2 = time.perf_counter()
rows = {int(r["n"]): float(r["AvgValue"]) for _, r in df.iterrows()}
with open(f"{OUT}/bare_{BACKEND}.json", "w") as fh:
    json.dump({"backend": BACKEND, "avg_ns": rows, "profile_call_s": T2 - T1,
               "wall_s": time.perf_counter() - T0, "nsight_python": nsight.__version__
               if hasattr(nsight, "__version__") else None,
               "end_epoch_s": time.time()}, fh, indent=1)  # the caller times the exit from it

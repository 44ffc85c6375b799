"""nsight-python output in the shapes issue 10 lists, recorded on the H200.

Run as ``python nspy_cases.py OUTDIR`` with nsight-python 0.9.6 (launch mode; every decorated
call re-runs this script under ncu) or 1.1 with CUPTI (``CUPTI=1``). Each case writes its CSVs
(and, on ncu, its .ncu-rep) under OUTDIR/<case>/ with the prefix ``bench_`` where noted.
"""
import os
import sys

import nsight
import torch

OUT = os.path.abspath(sys.argv[1])
CUPTI = os.environ.get("CUPTI") == "1"
TIME = "gpu__time_duration.sum"
BOUND = [TIME, "dram__throughput.avg.pct_of_peak_sustained_elapsed",
         "sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
         "dram__bytes_write.sum", "gpc__cycles_elapsed.avg.per_second"]
COMMON = {"output_csv": True, "clock_control": "none"} if not CUPTI else {"output_csv": True}
if CUPTI:
    nsight.activate(nsight.Tool.CUPTI)


def prefix(case, p=""):
    d = os.path.join(OUT, case)
    os.makedirs(d, exist_ok=True)
    return d + "/" + p


def combined(n):
    a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
    with nsight.annotate("unfused"):
        a + b * c
    with nsight.annotate("fused"):
        torch.addcmul(a, b, c)


def compute_tflops(t_ns, n):
    return 2 * n ** 3 / t_ns / 1e3


def matmul(n):
    x16 = torch.randn(n, n, device="cuda", dtype=torch.float16)
    x32 = torch.randn(n, n, device="cuda")
    with nsight.annotate("fp16"):
        x16 @ x16
    with nsight.annotate("fp32"):
        x32 @ x32


def scale(n):
    x = torch.randn(n, device="cuda")
    with nsight.annotate("torch"):
        x * 2
    with nsight.annotate("inplace"):
        x.mul_(2)


SIZES = [(1 << 20,), (1 << 22,)]
if not CUPTI:
    nsight.analyze.kernel(configs=SIZES, runs=3, metrics=BOUND, output_prefix=prefix("combine", "bench_"),
                          combine_kernel_metrics=lambda x, y: x + y, **COMMON)(combined)()
    nsight.analyze.kernel(configs=[(1024,), (2048,)], runs=3, derive_metric=compute_tflops,
                          output_prefix=prefix("derived"), **COMMON)(matmul)()
    nsight.analyze.kernel(configs=SIZES, runs=3, normalize_against="torch",
                          output_prefix=prefix("normalized"), **COMMON)(scale)()
    twice = nsight.analyze.kernel(configs=SIZES, runs=3, output_prefix=prefix("two_calls"), **COMMON)(scale)
    twice()
    twice()
else:
    import pynvml
    from nsight.experimental import collect, CollectionScope
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())

    @collect(scope=CollectionScope.RUN)
    def sm_clock_mhz():
        return pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)

    @collect(scope=CollectionScope.RUN)
    def gpu_temp_c():
        return pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)

    @collect(scope=CollectionScope.ONCE)
    def driver_version():
        return pynvml.nvmlSystemGetDriverVersion()

    nsight.analyze.kernel(configs=SIZES, runs=5, output_prefix=prefix("cupti_collectors", "bench_"),
                          info_collectors=[sm_clock_mhz, gpu_temp_c, driver_version],
                          combine_kernel_metrics=lambda x, y: x + y, **COMMON)(combined)()
    nsight.analyze.kernel(configs=[(1024,), (2048,)], runs=3, derive_metric=compute_tflops,
                          normalize_against="fp32", output_prefix=prefix("cupti_derived_normalized"),
                          **COMMON)(matmul)()
print("nspy_cases done", "cupti" if CUPTI else "ncu")

"""Device peaks: a labelled datasheet table, and clock-adjusted peaks from Nsight Compute counters.

Two kinds of ceiling, each with its source:

- **Datasheet** (:data:`DATASHEET`): NVIDIA's published numbers, matched by the GPU name in the
  manifest. Dense and 2:4-sparse tensor-core peaks are separate fields and only the dense one is
  ever used as a roof: NVIDIA's H100/H200/L4 pages headline the sparse numbers (2x dense), which
  several tools copied by mistake. FP32 is the CUDA-core (SIMT) rate, not TF32.
- **Clock-adjusted** (:func:`counter_peak`): Nsight Compute's per-cycle peak
  (``*.peak_sustained``) x the clock the kernel ran at (``*__cycles_elapsed.avg.per_second``), as
  NCU's own rooflines compute it. This is "how well the kernel used the cycles it had"; the
  datasheet peak is "how far from the boost-clock number". Tensor roofs use the per-op
  ``..._sparsity_off`` peaks: the roll-up ``sm__ops_path_tensor_src_fp16.sum.peak_sustained`` is the
  2:4-sparse rate (measured on an H200: 1,081,344 vs 540,672 FLOP/cycle dense).

When a job did not collect the ``*.peak_sustained`` metrics but did collect its clock
(``gpc__cycles_elapsed.avg.per_second``), :func:`clock_scaled_peak` scales the datasheet peak by
measured clock / the clock the datasheet number assumes, and says so in its source.
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling_worker.bundle.schema import metrics as M

H100_URL = "https://www.nvidia.com/en-us/data-center/h100/"
H200_URL = "https://www.nvidia.com/en-us/data-center/h200/"
A100_URL = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
L4_URL = "https://resources.nvidia.com/en-us-gpu-resources/l4-tensor-datasheet"


@dataclass(frozen=True)
class DevicePeaks:
    """Datasheet peaks of one GPU model (TFLOP/s, GB/s; ``None`` = not supported / not listed).

    Attributes:
        name: model name as the datasheet spells it.
        match_all / match_none: lower-case substrings the manifest GPU name must / must not contain.
        fp32, fp64: CUDA-core (SIMT) FP32 / FP64 TFLOP/s.
        tf32_dense .. fp8_sparse: tensor-core TFLOP/s, dense and 2:4-sparse kept apart.
        dram_gbps: DRAM bandwidth (GB/s, 1e9 bytes/s).
        simt_clock_mhz / tensor_clock_mhz: the clock the FP32 / tensor numbers assume.
        source: where the numbers come from (URL).
    """

    name: str
    match_all: tuple[str, ...]
    match_none: tuple[str, ...]
    fp32: float
    fp64: float
    tf32_dense: float
    tf32_sparse: float
    fp16_dense: float  # FP16 and BF16 tensor
    fp16_sparse: float
    fp8_dense: float | None
    fp8_sparse: float | None
    dram_gbps: float
    simt_clock_mhz: float
    tensor_clock_mhz: float
    source: str


DATASHEET: tuple[DevicePeaks, ...] = (
    # H100/H200 SXM: tensor numbers imply ~1.83 GHz (540,672 FLOP/cycle x 1.83 GHz = 989.4 TF),
    # FP32 1.98 GHz (16,896 FFMA/cycle x 2 x 1.98 GHz = 66.9 TF).
    DevicePeaks("NVIDIA H200 SXM 141GB", ("h200",), ("nvl",), 67.0, 34.0, 494.7, 989.4,
                989.4, 1978.9, 1978.9, 3957.8, 4800.0, 1980.0, 1830.0, H200_URL),
    DevicePeaks("NVIDIA H100 SXM5 80GB", ("h100",), ("pcie", "nvl"), 67.0, 34.0, 494.7, 989.4,
                989.4, 1978.9, 1978.9, 3957.8, 3350.0, 1980.0, 1830.0, H100_URL),
    DevicePeaks("NVIDIA A100 SXM4 80GB", ("a100", "80gb"), ("pcie",), 19.5, 9.7, 156.0, 312.0,
                312.0, 624.0, None, None, 2039.0, 1410.0, 1410.0, A100_URL),
    DevicePeaks("NVIDIA A100 PCIe 80GB", ("a100", "pcie", "80gb"), (), 19.5, 9.7, 156.0, 312.0,
                312.0, 624.0, None, None, 1935.0, 1410.0, 1410.0, A100_URL),
    DevicePeaks("NVIDIA A100 40GB", ("a100",), (), 19.5, 9.7, 156.0, 312.0, 312.0, 624.0,
                None, None, 1555.0, 1410.0, 1410.0, A100_URL),
    DevicePeaks("NVIDIA L4", ("l4",), (), 30.3, 0.47, 60.0, 120.0, 121.0, 242.0, 242.5, 485.0,
                300.0, 2040.0, 2040.0, L4_URL),
)

#: dtype -> (DevicePeaks field, label, uses tensor cores). bf16 shares the fp16 tensor rate.
DTYPE_ROOFS: dict[str, tuple[str, str, bool]] = {
    "fp32": ("fp32", "FP32 CUDA cores (no TF32)", False),
    "fp64": ("fp64", "FP64 CUDA cores", False),
    "tf32": ("tf32_dense", "TF32 tensor core, dense", True),
    "fp16": ("fp16_dense", "FP16 tensor core, dense", True),
    "bf16": ("fp16_dense", "BF16 tensor core, dense", True),
    "fp8": ("fp8_dense", "FP8 tensor core, dense", True),
}

#: dtype -> (per-cycle peak metrics to try in order, FLOP per counted op). Dense per-op peaks only:
#: the roll-up sm__ops_path_tensor_src_* peaks are the 2:4-sparse rate on Hopper, never a roof.
COUNTER_PEAKS: dict[str, tuple[tuple[str, ...], float]] = {
    "fp32": ((M.FFMA_PEAK,), 2.0),
    "fp64": ((M.DFMA_PEAK,), 2.0),
    "fp16": ((M.HGMMA_FP16_PEAK,
              M.HMMA_FP16_PEAK), 1.0),
    "bf16": ((M.HGMMA_BF16_PEAK,
              M.HMMA_BF16_PEAK), 1.0),
    "tf32": ((M.HGMMA_TF32_PEAK,
              M.HMMA_TF32_PEAK), 1.0),
    "fp8": ((M.HGMMA_FP8_PEAK,
             M.TENSOR_FP8_DENSE_PEAK), 1.0),
}
SM_CLOCKS = (M.SM_HZ, M.GPC_HZ)
DRAM_PEAK = (M.DRAM_PEAK_PER_CYCLE, M.DRAM_HZ)


@dataclass(frozen=True)
class Peak:
    """One ceiling: ``value`` in TFLOP/s (compute) or GB/s (memory), what it is, where it comes
    from."""

    value: float
    label: str
    source: str


def match_device(gpu_name: str) -> DevicePeaks | None:
    """The datasheet entry for a manifest GPU name (``NVIDIA H200``), or None if unknown."""
    name = gpu_name.lower()
    for entry in DATASHEET:
        if all(s in name for s in entry.match_all) and not any(s in name for s in entry.match_none):
            return entry
    return None


def datasheet_compute(device: DevicePeaks | None, dtype: str) -> Peak | None:
    """The dense datasheet compute roof for ``dtype`` (fp32, fp16, bf16, tf32, fp8, fp64)."""
    if device is None or dtype not in DTYPE_ROOFS:
        return None
    field, label, _tensor = DTYPE_ROOFS[dtype]
    value = getattr(device, field)
    if value is None:
        return None
    return Peak(float(value), f"{label} (datasheet)", f"{device.name} datasheet: {device.source}")


def datasheet_dram(device: DevicePeaks | None) -> Peak | None:
    """The datasheet DRAM bandwidth roof (GB/s)."""
    if device is None:
        return None
    return Peak(device.dram_gbps, "DRAM bandwidth (datasheet)",
                f"{device.name} datasheet: {device.source}")


def spec_clock_mhz(device: DevicePeaks, dtype: str) -> float:
    """The clock the datasheet number for ``dtype`` assumes (MHz)."""
    tensor = DTYPE_ROOFS.get(dtype, ("", "", False))[2]
    return device.tensor_clock_mhz if tensor else device.simt_clock_mhz


def clock_scaled_peak(device: DevicePeaks | None, dtype: str, clock_hz: float) -> Peak | None:
    """Datasheet compute peak x measured clock / datasheet clock (no ``peak_sustained`` needed)."""
    sheet = datasheet_compute(device, dtype)
    if sheet is None or device is None or not clock_hz or clock_hz != clock_hz:
        return None
    spec = spec_clock_mhz(device, dtype)
    return Peak(sheet.value * clock_hz / 1e6 / spec,
                f"{DTYPE_ROOFS[dtype][1]} at the measured clock",
                f"datasheet x measured clock (gpc__cycles_elapsed.avg.per_second) / {spec:.0f} MHz")


def counter_peak(dtype: str, values: dict[str, float]) -> Peak | None:
    """Clock-adjusted compute roof from collected metrics: per-cycle peak x SM clock (TFLOP/s).

    Args:
        values: metric name -> value (AvgValue of the annotation x config).
    """
    names, flop_per_op = COUNTER_PEAKS.get(dtype, ((), 0.0))
    per_cycle = next((m for m in names if _ok(values.get(m))), None)
    clock = next((m for m in SM_CLOCKS if _ok(values.get(m))), None)
    if per_cycle is None or clock is None:
        return None
    value = values[per_cycle] * flop_per_op * values[clock] / 1e12
    return Peak(value, f"{DTYPE_ROOFS[dtype][1]} at the measured clock (counters)",
                f"{flop_per_op:g} x {per_cycle} x {clock}")


def counter_dram_peak(values: dict[str, float]) -> Peak | None:
    """DRAM roof from counters: dram__bytes.sum.peak_sustained x dram__cycles_elapsed (GB/s)."""
    per_cycle, clock = (values.get(m) for m in DRAM_PEAK)
    if not (_ok(per_cycle) and _ok(clock)):
        return None
    return Peak(float(per_cycle) * float(clock) / 1e9,  # type: ignore[arg-type]
                "DRAM bandwidth at the measured DRAM clock (counters)",
                f"{DRAM_PEAK[0]} x {DRAM_PEAK[1]}")


def _ok(value: float | None) -> bool:
    return value is not None and value == value and value > 0


def above_roof_reason(device: DevicePeaks, dtype: str, tflops: float) -> str:
    """Why ``tflops`` (TFLOP/s) can read above the datasheet roof of ``dtype``, for a note: fp32
    under the TF32 tensor-core roof is what TF32 math gives (torch.backends.cuda.matmul.allow_tf32,
    torch.set_float32_matmul_precision); anything else points at the FLOP formula."""
    tf32 = datasheet_compute(device, "tf32")
    if dtype == "fp32" and tf32 is not None and tflops <= tf32.value:
        return (f"likely reason: the fp32 matmul ran on the tensor cores in TF32 (below the "
                f"{tf32.value:,.0f} TFLOP/s TF32 roof; torch's allow_tf32 or "
                "set_float32_matmul_precision('high') does that), else check the FLOP formula")
    return "check the kernel's FLOP formula"

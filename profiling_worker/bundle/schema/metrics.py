"""Nsight Compute metric names the project reads or writes, in one place.

Names keep Nsight Compute's spelling ``<unit>__<counter>.<rollup>[.<submetric>]`` (see the
Nsight Compute "Metrics Reference"); CUPTI and the cpu backend write their durations under the
same names so one table schema serves every backend. Units follow the suffix: ``.sum`` of bytes
is bytes, ``.per_second`` is Hz, ``.pct_of_peak_sustained_*`` is %, durations are ns.
"""

from __future__ import annotations

# Durations (ns).
GPU_TIME = "gpu__time_duration.sum"  # Nsight Compute / CUPTI kernel duration
HOST_TIME = "host__time_duration.sum"  # host wall-clock of the region (cpu backend)
#: The events backend's region time: CUDA-event wall time on the stream, launch overhead and
#: inter-kernel gaps included (a name of this project, not Nsight Compute's: not kernel time).
EVENTS_TIME = "events__time_duration.sum"

# Throughput, % of the sustained peak over the kernel's elapsed time.
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
# The Speed Of Light section's "DRAM Throughput" in Nsight Compute 2025.x default-set reports:
# the same quantity as DRAM_PCT (on the H200 default_set fixture's first randn launches 0.0346%
# vs 0.0343% for DRAM_PCT in a separate run of the same launches).
GPU_DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
WARPS_ACTIVE_PCT = "sm__warps_active.avg.pct_of_peak_sustained_active"  # achieved occupancy

# Clocks (Hz) and cycles.
GPC_HZ = "gpc__cycles_elapsed.avg.per_second"  # the SM clock the kernel ran at
SM_HZ = "sm__cycles_elapsed.avg.per_second"
DRAM_HZ = "dram__cycles_elapsed.avg.per_second"
GPC_CYCLES_MAX = "gpc__cycles_elapsed.max"

# Memory traffic (bytes) and the DRAM peak (bytes per DRAM cycle, whole GPU).
DRAM_BYTES = "dram__bytes.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_PEAK_PER_CYCLE = "dram__bytes.sum.peak_sustained"
L2_BYTES = "lts__t_bytes.sum"
L1_BYTES = "l1tex__t_bytes.sum"

# Executed floating-point instructions (per thread, predicated on).
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
DFMA = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
#: Warp instructions executed (per SM sub-partition and per SM), summed over the launch.
SMSP_INST_EXECUTED = "smsp__inst_executed.sum"
SM_INST_EXECUTED = "sm__inst_executed.sum"

# Tensor-core operations executed.
TENSOR_FP16 = "sm__ops_path_tensor_src_fp16.sum"
TENSOR_BF16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
TENSOR_TF32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum"
TENSOR_FP8 = "sm__ops_path_tensor_src_fp8.sum"

# Per-cycle peaks (ops per SM cycle, whole GPU). HGMMA is Hopper's warpgroup MMA, HMMA the
# older warp MMA; "sparsity_off" is the dense rate.
FFMA_PEAK = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"
DFMA_PEAK = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"
HGMMA_FP16_PEAK = "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained"
HMMA_FP16_PEAK = "sm__ops_path_tensor_op_hmma_src_fp16_sparsity_off.sum.peak_sustained"
HGMMA_BF16_PEAK = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"
HMMA_BF16_PEAK = "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"
HGMMA_TF32_PEAK = "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"
HMMA_TF32_PEAK = "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"
HGMMA_FP8_PEAK = "sm__ops_path_tensor_op_hgmma_src_fp8_sparsity_off.sum.peak_sustained"
TENSOR_FP8_DENSE_PEAK = "sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained"

# Launch attributes.
GRID_SIZE = "launch__grid_size"
BLOCK_SIZE = "launch__block_size"
REGISTERS_PER_THREAD = "launch__registers_per_thread"
OCCUPANCY_LIMIT_REGISTERS = "launch__occupancy_limit_registers"

# Deep dive (Nsight Compute sections; names as the section files of ncu 2025.3 use them).
THEORETICAL_OCCUPANCY_PCT = "sm__maximum_warps_per_active_cycle_pct"
OCCUPANCY_LIMITS = {  # blocks per SM each resource allows; the smallest limits the occupancy
    "registers": OCCUPANCY_LIMIT_REGISTERS, "shared memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps", "blocks": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers"}
L1_HIT_PCT = "l1tex__t_sector_hit_rate.pct"
L2_HIT_PCT = "lts__t_sector_hit_rate.pct"
SPEED_OF_LIGHT = (SM_PCT, MEMORY_PCT, "l1tex__throughput.avg.pct_of_peak_sustained_active",
                  "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                  "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
MEMORY_WORKLOAD = (L1_BYTES, L2_BYTES, DRAM_READ, DRAM_WRITE, DRAM_BYTES, L1_HIT_PCT, L2_HIT_PCT)
LAUNCH_STATISTICS = (GRID_SIZE, BLOCK_SIZE, REGISTERS_PER_THREAD,
                     "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
                     "launch__waves_per_multiprocessor", "launch__sm_count", "launch__thread_count")
OCCUPANCY = (THEORETICAL_OCCUPANCY_PCT, WARPS_ACTIVE_PCT, *OCCUPANCY_LIMITS.values())
#: Warp state (stall) metrics: cycles per issued instruction a warp spent in each state
#: (WarpStateStats section); the reason is the part between the prefix and the suffix.
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
# Source Counters' per-PC warp samples: the first of PC_SAMPLE_METRICS a report has, else any
# metric with the prefix.
PC_SAMPLE_PREFIX = "smsp__pcsamp_"
PC_SAMPLE_METRICS = ("smsp__pcsamp_sample_count", "smsp__pcsamp_warps_issue_stalled_not_issued")
#: PM sampling (PmSampling section): the sample interval (ns) and the kernel's start and end
#: timestamps in pass group <g> (the timestamp is each one-instance metric's correlation id).
PM_INTERVAL = "profiler__pmsampler_interval_time"
PM_WORKLOAD_START = "profiler__timestamp_workload_start_"
PM_WORKLOAD_END = "profiler__timestamp_workload_end_"
#: What a deep-dive job asks for besides its section set: the bytes and hit rates of every memory
#: level by name, so the memory panel does not depend on which metrics a version's
#: MemoryWorkloadAnalysis section files happen to collect.
DEEP_DIVE_COLLECT = (GPU_TIME, L1_BYTES, L2_BYTES, DRAM_READ, DRAM_WRITE, L1_HIT_PCT, L2_HIT_PCT)
DEEP_DIVE_METRICS = (GPU_TIME, GPC_HZ, *SPEED_OF_LIGHT, *MEMORY_WORKLOAD, *LAUNCH_STATISTICS,
                     *OCCUPANCY)

# Device attributes (one value per report, not per kernel).
DEVICE_ATTRIBUTE_PREFIX = "device__attribute_"
DEVICE_NAME = "device__attribute_display_name"
CC_MAJOR = "device__attribute_compute_capability_major"
CC_MINOR = "device__attribute_compute_capability_minor"
L2_CACHE_SIZE = "device__attribute_l2_cache_size"  # bytes
#: The rated clocks nsight-python reports as ComputeClock and MemoryClock (kHz).
CLOCK_RATE = "device__attribute_clock_rate"
MEMORY_CLOCK_RATE = "device__attribute_memory_clock_rate"

# Groups.
DURATION_METRICS = (GPU_TIME, HOST_TIME, EVENTS_TIME)
SM_CLOCK_METRICS = (GPC_HZ, SM_HZ)  # the clock the kernel ran at, preferred first
DRAM_TRAFFIC = (DRAM_READ, DRAM_WRITE)

#: What a person reads for a metric where a page names it (a picker, a bar): the raw name is
#: said beside it (app/core/metric_roles.py's ``readable``); a metric not here reads in words
#: made from its name's parts (app/core/metric_words.py).
WORDS: dict[str, str] = {
    GPU_TIME: "GPU kernel time", HOST_TIME: "Host wall-clock time",
    EVENTS_TIME: "CUDA-event region time",
    SM_PCT: "SM throughput", MEMORY_PCT: "Memory throughput", DRAM_PCT: "DRAM throughput",
    GPU_DRAM_PCT: "DRAM throughput", SPEED_OF_LIGHT[2]: "L1/TEX throughput",
    SPEED_OF_LIGHT[3]: "L2 throughput",
    WARPS_ACTIVE_PCT: "Achieved occupancy", THEORETICAL_OCCUPANCY_PCT: "Theoretical occupancy",
    GPC_HZ: "SM clock rate", SM_HZ: "SM clock rate (per SM)", DRAM_HZ: "DRAM clock rate",
    GPC_CYCLES_MAX: "SM cycles elapsed",
    DRAM_BYTES: "DRAM bytes", DRAM_READ: "DRAM bytes read", DRAM_WRITE: "DRAM bytes written",
    DRAM_PEAK_PER_CYCLE: "DRAM peak bytes per cycle", L2_BYTES: "L2 bytes",
    L1_BYTES: "L1/TEX bytes", L1_HIT_PCT: "L1/TEX hit rate", L2_HIT_PCT: "L2 hit rate",
    FFMA: "FP32 FMA instructions (threads)", FADD: "FP32 add instructions (threads)",
    FMUL: "FP32 multiply instructions (threads)", DFMA: "FP64 FMA instructions (threads)",
    HFMA: "FP16 FMA instructions (threads)",
    TENSOR_FP16: "Tensor-core ops, FP16", TENSOR_BF16: "Tensor-core ops, BF16",
    TENSOR_TF32: "Tensor-core ops, TF32", TENSOR_FP8: "Tensor-core ops, FP8",
    FFMA_PEAK: "FP32 FMA peak per SM cycle", DFMA_PEAK: "FP64 FMA peak per SM cycle",
    HGMMA_FP16_PEAK: "Tensor-core FP16 peak per SM cycle (HGMMA)",
    HGMMA_BF16_PEAK: "Tensor-core BF16 peak per SM cycle (HGMMA)",
    HGMMA_TF32_PEAK: "Tensor-core TF32 peak per SM cycle (HGMMA)",
    GRID_SIZE: "Grid size", BLOCK_SIZE: "Block size",
    REGISTERS_PER_THREAD: "Registers per thread",
}

# A metric a report may hold under another name: read the first of these that is present when
# the name itself is missing, and say so (an import note names the source).
EQUIVALENTS: dict[str, tuple[str, ...]] = {DRAM_PCT: (GPU_DRAM_PCT,)}

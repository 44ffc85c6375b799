"""Column names of the frames the analysis views build, in one place.

Views (``app/core/views``) write these columns, figures (``app/core/figures``) and pages read
them: adding a column to a view means a name here, the view that fills it, and the reader.
Bundle table columns (Annotation, Config, Metric, AvgValue...) live in
:mod:`profiling_worker.bundle.schema.columns`; this module holds only the columns the views derive.
Units are in the names: ``Ns`` nanoseconds, ``Us`` microseconds, ``S`` seconds, ``MHz``,
``GBps`` GB/s, ``TFLOPs`` TFLOP/s, ``Pct`` percent, ``Bytes`` bytes.
"""

from __future__ import annotations

from profiling_worker.bundle.schema import columns as C

# Shared by every view.
#: A table's metric in words (``SM clock rate``) beside its Metric column, the raw name, which
#: stays the key (a fresh user of session 23 read ``host__time_duration.sum`` alone).
METRIC_WORDS = "MetricWords"
CONFIG_LABEL = C.CONFIG_LABEL  # "n=512" label of a config's parameters (the gate writes it too)
ITEM = "Item"  # row name of a two-column Item / Value listing (environment, report summary)
LAUNCHES = C.LAUNCHES
GPU = "GPU"  # the job's GPU name
BACKEND = "Backend"
CONFIGS = C.CONFIGS
METRICS = "Metrics"  # number of metrics of a job
REGIONS = C.REGIONS
JOB = "Job"  # job id, in views that span several jobs
RUNS = C.RUNS
NOTE = "Note"
SOURCE = "Source"  # where a value or ceiling comes from
KERNEL_NAMES = C.KERNEL_NAMES  # kernel names of one annotation x config, " + "-joined
TIME_NS = "TimeNs"
TIME_US = "TimeUs"  # TimeNs in µs, as a chart with a µs axis shows it (its table)
SM_CLOCK_MHZ = C.SM_CLOCK_MHZ  # the SM clock the kernel ran at, same name as the NVML trace's

# Bound and roofline.
SM_PCT = "SmPct"
DRAM_PCT = "DramPct"
DRAM_BYTES = "DramBytes"
#: The memory chart's DRAM traffic in its MB (1e6 bytes) axis (its table and CSV).
DRAM_MB = "DramMB"
DRAM_READ_MB = "DramReadMB"
DRAM_WRITE_MB = "DramWriteMB"
ANALYTIC_MB = "AnalyticMB"
ACHIEVED_GBPS = "MeasuredDramGBps"  # measured DRAM bytes (read + write) / time, GB/s
ACHIEVED_TFLOPS = "AchievedTFLOPs"
#: Roofline: the kernel's useful FLOPs (the catalog's formula, e.g. 2n^3 for a matmul) beside the
#: counted ones, which include work the library pads in (cuBLAS tiles: 1.015625 x 2n^3 at
#: n = 8192), their ratio, and the TFLOP/s of the useful FLOPs over the same mean time.
USEFUL_FLOPS = "UsefulFlops"
COUNTED_OVER_USEFUL = "CountedOverUseful"
USEFUL_TFLOPS = "UsefulTFLOPs"
ARITHMETIC_INTENSITY = "ArithmeticIntensity"
DATASHEET_GBPS = "DatasheetGBps"
PCT_OF_DATASHEET = "PctOfDatasheet"
PCT_OF_CLOCK_PEAK = "PctOfClockPeak"
BYTES_SOURCE = "BytesSource"
FLOPS_SOURCE = "FlopsSource"
LIMITED_BY = "LimitedBy"
KIND = "Kind"

# Memory (measured vs analytic traffic, fused vs unfused).
ANALYTIC_BYTES = "AnalyticBytes"
DRAM_READ_BYTES = "DramReadBytes"
DRAM_WRITE_BYTES = "DramWriteBytes"
MEASURED_OVER_ANALYTIC = "MeasuredOverAnalytic"
GAP_NOTE = "GapNote"
FUSED_BYTES = "FusedBytes"
FUSED_TIME_NS = "FusedTimeNs"
UNFUSED_BYTES = "UnfusedBytes"
UNFUSED_TIME_NS = "UnfusedTimeNs"
TRAFFIC_RATIO = "TrafficRatio"
TIME_RATIO = "TimeRatio"

# Cache and clock variants, sweeps.
VARIANT = "Variant"
WORKING_SET_BYTES = "WorkingSetBytes"
GBPS = "GBps"  # measured DRAM bytes / time where collected, else analytic: GBPS_SOURCE says
SERIES = "Series"
#: A config's run audit outcome as its badge on Stability and Results says it, without the
#: config (``"⚠ 0/10 passed; failed clock (10)"``, ``"✓ 10/10 passed"``): the sweep's table
#: and hover; a cell begins with one of the two marks below (the chart marks the flagged).
RUN_AUDIT = "Run audit"
AUDIT_PASSED_MARK, AUDIT_FLAGGED_MARK = "✓", "⚠"

# Clocks and thermal.
AVG_US = "AvgUs"
WALL_S = "WallS"
THERMAL_MODE = "ThermalMode"
MEASURES = "Measures"
MIN_MHZ = "MinMHz"
MAX_MHZ = "MaxMHz"
MAX_SM_CLOCK_MHZ = "MaxSmClockMHz"
THROTTLE = "Throttle"  # named throttle reasons of an NVML sample
SAMPLED = "Sampled"  # when a collector value was sampled
BEFORE_RUN = "before the run"  # the one value of Sampled: collectors sample before each run
KERNEL_TIME = "KernelTime"
COLLECTOR_VALUE = "CollectorValue"
COLLECTOR_UNIT = "CollectorUnit"
PEARSON = "PearsonR"  # Pearson correlation of kernel time with a collector

# Kernels and stability.
MAX_PER_RUN = "MaxPerRun"
MEAN_TIME_NS = "MeanTimeNs"
MEAN_TIME_US = "MeanTimeUs"  # in the kernels chart's µs (its table)
SHARE = "Share"
SHARE_PCT = "SharePct"  # Share, named in its unit (the kernels chart's table)
VARIES_BETWEEN_RUNS = "VariesBetweenRuns"
SHORT_KERNEL = "ShortKernel"

# Compare two jobs, and backends side by side.
BASELINE, CANDIDATE = C.BASELINE, C.CANDIDATE
BASELINE_AVG = "BaselineAvg"
CANDIDATE_AVG = "CandidateAvg"
RATIO = "Ratio"
RATIO_CI95_LOWER = "RatioCI95Lower"
RATIO_CI95_UPPER = "RatioCI95Upper"
RATIO_EXCLUDES_ONE = "RatioExcludesOne"
CIS_OVERLAP = "CIsOverlap"
ENOUGH_RUNS = "EnoughRuns"
VERDICT = "Verdict"
NCU_US = "NcuUs"
CUPTI_US = "CuptiUs"
NCU_RSD = "NcuRSD"
CUPTI_RSD = "CuptiRSD"
NCU_KERNELS_PER_RUN = "NcuKernelsPerRun"
CUPTI_KERNELS_PER_RUN = "CuptiKernelsPerRun"
RATIO_NCU_OVER_CUPTI = "RatioNcuOverCupti"
EVENTS_US = "EventsUs"
EVENTS_RSD = "EventsRSD"
EVENTS_MINUS_CUPTI_US = "EventsMinusCuptiUs"
RATIO_EVENTS_OVER_CUPTI = "RatioEventsOverCupti"
EVENTS_MEDIAN_US = "EventsMedianUs"
CUPTI_MEDIAN_US = "CuptiMedianUs"
HOST_LAUNCH_US = "HostLaunchUs"
END_EVENT_US = "EndEventUs"
RESIDUAL_US = "ResidualUs"
RESIDUAL_PCT = "ResidualPct"

# Columns one view derives for its own table (read by no figure).
# Bound and roofline.
DATASHEET_TFLOPS = "DatasheetTFLOPs"
CLOCK_PEAK_TFLOPS = "ClockPeakTFLOPs"
RIDGE_AI = "RidgeAI"
DATASHEET_SOURCE = "DatasheetSource"
PEAK_SOURCE = "PeakSource"
CLOCK_PEAK_SOURCE = "ClockPeakSource"
COUNTER_GBPS = "CounterGBps"
PCT_OF_DATASHEET_GBPS = "PctOfDatasheetGBps"
PCT_OF_COUNTER_GBPS = "PctOfCounterGBps"
GBPS_SOURCE = "GBpsSource"
PCT_OF_MAX = "PctOfMax"
CEILING = "Ceiling"
ROOF = "Roof"  # the datasheet roof a point's dtype is drawn against
SIDE = "Side"  # "memory" or "compute": left or right of the ridge point
# Memory and cache.
BYTES_SAVED = "BytesSaved"
TIME_SAVED_NS = "TimeSavedNs"
TIME_VS_FIRST = "TimeVsFirst"
# Clocks and thermal.
PCT_OF_SAMPLES = "PctOfSamples"
BIT = "Bit"  # NVML throttle-reason bit
SAMPLES = "Samples"
FIRST_S = "FirstS"
LAST_S = "LastS"
COLLECTOR_MIN = "CollectorMin"
COLLECTOR_MAX = "CollectorMax"
P_VALUE = "PValue"
DRIFT_PCT_OVER_RUNS = "DriftPctOverRuns"
DIFF_US = "DiffUs"
MISSES = "Misses"
# Kernels.
TOTAL_NS = "TotalNs"
KERNELS_PER_RUN = "KernelsPerRun"
# Compare, backends.
BASELINE_RUNS = "BaselineRuns"
CANDIDATE_RUNS = "CandidateRuns"
BASELINE_UNIT = "BaselineUnit"
CANDIDATE_UNIT = "CandidateUnit"
BASELINE_STD_DEV = "BaselineStdDev"
CANDIDATE_STD_DEV = "CandidateStdDev"
BASELINE_RSD = "BaselineRSD"
CANDIDATE_RSD = "CandidateRSD"
BASELINE_CI95_LOWER = "BaselineCI95Lower"
BASELINE_CI95_UPPER = "BaselineCI95Upper"
CANDIDATE_CI95_LOWER = "CandidateCI95Lower"
CANDIDATE_CI95_UPPER = "CandidateCI95Upper"
NSIGHT_MODE = "NsightMode"
NCU_KERNELS = "NcuKernels"
CUPTI_KERNELS = "CuptiKernels"
KERNELS_NCU = "KernelsNcu"
KERNELS_CUPTI = "KernelsCupti"
MAX_PER_RUN_NCU = "MaxPerRunNcu"
MAX_PER_RUN_CUPTI = "MaxPerRunCupti"

# Timeline (the job's trace: launches per region track, NVML counters on the same axis).
TRACK = "Track"  # the trace's track (thread) name: region, and how launches are placed
START_MS = "StartMs"  # ms from the trace's first event
DURATION_US = "DurationUs"
COUNTER = "Counter"  # NVML counter track name (SM clock, power ...)
COUNTER_VALUE = "CounterValue"
COUNTER_UNIT = "CounterUnit"

# History (one row per job of the index) and the environment's backends.
STATUS = "Status"
HOW_CANCELLED = "How cancelled"  # when and by whom a cancelled job's cancel came
CREATED = "Created"
LABEL = "Label"  # a human name: the job's user label, a metric's Nsight label
TAGS = "Tags"
SPEC_HASH = "Spec hash"
CAN_RUN = "Can run"  # whether a backend can run on this machine
FIX = "Fix"  # what makes a backend that cannot run runnable

# The kernel's own timeline (PM sampling): a long frame of samples, one panel per kind.
PM_TIME_NS = "Time from kernel start (ns)"  # a sample's start, ns from the kernel's start
PM_TIME_FIRST_NS = "Time from first aligned sample (ns)"  # without workload timestamps
PM_PANEL = "Panel"
PM_THROUGHPUT, PM_OCCUPANCY, PM_STALLS = "Throughput", "Occupancy", "Warp stalls"
PM_HIT_RATES, PM_COUNTS = "Hit rates", "Per-sample counts"
PM_PANELS = (PM_THROUGHPUT, PM_OCCUPANCY, PM_STALLS, PM_HIT_RATES, PM_COUNTS)  # drawing order

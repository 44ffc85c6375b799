"""Every column and file name of a result bundle, in one place.

Columns nsight-python defines keep its spelling (``AvgValue``, ``CI95_Lower``...), so a plain
nsight-python ``processed_data-*.csv`` is already close to a valid aggregated table.

Tables (each written as ``tables/<name>.parquet``; its CSV for users is made from it on
download, and a bundle written before issue 40 holds it as ``tables/<name>.csv``):

``launches``  one row per kernel launch x metric (the ground truth):
    Annotation, Config, <config parameters...>, Run, Launch, Kernel, Grid, Block, Metric, Value,
    Unit
``runs``      one row per annotation x config x run x metric (launches of a run combined):
    Annotation, Config, <params>, Run, Metric, Value, Unit, Kernels, CombineRule
``aggregated`` one row per annotation x config x metric:
    Annotation, Config, <params>, Metric, Unit, NumRuns, AvgValue, StdDev, MinValue, MaxValue,
    MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct, StableMeasurement, Kernels, KernelsVary
``work``      analytic work per annotation x config: Annotation, Config, <params>, Flops, Bytes,
    Dtype
``nvml_trace`` NVML samples during the job: TimeS, SmClockMHz, MemClockMHz, TempC, PowerW,
    ThrottleReasons
``collectors`` nsight-python RUN-scope info collectors, sampled just BEFORE each run:
    Config, <params>, Run, Collector, Value, Unit
``unattributed`` (optional) launches no config/run range or no annotation holds, never merged
    into a config: Annotation (empty: outside every annotation), Config (-1: unknown), Kernel,
    Grid, Block, Metric, Value, Unit, Reason
``launch_times`` (optional, CUPTI) each launch's GPU start and end on CUPTI's clock (ns):
    Annotation, Config, <params>, Run, Launch, Kernel, StartNs, EndNs; the manifest's
    ``backend.clock_pair`` and ``backend.nvml_trace_start_ns`` put the NVML trace on that clock
``run_audit`` (worker-written since issue 36; derived on load for older bundles) the validity
    audit, one row per run x check: Annotation, Config, Run, Check, Result, Evidence,
    EvidenceTemplate, EvidenceValueNs, EvidenceReferenceNs
    (profiling_worker/bundle/schema/run_audit.py). Layout 2 (session 24) added the last three:
    the durations an evidence states (timer_sanity: the run's and the floor; population: the
    slower group's median and the others'), in ns, and the evidence with them as placeholders,
    so a page writes them in its own unit; empty where an evidence states none. A table of
    layout 1 (the first six, written before) is read as it is: its Evidence text alone.
"""

from __future__ import annotations

from profiling_worker.bundle.schema import metrics as M

# Keys of the long tables.
ANNOTATION = "Annotation"
CONFIG = "Config"  # 0-based index into spec.configs
#: Config parameter of a job imported without a spec (plain report, ncu CSV export): configs
#: numbered per region in order first seen, so a region may have fewer than another.
CONFIG_INDEX = "config_index"
RUN = "Run"  # 0-based run index within a config
LAUNCH = "Launch"  # 0-based launch index within one annotation-run
KERNEL = "Kernel"
GRID = "Grid"
BLOCK = "Block"
METRIC = "Metric"
VALUE = "Value"
UNIT = "Unit"
KERNELS = "Kernels"  # number of kernel launches combined into one value
KERNELS_VARY = "KernelsVary"  # True when the launch count differs between runs of a config
COMBINE_RULE = "CombineRule"  # "sum", "duration-weighted mean" or "single"
COLLECTOR = "Collector"  # info collector name (sm_clock, temperature ...)

# Aggregated statistics (nsight-python spelling).
NUM_RUNS = "NumRuns"
AVG = "AvgValue"
STD = "StdDev"
MIN = "MinValue"
MAX = "MaxValue"
MEDIAN = "MedianValue"
CI95_LOWER = "CI95_Lower"
CI95_UPPER = "CI95_Upper"
RSD = "RelativeStdDevPct"
STABLE = "StableMeasurement"
#: 100 (CI95_Upper - AvgValue) / |AvgValue|: the CI95's half-width in % of the mean, shown
#: beside every StableMeasurement flag (issue 34: a "stable" 3-run row can be wider than a
#: "not stable" 100-run one). Computed by the app from the bounds, not stored.
CI95_HALF_PCT = "CI95HalfWidthPct"

# Analytic work (from the kernel catalog's formulas).
FLOPS = "Flops"
BYTES = "Bytes"
DTYPE = "Dtype"

# NVML trace.
TIME_S = "TimeS"
SM_CLOCK_MHZ = "SmClockMHz"
MEM_CLOCK_MHZ = "MemClockMHz"
TEMP_C = "TempC"
POWER_W = "PowerW"
THROTTLE_REASONS = "ThrottleReasons"

# The run audit (tables/run_audit, profiling_worker/bundle/schema/run_audit.py).
CHECK = "Check"  # the audit check's name (l2_state, clock, population...)
RESULT = "Result"  # pass, flag, not checked or n/a
EVIDENCE = "Evidence"  # what the check saw, in words with its figures
#: Evidence with the durations it states as {value} and {reference}, their unit as {unit}
#: (profiling_worker.bundle.number_text.with_durations); empty where it states none
EVIDENCE_TEMPLATE = "EvidenceTemplate"
EVIDENCE_VALUE_NS = "EvidenceValueNs"  # the evidence's {value}, ns (the run's, a slow group's)
EVIDENCE_REFERENCE_NS = "EvidenceReferenceNs"  # its {reference}, ns (a floor, the others')

# CUPTI kernel timestamps (ns on CUPTI's clock, cupti.get_timestamp()).
START_NS = "StartNs"
END_NS = "EndNs"

#: Columns that hold numbers in every table that has them (a bundle's reader checks the types).
NUMERIC = (CONFIG, RUN, LAUNCH, KERNELS, VALUE, NUM_RUNS, AVG, STD, MIN, MAX, MEDIAN, CI95_LOWER,
           CI95_UPPER, RSD, FLOPS, BYTES, TIME_S, SM_CLOCK_MHZ, MEM_CLOCK_MHZ, TEMP_C, POWER_W,
           START_NS, END_NS, EVIDENCE_VALUE_NS, EVIDENCE_REFERENCE_NS)

#: Names config parameters may not use, because they would clash with a column.
RESERVED = frozenset(
    {
        ANNOTATION, CONFIG, RUN, LAUNCH, KERNEL, GRID, BLOCK, METRIC, VALUE, UNIT, KERNELS,
        KERNELS_VARY, COMBINE_RULE, COLLECTOR, NUM_RUNS, AVG, STD, MIN, MAX, MEDIAN, CI95_LOWER,
        CI95_UPPER, RSD, STABLE, FLOPS, BYTES, DTYPE, START_NS, END_NS,
    }
)

# Table names (files tables/<name>.parquet; tables/<name>.csv in a bundle before issue 40).
TABLE_LAUNCHES = "launches"
TABLE_RUNS = "runs"
TABLE_AGGREGATED = "aggregated"
TABLE_WORK = "work"
TABLE_NVML = "nvml_trace"
TABLE_COLLECTORS = "collectors"
TABLES = (TABLE_LAUNCHES, TABLE_RUNS, TABLE_AGGREGATED, TABLE_WORK, TABLE_NVML, TABLE_COLLECTORS)
TABLE_UNATTRIBUTED = "unattributed"
TABLE_LAUNCH_TIMES = "launch_times"
TABLE_RUN_AUDIT = "run_audit"
#: Tables only some bundles have (written when there is something to say).
OPTIONAL_TABLES = (TABLE_UNATTRIBUTED, TABLE_LAUNCH_TIMES, TABLE_RUN_AUDIT)
REASON = "Reason"  # why: a launch is unattributed, a gate row not judged, a backend cannot run
CONFIG_LABEL = "ConfigLabel"  # "n=512" label of a config's parameters (views, the gate)
# Summary columns the worker's digests (gate, rule digest) and the app's views share.
RUNS = "Runs"  # runs counted
LAUNCHES = "Launches"  # kernel launches counted
REGIONS = "Regions"  # annotation x config regions: their count, or their names
CONFIGS = "Configs"  # configs: their count, or their labels
KERNEL_NAMES = "Kernels"  # kernel names, joined (KERNELS, the same word, is a count)
BASELINE, CANDIDATE = "Baseline", "Candidate"  # the two sides of a comparison
NO_CONFIG = -1  # Config of a launch whose config is not known

# Files of a bundle directory.
MANIFEST_FILE = "manifest.json"
SPEC_FILE = "spec.json"
EVENTS_FILE = "events.jsonl"
LOG_FILE = "worker.log"
TABLES_DIR = "tables"
NSIGHT_DIR = "nsight"  # nsight-python's own outputs: CSVs, .ncu-rep, ncu log
# launches, kernels, rule results of the .ncu-rep
REPORT_SUMMARY_FILE = "nsight/report_summary.json"
SUMMARY_RULE_LAUNCHES = 200  # the summary lists the rule results of this many launches at most
DEEP_DIVE_FILE = "nsight/deep_dive.json"  # a section-set job's sections, rules, stalls, hot spots
DEEP_DIVE_FILES = (DEEP_DIVE_FILE, DEEP_DIVE_FILE + ".gz")  # as written, as bundled (gzip)

# Metric names with a fixed meaning (named in bundle/schema/metrics.py, kept here for the tables'
# readers).
GPU_TIME = M.GPU_TIME
HOST_TIME = M.HOST_TIME
EVENTS_TIME = M.EVENTS_TIME
DURATION_METRICS = M.DURATION_METRICS

#: RSD (%) below which nsight-python calls a measurement stable.
STABLE_RSD_PCT = 2.0

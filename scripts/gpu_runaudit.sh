#!/usr/bin/env bash
# Issue 36's device run: NVML's energy counter resolution, a CUPTI job with a user collector
# file and the energy collector, a replication of a bundled job's spec, judged, and an induced
# idle gap (KPROF_IDLE_S host sleeps, default 2 s, before every 10th run; no clock or power
# setting touched) whose NVML samples the run audit must read (tests/gpu/test_idle_gap_gpu.py).
# IDLE_ONLY=1: the idle-gap job and its test only.
#   device run:  bash scripts/gpu_runaudit.sh      (carry: .whl; COMMIT=<id> for provenance)
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO"/scripts/gpu_env.sh
RESULTS=/tmp/kp-runaudit
rm -rf "$RESULTS"; mkdir -p "$RESULTS" "$OUT"
cd "$REPO"
export KPROF_PROVENANCE="{\"device_run\": \"${DEVICE_RUN:-h200 runaudit}\", \"commit\": \"${COMMIT:-}\"}"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.sm,temperature.gpu --format=csv > "$OUT/env.txt" 2>&1
if [ "${IDLE_ONLY:-0}" != 1 ]; then
PYTHONPATH=$CUPTI_PATH timeout 60 python3 benchmarks/energy_counter.py "$OUT/energy_counter.json" 2>&1 | tail -n 40
mkdir -p "$RESULTS/h200-cupti-collectors-energy"
cat > "$RESULTS/h200-cupti-collectors-energy/spec.json" <<'JSON'
{"kernels": ["matmul"], "annotations": ["fp16"], "configs": [{"n": 1024}, {"n": 4096}, {"n": 8192}],
 "runs": 30, "warmup": 2, "backend": "cupti", "label": "issue 36: user collectors + energy",
 "collectors": ["energy", "throttle_reasons", "sm_clock", "python_version", "worker_max_rss",
                "unix_time", "fails_on_large", "hangs"]}
JSON
KPROF_KERNEL_DIRS=$REPO/tests/fixtures/collector_files PYTHONPATH=$CUPTI_PATH timeout 200 \
  python3 -m profiling_worker run "$RESULTS/h200-cupti-collectors-energy" > "$OUT/collectors_job.jsonl" 2>&1
tail -n 3 "$OUT/collectors_job.jsonl"
PYTHONPATH=$CUPTI_PATH timeout 200 python3 -m profiling_worker replicate \
  tests/fixtures/bundles/h200-cupti-gate-base --out "$RESULTS/h200-cupti-gate-replica" \
  > "$OUT/replication.jsonl" 2> "$OUT/replication.md"
echo "replicate rc=$?"; cat "$OUT/replication.md"
fi
mkdir -p "$RESULTS/h200-cupti-idle-gap"
cat > "$RESULTS/h200-cupti-idle-gap/spec.json" <<'JSON'
{"kernels": ["idle_gap_matmul"], "annotations": ["fp16"], "configs": [{"n": 2048}, {"n": 4096}],
 "runs": 30, "warmup": 2, "backend": "cupti", "thermal_mode": "off", "clock_control": "none",
 "label": "issue 36: induced idle gaps, the audit's idle_gap check"}
JSON
export KPROF_IDLE_LOG=$RESULTS/h200-cupti-idle-gap.sleeps
rm -f "$KPROF_IDLE_LOG"
KPROF_KERNEL_DIRS=$REPO/tests/fixtures/kernel_files_idle PYTHONPATH=$CUPTI_PATH timeout 200 \
  python3 -m profiling_worker run "$RESULTS/h200-cupti-idle-gap" > "$OUT/idle_gap_job.jsonl" 2>&1
tail -n 3 "$OUT/idle_gap_job.jsonl"
KPROF_GPU_RESULTS=$RESULTS PYTHONPATH=$CUPTI_PATH timeout 120 python3 -m pytest -m gpu -q -s \
  -p no:cacheprovider tests/gpu/test_idle_gap_gpu.py 2>&1 | tee "$OUT/pytest_idle_gap.txt"
tar -czf "$OUT/bundles.tgz" -C "$RESULTS" --exclude='*.ncu-rep' .
ls -la "$OUT"

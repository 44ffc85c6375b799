#!/usr/bin/env bash
# The regression gate's A/A and power study on the GPU machine (issue 21, benchmarks/gate_aa.py),
# one device call of about 8 minutes: identical jobs on CUPTI (up to PAIRS+1 = 21 jobs of 20
# runs at n = 1024..8192, about 7 s each), then on Nsight Compute (launch mode, about 13 s a job:
# as many as fit before TOTAL_S, 5 runs at n = 1024..4096), then the analysis at the default
# 3 % into $OUT (gate_aa.md, gate_aa.json, record.jsonl, the bundles without reports).
#   device run:  bash scripts/gate_aa.sh     (carry: .whl)
# Knobs (environment): PAIRS (20: PAIRS+1 jobs a backend), BACKENDS ("cupti ncu"), CUPTI_RUNS (20),
# CUPTI_SIZES (1024,2048,4096,8192), NCU_RUNS (5), NCU_SIZES (1024,2048,4096), CUPTI_BUDGET_S
# (170), TOTAL_S (480). Kernels of 5-10 us need more runs (docs/measurements-h200.md, study 2):
#   BACKENDS=cupti PAIRS=21 CUPTI_RUNS=100 CUPTI_SIZES=1024,2048 CUPTI_BUDGET_S=400 bash scripts/gate_aa.sh
#   BACKENDS=ncu PAIRS=21 NCU_RUNS=30 NCU_SIZES=1024 TOTAL_S=540 bash scripts/gate_aa.sh
# DISJOINT=1: independent pairs (2 x PAIRS jobs, jobs 0-1, 2-3, ... judged; no job in two pairs),
# GAP_S seconds between pairs; every job's runs table and manifest come back in aa_runs.tgz so
# each verdict can be re-judged (issue 34). The independent study, one call of about 9 minutes:
#   DISJOINT=1 GAP_S=2 BACKENDS=cupti PAIRS=30 CUPTI_RUNS=20 CUPTI_BUDGET_S=500 TOTAL_S=520 \
#     bash scripts/gate_aa.sh
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO"/scripts/gpu_env.sh  # wheels, NCU_PATH, CUPTI_PATH
AA=${AA:-/tmp/kp-gate-aa}
PAIRS=${PAIRS:-20}
rm -rf "$AA" && mkdir -p "$AA" "$OUT"
cd "$REPO"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/env.txt" 2>&1
BACKENDS=${BACKENDS:-cupti ncu}
if [[ " $BACKENDS " == *" cupti "* ]]; then
  PYTHONPATH=$CUPTI_PATH python3 benchmarks/gate_aa.py record "$AA" --backend cupti --pairs "$PAIRS" \
    --runs "${CUPTI_RUNS:-20}" --sizes "${CUPTI_SIZES:-1024,2048,4096,8192}" \
    --budget-s "${CUPTI_BUDGET_S:-170}" ${DISJOINT:+--disjoint --gap-s "${GAP_S:-0}"} | tee -a "$OUT/record.jsonl"
fi
if [[ " $BACKENDS " == *" ncu "* ]]; then
  PYTHONPATH=$NCU_PATH python3 benchmarks/gate_aa.py record "$AA" --backend ncu --pairs "$PAIRS" \
    --runs "${NCU_RUNS:-5}" --sizes "${NCU_SIZES:-1024,2048,4096}" \
    --budget-s $(( ${TOTAL_S:-480} - SECONDS )) ${DISJOINT:+--disjoint --gap-s "${GAP_S:-0}"} | tee -a "$OUT/record.jsonl"
fi
PYTHONPATH=$CUPTI_PATH python3 benchmarks/gate_aa.py analyse "$AA" --json "$OUT/gate_aa.json" ${DISJOINT:+--disjoint} \
  | tee "$OUT/gate_aa.md"
tar -czf "$OUT/gate_aa_bundles.tgz" -C "$AA" --exclude='*.ncu-rep' .
(cd "$AA" && tar -czf "$OUT/aa_runs.tgz" */aa-*/tables/runs.csv */aa-*/manifest.json)
echo "total ${SECONDS} s"

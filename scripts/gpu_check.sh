#!/usr/bin/env bash
# One device call does it all: install the carried wheels, record the bundled H200 results
# with this project's worker, run the bare nsight-python reference, run `pytest -m gpu` on
# what was recorded, and pack everything under $OUT.
#   device run:  bash scripts/gpu_check.sh [JOB ...]     (carry: .whl; fetched by scripts/gpu_wheels.sh)
# Wheels (.whl/, git-ignored): .whl/common (deepdiff 8.6.1, orderly-set, nvtx, pyelftools),
# .whl/cupti (cupti-python 13.4, nvidia-cuda-cupti 13.4), .whl/ncureport (ncu-report), .whl/nspy096 (nsight-python 0.9.6, launch mode for
# ncu < 2026.2.1), .whl/nspy11 (nsight-python 1.1.0, CUPTI backend), .whl/prof (pyinstrument,
# BREAKDOWN=1 only). See docs/testing.md, "GPU tests".
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
REPO=$(cd "$(dirname "$0")/.." && pwd)
export KPROF_KERNEL_DIRS=${KPROF_KERNEL_DIRS:-$(cd "$(dirname "$0")/.." && pwd)/examples/kernels}
export DEVICE_RUN=${DEVICE_RUN:-"h200 $(date -u +%Y-%m-%dT%H:%MZ)"}
. "$REPO"/scripts/gpu_env.sh  # wheels, NCU_PATH, CUPTI_PATH
RESULTS=${RESULTS:-/tmp/kp-results}
mkdir -p "$RESULTS" "$OUT"
# Whether the modules the cold jobs import have compiled bytecode here (issue 40: the device
# run "h100 1205-s11bd" read the worker's modules at the self time of compiling them, and a
# process started with PYTHONDONTWRITEBYTECODE=1 compiles them again every time).
PYTHONPATH=$CUPTI_PATH python3 - > "$OUT/bytecode.txt" 2>&1 <<'PY'
import importlib.util as u, os, sys
print("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"), sys.flags.dont_write_bytecode)
for name in ("pynvml", "typing_extensions", "pandas", "nsight", "cupti", "profiling_worker.cli"):
    spec = u.find_spec(name)
    pyc = u.cache_from_source(spec.origin) if spec and spec.origin and spec.origin.endswith(".py") else None
    print(name, spec and spec.origin, "pyc:", bool(pyc and os.path.exists(pyc)),
          "dir writable:", bool(spec and spec.origin and os.access(os.path.dirname(spec.origin), os.W_OK)))
PY
# PYC=1: compile every module of the worker, of the carried wheels (pipi installs them
# --no-compile) and pynvml (the one package only the worker imports) to bytecode first, as pip
# does when it installs a package, so no process of this call (worker, bare script, tests)
# compiles them from source; bytecode.txt says what there was before.
[ "${PYC:-0}" = 1 ] && python3 -m compileall -q -j 0 "$REPO"/profiling_worker /tmp/kp-common /tmp/kp-n096 \
  /tmp/kp-n11 "$(python3 -c 'import pynvml; print(pynvml.__file__)')" > /dev/null
# SEED=1: start from the bundles already in the repo (earlier device runs), so the GPU tests
# that read them pass; jobs named on the command line are recorded afresh over them.
[ "${SEED:-0}" = 1 ] && cp -r "$REPO"/app/bundled/h200-* "$RESULTS"/
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
  PYTHONPATH=$NCU_PATH python3 -m profiling_worker env
  PYTHONPATH=$CUPTI_PATH python3 -m profiling_worker env
} > "$OUT/env.txt" 2>&1
cd "$REPO"
# RECORD=0: record nothing (a call that only benchmarks; no JOB named records them all).
[ "${RECORD:-1}" = 1 ] && PYTHONPATH=$NCU_PATH python3 scripts/record_h200.py "$RESULTS" "$NCU_PATH" "$CUPTI_PATH" "$@" 2>&1 | tee "$OUT/record.jsonl"
# The recorded bundles now, and again at the end: a call cut short by its time limit keeps them.
pack() { tar -czf "$OUT/bundles.tgz" -C "$RESULTS" --exclude='*.ncu-rep' --exclude='*.ncu-rep.gz' .; }
pack
# The bare nsight-python reference of job J1, same call, same GPU.
LIBCUPTI=$(PYTHONPATH=$CUPTI_PATH python3 -c 'from profiling_worker.probes.environment import find_libcupti as f; print(f()[0]["path"])')
for b in ${BARE_BACKENDS:-ncu cupti}; do  # BARE_BACKENDS=none: skip the reference
  [ "$b" = none ] && continue
  P=$NCU_PATH; [ $b = cupti ] && P=$CUPTI_PATH
  s=$(date +%s%N)
  PYTHONPATH=$P timeout 300 python3 benchmarks/bare_nsight_j1.py $b "$RESULTS" "$LIBCUPTI" > "$RESULTS/bare_$b.log" 2>&1
  rc=$?
  echo "{\"bare\": \"$b\", \"rc\": $rc, \"wall_ms\": $(( ($(date +%s%N) - s) / 1000000 ))}" | tee -a "$OUT/record.jsonl"
done
# EVENTS=0: skip the CUDA-events GEMM reference (about 30 s).
[ "${EVENTS:-1}" = 1 ] && { PYTHONPATH=$NCU_PATH timeout 120 python3 benchmarks/cuda_events_gemm.py \
  "$RESULTS/cuda_events_gemm.json" > /dev/null 2>&1 || echo "cuda events benchmark failed"; }
# PYTEST=0: skip `pytest -m gpu` (a call that only benchmarks).
# KPROF_NCU_PYTHONPATH: the worker of an ncu job a test submits runs with NCU_PATH's nsight-python
[ "${PYTEST:-1}" = 1 ] && KPROF_GPU_RESULTS=$RESULTS KPROF_NCU_PYTHONPATH=$NCU_PATH PYTHONPATH=$CUPTI_PATH timeout 300 python3 -m pytest -m gpu -q -s -p no:cacheprovider ${PYTEST_K:+-k "$PYTEST_K"} tests/gpu 2>&1 | tee "$OUT/pytest_gpu.txt"
# OVERHEAD=1: the dashboard's worker vs a bare nsight-python script, cold and warm (issues 6, 24,
# 40). The warm stages and nsight-python's own warm floor first (short), then the paired rounds
# (REPEATS pairs a backend, WARM_ROUNDS of them with a warm job manager), which write their JSON
# after every round and stop at OVERHEAD_S seconds. BARE_WARM=0 skips nsight-python's floor,
# WARM_STAGES=0 the warm stages; OVERHEAD_BACKENDS=cupti pairs the CUPTI backend alone (with
# WARM_ROUNDS=0: only the cold pairs, bare script and cold worker).
if [ "${OVERHEAD:-0}" = 1 ]; then
  [ "${WARM_STAGES:-1}" = 1 ] && { PYTHONPATH=$CUPTI_PATH timeout 150 python3 benchmarks/warm_stages.py \
    "$OUT/warm_stages.json" --repeats 10 > "$OUT/warm_stages.log" 2>&1 || echo "warm stages benchmark failed"; }
  [ "${BARE_WARM:-1}" = 1 ] && { PYTHONPATH=$CUPTI_PATH timeout 150 python3 benchmarks/bare_nsight_warm.py \
    "$OUT/bare_warm.json" "$LIBCUPTI" --repeats 5 > "$OUT/bare_warm.log" 2>&1 || echo "bare warm benchmark failed"; }
  timeout "${OVERHEAD_S:-420}" python3 benchmarks/overhead.py "$OUT/overhead.json" /tmp/kp-n096:/tmp/kp-common$EXTRA_PY \
    /tmp/kp-n11:/tmp/kp-common$EXTRA_PY --repeats "${REPEATS:-10}" --warm-rounds "${WARM_ROUNDS:-3}" \
    --backends "${OVERHEAD_BACKENDS:-ncu,cupti}" > "$OUT/overhead.log" 2>&1 || echo "overhead benchmark stopped (rounds so far in overhead.json)"
fi
# BREAKDOWN=1: where a cold CUPTI job's time goes beside the bare script's (pyinstrument, from
# .whl/prof), and a warm worker's path: benchmarks/worker_breakdown.py (issues 24, 40).
if [ "${BREAKDOWN:-0}" = 1 ]; then
  pipi /tmp/kp-prof "$REPO"/.whl/prof/*.whl
  PYTHONPATH=$CUPTI_PATH timeout 200 python3 benchmarks/worker_breakdown.py "$OUT/breakdown" \
    /tmp/kp-n096:/tmp/kp-common$EXTRA_PY /tmp/kp-n11:/tmp/kp-common$EXTRA_PY /tmp/kp-prof --backends cupti \
    --bare-libcupti "$LIBCUPTI" --repeats 5 > "$OUT/breakdown.log" 2>&1 || echo "breakdown failed"
fi
# ADAPTIVE=1: runs "auto" against fixed runs on J1 and a memory-bound sweep (issue 22).
if [ "${ADAPTIVE:-0}" = 1 ]; then
  PYTHONPATH=$CUPTI_PATH timeout 500 python3 benchmarks/adaptive_runs.py "$OUT/adaptive_runs.json" \
    --repeats "${REPEATS:-1}" > "$OUT/adaptive_runs.md" 2>&1 || echo "adaptive runs benchmark failed"
fi
# Bring back: every bundle without its .ncu-rep (too big), plus the .ncu-reps that fit.
# (.ncu-rep.gz: reports of bundles seeded from the repo, already there)
pack
n=0
for rep in "$RESULTS"/*/nsight/*.ncu-rep; do
  [ -f "$rep" ] || continue
  job=$(basename "$(dirname "$(dirname "$rep")")")
  # REPS: the jobs whose report to bring back (at most 3 fit beside the other files)
  [ -n "${REPS:-}" ] && [[ " $REPS " != *" $job "* ]] && continue
  size=$(stat -c %s "$rep")
  echo "$job $(basename "$rep") $size" >> "$OUT/ncu_reps.txt"
  gzip -c "$rep" > "/tmp/$job.ncu-rep.gz"
  if [ "$(stat -c %s "/tmp/$job.ncu-rep.gz")" -lt 16000000 ] && [ $n -lt 3 ]; then
    cp "/tmp/$job.ncu-rep.gz" "$OUT/"; n=$((n+1)); fi
done
# The device tool brings back a few files only: the logs and figures travel as one archive,
# and the figures are printed too (the call's output tail).
tail -n 3 "$OUT/pytest_gpu.txt"
for f in bytecode.txt overhead.log bare_warm.log warm_stages.log breakdown.log; do [ -f "$OUT/$f" ] && { echo "== $f"; tail -n 150 "$OUT/$f"; }; done
(cd "$OUT" && tar -czf logs.tgz --remove-files $(ls | grep -v -e '^bundles.tgz$' -e '\.ncu-rep\.gz$'))
ls -la "$OUT"

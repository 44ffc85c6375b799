#!/usr/bin/env bash
# Record issue 35's inputs on the GPU machine with the tools themselves, in one device call:
#   outlier.py (41 launches of one kernel, one after an L2 thrash) under --cache-control none as
#   a report, its console text (ncu -i), --print-summary per-kernel, a raw CSV export with
#   instructions executed; grids.py (a kernel at two grids, no NVTX) as a report and raw CSV; a
#   launch that fails (console text and a CSV printed live); --query-metrics and --list-sets;
#   the console text again as UTF-16 (what Windows PowerShell's '>' writes: iconv of the same bytes).
#   device run: bash scripts/import_inputs/record_issue35.sh     Output: $OUT/issue35.tgz, $OUT/record.log
# Before committing (tests/fixtures/import_cases/17-h200-issue35): paths /tmp/issue35/ -> <OUT>/
# in the logs and CSVs (sed), the checkout path in the report's command line -> <checkout>
# (scripts/bundle_recorded.py redact_report), query_metrics.txt cut to its first 120 lines,
# outlier_text.log gzipped.
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
W=/tmp/issue35; rm -rf $W; mkdir -p $W; cd $W
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,smsp__inst_executed.sum,sm__cycles_active.avg
{
date -u; ncu --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__)"
ncu --cache-control none --nvtx --nvtx-include "scale/" --set basic --metrics smsp__inst_executed.sum -f -o outlier python3 "$HERE/outlier.py" \
  || ncu --cache-control none --nvtx --nvtx-include "scale/" -f -o outlier python3 "$HERE/outlier.py"
ncu -i outlier.ncu-rep > outlier_text.log 2>&1
ncu -i outlier.ncu-rep --print-summary per-kernel > outlier_summary.log 2>&1
ncu -i outlier.ncu-rep --csv --page raw > outlier_raw.csv 2>&1
ncu --cache-control none --nvtx --nvtx-include "scale/" --csv --page raw --metrics $M python3 "$HERE/outlier.py" > outlier_live_raw.csv 2>&1
ncu --metrics $M -f -o grids python3 "$HERE/grids.py"
ncu -i grids.ncu-rep --csv --page raw > grids_raw.csv 2>&1
nvcc -o launch_fails "$HERE/launch_fails.cu" && {
  ncu ./launch_fails > launch_fails_text.log 2>&1
  ncu --csv --page raw --metrics $M ./launch_fails > launch_fails_raw.csv 2>&1; }
ncu --query-metrics > query_metrics.txt 2>&1
ncu --list-sets > list_sets.txt 2>&1
iconv -f UTF-8 -t UTF-16 outlier_text.log > outlier_text_utf16.log
} > $W/record.log 2>&1; echo "rc=$?"
for r in outlier grids; do gzip -9 -k $r.ncu-rep && rm -f $r.ncu-rep; done
rm -f launch_fails; cp $W/record.log $OUT/
ls -la $W; tar -czf "$OUT/issue35.tgz" -C /tmp issue35; tail -5 $W/record.log

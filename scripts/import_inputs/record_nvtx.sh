#!/usr/bin/env bash
# Record issue 20's NVTX inputs on the GPU machine: nested push/pop and start/end ranges as an
# ncu raw CSV, a details CSV with rule columns, a raw CSV of the default set, and console text.
#   device run: bash scripts/import_inputs/record_nvtx.sh     Output: $OUT/nvtx_inputs/
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
W=$OUT/nvtx_inputs; mkdir -p $W; cd $W
M=gpu__time_duration.sum,launch__grid_size,launch__block_size
{
ncu --version
ncu --nvtx --csv --page raw --metrics $M python3 "$HERE/nvtx_nested.py" > nested_raw.csv 2>&1
ncu --nvtx -f -o nested python3 "$HERE/nvtx_nested.py"
ncu -i nested.ncu-rep --csv --page details --print-units base > nested_details_base.csv
ncu -i nested.ncu-rep --csv --page details > nested_details.csv
ncu -i nested.ncu-rep --csv --page raw > nested_raw_default_set.csv
ncu --nvtx --metrics $M python3 "$HERE/nvtx_nested.py" > nested_text.log 2>&1
ncu -i nested.ncu-rep > nested_import_text.log 2>&1 || true
} > $W/record.log 2>&1; echo "rc=$?"
gzip -k nested.ncu-rep; rm -f nested.ncu-rep
ls -la $W; tail -3 $W/record.log

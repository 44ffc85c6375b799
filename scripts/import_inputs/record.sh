#!/usr/bin/env bash
# Record real inputs for the importer's conformance tests on the GPU machine (issue 10).
#   device run: bash scripts/import_inputs/record.sh   (carry: .whl)
# Output: $OUT/import_inputs.tgz (reports gzipped), $OUT/record_import.log
set -uo pipefail
OUT=${OUT:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd); REPO=$(cd "$HERE/../.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
pipi() { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$1" "${@:2}"; }
pipi /tmp/kp-common "$REPO"/.whl/common/*.whl; pipi /tmp/kp-n096 "$REPO"/.whl/nspy096/*.whl; pipi /tmp/kp-n11 "$REPO"/.whl/nspy11/*.whl
W=/tmp/import_inputs; rm -rf $W; mkdir -p $W/ncu_plain
M=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpc__cycles_elapsed.avg.per_second
cd $W/ncu_plain
{
ncu --version
# The most common report: no NVTX, kernel names only (skip the randn fills: -k excludes nothing, keep all).
ncu --clock-control none --metrics $M -f -o plain python3 "$HERE/plain_torch.py"
ncu -i plain.ncu-rep --csv --page raw > raw.csv
ncu -i plain.ncu-rep --csv --page raw --print-units base > raw_units_base.csv
ncu -i plain.ncu-rep --csv --page details > details.csv
ncu -i plain.ncu-rep --csv --page details --print-units base > details_units_base.csv
# CSV printed while profiling: ==PROF== lines and the program's own output precede the table.
ncu --clock-control none --metrics $M --csv --page raw python3 "$HERE/plain_torch.py" > live_raw.csv 2>&1
ncu --clock-control none --metrics $M --csv python3 "$HERE/plain_torch.py" > live_details.csv 2>&1
# Default section set (what `ncu -o rep` gives without --metrics): sections and rule results.
ncu --clock-control none -c 4 -f -o default_set python3 "$HERE/plain_torch.py"
} > $W/ncu_plain.log 2>&1; echo "ncu_plain rc=$?"
cd $W
PYTHONPATH=/tmp/kp-n096:/tmp/kp-common timeout 400 python3 "$HERE/nspy_cases.py" $W/nspy096 > $W/nspy096.log 2>&1; echo "nspy096 rc=$?"
LIBCUPTI=$(ls /tmp/kp-common/nvidia/cu*/lib/libcupti.so* 2>/dev/null | head -1)
CUPTI=1 LD_PRELOAD=$LIBCUPTI PYTHONPATH=/tmp/kp-n11:/tmp/kp-common timeout 200 python3 "$HERE/nspy_cases.py" $W/nspy11_cupti > $W/nspy11.log 2>&1; echo "nspy11 rc=$? libcupti=$LIBCUPTI"
python3 -c "import torch, sys; print('torch', torch.__version__, torch.cuda.get_device_name())" >> $W/ncu_plain.log 2>&1
find $W -name '*.ncu-rep' -size +15M -delete
find $W -type f | xargs ls -la
tar -czf "$OUT/import_inputs.tgz" -C /tmp import_inputs
tail -5 $W/*.log

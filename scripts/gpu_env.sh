# Sourced by scripts/gpu_check.sh and scripts/gate_aa.sh on the GPU machine (REPO set): install
# the carried wheels (.whl/, see gpu_check.sh) under /tmp and set NCU_PATH and CUPTI_PATH, the
# PYTHONPATH of each backend's nsight-python (0.9.6 launch mode for ncu < 2026.2.1, 1.1 CUPTI).
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
pipi() { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$1" "${@:2}"; }
# .whl/packed-*/kp-common.tar.xz: the common wheels and one backend's, unpacked as pip would
# and packed with xz (12-14 MB instead of 22-20): with the tree grown past 47 MB, the wheels
# as they are no longer fit the device tool's 64 MiB beside it.
for p in "$REPO"/.whl/packed-*/kp-common.tar.xz; do
  [ -f "$p" ] && { mkdir -p /tmp/kp-common && tar -xJf "$p" -C /tmp/kp-common || exit 1; }
done
[ -d "$REPO/.whl/common" ] && { pipi /tmp/kp-common "$REPO"/.whl/common/*.whl || exit 1; }
# cupti-python (.whl/cupti, 19 MB) and the ncu_report wheel (.whl/ncureport, 17 MB) each where
# carried: the tree with both and every other wheel is over the device tool's 64 MiB, so a call
# for the CUPTI backend carries the first and a call for Nsight Compute the second.
for d in cupti ncureport; do
  [ -d "$REPO/.whl/$d" ] && { pipi /tmp/kp-common "$REPO"/.whl/$d/*.whl || exit 1; }
done
pipi /tmp/kp-n096 "$REPO"/.whl/nspy096/*.whl || exit 1
pipi /tmp/kp-n11 "$REPO"/.whl/nspy11/*.whl || exit 1
NCU_PATH=$REPO:/tmp/kp-n096:/tmp/kp-common
CUPTI_PATH=$REPO:/tmp/kp-n11:/tmp/kp-common
# ncu_report: the carried wheel (.whl/ncureport) where there is one, else Nsight Compute's own
# copy in its extras/python (which crashed the ncu J1 in sessions 18-19: see docs/testing.md).
if ! PYTHONPATH=$NCU_PATH python3 -c "import ncu_report" 2>/dev/null; then
  # ncu may be a link or a wrapper script in cuda/bin, so look beside it and in the toolkit's copy.
  NCU_BIN=$(dirname "$(readlink -f "$(command -v ncu)")")
  NCU_PY=$(ls -d "$NCU_BIN"/extras/python "$NCU_BIN"/../nsight-compute*/extras/python \
    /usr/local/cuda*/nsight-compute*/extras/python /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null | head -1)
  [ -n "$NCU_PY" ] && { EXTRA_PY=:$NCU_PY; echo "ncu_report from $NCU_PY"; }
fi
# EXTRA_PY: what every PYTHONPATH of the scripts needs besides the wheels (benchmarks too)
EXTRA_PY=${EXTRA_PY:-}
NCU_PATH=$NCU_PATH$EXTRA_PY
CUPTI_PATH=$CUPTI_PATH$EXTRA_PY

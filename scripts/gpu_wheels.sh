#!/usr/bin/env bash
# Fetch the wheels a GPU device call carries (.whl/, git-ignored) and pack them as
# scripts/gpu_env.sh unpacks them: nothing can be downloaded on the GPU machine, whose python3 is
# 3.12 on x86_64 (the device tool's KINDS.md). Run on a machine with PyPI:
#   bash scripts/gpu_wheels.sh        then carry .whl/packed-cupti (or .whl/packed-ncu),
#                                     .whl/nspy096 and .whl/nspy11 (docs/testing.md, "GPU tests")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# cupti-python's, nvidia-cuda-cupti's and ncu-report's Linux wheels are manylinux_2_24-2_28
get() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
          --platform manylinux_2_17_x86_64 --platform manylinux_2_25_x86_64 \
          --platform manylinux_2_28_x86_64 --platform any -d ".whl/$1" "${@:2}"; }
get common deepdiff==8.6.1 orderly-set nvtx pyelftools
get cupti cupti-python==13.4.0 nvidia-cuda-cupti==13.4.92
get ncureport ncu-report==2026.3.1
get nspy096 nsight-python==0.9.6
get nspy11 nsight-python==1.1.0
# each backend's wheels with the common ones, unpacked as pip would and packed with xz (12-14 MB
# instead of 20-22: the tree and the wheels as they are exceed the device tool's 64 MiB)
for backend in cupti ncureport; do
  packed=.whl/packed-${backend/ncureport/ncu}
  unpacked=$(mktemp -d)
  # pip installs them (a plain unzip leaves ncu-report's package in its .data/purelib, where
  # nothing imports it: device run "gpu 2026-12-07-ncu2" fell back to Nsight Compute's own copy)
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --no-deps --no-compile --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_17_x86_64 --platform manylinux_2_25_x86_64 \
    --platform manylinux_2_28_x86_64 --platform any --target "$unpacked" .whl/common/*.whl .whl/$backend/*.whl
  mkdir -p "$packed" && tar -cJf "$packed/kp-common.tar.xz" -C "$unpacked" . && rm -rf "$unpacked"
done
du -sh .whl/*

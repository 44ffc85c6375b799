# GPU image of the kernel profiling dashboard: the Streamlit app and the profiling worker in one
# venv, on a CUDA *devel* image (the devel images ship Nsight Compute; runtime images do not).
#
#   docker build -t kernel-dashboard .
#   docker run --gpus all -p 127.0.0.1:8501:8501 -v kprof-results:/data/results kernel-dashboard
#
# -p 127.0.0.1:8501:8501 keeps the dashboard on the host's loopback (it starts processes on the
# GPU machine). GPU performance counters (ncu; ERR_NVGPUCTRPERM when the host driver restricts
# them to admins, its default): the image runs as the non-root user 10001, and Docker never puts
# a --cap-add capability in a non-root user's effective set (bounding, and before Docker
# 20.10.14 inheritable, only), so that flag alone does NOT help. What works: on the host, load the driver with
# NVreg_RestrictProfilingToAdminUsers=0 (any user, this image unchanged); or run the container
# as root with the capability, `docker run --user 0:0 --cap-add=SYS_ADMIN ...` (the whole
# dashboard then runs as root and its results are root's). The cupti backend needs neither.
#
# Nsight Compute: nsight-python >= 1.1 (attach mode) needs ncu >= 2026.2.1, newer than the
# 2025.3.x that CUDA 13.0 images carry, so the standalone NCU_PACKAGE from NVIDIA's CUDA apt
# repository (already configured in nvidia/cuda images) is installed and put first on PATH.
# For the image's own ncu, build with launch-mode nsight-python instead:
#   docker build --build-arg NCU_PACKAGE= --build-arg NCU_VERSION= \
#       --build-arg NSIGHT_PYTHON="nsight-python==0.9.6 deepdiff<9" -t kernel-dashboard .
ARG CUDA_IMAGE=nvidia/cuda:13.0.1-devel-ubuntu24.04
FROM ${CUDA_IMAGE}

ARG NCU_VERSION=2026.2.1
ARG NCU_PACKAGE=nsight-compute-2026.2.1
# CUDA build of torch from the PyTorch index (never from PyPI's default resolution).
ARG TORCH_VERSION=2.11.0
ARG TORCH_INDEX=https://download.pytorch.org/whl/cu130
ARG NSIGHT_PYTHON="nsight-python>=1.1,<2 cupti-python>=13.4"

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/nvidia/nsight-compute/${NCU_VERSION}:/opt/venv/bin:/usr/local/cuda/bin:${PATH}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Apt versions are not pinned: the CUDA base image and NVIDIA's repository move together, and
# pinned Ubuntu versions disappear from the mirrors.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv curl ca-certificates tini \
 && if [ -n "${NCU_PACKAGE}" ]; then apt-get install -y --no-install-recommends "${NCU_PACKAGE}"; fi \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv

# Python 3.12 in ubuntu24.04: torch first (CUDA wheel), then nsight-python, then the app.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --upgrade pip \
 && pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX}" \
 && pip install --no-cache-dir ${NSIGHT_PYTHON}

WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY profiling_worker ./profiling_worker
RUN pip install --no-cache-dir /src && rm -rf /src

RUN groupadd --gid 10001 app \
 && useradd --create-home --uid 10001 --gid 10001 --shell /bin/bash app \
 && mkdir -p /data/results \
 && chown -R app:app /data
# numeric id: resolvable by the host (bind mounts, Kubernetes runAsNonRoot)
USER 10001:10001
# Not "/": Streamlit refuses to run a script from the root directory.
WORKDIR /home/app
ENV KPROF_RESULTS_DIR=/data/results
VOLUME ["/data/results"]

EXPOSE 8501
# Exit 1 (unhealthy) on any curl failure; Docker reserves other codes.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
  CMD ["/bin/bash", "-c", "curl -fsS http://127.0.0.1:8501/_stcore/health || exit 1"]

# tini reaps the worker and ncu children and forwards SIGTERM.
ENTRYPOINT ["tini", "--", "kernel-dashboard"]
# Inside the container the server must bind 0.0.0.0, or the published port cannot reach it.
# Exposure is decided by `docker run -p`: publish it as 127.0.0.1:8501:8501 (loopback only)
# unless you mean to serve a network; add --allow-host NAME for the names browsers will use.
CMD ["--host", "0.0.0.0", "--port", "8501", "--results", "/data/results"]

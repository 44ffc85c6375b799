"""Probe what is installed: the host, its GPUs, ncu, libcupti and the profiling packages. Each
backend decides from this whether it can run (its ``probe``, backends/registry.py).

Nothing here imports nsight, torch or CUDA: versions come from package metadata, ncu from
``ncu --version`` and the GPU from NVML, so probing never initialises CUDA (nsight-python
1.x must be imported before CUDA starts).
"""

from __future__ import annotations

import glob
import importlib.metadata as md
import importlib.util
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from profiling_worker.probes import gpu_select
from profiling_worker.bundle.schema import tools as T

NCU_FALLBACK_PATHS = ("/usr/local/cuda/bin/ncu",)


def version_tuple(text: str | None) -> tuple[int, ...]:
    """``"2025.3.1.0"`` -> ``(2025, 3, 1, 0)``; ``"13.4.92"`` -> ``(13, 4, 92)``; None -> ()."""
    if not text:
        return ()
    match = re.match(r"(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def _dist_version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


#: How :func:`ncu_report_version` names an ``ncu_report`` found as a module without its package.
MODULE_AT = "module at "


def ncu_report_version() -> str | None:
    """The ``ncu_report`` the worker would import: the ncu-report package's version where the
    module found first on ``sys.path`` is that package's own file, else ``"module at <dir>"``
    (Nsight Compute's own copy in its ``extras/python``, which has no package metadata, or any
    module that shadows the package; a package's metadata beside a module it does not hold, as
    a wheel unpacked with its ``.data/purelib`` left in place, once named a version the worker
    never imported); None when no module is importable. Found without importing it."""
    spec = importlib.util.find_spec("ncu_report")
    if spec is None or not spec.origin:
        return None
    origin = Path(spec.origin).resolve()
    try:
        dist = md.distribution("ncu-report")
    except md.PackageNotFoundError:
        dist = None
    if dist is not None and any(Path(str(dist.locate_file(f))).resolve() == origin
                                for f in dist.files or ()):
        return dist.version
    return f"{MODULE_AT}{origin.parent}"


def probe_ncu() -> dict[str, Any]:
    """Path and version of the Nsight Compute CLI: ``{"path", "version"}`` (None when absent).

    The version is read once per ncu file (``ncu --version``, 0.09 s on the H200, in every cold
    job) and then from :func:`ncu_version_cache`, keyed by the file's real path, size, inode
    and modification time, so a reinstalled or replaced ncu is asked again."""
    path = shutil.which("ncu") or next(
        (p for p in NCU_FALLBACK_PATHS if os.access(p, os.X_OK)), None)
    if not path:
        return {"path": None, "version": None}
    key = _file_key(path)
    cache = _read_cache()
    if key in cache:
        return {"path": path, "version": cache[key]}
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {"path": path, "version": None}
    match = re.search(r"Version\s+(\d+(?:\.\d+)+)", out)
    version = match.group(1) if match else None
    if version:
        _write_cache({**cache, key: version})
    return {"path": path, "version": version}


def ncu_version_cache() -> Path:
    """The file of ncu versions already read: ``$KPROF_CACHE_DIR/ncu_versions.json``, else
    under ``$XDG_CACHE_HOME`` (``~/.cache``) ``/kernel-dashboard/``."""
    base = os.environ.get("KPROF_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernel-dashboard")
    return Path(base) / "ncu_versions.json"


def _file_key(path: str) -> str:
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}|{st.st_size}|{st.st_ino}|{st.st_mtime_ns}"


def _read_cache() -> dict[str, str]:
    try:
        data = json.loads(ncu_version_cache().read_text())
    except (OSError, ValueError):  # none yet, unreadable or half-written: ask ncu
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _write_cache(data: dict[str, str]) -> None:
    """Write atomically (a reader never sees half a file); a read-only home only costs the
    next job its ``ncu --version``."""
    file = ncu_version_cache()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f".{file.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, file)
    except OSError:
        pass


def ncu_metric_bases(ncu_path: str, gpu: int = 0) -> frozenset[str] | None:
    """Base metric names (``dram__bytes``, ``sm__throughput`` ...) the GPU's Nsight Compute knows.

    From ``ncu --query-metrics`` on device ``gpu``; None when the query fails (then names are
    not checked here and ncu reports an unknown one itself).
    """
    return ncu_query_metrics(ncu_path, gpu)[0]


def ncu_query_metrics(ncu_path: str, gpu: int = 0) -> tuple[frozenset[str] | None, str]:
    """:func:`ncu_metric_bases` and the query's whole output (stdout + stderr), in which a
    caller can look for errors such as ERR_NVGPUCTRPERM."""
    try:
        proc = subprocess.run([ncu_path, "--query-metrics", "--devices", str(gpu)],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, str(exc)
    names = {line.split()[0] for line in proc.stdout.splitlines()
             if line and re.match(r"^[a-z][a-z0-9]*__[a-z0-9_]+\s", line)}
    return frozenset(names) or None, proc.stdout + proc.stderr


def unknown_metrics(metrics: tuple[str, ...], bases: frozenset[str]) -> list[str]:
    """The metrics whose base name (before the first '.') is not in ``bases``."""
    return [m for m in metrics if m.split(".", 1)[0] not in bases]


def find_libcupti() -> list[dict[str, str]]:
    """Every ``libcupti.so*`` of an ``nvidia-cuda-cupti`` install on ``sys.path``, newest first.

    Returns:
        ``[{"path": ..., "version": "13.4.92"}, ...]``; the version is that of the package
        that ships the library (torch's own copy shows up here too).
    """
    found: dict[str, str] = {}
    # By name: md.distributions() with no filter parses every installed package's metadata
    # (0.39 s of a cold CUPTI job on the H200, device run of worker_breakdown.py).
    for dist in md.distributions(name="nvidia-cuda-cupti"):
        for file in dist.files or ():
            if "libcupti.so" in file.name:
                found[str(dist.locate_file(file))] = dist.version
    for entry in sys.path:
        for path in glob.glob(os.path.join(entry, "nvidia", "*", "lib", "libcupti.so*")):
            found.setdefault(path, "")
    libs = [{"path": p, "version": v} for p, v in found.items() if os.path.exists(p)]
    return sorted(libs, key=lambda d: version_tuple(d["version"]), reverse=True)


def _power_limit_w(pynvml: Any, handle: Any) -> float | None:
    """The enforced power limit (W; NVML's nvmlDeviceGetEnforcedPowerLimit, in mW), which the
    run audit compares a run's power with; None where NVML cannot say (not supported)."""
    try:
        return float(pynvml.nvmlDeviceGetEnforcedPowerLimit(handle)) / 1e3
    except (pynvml.NVMLError, AttributeError):
        return None


def probe_gpus() -> list[dict[str, Any]]:
    """GPUs seen by NVML: name, uuid, driver, memory (MiB), compute capability, max clocks (MHz),
    enforced power limit (W, None where not supported).

    Returns an empty list when NVML (nvidia-ml-py) or a driver is missing.
    """
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
            gpus.append({
                "index": i,
                "name": pynvml.nvmlDeviceGetName(h),
                "uuid": pynvml.nvmlDeviceGetUUID(h),
                "driver": driver,
                "memory_mib": pynvml.nvmlDeviceGetMemoryInfo(h).total // (1 << 20),
                "compute_capability": f"{major}.{minor}",
                "max_sm_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                "max_mem_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "power_limit_w": _power_limit_w(pynvml, h),
            })
        return gpus
    finally:
        pynvml.nvmlShutdown()


def visible_gpus(gpus: list[dict[str, Any]],
                 environ: Mapping[str, str] = os.environ) -> list[dict[str, Any]]:
    """The GPUs a spec's ``gpu`` can name, in its order: ``index`` (the spec's value, among the
    GPUs visible to the worker: an inherited CUDA_VISIBLE_DEVICES counts), ``uuid``,
    ``nvml_index`` (None for a MIG instance) and ``name``, as :func:`gpu_select.resolve` maps them.
    """
    out = []
    visible = gpu_select.inherited_visible_devices(environ)
    for i in range(len(gpu_select.visible_entries(visible, gpus))):
        selected = gpu_select.resolve(i, gpus, environ)
        out.append({"index": i, "uuid": selected.uuid, "nvml_index": selected.nvml_index,
                    "name": selected.name})
    return out


#: Where Linux names the CPU model: ``/proc/cpuinfo``'s first ``model name`` line (x86, most
#: arm64 kernels since 5.x name it too).
CPUINFO = Path("/proc/cpuinfo")


def probe_cpu(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """The host CPU a cpu job's times depend on: ``{"model", "count", "machine"}``.

    ``model``: ``cpuinfo``'s first ``model name`` (``"Intel(R) Xeon(R) Processor"``), else
    :func:`platform.processor` where that says something, else None; ``count``: logical CPUs
    (:func:`os.cpu_count`; None where unknown); ``machine``: the architecture
    (:func:`platform.machine`, ``"x86_64"``, ``"aarch64"``; None where empty)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:  # no /proc (macOS, Windows): the platform module's word
        text = ""
    match = re.search(r"^model name\s*:\s*(.+?)\s*$", text, re.MULTILINE)
    model = match.group(1) if match else platform.processor().strip()
    return {"model": model or None, "count": os.cpu_count(), "machine": platform.machine() or None}


def probe_environment() -> dict[str, Any]:
    """Everything the backend choice and the manifest need, without touching CUDA."""
    torch_version = _dist_version("torch")
    gpus = probe_gpus()
    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": probe_cpu(),
        "python": platform.python_version(),
        "gpus": gpus,
        "visible_gpus": visible_gpus(gpus),
        T.NCU.key: probe_ncu(),
        **{tool.key: _dist_version(tool.distribution) for tool in T.ALL if tool.distribution},
        "ncu_report": ncu_report_version(),
        "libcupti": find_libcupti(),
        "torch": torch_version,
        "torch_cuda": (torch_version.split("+", 1)[1] if torch_version and "+" in torch_version
                       else None),
        "nvidia_ml_py": _dist_version("nvidia-ml-py"),
    }


class ProbeInBackground:
    """:func:`probe_environment` on a daemon thread, started at construction: a cold job's
    NVML start (the driver library's load, ``nvmlInit`` and the device queries, which release
    the GIL), its package lookups and its ncu version run while the main thread imports pandas
    and the worker's modules (issue 40: the probe took 0.15 s of a cold CUPTI job on the H100,
    device run "h100 1205-s11bd"). The environment is the same dict, probed the same way.

    Start it only after ``probes.environment`` is imported (this module: the thread then
    imports only ``pynvml``, which nothing else imports meanwhile, so the two threads never
    wait on each other's module locks).
    """

    def __init__(self) -> None:
        # a Future carries the dict or the exception to result() (as app/ui/prewarm.py's probe)
        self._future: Future[dict[str, Any]] = Future()
        threading.Thread(target=self._probe, name="environment-probe", daemon=True).start()

    def _probe(self) -> None:
        try:
            self._future.set_result(probe_environment())
        except BaseException as exc:  # raised again in the caller's thread by result()
            self._future.set_exception(exc)

    def result(self) -> dict[str, Any]:
        """Wait for the probe; returns :func:`probe_environment`'s dict.

        Raises:
            Exception: what :func:`probe_environment` raised, as it would have raised it.
        """
        return self._future.result()

"""Which physical GPU a job runs on: the spec's ``gpu`` indexes the GPUs visible to the worker.

An inherited ``CUDA_VISIBLE_DEVICES`` (Slurm, a container, a user) is honoured: ``"gpu": 0``
with ``CUDA_VISIBLE_DEVICES=1`` is physical GPU 1. Its entries may be indices (read in PCI bus
order, as ``nvidia-smi`` and NVML number GPUs: the worker sets ``CUDA_DEVICE_ORDER=PCI_BUS_ID``),
GPU UUIDs (``GPU-...``, a unique prefix is enough, as for CUDA) or MIG ids (``MIG-...``). The
chosen entry is resolved to a UUID once; CUDA (``CUDA_VISIBLE_DEVICES=<uuid>``), NVML sampling,
the info collectors, thermal control and the manifest then all address that one UUID.

The first value seen is kept in ``KPROF_VISIBLE_DEVICES`` (``"all"`` when unset) so that a warm
worker or nsight-python's launch-mode child resolves the same index the same way after the
worker narrowed ``CUDA_VISIBLE_DEVICES`` to one UUID.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from profiling_worker.bundle.errors import SpecRejected

INHERITED_ENV = "KPROF_VISIBLE_DEVICES"
ALL_VISIBLE = "all"


@dataclass(frozen=True)
class SelectedGpu:
    """The GPU of a job.

    ``index``: the spec's ``gpu`` (index among the visible GPUs); ``uuid``: NVML UUID of the
    device CUDA runs on (``GPU-...`` or ``MIG-...``); ``nvml_index``: NVML index of the physical
    GPU (None for a MIG id given by UUID); ``name``: NVML name; ``visible_devices``: the
    inherited ``CUDA_VISIBLE_DEVICES`` (None when unset).
    """

    index: int
    uuid: str
    nvml_index: int | None
    name: str | None
    visible_devices: str | None

    def to_json(self) -> dict[str, Any]:
        """The manifest's ``gpu`` entry."""
        return asdict(self)


def inherited_visible_devices(environ: Mapping[str, str] = os.environ) -> str | None:
    """The ``CUDA_VISIBLE_DEVICES`` the worker was started with (None: unset, all GPUs)."""
    kept = environ.get(INHERITED_ENV)
    if kept is not None:
        return None if kept == ALL_VISIBLE else kept
    return environ.get("CUDA_VISIBLE_DEVICES")


def _entry_gpu(entry: str, gpus: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The NVML GPU a ``CUDA_VISIBLE_DEVICES`` entry names (None: not a GPU of this host)."""
    if entry.isdigit():
        return next((g for g in gpus if g.get("index") == int(entry)), None)
    if entry.startswith("GPU-"):
        hits = [g for g in gpus if str(g.get("uuid", "")).startswith(entry)]
        return hits[0] if len(hits) == 1 else None
    return None


def visible_entries(visible: str | None, gpus: Sequence[Mapping[str, Any]]) -> list[str]:
    """The entries CUDA sees, in order: all NVML indices when unset, else the list up to the
    first entry that names no device (CUDA ignores that one and everything after it)."""
    if visible is None:
        return [str(g["index"]) for g in sorted(gpus, key=lambda g: g["index"])]
    out: list[str] = []
    for entry in (e.strip() for e in visible.split(",")):
        if not (entry.startswith("MIG-") or _entry_gpu(entry, gpus)):
            break
        out.append(entry)
    return out


def resolve(gpu: int, gpus: Sequence[Mapping[str, Any]],
            environ: Mapping[str, str] = os.environ) -> SelectedGpu:
    """The physical GPU that visible index ``gpu`` names.

    Args:
        gpu: the spec's ``gpu``, 0-based among the GPUs visible to the worker.
        gpus: NVML's GPUs (``environment.probe_gpus``: index, uuid, name).
        environ: where ``CUDA_VISIBLE_DEVICES`` / ``KPROF_VISIBLE_DEVICES`` are read.

    Raises:
        SpecRejected: ``gpu`` is not below the number of visible GPUs (the message lists them).
    """
    visible = inherited_visible_devices(environ)
    entries = visible_entries(visible, gpus)
    if gpu >= len(entries):
        seen = f"CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "NVML"
        raise SpecRejected(
            f"gpu: {gpu} is not a visible GPU; {len(entries)} visible ({seen}: "
            f"{', '.join(entries) or 'none'})",
            f"set gpu to 0..{len(entries) - 1}: it counts the GPUs visible to the worker"
            if entries else "run on a node with a GPU allocated to the job")
    entry = entries[gpu]
    found = _entry_gpu(entry, gpus)
    if found is None:  # a MIG instance: CUDA and NVML both take its id as it is
        return SelectedGpu(gpu, entry, None, None, visible)
    return SelectedGpu(gpu, str(found["uuid"]), int(found["index"]), found.get("name"), visible)


def pin(selected: SelectedGpu, environ: MutableMapping[str, str] = os.environ) -> None:
    """Point CUDA at the selected GPU by UUID (before anything starts CUDA), keeping the
    inherited value for later resolutions in this process and its children."""
    environ.setdefault(INHERITED_ENV, selected.visible_devices or ALL_VISIBLE)
    environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    environ["CUDA_VISIBLE_DEVICES"] = selected.uuid


def pinned_uuid(environ: Mapping[str, str] = os.environ) -> str | None:
    """The UUID :func:`pin` put in CUDA_VISIBLE_DEVICES (None when nothing was pinned)."""
    return environ.get("CUDA_VISIBLE_DEVICES") if INHERITED_ENV in environ else None


def nvml_handle(nvml: Any, uuid: str) -> Any:
    """The NVML handle to sample for ``uuid``: the GPU itself, or a MIG instance's parent GPU
    (clocks, temperature and power belong to the whole GPU)."""
    handle = nvml.nvmlDeviceGetHandleByUUID(uuid)
    if uuid.startswith("MIG-"):
        handle = nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
    return handle


def free_memory(uuid: str, nvml: Any = None) -> float | None:
    """Bytes of the GPU (or MIG instance) ``uuid``'s memory free now, plus what this process's
    torch already holds reserved on it (a warm worker's caching allocator: free to its next
    job, not to the driver). Where this process has started CUDA on that GPU (a warm worker),
    CUDA says (``torch.cuda.mem_get_info``: one driver call); else NVML's
    ``nvmlDeviceGetMemoryInfo(...).free``, read without starting a CUDA context (an init, a
    query and a shutdown per job: a warm J1's ``prepare`` went from 0.3 to 2.4 ms when this
    check came, device run "gpu 1207-s26"). None where neither can say (no pynvml, no driver,
    an unknown UUID). ``nvml``: the pynvml module (imported when None)."""
    device = _torch_device(uuid)
    if device is not None:
        torch = sys.modules["torch"]
        free, _total = torch.cuda.mem_get_info(device)
        return float(free) + float(torch.cuda.memory_reserved(device))
    try:
        nvml = nvml or importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:  # ImportError, NVMLError: no NVML here; the check uses the total
        return None
    try:
        return float(nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByUUID(uuid)).free)
    except Exception:  # NVMLError of this device (not found, not supported)
        return None
    finally:
        nvml.nvmlShutdown()


def _torch_device(uuid: str) -> int | None:
    """torch's index of the GPU ``uuid`` where this process has started CUDA on it, else None
    (torch not loaded, CUDA not started, another GPU: nothing imported or started here)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    device = torch.cuda.current_device()
    return device if same_device(uuid, torch.cuda.get_device_properties(device).uuid) else None


def same_device(nvml_uuid: str, cuda_uuid: Any) -> bool:
    """True when CUDA's device UUID (torch's ``get_device_properties().uuid``, no prefix) is
    the NVML UUID (``GPU-``/``MIG-`` prefixed)."""
    bare = nvml_uuid.split("-", 1)[1] if nvml_uuid[:4] in ("GPU-", "MIG-") else nvml_uuid
    return bare.lower() == str(cuda_uuid).lower()

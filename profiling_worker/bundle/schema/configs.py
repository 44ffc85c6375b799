"""Checks of a job spec's ``configs``: value types, parameter kinds, duplicates, declared
defaults, and the memory a config must fit in (issue 11, case 7; what it needs:
:mod:`.memory_need`). Used by :mod:`.spec`; stdlib only.

Parameter kinds (a kernel's ``parameter_kinds``; docs/kernels.md):

``size``   (the default) a whole number > 0
``int``    any whole number (0 and negatives included)
``float``  a finite number (a whole number is accepted)
``str``    a string of 1 to 64 characters

Every error is a ``FieldError`` naming ``configs[i].<parameter>`` (or ``configs``) and the fix.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from profiling_worker.bundle.schema import backends as B

KINDS: dict[str, tuple[str, str]] = {  # kind -> (what it is, an example)
    "size": ("a positive integer", "sizes must be whole numbers greater than 0, e.g. 1024"),
    "int": ("a whole number", "give a whole number such as 0, -3 or 42"),
    "float": ("a finite number", "give a number such as 0.5 or 3"),
    "str": ("a string", 'give text in quotes, e.g. "fp16"'),
}


def value_ok(value: Any) -> bool:
    """True for a value any kind may take: a bool-free int, a finite float, a 1-64 char str."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) and 0 < len(value) <= 64


def value_problem(value: Any) -> tuple[str, str]:
    """(message, fix) for a value :func:`value_ok` refuses, saying what it is."""
    if isinstance(value, Mapping):
        what = "an object (dict)"
    elif isinstance(value, (list, tuple)):
        what = "a list"
    elif value is None:
        what = "null"
    elif isinstance(value, bool):
        what = "a boolean"
    elif isinstance(value, float):
        what = "not a finite number"
    elif isinstance(value, str):
        what = "an empty string" if not value else "a string longer than 64 characters"
    else:
        what = type(value).__name__
    return (f"{_show(value)} is {what}, not a single value",
            "give one whole number, number or string per parameter, e.g. 1024; "
            "list several sizes as several configs")


def kind_ok(kind: str, value: Any) -> bool:
    """True when ``value`` is of parameter kind ``kind`` (see the module docstring)."""
    if kind == "str":
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "float":
        return math.isfinite(value)
    return isinstance(value, int) and (kind == "int" or value > 0)


def duplicates(configs: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """(index, index of the first equal config) for every config that repeats an earlier one.

    Equal as the worker tells configs apart: by their values as Python compares them, so
    ``{"alpha": 1}`` and ``{"alpha": 1.0}`` are one config (the run counter, keyed by the
    values, would have merged their runs into one config's)."""
    seen: dict[tuple[tuple[str, Any], ...], int] = {}
    out = []
    for i, cfg in enumerate(configs):
        key = tuple(sorted((name, value if isinstance(value, (int, float, str))
                            else json.dumps(value, default=str)) for name, value in cfg.items()))
        if key in seen:
            out.append((i, seen[key]))
        else:
            seen[key] = i
    return out


def declared_defaults(entry: Any, backend: str) -> tuple[dict[str, Any], ...]:
    """A kernel's declared default configs (the worker's Kernel or the app's KernelInfo):
    ``default_configs``, or ``cpu_configs`` for the cpu backend when declared."""
    cpu = not B.on_gpu(backend)
    configs = (getattr(entry, "cpu_configs", ()) if cpu else ()) or getattr(
        entry, "default_configs", ())
    return tuple(dict(c) for c in configs)


def _show(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def gib(n: float) -> str:
    """Bytes as GiB: two decimals below 1,000 GiB (``140.40 GiB``, a GPU's memory), none from
    there on (``111,758,708,951,622 GiB``: decimals on such a size are noise, issue 37)."""
    size = n / 2**30
    return f"{size:,.{2 if abs(size) < 1000 else 0}f} GiB"


def device_memory(backend: str, gpus: Sequence[Mapping[str, Any]], uuid: str | None,
                  free: float | None = None) -> tuple[float | None, str]:
    """(bytes, what) the job's configs must fit in: the job's GPU (``environment.gpus[]`` entry
    with ``uuid``; NVML ``memory_mib``) or, for the cpu backend, the host's memory available
    now (:func:`host_available_memory`), not its total: a size that fits the total but not what
    is free would swap or be killed. ``free``: the GPU's bytes free now, where the caller could
    read them (the worker, just before the job: ``gpu_select.free_memory``); they count
    instead of its total, which other processes may hold part of. (None, "") when unknown."""
    if not B.on_gpu(backend):
        available = host_available_memory()
        return (available, "memory available on the host") if available else (None, "")
    for gpu in gpus:
        if isinstance(gpu, Mapping) and gpu.get("uuid") == uuid and gpu.get("memory_mib"):
            name, total = gpu.get("name") or uuid, float(gpu["memory_mib"]) * 2**20
            if free is not None:
                return free, f"memory free on GPU {name} now ({gib(total)} in all)"
            return total, f"GPU {name}"
    return None, ""


def host_available_memory() -> float | None:
    """Bytes of memory the host can give a new process now: ``MemAvailable`` of
    ``/proc/meminfo`` (free memory plus the page cache it can reclaim: proc(5)), else
    ``os.sysconf`` free pages; None when neither is known."""
    import os

    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None



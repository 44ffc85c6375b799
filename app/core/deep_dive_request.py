"""From one point of a sweep to the spec of its deep dive: the same kernel, region (annotation)
and config, profiled alone with Nsight Compute's full section set (``section_set="full"``).

The sweep stays cheap (durations or a few metrics); the expensive profile (ncu replays each
kernel some 40 times for ``--set full``) is paid for one point only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pandas as pd

from profiling_worker.bundle.schema import backends as B, columns as C, metrics as M
from profiling_worker.bundle.schema.spec import JobSpec

from app.core import frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.metrics import with_labels
from app.core.provenance import is_imported

DEEP_DIVE_SET = "full"
#: Runs of a deep dive: enough to see that the point repeats, few because each costs ~40 replays.
DEEP_DIVE_RUNS = 3
#: The spec label of a deep-dive job starts with this (the page lists such jobs).
LABEL_PREFIX = "deep dive: "


class NoDeepDive(ValueError):
    """This bundle's points cannot be profiled again (and why)."""


def sweep_points(bundle: Bundle) -> pd.DataFrame:
    """The (annotation, config) points of the job: Annotation, Config, <params>, ConfigLabel."""
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = bundle.table(name)
        if not table.empty and C.ANNOTATION in table and C.CONFIG in table:
            keys = [c for c in (C.ANNOTATION, C.CONFIG, *bundle.parameters) if c in table]
            return with_labels(table[keys].drop_duplicates(ignore_index=True),
                               bundle.parameters)
    return pd.DataFrame(columns=[C.ANNOTATION, C.CONFIG, F.CONFIG_LABEL])


def kernel_of(annotation: str, kernels: list[str], catalog: Mapping[str, Any]) -> str | None:
    """The job's kernel that declares ``annotation`` (the only kernel when the job has one)."""
    if len(kernels) == 1:
        return kernels[0]
    owners = [k for k in kernels if annotation in getattr(catalog.get(k), "annotations", ())]
    return owners[0] if len(owners) == 1 else None


def job_refusal(bundle: Bundle) -> str | None:
    """Why no point of ``bundle`` can be deep-dived (an imported job: no kernel to run here; a
    spec that cannot be read back), or None: asked before a point is offered, so no Point box
    is drawn that could only be refused."""
    if is_imported(bundle.manifest):
        return ("an imported job has no kernel the worker can run again: import a report made "
                "with `ncu --set full` to see its sections here")
    if bundle.job_spec is None:
        return "the job's spec cannot be read back, so the settings to repeat are unknown"
    return None


def deep_dive_spec(bundle: Bundle, annotation: str, config: Mapping[str, Any],
                   catalog: Mapping[str, Any]) -> dict[str, Any]:
    """The raw spec of the deep dive of one point (validate it with ``validate_spec``).

    Keeps the job's cache control, clock control, GPU and ignored kernels, so the profile sees
    the kernel as the sweep did.

    Raises:
        NoDeepDive: an imported job (no kernel to run here), or a region no kernel declares.
    """
    if (why := job_refusal(bundle)) is not None:
        raise NoDeepDive(why)
    spec = cast(JobSpec, bundle.job_spec)  # job_refusal refused a job without one
    kernel = kernel_of(annotation, list(spec.kernels), catalog)
    if kernel is None:
        raise NoDeepDive(f"no single kernel of the job declares the region {annotation!r}")
    label = ", ".join(f"{k}={v}" for k, v in config.items())
    raw: dict[str, Any] = {
        "kernels": [kernel], "annotations": [annotation], "configs": [dict(config)],
        "runs": DEEP_DIVE_RUNS, "backend": B.NCU, "section_set": DEEP_DIVE_SET,
        "metrics": list(M.DEEP_DIVE_COLLECT), "label": f"{LABEL_PREFIX}{annotation} {label}",
        "cache_control": spec.cache_control, "clock_control": spec.clock_control,
        "gpu": spec.gpu, "ignore_kernels": list(spec.ignore_kernels)}
    return raw

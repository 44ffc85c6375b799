"""Cache and clock control matrix: the same sweep under cache_control all/none x clock_control
none/base, side by side. Each variant is its own job (nsight-python takes one setting per
call); jobs are siblings when their specs are equal except for cache_control, clock_control and
the label.

Per variant, annotation and config: the duration (ns), the DRAM bandwidth it implies (analytic
bytes / time, GB/s; measured DRAM bytes when the job collected them) and the SM clock the kernel
actually ran at (``gpc__cycles_elapsed.avg.per_second``, MHz), not nsight-python's rated
``ComputeClock`` column. The x axis is the analytic working set (bytes), so the L2 size can be
marked: below it ``cache_control="none"`` leaves data in L2 between replays, above it cache
control cannot matter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pandas as pd

from profiling_worker.bundle.schema import backends as B, metrics as M
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import SPEC_DEFAULTS, JobSpec

from profiling_worker.bundle.loader import Bundle
from profiling_worker.bundle.schema.bundle_spec import PartialSpec
from app.core.metrics import MissingData, no_values_text, wide_means, with_labels
from app.core.views.run_audit import with_outcome
from app.core import frame_columns as F

VARIANT_KEYS = ("cache_control", "clock_control")
#: L2 of an H200 (60 MiB; device__attribute_l2_cache_size read on the lent H200,
#: docs/measurements-h200.md).
DATASHEET_L2 = {"NVIDIA H200": 62_914_560, "NVIDIA H100 80GB HBM3": 52_428_800}


class Listed(Protocol):
    """What :func:`siblings` reads of a job: a loaded :class:`Bundle`, or a listed bundle whose
    manifest alone was read (the store's ``BundleInfo``), so finding siblings loads no tables."""

    @property
    def job_id(self) -> str: ...

    @property
    def path(self) -> Path: ...

    @property
    def status(self) -> JobStatus: ...

    @property
    def spec(self) -> JobSpec | PartialSpec | None: ...


def no_variant_text(backend: str, escape: Callable[[str], str] = str) -> str:
    """What the page says, once, of a job whose ``backend`` applies neither of
    :data:`VARIANT_KEYS` (the cpu backend: :func:`~profiling_worker.bundle.schema.backends.
    unused`): why, that it has no variant, where its variants would come from and where its
    times are. Nothing else is drawn for it: its one line was named "cache all · clock none",
    and its bandwidth a DRAM rate the cpu backend cannot measure (session 23's fresh user).
    ``escape`` formats the backend's name (Markdown on the page)."""
    unused = [key for key in VARIANT_KEYS if key in B.unused(backend)]
    return (f"The {escape(backend)} backend {B.unused_why(backend, unused[0])}: it applies no "
            f"{' or '.join(unused)} (greyed out in the form, never sent), so this job has no "
            f"variant here. Run the same job on a GPU backend ({B.said(B.GPU_NAMES, 'or')}) to "
            "compare them. Its times against the size are on the Size sweep page.")


def variant_label(bundle: Listed) -> str:
    """``cache all · clock none`` for a bundle's spec (nsight-python's defaults when the spec
    does not say: an import)."""
    spec = bundle.spec if isinstance(bundle.spec, JobSpec) else None
    cache, clock = ((getattr(spec, name) if spec else SPEC_DEFAULTS[name]) for name in VARIANT_KEYS)
    return f"cache {cache} · clock {clock}"


def _comparable(spec: JobSpec | PartialSpec | None) -> JobSpec | PartialSpec | None:
    """The spec without what may differ between siblings (the variant settings and the label)."""
    if not isinstance(spec, JobSpec):
        return spec
    return dataclasses.replace(spec, label="", **{k: SPEC_DEFAULTS[k] for k in VARIANT_KEYS})


def siblings(selected: Listed, candidates: Sequence[Listed]) -> list[Listed]:
    """The selected bundle and every other done bundle whose spec differs from it only in
    cache_control, clock_control or label: one per variant (the first found), selected first."""
    chosen, seen = [selected], {variant_label(selected)}
    for other in candidates:
        label = variant_label(other)
        if other.path == selected.path or label in seen or other.status != JobStatus.DONE:
            continue
        if _comparable(other.spec) == _comparable(selected.spec):
            chosen.append(other)
            seen.add(label)
    return chosen


def l2_bytes(bundle: Bundle) -> tuple[float | None, str]:
    """The GPU's L2 size (bytes) and where it comes from: the report's device attribute, else a
    datasheet figure by GPU name, else (None, reason)."""
    attrs = (bundle.manifest.get("backend") or {}).get("device_attributes") or {}
    if attrs.get(M.L2_CACHE_SIZE):
        return float(attrs[M.L2_CACHE_SIZE]), "device attribute (Nsight Compute)"
    gpu = (bundle.manifest.get("gpu") or {}).get("name") or next(
        (g.get("name") for g in (bundle.manifest.get("environment") or {}).get("gpus") or ()), "")
    if gpu in DATASHEET_L2:
        return float(DATASHEET_L2[gpu]), f"{gpu} datasheet"
    return None, "unknown (no device attribute in this job)"


def _one(bundle: Bundle, status: JobStatus) -> pd.DataFrame:
    metrics = (bundle.duration_metric, M.GPC_HZ, *M.DRAM_TRAFFIC)
    wide = wide_means(bundle, metrics)
    work = bundle.table(C.TABLE_WORK)
    if wide.empty or wide[bundle.duration_metric].isna().all():
        raise MissingData(no_values_text(f"durations of job {bundle.job_id}", status,
                                         error=bundle.error))
    if not work.empty:
        wide = wide.merge(work[[C.ANNOTATION, C.CONFIG, C.BYTES]], on=[C.ANNOTATION, C.CONFIG],
                          how="left")
    else:
        wide[C.BYTES] = float("nan")
    time_ns = wide[bundle.duration_metric]
    measured = wide[list(M.DRAM_TRAFFIC)].sum(axis=1, min_count=2)
    out = pd.DataFrame({
        F.VARIANT: variant_label(bundle), F.JOB: bundle.job_id,
        C.ANNOTATION: wide[C.ANNOTATION], C.CONFIG: wide[C.CONFIG],
        **{p: wide[p] for p in bundle.parameters if p in wide},
        F.WORKING_SET_BYTES: wide[C.BYTES], F.TIME_NS: time_ns,
        F.GBPS: (measured.fillna(wide[C.BYTES])) / time_ns,
        F.GBPS_SOURCE: measured.notna().map({True: "measured DRAM bytes",
                                            False: "analytic bytes"}),
        F.SM_CLOCK_MHZ: wide[M.GPC_HZ] / 1e6,
    })
    return with_outcome(with_labels(out, bundle.parameters), bundle)


def cache_clock_frame(bundles: Sequence[Bundle],
                      statuses: Mapping[str, JobStatus] | None = None) -> pd.DataFrame:
    """One row per variant x annotation x config. ``statuses``: job id -> the job's state as
    the page names it (:func:`app.ui.job_status.shown_status`: the job manager's, ahead of the
    manifest), which the sentence of a job without durations says; a job left out: the
    manifest's.

    Returns:
        Variant, Job, Annotation, Config, <params>, WorkingSetBytes (analytic, bytes), TimeNs,
        GBps (bytes / ns = GB/s), GBpsSource, SmClockMHz (NaN without the clock metric),
        ConfigLabel, ``Run audit`` (each row's run audit badge in its own job, as on the Size
        sweep: :func:`app.core.views.run_audit.with_outcome`; empty for a job without an
        audit), and TimeVsFirst (this variant's time / the first variant's, same annotation
        and config).

    Raises:
        MissingData: a bundle has no duration values.
    """
    said = statuses or {}
    frame = pd.concat([_one(b, said.get(b.job_id, b.status)) for b in bundles],
                      ignore_index=True)
    first = frame[frame[F.VARIANT] == frame[F.VARIANT].iloc[0]]
    ref = first.set_index([C.ANNOTATION, F.CONFIG_LABEL])[F.TIME_NS]
    keys = pd.MultiIndex.from_frame(frame[[C.ANNOTATION, F.CONFIG_LABEL]])
    frame[F.TIME_VS_FIRST] = frame[F.TIME_NS].to_numpy() / ref.reindex(keys).to_numpy()
    return frame

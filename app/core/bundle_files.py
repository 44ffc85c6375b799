"""The files of a bundle as downloads: a zip of the whole bundle, a decompressed ``.ncu-rep``,
and the ``.ncu-rep`` summary (``nsight/report_summary.json``) as tables (pure: stdlib + pandas).

Everything here reads the disk only when called, so a page can pass these functions to
``st.download_button(data=...)`` as zero-argument callables and nothing is built until a click.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.schema import columns as C

from app.core.bundle_loader import Bundle

#: Files that are already compressed: stored in the zip as they are.
_STORED_SUFFIXES = (".gz", ".zip", ".parquet", ".png")


def zip_name(bundle: Bundle) -> str:
    """``<job_id>.zip``."""
    return f"{bundle.job_id}.zip"


def zip_bundle(bundle: Bundle) -> bytes:
    """Every file of the bundle (as listed in ``bundle.files``) in one zip, built in memory.

    Entries are ``<job_id>/<relpath>`` so the archive unpacks into one directory that the app
    can open again; compressed files (``.gz``, ``.parquet`` ...) are stored, the rest deflated.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for item in bundle.files:
            how = (zipfile.ZIP_STORED if item.relpath.endswith(_STORED_SUFFIXES)
                   else zipfile.ZIP_DEFLATED)
            archive.write(bundle.path / item.relpath, f"{bundle.job_id}/{item.relpath}",
                          compress_type=how)
    return buf.getvalue()


def is_gzipped_report(relpath: str) -> bool:
    """True for ``*.ncu-rep.gz`` (how bundled reports are shipped)."""
    return relpath.endswith(".ncu-rep.gz")


def gunzipped_name(relpath: str) -> str:
    """``nsight/x.ncu-rep.gz`` -> ``x.ncu-rep``."""
    return Path(relpath).name.removesuffix(".gz")


def gunzip_bytes(path: Path) -> bytes:
    """The decompressed content of a ``.gz`` file.

    Raises:
        OSError: not a gzip file (``gzip.BadGzipFile``) or unreadable.
    """
    with gzip.open(path, "rb") as handle:
        return handle.read()


@dataclass(frozen=True)
class ReportSummary:
    """``nsight/report_summary.json`` as tables.

    Attributes:
        overview: Item, Value rows: report file, launches, kernel names, metrics per launch,
            rule results.
        kernels: Kernel, Launches (most launched first).
        rules: one row per rule result (kernel, then the rule's own fields); empty when the
            report holds none (Nsight Compute runs rules only with ``--section``).
    """

    overview: pd.DataFrame
    kernels: pd.DataFrame
    rules: pd.DataFrame


def read_report_summary(bundle: Bundle) -> ReportSummary | None:
    """The bundle's ``.ncu-rep`` summary, or None when it has none.

    Raises:
        ValueError: the file is not valid JSON or not an object.
    """
    path = bundle.path / C.REPORT_SUMMARY_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{C.REPORT_SUMMARY_FILE} is not a JSON object")
    return summary_tables(data)


def summary_tables(data: dict[str, Any]) -> ReportSummary:
    """Tables of one summary dict (``report``, ``launches``, ``kernels``,
    ``metrics_per_launch``, ``rule_results``; missing keys read as empty)."""
    kernels = data.get("kernels") or {}
    rules = data.get("rule_results") or []
    overview = pd.DataFrame([
        {"Item": "Report", "Value": str(data.get("report", ""))},
        {"Item": "Launches", "Value": str(data.get("launches", ""))},
        {"Item": "Kernel names", "Value": str(len(kernels))},
        {"Item": "Metrics per launch", "Value": str(data.get("metrics_per_launch", ""))},
        {"Item": "Rule results", "Value": str(len(rules))},
    ])
    kernel_rows = sorted(((str(k), int(v)) for k, v in kernels.items()), key=lambda kv: -kv[1])
    return ReportSummary(
        overview=overview,
        kernels=pd.DataFrame(kernel_rows, columns=["Kernel", "Launches"]),
        rules=pd.DataFrame([r for r in rules if isinstance(r, dict)]))

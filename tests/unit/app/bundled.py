"""Recorded H200 scenarios for the app unit tests (``tests/scenarios.py``) and launches-table
variants of one of them (real recorded data, one table edited)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from profiling_worker.bundle.schema import columns as C
from tests.scenarios import scenario as bundled, scenario_dir

__all__ = ["bundled", "launches_variant", "in_region", "renamed", "extra"]
LINEAR_BACKWARD = "h200-ncu-linear-backward"


def launches_variant(dest: Path, name: str, edit: Callable[[pd.DataFrame], pd.DataFrame],
                     job: str = LINEAR_BACKWARD) -> Path:
    """Copy scenario ``job`` to ``dest/name`` (manifest job_id = ``name``) with its launches
    table replaced by ``edit(launches)``; returns the copy's directory."""
    root = dest / name
    shutil.copytree(scenario_dir(job), root)
    (root / "tables" / "launches.csv").unlink(missing_ok=True)
    path = root / "tables" / "launches.parquet"
    edit(pd.read_parquet(path)).to_parquet(path)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "job_id": name}))
    return root


def in_region(frame: pd.DataFrame) -> pd.Series:
    """Rows of annotation ``backward``, config 0 (the linear-backward region the variants edit)."""
    return (frame[C.ANNOTATION] == "backward") & (frame[C.CONFIG] == 0)


def renamed(launches: pd.DataFrame) -> pd.DataFrame:
    """Run 2's two Kernel2 launches of backward config 0 under another name (same durations)."""
    hit = in_region(launches) & (launches[C.RUN] == 2) & (launches[C.KERNEL] == "Kernel2")
    assert hit.any()
    return launches.assign(**{C.KERNEL: launches[C.KERNEL].where(~hit, "Kernel2_renamed")})


def extra(launches: pd.DataFrame) -> pd.DataFrame:
    """One more 100 µs launch (``extra_kernel``) in run 0 of backward config 0 only."""
    rows = launches[in_region(launches) & (launches[C.RUN] == 0)]
    last = rows[rows[C.LAUNCH] == rows[C.LAUNCH].max()].copy()
    last[C.LAUNCH] += 1
    last[C.KERNEL] = "extra_kernel"
    last.loc[last[C.METRIC] == "gpu__time_duration.sum", C.VALUE] = 100_000.0
    return pd.concat([launches, last], ignore_index=True)

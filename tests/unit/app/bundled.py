"""The H200 bundles shipped in app/bundled, loaded once per test session (real recorded data)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from app.core.bundle_loader import Bundle, load_bundle
from profiling_worker.schema import columns as C

BUNDLED = Path(__file__).resolve().parents[3] / "app" / "bundled"
LINEAR_BACKWARD = "h200-ncu-linear-backward"


@lru_cache(maxsize=None)
def bundled(name: str) -> Bundle:
    """A bundled job by directory name; skips the test when it is not shipped."""
    path = BUNDLED / name
    if not (path / "manifest.json").is_file():
        pytest.skip(f"bundle {name} is not in app/bundled")
    return load_bundle(path)


def launches_variant(dest: Path, name: str, edit: Callable[[pd.DataFrame], pd.DataFrame],
                     job: str = LINEAR_BACKWARD) -> Path:
    """Copy bundled ``job`` to ``dest/name`` (manifest job_id = ``name``) with its launches
    table replaced by ``edit(launches)``; returns the copy's directory."""
    if not (BUNDLED / job / "manifest.json").is_file():
        pytest.skip(f"bundle {job} is not in app/bundled")
    root = dest / name
    shutil.copytree(BUNDLED / job, root)
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

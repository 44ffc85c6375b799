"""What runs "auto" did, per config, from the manifest's ``backend.auto_runs`` (the worker's
stopping rule, profiling_worker/bundle/stats/adaptive.py): the table and the note the Size sweep and
Stability pages show beside a job whose runs the rule chose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted, counted_span, fmt
from profiling_worker.bundle.schema import columns as C

from app.core import frame_columns as F
from app.core.views.deep_dive import config_labeler

RUNS, WIDTH, MET, STOPPED, SECONDS = ("Runs", "RelCI95HalfWidthPct", "TargetMet", "Stopped",
                                      "Seconds")
#: Columns of :func:`auto_runs_frame`.
COLUMNS = (C.CONFIG, F.CONFIG_LABEL, RUNS, WIDTH, MET, STOPPED, SECONDS)


def auto_runs_of(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The manifest's ``backend.auto_runs`` entry, None for a job of fixed runs."""
    entry = (manifest.get("backend") or {}).get("auto_runs")
    return entry if isinstance(entry, Mapping) and entry.get("configs") else None


def auto_runs_frame(manifest: Mapping[str, Any]) -> pd.DataFrame | None:
    """One row per config: Config, ConfigLabel (``n=1024``), Runs (taken), RelCI95HalfWidthPct
    (widest annotation's relative CI95 half-width at the stop, % of the mean; NaN below 2 runs),
    TargetMet (bool), Stopped (why: target met, max_runs reached, budget spent), Seconds
    (wall-clock spent measuring it). None for a job of fixed runs."""
    entry = auto_runs_of(manifest)
    if entry is None:
        return None
    label = config_labeler([dict(c) for c in (manifest.get("spec") or {}).get("configs") or ()])
    rows = [{C.CONFIG: int(r[C.CONFIG]), F.CONFIG_LABEL: label(int(r[C.CONFIG])),
             RUNS: int(r["runs"]), WIDTH: r.get("rel_ci95_pct"), MET: bool(r["target_met"]),
             STOPPED: str(r["stopped"]), SECONDS: r.get("seconds")} for r in entry["configs"]]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame[WIDTH] = frame[WIDTH].astype("float64")
    return frame


def _number(value: Any) -> float | None:
    """A recorded number as a float; None where the record has none (fmt writes "—")."""
    return float(value) if isinstance(value, (int, float)) else None


def _runs(low: Any, high: Any) -> str:
    """The target's ``min_runs``-``max_runs`` as :func:`counted_span` says it; as recorded
    where either is not a whole number."""
    if isinstance(low, int) and isinstance(high, int):
        return counted_span(low, high, "run")
    return f"{low}-{high} runs"


def auto_runs_note(manifest: Mapping[str, Any]) -> str | None:
    """One sentence for the pages: the target, how many configs met it, the runs they took and
    the time spent; None for a job of fixed runs."""
    entry, frame = auto_runs_of(manifest), auto_runs_frame(manifest)
    if entry is None or frame is None:
        return None
    target = entry.get("target") or {}
    met = int(frame[MET].sum())
    text = (f"Runs chosen by the stopping rule (runs \"auto\"): target relative CI95 half-width "
            f"≤ {target.get('rel_ci95_pct')} % of the mean ({entry.get('method', 'Student-t')}), "
            f"{_runs(target.get('min_runs'), target.get('max_runs'))} per config, budget "
            f"{target.get('budget_s')} s. "
            f"{met} of {counted(len(frame), 'config')} met the target, with "
            f"{counted_span(int(frame[RUNS].min()), int(frame[RUNS].max()), 'run')}; "
            f"{fmt(_number(entry.get('seconds')))} s measuring.")
    missed = frame[~frame[MET]]
    if len(missed):
        text += (" Not met: " + "; ".join(
            f"{lab} ({why}, {f'± {w:.2f} %' if pd.notna(w) else 'no CI95'})"
            for lab, why, w in zip(missed[F.CONFIG_LABEL], missed[STOPPED], missed[WIDTH]))
                 + ": their CI95 is wider than asked.")
    return text

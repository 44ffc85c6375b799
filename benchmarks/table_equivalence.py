"""Do two checkouts make the same run-path tables and checks? (issue 40, eleventh pass)

The worker's own tables and checks (``launches_to_runs``, ``aggregate_runs``, the run audit's
``audit_runs`` with its population check, plausibility's ``check_bundle``) are computed on
every bundle of ``app/bundled`` and ``tests/fixtures/bundles``, each as read and perturbed
(:data:`PERTURBATIONS`: negative, zero, missing and huge values, missing names, rows out of
order, aggregated values without their runs, no MinValue, CI95 lower bounds below 0,
KernelsVary set, negative analytic work, unattributed launches of no config), by the code on
``PYTHONPATH``; ``--dump`` pickles them, ``--against`` compares them with a dump: frames by
``assert_frame_equal`` with exact values and dtypes, notes as equal lists. A change of the
tables' code must leave every output the same.

Usage: ``PYTHONPATH=BEFORE python benchmarks/table_equivalence.py --dump /tmp/before.pkl``,
then ``PYTHONPATH=AFTER python benchmarks/table_equivalence.py --against /tmp/before.pkl``
(exit 1 when something differs).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")  # the perturbed values overflow on purpose

REPO = Path(__file__).resolve().parent.parent
FOLDERS = (REPO / "app" / "bundled", REPO / "tests" / "fixtures" / "bundles")
Tables = dict[str, pd.DataFrame]


def _every(frame: pd.DataFrame, k: int) -> np.ndarray:
    """Every ``k``-th row of ``frame`` as a bool mask."""
    return np.arange(len(frame)) % k == 0


def _set(tables: Tables, name: str, col: str, mask: Callable[[pd.DataFrame], Any],
         value: Any) -> Tables:
    """``tables`` with ``name``'s ``col`` set to ``value`` where ``mask`` says (copies)."""
    frame = tables.get(name)
    if frame is None or col not in frame.columns or frame.empty:
        return tables
    frame = frame.copy()
    if value is None and frame[col].dtype.kind in "iub":
        frame[col] = frame[col].astype(object)  # a missing value needs an object column
    frame.loc[mask(frame), col] = value
    return {**tables, name: frame}


def _scaled(tables: Tables, name: str, col: str, k: int, factor: float) -> Tables:
    """``col`` of every ``k``-th row of ``name`` times ``factor``."""
    frame = tables.get(name)
    if frame is None or col not in frame.columns or frame.empty:
        return tables
    frame = frame.copy()
    mask = _every(frame, k)
    frame.loc[mask, col] = frame.loc[mask, col].astype("float64") * factor
    return {**tables, name: frame}


def _reversed(tables: Tables) -> Tables:
    """Launches and runs in reverse row order (groups not in first-seen order)."""
    return {**tables, **{n: tables[n].iloc[::-1].reset_index(drop=True)
                         for n in ("launches", "runs") if n in tables}}


def _dropped(tables: Tables, name: str, col: str) -> Tables:
    """``tables`` with ``name`` lacking ``col``."""
    frame = tables.get(name)
    if frame is None or col not in frame.columns:
        return tables
    return {**tables, name: frame.drop(columns=[col])}


def _no_runs_for_half(tables: Tables) -> Tables:
    """Runs of the first half of the aggregated rows' configs removed, their values negative."""
    agg, runs = tables.get("aggregated"), tables.get("runs")
    if agg is None or runs is None or agg.empty or runs.empty:
        return tables
    configs = sorted(set(agg["Config"].tolist()))[: max(1, len(set(agg["Config"])) // 2)]
    agg = agg.copy()
    agg.loc[agg["Config"].isin(configs), ["AvgValue", "MinValue"]] = -1.0
    return {**tables, "aggregated": agg, "runs": runs[~runs["Config"].isin(configs)]
            .reset_index(drop=True)}


PERTURBATIONS: dict[str, Callable[[Tables], Tables]] = {
    "as read": lambda t: t,
    "negative values": lambda t: _scaled(_scaled(t, "launches", "Value", 3, -1.0),
                                         "runs", "Value", 3, -1.0),
    "zero values": lambda t: _scaled(_scaled(t, "launches", "Value", 4, 0.0),
                                     "runs", "Value", 4, 0.0),
    "missing values": lambda t: _set(_set(t, "launches", "Value", lambda f: _every(f, 5), np.nan),
                                     "runs", "Value", lambda f: _every(f, 5), np.nan),
    "huge values": lambda t: _scaled(_scaled(t, "launches", "Value", 7, 1e300),
                                     "runs", "Value", 7, 1e300),
    "missing metric names": lambda t: _set(_set(t, "launches", "Metric",
                                                lambda f: _every(f, 9), None),
                                           "runs", "Metric", lambda f: _every(f, 9), None),
    "missing annotation names": lambda t: _set(_set(t, "launches", "Annotation",
                                                    lambda f: _every(f, 11), None),
                                               "runs", "Annotation", lambda f: _every(f, 11),
                                               None),
    "missing units": lambda t: _set(_set(t, "launches", "Unit", lambda f: _every(f, 2), None),
                                    "runs", "Unit", lambda f: _every(f, 2), None),
    "missing launches": lambda t: _set(t, "launches", "Launch", lambda f: _every(f, 6), None),
    "rows out of order": _reversed,
    "aggregated without runs": _no_runs_for_half,
    "no MinValue": lambda t: _dropped(t, "aggregated", "MinValue"),
    "CI95 lower below 0": lambda t: _scaled(t, "aggregated", "CI95_Lower", 2, -1.0),
    "KernelsVary set": lambda t: _set(t, "aggregated", "KernelsVary", lambda f: _every(f, 2),
                                      True),
    "no Kernels": lambda t: _dropped(t, "runs", "Kernels"),
    "negative work": lambda t: _scaled(_scaled(t, "work", "Flops", 2, -1.0), "work", "Bytes", 3,
                                       -1.0),
    "launches of no config": lambda t: _set(t, "unattributed", "Config",
                                            lambda f: _every(f, 2), -1),
}


def _bundles() -> list[Path]:
    """Every bundle folder (one with a manifest) of :data:`FOLDERS`."""
    return sorted(p for folder in FOLDERS for p in folder.iterdir()
                  if (p / "manifest.json").is_file())


def _outputs(tables: Tables, manifest: dict[str, Any]) -> dict[str, Any]:
    """The run path's tables and checks of ``tables`` (an exception's type and text where one
    is raised: that must stay the same too)."""
    from profiling_worker.bundle.schema import plausibility, run_audit
    from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs

    calls: dict[str, Callable[[], Any]] = {
        "launches_to_runs": lambda: launches_to_runs(tables["launches"]),
        "aggregate_runs": lambda: aggregate_runs(tables["runs"]),
        "audit_runs": lambda: run_audit.audit_runs(tables, manifest),
        "check_bundle": lambda: plausibility.check_bundle(tables, manifest)}
    out: dict[str, Any] = {}
    for name, call in calls.items():
        try:
            out[name] = call()
        except Exception as exc:  # noqa: BLE001 - compared, not handled
            out[name] = f"raised {type(exc).__name__}: {exc}"
    return out


def compute() -> dict[str, dict[str, Any]]:
    """(bundle, perturbation) -> :func:`_outputs`."""
    from profiling_worker.bundle.writer import bundle_tables

    got = {}
    for bundle in _bundles():
        tables = bundle_tables(bundle)
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        for label, perturb in PERTURBATIONS.items():
            if "launches" in tables and "runs" in tables:
                got[f"{bundle.parent.name}/{bundle.name}: {label}"] = _outputs(
                    perturb(tables), manifest)
    return got


def _same(a: Any, b: Any) -> str | None:
    """None when ``a`` and ``b`` are the same output, else how they differ."""
    if isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame):
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True, check_dtype=True)
        except AssertionError as exc:
            return str(exc).splitlines()[0]
        return None
    return None if a == b else f"{str(a)[:200]} != {str(b)[:200]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--against", type=Path)
    args = ap.parse_args()
    got = compute()
    if args.dump:
        args.dump.write_bytes(pickle.dumps(got))
    if not args.against:
        return 0
    want = pickle.loads(args.against.read_bytes())
    bad = [f"{key} {name}: {why}" for key in sorted(set(want) | set(got))
           for name in ("launches_to_runs", "aggregate_runs", "audit_runs", "check_bundle")
           if (why := _same(want.get(key, {}).get(name), got.get(key, {}).get(name)))]
    notes = sum(len(v["check_bundle"]) for v in got.values()
                if isinstance(v["check_bundle"], list))
    print(f"{len(got)} inputs ({len(_bundles())} bundles x {len(PERTURBATIONS)} ways), "
          f"{notes} notes; {len(bad)} differ")
    for line in bad[:40]:
        print(" ", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The one way tests reach recorded H200 bundles: scenario fixtures under
``tests/fixtures/bundles/<scenario>/`` (frozen copies, README there), never the demo data in
``app/bundled`` (re-recording a demo must not change a test's result; only the demo's own tests,
listed in ``DEMO_TESTS``, read it).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from profiling_worker.bundle.loader import Bundle, load_bundle
from profiling_worker.bundle.schema import columns as C

REPO = Path(__file__).resolve().parents[1]
#: The scenario folders; also what a test sets ``KPROF_BUNDLED_DIR`` to for the app to list them.
SCENARIOS = REPO / "tests" / "fixtures" / "bundles"
#: Test files whose purpose is the demo bundles themselves: the only ones that read app/bundled.
DEMO_TESTS = ("tests/apptest/test_page_bundled.py", "tests/e2e/test_bundled_run14.py",
              # rebuilds the shipped bundles' own tables (with their CSV twins, which the
              # scenario copies leave out) and checks they come out the same
              "tests/unit/profiling_worker/test_post_processing.py",
              # every shipped table's CSV, made from its Parquet file, is its recorded CSV
              "tests/unit/profiling_worker/test_table_csv.py")


def scenario_names() -> list[str]:
    """Every scenario folder holding a ``manifest.json``, sorted by name."""
    return sorted(p.name for p in SCENARIOS.iterdir() if (p / "manifest.json").is_file())


def scenario_dir(name: str) -> Path:
    """``tests/fixtures/bundles/<name>``.

    Raises:
        FileNotFoundError: naming the missing scenario and the ones that exist.
    """
    path = SCENARIOS / name
    if not (path / "manifest.json").is_file():
        raise FileNotFoundError(f"no scenario {name!r} under tests/fixtures/bundles "
                                f"(have: {', '.join(scenario_names())}); see the README there")
    return path


@lru_cache(maxsize=None)
def scenario(name: str) -> Bundle:
    """The scenario ``name`` loaded once per test session (:func:`load_bundle`)."""
    return load_bundle(scenario_dir(name))


def scenario_report(name: str) -> Path:
    """The Nsight Compute report a scenario kept, ``nsight/ncu-output-profiled-0.ncu-rep.gz``
    (one shared copy: tests that read a report open it here, see the README for which)."""
    return scenario_dir(name) / "nsight" / "ncu-output-profiled-0.ncu-rep.gz"


def largest_demo_report() -> Path:
    """The largest ``.ncu-rep.gz`` the demo bundles ship (18.4 MB inflated at issue 27), for a
    test that needs a large real report and asserts nothing of its contents (its size only): the
    scenarios keep only small reports. Re-recording a demo changes which file this is, not what
    such a test checks."""
    demo = REPO / "app" / "bundled"
    return max(demo.glob("*/nsight/*.ncu-rep.gz"), key=lambda p: p.stat().st_size)


#: The per-run clock metric of the Nsight Compute scenarios (Hz).
NCU_CLOCK = "gpc__cycles_elapsed.avg.per_second"


def with_clock_drop(name: str, pairs: Iterable[tuple[str, int]], runs: Iterable[int] = (0, 1, 2),
                    factor: float = 0.9) -> Bundle:
    """The Nsight Compute scenario ``name`` loaded afresh with a planted clock drop: the
    :data:`NCU_CLOCK` of ``runs`` of each (annotation, config index) of ``pairs`` times
    ``factor``, in memory (the files unchanged), so the run audit's clock check fails those
    runs against their config's median (a failed audit for tests of how pages show one)."""
    bundle = load_bundle(scenario_dir(name))
    table = bundle.tables[C.TABLE_RUNS].copy()
    at = (table[C.METRIC] == NCU_CLOCK) & table[C.RUN].isin(list(runs)) & (
        table[[C.ANNOTATION, C.CONFIG]].apply(tuple, axis=1).isin(list(pairs)))
    table.loc[at, C.VALUE] = table.loc[at, C.VALUE] * factor
    return dataclasses.replace(bundle, tables={**bundle.tables, C.TABLE_RUNS: table})


def clock_drop_dir(name: str, dest: Path, pairs: Iterable[tuple[str, int]]) -> Path:
    """A copy of the scenario ``name`` in ``dest/<name>`` whose runs table holds the planted
    clock drop of :func:`with_clock_drop` (written by the project's writer), for an app test
    that reads bundles from a folder (``KPROF_BUNDLED_DIR``); returns the copy."""
    from profiling_worker.bundle.writer import write_table

    copy = Path(shutil.copytree(scenario_dir(name), dest / name))
    write_table(copy, C.TABLE_RUNS, with_clock_drop(name, pairs).tables[C.TABLE_RUNS])
    return copy

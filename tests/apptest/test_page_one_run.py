"""One run per config (n - 1 = 0): StdDev, CI95 and relative std dev are missing, never 0 or a
zero-width interval, on every page that shows them, with the note ``intervals.ONE_RUN_NOTE``;
no page prints "nan" and none raises. Inputs: a runs=1 cpu job written by the real worker, and
nsight-python's one-run output (per-run file alone, processed file alone)."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from apptest_helpers import plotly_specs, texts, trace_values

from app.core import frame_columns as F
from profiling_worker.bundle.schema import columns as C, intervals

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "fixtures" / "cases"
SPREAD = [C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]
PAGES = ("stability", "sweep", "one_kernel")


@pytest.fixture(scope="module")
def imported_case(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``imported_case(name)``: the nsight-python output of ``cases/<name>`` imported by the
    worker once for the module (its tests copy it: one import per case, not one per page)."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            out = tmp_path_factory.mktemp("imported") / name
            proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                                   *map(str, sorted((CASES / name).glob("*.csv"))),
                                   "--out", str(out)],
                                  cwd=REPO, capture_output=True, text=True, timeout=300,
                                  check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            made[name] = out
        return made[name]

    return get


@pytest.fixture(params=["cpu-runs1", "runs1-raw", "runs1-processed-only"])
def one_run_job(request, store, cpu_one_run_src: Path, imported_case) -> str:
    """A job of one run per config in the store: the cpu job, or an nsight-python import."""
    job = request.param
    src = cpu_one_run_src if job == "cpu-runs1" else imported_case(job)
    shutil.copytree(src, store["results"] / job)
    return job


def _no_nan_text(at) -> None:
    shown = texts(at) + " ".join(str(m.value) + str(m.help or "") for m in at.metric)
    assert "nan" not in shown.lower().replace("nanosec", ""), shown


@pytest.mark.parametrize("page", PAGES)
def test_one_run_shows_no_spread_and_says_so(page, one_run_job, app) -> None:
    at = app(page, query={"job": one_run_job})
    assert not at.exception, at.exception
    assert intervals.ONE_RUN_NOTE in texts(at)
    _no_nan_text(at)
    # each page's statistics: its first table with NumRuns (One kernel's launches come first)
    table = next(d.value for d in at.dataframe if C.NUM_RUNS in d.value)
    rows = table[table[C.NUM_RUNS] == 1]
    assert len(rows), table
    assert rows[[c for c in SPREAD if c in rows]].isna().all().all(), rows
    assert not rows[C.STABLE].astype(bool).any()
    if page == "one_kernel":  # one run is not assessed, not "no" (issue 37)
        assert [m.value for m in at.metric if m.label == "Stable"] == ["not assessed"]
    for spec in plotly_specs(at):
        for trace in spec["data"]:
            if "error_y" in trace:  # no error bar (NaN, drawn as none), not a zero-width one
                assert all(v is None or math.isnan(v)
                           for v in trace_values(trace["error_y"], "array")), trace
            assert trace.get("fill") != "toself", trace  # no zero-width CI band


def test_stability_notes_one_run_rows(one_run_job, app) -> None:
    at = app("stability", query={"job": one_run_job})
    notes = at.dataframe[0].value[F.NOTE]
    assert all(n.startswith(intervals.ONE_RUN_NOTE) for n in notes), notes.tolist()
    assert "0 of " in texts(at)  # none stable
    assert pd.notna(at.dataframe[0].value[C.AVG]).all()


def test_one_kernel_tiles_show_a_dash_and_say_why(one_run_job, app) -> None:
    """The processed-file-only import crashed here (``summary.rsd_pct`` None in a format)."""
    at = app("one_kernel", query={"job": one_run_job})
    assert not at.exception, at.exception
    tiles = {m.label: m for m in at.metric}
    duration = next(m for label, m in tiles.items() if label.startswith("Duration"))
    assert (tiles["RSD (%)"].value, tiles["Runs"].value, tiles["Stable"].value) == (
        "—", "1", "not assessed")  # issue 37: "no" read as measured and unstable
    assert intervals.ONE_RUN_NOTE in tiles["RSD (%)"].help
    assert intervals.ONE_RUN_NOTE in duration.help and "CI95 [" not in duration.help


@pytest.mark.parametrize("quantity", ["tflops", "time"])
def test_sweep_normalised_one_run_has_no_interval(quantity, store, cpu_one_run_src, app) -> None:
    """'Normalise to' and TFLOP/s aggregate in the app (derived): one run gives no CI95 there
    either."""
    shutil.copytree(cpu_one_run_src, store["results"] / "cpu-runs1")
    at = app("sweep", query={"job": "cpu-runs1"})
    at.segmented_control(key="sweep-quantity").set_value(quantity).run()
    baseline = at.selectbox(key="sweep-baseline").options[1]
    at.selectbox(key="sweep-baseline").set_value(baseline).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert table[C.UNIT].str.startswith("×").all(), table  # normalised
    assert table[C.NUM_RUNS].eq(1).all() and table[SPREAD].isna().all().all(), table
    assert intervals.ONE_RUN_NOTE in texts(at)
    _no_nan_text(at)


def test_the_shareable_report_says_so_too(one_run_job: str, store) -> None:  # type: ignore[no-untyped-def]
    from profiling_worker.bundle.loader import load_bundle
    from app.core.share.build import job_report

    html = job_report(load_bundle(store["results"] / one_run_job))
    assert html.count(intervals.ONE_RUN_NOTE) >= 2  # the sweep and the stability sections
    assert ">nan<" not in html.lower() and 'data-value="nan">—<' in html  # shown as missing

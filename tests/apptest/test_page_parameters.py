"""Issue 11, case 6: kernels with several or non-numeric parameters on every page."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from apptest_helpers import plotly_specs
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "tests" / "fixtures" / "cases" / "06-tuple-dtype-configs"
PAGES = ["sweep", "stability", "bound_roofline", "memory", "clocks_thermal", "kernels",
         "compare", "one_kernel", "results", "backends", "cache_clock", "files"]


JOB = "tuple-dtype"


@pytest.fixture(scope="module")
def imported_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shape/dtype nsight-python output imported by the worker once for the module (its
    tests copy it: one worker import, not one per page)."""
    out = tmp_path_factory.mktemp("imported") / JOB
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                           *map(str, sorted(CASE.glob("*.csv"))), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture
def imported(store, imported_src: Path) -> str:
    """The import in the store's results dir; its job id."""
    shutil.copytree(imported_src, store["results"] / JOB)
    return JOB


@pytest.mark.parametrize("page", PAGES)
def test_no_page_raises_on_shape_and_dtype_configs(page, imported, app) -> None:
    at = app(page, query={"job": imported})
    assert not at.exception, at.exception


def test_sweep_offers_the_varying_parameters_as_x(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("sweep", query={"job": "h200-cupti-triton-vector-add"})
    assert not at.exception, at.exception
    assert at.selectbox(key="sweep-x").options == ["block_size", "n"]
    layout = plotly_specs(at)[0]["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("block_size")
    at.selectbox(key="sweep-x").set_value("n").run()
    assert not at.exception, at.exception
    names = {t["name"] for t in plotly_specs(at)[0]["data"]}
    assert "torch · block_size=128" in names and len(names) == 8


def test_categorical_x_on_the_imported_job(imported, app) -> None:
    at = app("sweep", query={"job": imported})
    assert not at.exception, at.exception
    assert plotly_specs(at)[0]["layout"]["xaxis"]["type"] == "category"

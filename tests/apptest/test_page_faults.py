"""Fault 11: corrupt or half-written bundles on disk. Every page must keep running (no
exception) whichever of them is selected, and the history lists the broken ones as problems."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apptest_helpers import DEFAULT_PAGE, texts
JOB_ID = "20261129-230000-matmul-0001"  # the seeded bundle (tests/apptest/conftest.py)

PAGES = ["results", "sweep", "stability", "bound_roofline", "memory", "kernels", "compare",
         "backends", "files", "history", "environment", "clocks_thermal", "one_kernel"]
BROKEN = {
    "20270101-000000-matmul-trnc": "truncated manifest",
    "20270101-000000-matmul-pqbd": "bad parquet",
    "20270101-000000-matmul-notb": "no tables",
    "20270101-000000-matmul-runn": "half-written (running, tables partial)",
    "20270101-000000-matmul-jsbd": "manifest of the wrong shape",
}


WRONG_SHAPE = "20270101-000000-matmul-jsbd"


def _make_broken(results: Path, wrong_shape: bool = False, bad_parquet: bool = False) -> None:
    """Copies of the good bundle, broken as BROKEN says. The bad-parquet and wrong-shape ones
    only on request (they once broke every page, even with another job selected)."""
    good = results / JOB_ID
    manifest = (good / "manifest.json").read_text()
    for job_id in BROKEN:
        shutil.copytree(good, results / job_id)
    (results / "20270101-000000-matmul-trnc" / "manifest.json").write_text(manifest[:40])
    for table in (results / "20270101-000000-matmul-pqbd" / "tables").glob("*.parquet"):
        table.write_bytes(b"PAR1 this is not parquet PAR1")
    for table in (results / "20270101-000000-matmul-pqbd" / "tables").glob("*.csv"):
        table.write_bytes(b"\x00\xff garbage")
    if not bad_parquet:
        shutil.rmtree(results / "20270101-000000-matmul-pqbd")
    shutil.rmtree(results / "20270101-000000-matmul-notb" / "tables")
    running = results / "20270101-000000-matmul-runn"
    data = json.loads(manifest)
    data.update(status="running", job_id=running.name)
    (running / "manifest.json").write_text(json.dumps(data))
    for table in (running / "tables").glob("*.parquet"):
        table.write_bytes(table.read_bytes()[:100])
    odd = results / WRONG_SHAPE
    if not wrong_shape:
        shutil.rmtree(odd)
        return
    (odd / "manifest.json").write_text(json.dumps({"schema_version": 1, "job_id": odd.name,
                                                   "status": "done", "spec": [1, 2],
                                                   "environment": "x", "backend": 3}))


def _pages_survive(app, job_id: str) -> list[str]:
    """The pages that raised with ``job_id`` selected, visited in one session (as a user clicks
    through them: one start of the app, not one per page)."""
    at = app(query={"job": job_id})  # the default page
    crashed = [f"{DEFAULT_PAGE}: {at.exception[0].message}"] if at.exception else []
    for page in PAGES:
        if page == DEFAULT_PAGE or not Path(f"app/app_pages/{page}.py").exists():
            continue
        at.switch_page(f"app_pages/{page}.py").run()
        if at.exception:
            crashed.append(f"{page}: {at.exception[0].message}")
    return crashed


@pytest.mark.parametrize("job_id", [j for j in BROKEN
                                    if j not in ("20270101-000000-matmul-pqbd", WRONG_SHAPE)])
def test_pages_survive_a_broken_bundle(seeded, app, job_id: str, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    _make_broken(seeded["results"])
    assert _pages_survive(app, job_id) == []


def test_pages_survive_a_bundle_with_corrupt_parquet(seeded, app, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    _make_broken(seeded["results"], bad_parquet=True)
    assert _pages_survive(app, "20270101-000000-matmul-pqbd") == []


def test_history_lists_the_truncated_manifest_as_a_problem(seeded, app) -> None:
    _make_broken(seeded["results"])
    at = app("history")
    assert not at.exception
    assert "20270101-000000-matmul-trnc" in texts(at)
    assert "not valid JSON" in texts(at)


def test_app_survives_a_manifest_of_the_wrong_shape(seeded, app, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    _make_broken(seeded["results"], wrong_shape=True)
    at = app("history")
    assert not at.exception, at.exception[0].message

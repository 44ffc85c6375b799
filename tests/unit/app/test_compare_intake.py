"""`kernel-dashboard --compare BASE CANDIDATE` on real bundles: where they are listed, the URL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app import cli
from app.services.compare_intake import CompareIntakeError, compare_url, into_store
from tests.scenarios import SCENARIOS


def test_bundles_outside_the_store_are_copied_in_and_named_in_the_url(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    artifacts, results = tmp_path / "ci", tmp_path / "results"
    shutil.copytree(SCENARIOS / "h200-cupti-matmul-sweep", artifacts / "baseline-sweep")
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(results))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    parser = cli.build_parser()
    ns = parser.parse_args(["--compare", str(artifacts / "baseline-sweep"),
                            str(SCENARIOS / "h200-ncu-matmul-sweep"), "--port", "8600"])
    url = cli.open_compare(ns, parser)
    assert url == ("http://127.0.0.1:8600/compare?baseline=baseline-sweep&"
                   "candidate=h200-ncu-matmul-sweep")
    assert (results / "baseline-sweep" / "tables" / "aggregated.parquet").is_file()
    assert not (results / "h200-ncu-matmul-sweep").exists()  # bundled: used where it is
    with pytest.raises(SystemExit):  # a second copy never overwrites the first
        cli.open_compare(ns, parser)


def test_refusals_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(CompareIntakeError, match="not a result bundle"):
        into_store(tmp_path, tmp_path / "results", SCENARIOS)
    assert compare_url("::", 8501, "a", "b") == "http://localhost:8501/compare?baseline=a&candidate=b"


def test_a_bundle_zip_is_said_with_what_reopens_it(tmp_path: Path) -> None:
    """A fresh user's find: the Files page's zip given to --compare was "not a result bundle (no
    manifest.json)", which it holds; it is said as the result store says a zip among its
    folders, with the command that reopens it."""
    from app.core.bundle_files import zip_bundle
    from tests.scenarios import scenario

    zipped = tmp_path / "shared.zip"
    zipped.write_bytes(zip_bundle(scenario("h200-cupti-matmul-sweep")).read())
    results = tmp_path / "results"
    with pytest.raises(CompareIntakeError) as refused:
        into_store(zipped, results, SCENARIOS)
    assert str(refused.value) == (
        f"--compare {zipped}: a dashboard bundle's zip (the Files page's download), not a job's "
        "folder: --compare opens job folders. Reopen it as its job on the Import page, or: "
        f"python -m profiling_worker import {zipped} --out {results / 'shared'}, then give its "
        "folder")

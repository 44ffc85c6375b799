"""Links out of a bundle are never followed (profiling_worker/bundle/paths.py): one test per
reader of a bundle file, each on a copy of a recorded H200 bundle whose file is replaced by a
link to a file outside it (issue 26: a linked ``tables/aggregated.csv`` was drawn, a linked
``worker.log`` copied into ``manifest.json`` on restart)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
SOURCE = SCENARIOS / "h200-ncu-j1-fp16"
SECRET = "SECRET-outside-the-bundle"


@pytest.fixture
def bundle(tmp_path) -> Path:
    dest = tmp_path / "results" / SOURCE.name
    shutil.copytree(SOURCE, dest)
    return dest


@pytest.fixture
def outside(tmp_path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_text(f"{SECRET}\n")
    return path


def _link(bundle: Path, rel: str, target: Path) -> None:
    path = bundle / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to(target)


def _outside_table(tmp_path: Path, suffix: str) -> Path:
    frame = pd.read_parquet(SOURCE / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet")
    frame[C.AVG] = 1e9  # what the page would draw if the link were followed
    path = tmp_path / f"elsewhere{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_app_tables_linked_out_are_not_drawn(bundle, tmp_path, suffix) -> None:
    from profiling_worker.bundle.loader import load_bundle

    (bundle / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet").unlink()
    _link(bundle, f"{C.TABLES_DIR}/{C.TABLE_AGGREGATED}{suffix}", _outside_table(tmp_path, suffix))
    loaded = load_bundle(bundle)
    table = loaded.table(C.TABLE_AGGREGATED)
    assert table.empty or not (table[C.AVG] == 1e9).any()
    assert any("leads out of the bundle" in p for p in loaded.problems), loaded.problems


def test_the_one_table_read_refuses_a_link_out(bundle, tmp_path) -> None:
    from profiling_worker.bundle.loader import TableUnreadable, read_table_file

    _link(bundle, f"{C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet",
          _outside_table(tmp_path, ".parquet"))
    with pytest.raises(TableUnreadable, match="leads out of the bundle"):
        read_table_file(bundle, C.TABLE_AGGREGATED)


def test_gate_refuses_a_table_linked_out(bundle, tmp_path) -> None:
    from profiling_worker.bundle.gate.sides import GateInputError, GateSide

    _link(bundle, f"{C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet",
          _outside_table(tmp_path, ".parquet"))
    with pytest.raises(GateInputError, match="leads out of the bundle"):
        GateSide.load(bundle)


def test_manifest_linked_out_is_not_read(bundle, tmp_path) -> None:
    from profiling_worker.bundle.schema.manifest import ManifestError, read_manifest

    elsewhere = tmp_path / "manifest-elsewhere.json"
    elsewhere.write_text((bundle / C.MANIFEST_FILE).read_text())
    _link(bundle, C.MANIFEST_FILE, elsewhere)
    with pytest.raises(ManifestError, match="leads out of the bundle"):
        read_manifest(bundle)


def test_recovery_does_not_copy_a_linked_worker_log(bundle, outside) -> None:
    from app.services.job_recovery import interrupted_error

    _link(bundle, C.LOG_FILE, outside)
    assert SECRET not in json.dumps(interrupted_error(bundle))


def test_worker_log_tail_and_ncu_logs_skip_links(bundle, outside) -> None:
    from profiling_worker.backends.channel import log_tail
    from profiling_worker.job.runner import _ncu_logs

    _link(bundle, C.LOG_FILE, outside)
    _link(bundle, f"{C.NSIGHT_DIR}/ncu.log", outside)
    assert SECRET not in log_tail(bundle) and SECRET not in _ncu_logs(bundle)


def test_console_events_skip_a_link(bundle, tmp_path) -> None:
    from app.services.worker_client import CONSOLE_FILE, console_events

    events = tmp_path / "events-elsewhere"
    events.write_text(json.dumps({"event": "error", "kind": "x", "message": SECRET}) + "\n")
    _link(bundle, CONSOLE_FILE, events)
    assert console_events(bundle) == []


def test_reports_and_deep_dive_linked_out_are_not_read(bundle, tmp_path) -> None:
    from profiling_worker.bundle.paths import bundle_reports
    from profiling_worker.extract.deep_dive_file import deep_dive_path

    report = next((bundle / C.NSIGHT_DIR).glob("*.ncu-rep.gz"))
    moved = tmp_path / report.name
    shutil.move(report, moved)
    _link(bundle, f"{C.NSIGHT_DIR}/{report.name}", moved)
    _link(bundle, C.DEEP_DIVE_FILE, moved)
    assert bundle_reports(bundle) == [] and deep_dive_path(bundle) is None


def test_downloads_zip_and_summary_skip_links(bundle, outside) -> None:
    from app.core.bundle_files import read_report_summary, zip_bundle
    from profiling_worker.bundle.loader import load_bundle
    from app.ui.panels import read_lazily

    _link(bundle, C.REPORT_SUMMARY_FILE, outside)
    _link(bundle, "notes.txt", outside)
    loaded = load_bundle(bundle)
    assert read_report_summary(loaded) is None
    with zip_bundle(loaded) as archive:
        assert SECRET.encode() not in archive.read()
    with pytest.raises(FileNotFoundError, match="not a file inside the bundle"):
        read_lazily(bundle, "notes.txt")()


def test_an_unreadable_table_is_named_within_the_bundle_not_by_its_server_path(
        bundle, tmp_path, caplog) -> None:
    """pyarrow's text names the file by its absolute path ("Could not open Parquet input source
    '/srv/...'"), which pages showed: the message names the table within the bundle, the log
    keeps the path; a link's target is named in the log only."""
    import logging

    from profiling_worker.bundle.loader import TableUnreadable, read_table_file

    table = bundle / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet"
    table.unlink()
    table.write_bytes(b"not parquet")
    with caplog.at_level(logging.WARNING), pytest.raises(TableUnreadable) as raised:
        read_table_file(bundle, C.TABLE_AGGREGATED)
    said = str(raised.value)
    assert said.startswith(f"{C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet cannot be read"), said
    assert str(bundle.resolve()) not in said and str(tmp_path) not in said, said
    assert str(table.resolve()) in caplog.text
    target = _outside_table(tmp_path, ".parquet")
    table.unlink()
    _link(bundle, f"{C.TABLES_DIR}/{C.TABLE_AGGREGATED}.parquet", target)
    with pytest.raises(TableUnreadable) as raised:
        read_table_file(bundle, C.TABLE_AGGREGATED)
    assert str(tmp_path) not in str(raised.value) and str(target) in caplog.text

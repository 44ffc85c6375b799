"""result_store: id validation, listing both roots, flagging non-bundles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.services import result_store as rs


@pytest.mark.parametrize("bad", ["../x", "..", ".", "a/b", "", "x" * 81, "a b", "job;rm", "/etc"])
def test_check_job_id_rejects_unsafe(bad: str) -> None:
    with pytest.raises(rs.InvalidJobId):
        rs.check_job_id(bad)


def test_job_path_stays_inside(tmp_path: Path) -> None:
    assert rs.job_path(tmp_path, "20261129-231500-matmul-ab12") == tmp_path / "20261129-231500-matmul-ab12"
    with pytest.raises(rs.InvalidJobId):
        rs.job_path(tmp_path, "../outside")


def test_job_path_rejects_symlink_escape(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(rs.InvalidJobId, match="outside"):
        rs.job_path(root, "link")


def test_list_bundles_reads_real_bundle_and_flags_broken_dirs(cpu_bundle: Path) -> None:
    root = cpu_bundle.parent
    (root / "no-manifest").mkdir()
    (root / "corrupt").mkdir()
    (root / "corrupt" / "manifest.json").write_text("{not json", encoding="utf-8")
    bundles, problems = rs.list_bundles(root, None)
    assert [b.job_id for b in bundles] == [cpu_bundle.name]
    info = bundles[0]
    assert (info.status, info.kernels, info.backend, info.source) == ("done", ("matmul",), "cpu", "local")
    reasons = {p.path.name: p.reason for p in problems}
    assert "no manifest.json" in reasons["no-manifest"]
    assert "not valid JSON" in reasons["corrupt"]


def test_list_bundles_merges_roots_newest_first(cpu_bundle: Path, tmp_path: Path) -> None:
    bundled = tmp_path / "bundled"
    older = bundled / "h200-old"
    shutil.copytree(cpu_bundle, older)
    manifest = json.loads((older / "manifest.json").read_text())
    for stamp in ("created_at", "started_at"):  # created_at first: the sort key
        manifest[stamp] = "2020-01-01T00:00:00+00:00"
    (older / "manifest.json").write_text(json.dumps(manifest))
    shutil.copytree(cpu_bundle, bundled / cpu_bundle.name)  # same id: the local one wins
    bundles, problems = rs.list_bundles(cpu_bundle.parent, bundled)
    assert not problems
    assert [(b.job_id, b.source) for b in bundles] == [(cpu_bundle.name, "local"), ("h200-old", "bundled")]


def test_find_bundle(cpu_bundle: Path, tmp_path: Path) -> None:
    root = cpu_bundle.parent
    assert rs.find_bundle(cpu_bundle.name, root, tmp_path / "none") == cpu_bundle
    assert rs.find_bundle("missing-job", root, None) is None
    with pytest.raises(rs.InvalidJobId):
        rs.find_bundle("../" + cpu_bundle.name, root, None)

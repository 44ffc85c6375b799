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


def test_list_bundles_reads_a_manifest_again_only_when_it_changed(cpu_bundle: Path,
                                                                   tmp_path: Path) -> None:
    """Issue 40: the listing keeps each bundle while its manifest is unchanged (the same
    object), reads it again once rewritten, and a manifest swapped for a link to a file
    outside the bundle is read again and refused."""
    root = cpu_bundle.parent
    first = rs.list_bundles(root, None)[0][0]
    assert rs.list_bundles(root, None)[0][0] is first  # unchanged: not read again
    manifest_file = cpu_bundle / "manifest.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    manifest["status"] = "failed"
    replaced = cpu_bundle / "manifest.json.new"
    replaced.write_text(json.dumps(manifest), encoding="utf-8")
    replaced.replace(manifest_file)  # as the worker writes it: a new file
    again = rs.list_bundles(root, None)[0][0]
    assert again is not first and again.status == "failed"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(manifest), encoding="utf-8")
    manifest_file.unlink()
    manifest_file.symlink_to(outside)
    bundles, problems = rs.list_bundles(root, None)
    assert bundles == [] and [p.path for p in problems] == [cpu_bundle]

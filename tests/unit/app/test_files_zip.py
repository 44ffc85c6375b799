"""Bundle downloads: the whole bundle as a zip, a .ncu-rep.gz decompressed, the report summary."""

from __future__ import annotations

import gzip
import json
import zipfile

import pytest
from bundled import bundled

from app.core.bundle_files import (InflateError, gunzip_file, inside_bundle, gunzipped_name, is_gzipped_report,
                                   made_csvs, read_report_summary, summary_tables, zip_bundle,
                                   zip_name)
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C


def test_zip_holds_every_file_under_the_job_dir(cpu_bundle) -> None:
    bundle = load_bundle(cpu_bundle)
    archive = zipfile.ZipFile(zip_bundle(bundle))
    assert archive.testzip() is None
    names = archive.namelist()
    # then the tables' CSVs the bundle does not hold, made as they are added (issue 40)
    assert names == [f"{bundle.job_id}/{rel}"
                     for rel in [*(f.relpath for f in bundle.files), *made_csvs(bundle)]]
    manifest = archive.read(f"{bundle.job_id}/{C.MANIFEST_FILE}")
    assert manifest == (cpu_bundle / C.MANIFEST_FILE).read_bytes()
    assert zip_name(bundle) == f"{bundle.job_id}.zip"


def test_zip_of_a_bundle_reopens_as_a_bundle(cpu_bundle, tmp_path) -> None:
    bundle = load_bundle(cpu_bundle)
    zipfile.ZipFile(zip_bundle(bundle)).extractall(tmp_path / "out")
    again = load_bundle(tmp_path / "out" / bundle.job_id)
    assert again.status == bundle.status
    assert again.table(C.TABLE_RUNS).equals(bundle.table(C.TABLE_RUNS))


def test_compressed_files_are_stored_not_deflated_again() -> None:
    bundle = bundled("h200-ncu-j1-fp16")
    archive = zipfile.ZipFile(zip_bundle(bundle))
    info = {i.filename.split("/", 1)[1]: i for i in archive.infolist()}
    assert info["nsight/ncu-output-profiled-0.ncu-rep.gz"].compress_type == zipfile.ZIP_STORED
    assert info[C.MANIFEST_FILE].compress_type == zipfile.ZIP_DEFLATED


def test_gunzipped_report() -> None:
    bundle = bundled("h200-ncu-j1-fp16")
    rel = "nsight/ncu-output-profiled-0.ncu-rep.gz"
    assert is_gzipped_report(rel) and not is_gzipped_report("nsight/x.log")
    assert gunzipped_name(rel) == "ncu-output-profiled-0.ncu-rep"
    with gunzip_file(bundle.path / rel) as handle:
        raw = handle.read()
    assert raw == gzip.decompress((bundle.path / rel).read_bytes())
    assert len(raw) > (bundle.path / rel).stat().st_size


def test_gunzip_of_a_non_gzip_file_raises(tmp_path) -> None:
    path = tmp_path / "x.ncu-rep.gz"
    path.write_bytes(b"not gzip")
    with pytest.raises(InflateError, match="not a readable gzip"):
        gunzip_file(path)


def test_a_gzip_bomb_stops_at_the_cap_without_filling_memory(tmp_path) -> None:
    """64 MiB of zeros compress to ~64 KiB; with a 16 MiB cap the download is refused after
    at most cap + one 1 MiB chunk was inflated, into a temporary file (not memory)."""
    import resource

    bomb = tmp_path / "bomb.bin.gz"  # not a report: only the size cap applies
    with gzip.open(bomb, "wb") as fh:
        for _ in range(64):
            fh.write(bytes(1024**2))
    assert bomb.stat().st_size < 1024**2
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InflateError, match="expands to more than"):
        gunzip_file(bomb, max_bytes=16 * 1024**2)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 8 * 1024  # the peak grew by less than 8 MiB
    with gunzip_file(bomb, max_bytes=64 * 1024**2) as handle:
        assert handle.seek(0, 2) == 64 * 1024**2  # at the cap exactly: accepted


def test_bundle_files_are_read_only_inside_the_bundle(tmp_path) -> None:
    bundle = tmp_path / "job"
    (bundle / "nsight").mkdir(parents=True)
    (bundle / "worker.log").symlink_to("/etc/passwd")
    (bundle / "nsight" / "ok.log").write_text("ok")
    (bundle / "inner.log").symlink_to(bundle / "nsight" / "ok.log")
    (tmp_path / "outside.txt").write_text("secret")
    assert inside_bundle(bundle, "worker.log") is None
    assert inside_bundle(bundle, "../outside.txt") is None
    assert inside_bundle(bundle, "missing.log") is None
    assert inside_bundle(bundle, "inner.log") == (bundle / "nsight" / "ok.log").resolve()
    assert inside_bundle(bundle, "nsight/ok.log").read_text() == "ok"


def test_report_summary_tables() -> None:
    summary = read_report_summary(bundled("h200-ncu-matmul-sweep"))
    assert summary is not None
    overview = dict(zip(summary.overview["Item"], summary.overview["Value"]))
    assert overview["Launches"] == "160" and overview["Metrics per launch"] == "282"
    assert overview["Kernel names"] == "13" and overview["Rule results"] == "0"
    assert summary.kernels["Launches"].sum() == 160
    assert summary.kernels["Launches"].is_monotonic_decreasing
    assert summary.rules.empty


def test_summary_with_rules_and_without_file(cpu_bundle) -> None:
    tables = summary_tables({"launches": 2, "kernels": {"k": 2}, "rule_results": [
        {"kernel": "k", "name": "SOLBottleneck", "message": "memory bound"}]})
    assert tables.rules.to_dict("records")[0]["name"] == "SOLBottleneck"
    assert read_report_summary(load_bundle(cpu_bundle)) is None
    (cpu_bundle / "nsight").mkdir(exist_ok=True)
    (cpu_bundle / C.REPORT_SUMMARY_FILE).write_text(json.dumps([1]), encoding="utf-8")
    with pytest.raises(ValueError):
        read_report_summary(load_bundle(cpu_bundle))


def test_zip_leaves_out_a_link_out_of_the_bundle(tmp_path) -> None:
    import shutil

    from profiling_worker.bundle.loader import load_bundle

    src = bundled("h200-ncu-j1-fp16").path
    shutil.copytree(src, tmp_path / src.name)
    bundle = load_bundle(tmp_path / src.name)
    (tmp_path / "secret.txt").write_text("TOP-SECRET")
    (bundle.path / "worker.log").unlink(missing_ok=True)
    (bundle.path / "worker.log").symlink_to(tmp_path / "secret.txt")
    assert "worker.log" in [f.relpath for f in bundle.files]  # listed when it was a file
    names = zipfile.ZipFile(zip_bundle(bundle)).namelist()
    assert f"{bundle.job_id}/worker.log" not in names
    assert len(names) == len(bundle.files) - 1 + len(made_csvs(bundle))


def test_downloads_are_files_streamlit_accepts() -> None:
    """st.download_button(data=callable) accepts bytes, BytesIO, BufferedReader and RawIOBase
    (streamlit.runtime.download_data_util): the zip and the inflated report are readers."""
    import io

    from streamlit.runtime.download_data_util import convert_data_to_bytes_and_infer_mime

    bundle = bundled("h200-ncu-j1-fp16")
    for handle in (zip_bundle(bundle),
                   gunzip_file(bundle.path / "nsight/ncu-output-profiled-0.ncu-rep.gz")):
        assert isinstance(handle, io.BufferedReader)
        data, _mime = convert_data_to_bytes_and_infer_mime(handle, ValueError("unsupported"))
        assert len(data) > 1000


def test_gunzip_of_a_gzip_cut_short_says_copy_it_again(tmp_path) -> None:
    """A real report's .gz cut to its first 20 000 bytes (an interrupted copy) is gzip: the
    message says it was cut short and the fix is to copy it again, not to compress it."""
    from tests.scenarios import scenario_report

    path = tmp_path / "cut.ncu-rep.gz"
    path.write_bytes(scenario_report("h200-ncu-j1-fp16").read_bytes()[:20_000])
    with pytest.raises(InflateError, match="a gzip file cut short") as caught:
        gunzip_file(path)
    assert "copy the file again" in caught.value.hint

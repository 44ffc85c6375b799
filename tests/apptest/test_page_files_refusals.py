"""Files page: a download that would be refused says why on the page, at once (issue 26: a
refused .ncu-rep download showed nothing for 240 s, a 404 in the console), and downloads
larger than the server should hold name the folder to copy instead."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from apptest_helpers import texts
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
SOURCE = SCENARIOS / "h200-ncu-j1-fp16"
REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"


def _bundle(store, name: str) -> Path:
    dest = store["bundled"] / name
    shutil.copytree(SOURCE, dest)
    return dest


def test_a_padded_or_non_gzip_report_says_why_instead_of_a_button(store, app, tmp_path) -> None:
    padded = _bundle(store, "padded")
    zeros = tmp_path / "z.gz"
    with gzip.open(zeros, "wb", 9) as fh:
        fh.write(bytes(8 << 20))
    (padded / REPORT).write_bytes((padded / REPORT).read_bytes() + zeros.read_bytes())
    at = app("files", query={"job": "padded"})
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download .ncu-rep" not in labels
    text = texts(at)
    assert "No .ncu-rep download: ncu-output-profiled-0.ncu-rep.gz: not an Nsight Compute " \
           "report layout at byte 682,363" in text
    plain = _bundle(store, "notgzip")
    (plain / REPORT).write_bytes(gzip.decompress((plain / REPORT).read_bytes()))
    at = app("files", query={"job": "notgzip"})
    assert "not a readable gzip file" in texts(at)


def test_downloads_over_the_cap_name_the_folder(store, app, monkeypatch) -> None:
    from app.core import bundle_files

    from app.core.markdown import code
    from app.ui import downloads
    from profiling_worker.bundle.loader import load_bundle

    monkeypatch.setattr(bundle_files, "MAX_DOWNLOAD_BYTES", 50_000)  # the bundle: ~0.1 MB
    big = _bundle(store, "big")
    at = app("files", query={"job": "big"})
    assert not at.exception
    text = texts(at)
    # the words for the bundle's size over the cap, with the folder to copy (too_large's)
    total = sum(item.size for item in load_bundle(big).files)
    assert total > 50_000 and downloads.cap() == 50_000
    said = bundle_files.too_large("The bundle", total, code(big), downloads.cap())
    assert said is not None and said in text, text[-3000:]
    labels = [b.proto.label for b in at.get("download_button")]
    assert not any(label.startswith("Download the whole bundle") for label in labels)
    assert "Download .ncu-rep" in labels  # its 682 kB are under the inflation cap


def test_with_the_download_route_a_file_over_64_mib_is_a_link_of_this_session(
        store, app, monkeypatch) -> None:
    """Under ``kernel-dashboard`` (the route built with the server) every download of the page
    is a link to the streamed route, files over 64 MiB included; each token is this session's
    grant of that file (tests/e2e/test_streamed_download.py downloads through them)."""
    from app.streamlit_patches import download_route
    from app.core.download_grants import GRANTS, DownloadKind

    monkeypatch.setitem(download_route._state, "serving", True)
    bundle = _bundle(store, "streamed")
    with open(bundle / "nsight" / "large.bin", "wb") as fh:  # sparse: no disk
        fh.truncate(100_000_000)
    at = app("files", query={"job": "streamed"})
    assert not at.exception
    assert "a download may take" not in texts(at)
    links = {b.proto.label: b.proto.url for b in at.get("link_button")}
    assert not [b.proto.label for b in at.get("download_button")
                if b.proto.label.startswith(("Download the whole", "Download .ncu-rep"))]
    urls = [b.proto.url for b in at.get("link_button") if b.proto.label == "Download"]
    grants = [GRANTS.lookup(u.rsplit("/", 1)[1], lambda sid: True) for u in urls]
    assert all(u.startswith(download_route.PREFIX) for u in urls)
    assert {(g.kind, g.relpath) for g in grants if g} >= {(DownloadKind.FILE, "nsight/large.bin")}
    assert {g.filename for g in grants if g} >= {"nsight_large.bin"}
    report = GRANTS.lookup(links["Download .ncu-rep"].rsplit("/", 1)[1], lambda sid: True)
    assert report is not None and (report.kind, report.relpath) == (DownloadKind.INFLATED, REPORT)
    whole = next(u for label, u in links.items() if label.startswith("Download the whole"))
    assert GRANTS.lookup(whole.rsplit("/", 1)[1], lambda sid: True).kind is DownloadKind.ZIP

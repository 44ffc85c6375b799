"""No tracked file names the machine it was made on: the GPU machine's checkout path (written by
ncu into the command line a report stores, and by the worker into logs) reads <checkout>/<repo>,
and no file names a user's home directory (root's, or ``<home>/<user>``)."""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKOUT = "/".join(("", "work", "main"))  # the checkout path of the machines here and the GPU
#: A home directory: root's, or a user's other than the image's own ``/home/app`` (Dockerfile).
HOME = re.compile(b"/" + b"root/|/" + rb"home/(?!app\b)[A-Za-z_][\w.-]*/")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in out.decode().split("\0") if name]


def _contents() -> list[tuple[str, bytes]]:
    out = []
    for path in _tracked():
        if path.is_file():
            data = path.read_bytes()
            out.append((str(path.relative_to(REPO)),
                        gzip.decompress(data) if path.suffix == ".gz" else data))
    return out


def test_no_tracked_file_holds_the_checkout_path() -> None:
    found = [name for name, data in _contents() if CHECKOUT.encode() in data]
    assert found == [], f"redact with scripts/bundle_recorded.py's redact_report: {found}"


def test_no_tracked_file_holds_a_home_directory() -> None:
    found = {name: HOME.search(data).group().decode(errors="replace")  # type: ignore[union-attr]
             for name, data in _contents() if HOME.search(data)}
    assert found == {}, f"write <home> or a relative path instead: {found}"

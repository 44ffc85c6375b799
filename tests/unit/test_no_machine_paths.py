"""No tracked file names the machine it was made on: the GPU machine's checkout path (written by
ncu into the command line a report stores, and by the worker into logs) reads <checkout>/<repo>."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKOUT = "/".join(("", "work", "main"))  # the checkout path of the machines here and the GPU


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in out.decode().split("\0") if name]


def test_no_tracked_file_holds_the_checkout_path() -> None:
    found = []
    for path in _tracked():
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if CHECKOUT.encode() in data:
            found.append(str(path.relative_to(REPO)))
    assert found == [], f"redact with scripts/bundle_recorded.py's redact_report: {found}"

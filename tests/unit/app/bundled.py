"""The H200 bundles shipped in app/bundled, loaded once per test session (real recorded data)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from app.core.bundle_loader import Bundle, load_bundle

BUNDLED = Path(__file__).resolve().parents[3] / "app" / "bundled"


@lru_cache(maxsize=None)
def bundled(name: str) -> Bundle:
    """A bundled job by directory name; skips the test when it is not shipped."""
    path = BUNDLED / name
    if not (path / "manifest.json").is_file():
        pytest.skip(f"bundle {name} is not in app/bundled")
    return load_bundle(path)

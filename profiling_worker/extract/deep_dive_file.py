"""A bundle's written deep dive (``nsight/deep_dive.json``, or the ``.json.gz`` a bundled job
keeps): the tables :func:`~profiling_worker.extract.ncu_sections.deep_dive` wrote for a
section-set job, readable when its ``.ncu-rep`` is not there (left out of a bundle: too large)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.inflate import plain_file
from profiling_worker.bundle.schema import columns as C

#: The most a written deep dive may expand to (48 launches of ``--set detailed``: 2.2 MB).
MAX_DEEP_DIVE_BYTES = 256 * 1024**2


def deep_dive_path(bundle: Path) -> Path | None:
    """The bundle's written deep dive, plain first; None when it has none (or only a link
    out of the bundle)."""
    found = (inside_bundle(bundle, name) for name in C.DEEP_DIVE_FILES)
    return next((p for p in found if p is not None), None)


def written_deep_dive(bundle: Path) -> dict[str, Any] | None:
    """The bundle's written deep dive as a dict (keys as ``deep_dive`` returns them), or None.

    Raises:
        InflateError: the ``.gz`` is not gzip, is cut short or expands beyond the cap.
        ValueError: the file is not JSON (json.JSONDecodeError).
    """
    path = deep_dive_path(bundle)
    if path is None:
        return None
    with plain_file(path, MAX_DEEP_DIVE_BYTES) as plain:
        data: dict[str, Any] = json.loads(plain.read_text(encoding="utf-8"))
    return data

"""Read traces with Chrome DevTools' trace engine (the npm package ``@paulirish/trace_engine``,
the Performance panel's parser, pinned by ``tests/js/package-lock.json``), or skip saying what
is missing.

It runs under node: ``npm ci --prefix tests/js`` installs it (.ci/run does); a machine without
node or without that install skips.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parent / "js"
PACKAGE = JS / "node_modules" / "@paulirish" / "trace_engine"


def kept_launches(paths: list[Path]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per trace file (its path as given), per track ``"pid:tid"``: (complete events in the
    file, complete events the engine kept in its tree of that track).

    Raises:
        AssertionError: node failed (its stderr in the message).
    """
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Chrome DevTools' trace engine runs under node)")
    if not PACKAGE.is_dir():
        pytest.skip("the trace engine is not installed: npm ci --prefix tests/js")
    done = subprocess.run([node, str(JS / "trace_engine_kept.mjs"), *map(str, paths)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"trace_engine_kept.mjs failed: {done.stderr[-2000:]}"
    read: dict[str, dict[str, list[int]]] = json.loads(done.stdout)
    return {path: {track: (n[0], n[1]) for track, n in tracks.items()}
            for path, tracks in read.items()}

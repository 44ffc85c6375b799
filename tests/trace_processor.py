"""Open a trace with Perfetto's trace processor (the ``perfetto`` package), or skip saying what
is missing.

``perfetto`` runs the ``trace_processor_shell`` binary. Where it comes from, first found wins:
``KPROF_TRACE_PROCESSOR_SHELL`` (a path: machines without internet, copy the binary there), the
package's cache (~/.local/share/perfetto/prebuilts/, filled on first use), or a download of the
version the package pins (curl, from commondatastorage.googleapis.com, SHA-256 checked): CI
downloads it; a machine without internet skips.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

SHELL_ENV = "KPROF_TRACE_PROCESSOR_SHELL"


def shell_path() -> str:
    """The trace_processor_shell binary to use; skips the test when there is none."""
    pytest.importorskip("perfetto.trace_processor",
                        reason="the perfetto package is not installed (pip install perfetto)")
    if os.environ.get(SHELL_ENV):
        return os.environ[SHELL_ENV]
    from perfetto.prebuilts.manifests.trace_processor_shell import TRACE_PROCESSOR_SHELL_MANIFEST
    from perfetto.prebuilts.perfetto_prebuilts import get_perfetto_prebuilt

    try:
        path = get_perfetto_prebuilt(TRACE_PROCESSOR_SHELL_MANIFEST, soft_fail=True)
    except Exception as exc:  # curl failed (no internet) or is missing
        pytest.skip(f"trace_processor_shell is not available: not cached and the download "
                    f"failed ({exc}); set {SHELL_ENV} to a local copy")
    if path is None:
        pytest.skip("trace_processor_shell: perfetto has no prebuilt for this platform; "
                    f"set {SHELL_ENV}")
    return str(path)


def open_trace(path: Path) -> Any:
    """A ``perfetto.trace_processor.TraceProcessor`` over the trace at ``path`` (close it)."""
    bin_path = shell_path()  # first: it skips when the package or the binary is missing
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    return TraceProcessor(trace=str(path), config=TraceProcessorConfig(bin_path=bin_path))


def summary(path: Path) -> dict[str, Any]:
    """What the trace processor read: kernel slices and their summed duration (ns), thread
    (track) names, counter tracks with their sample counts, and the import errors it counted."""
    tp = open_trace(path)
    try:
        slices = tp.query("select count(*) as n, sum(dur) as total_ns from slice "
                          "where category = 'kernel'")
        threads = tp.query("select name from thread where name is not null")
        counters = tp.query("select t.name as name, count(c.id) as n from counter_track t "
                            "join counter c on c.track_id = t.id group by t.name")
        errors = tp.query("select name, value from stats where severity in ('error', 'data_loss')"
                          " and value > 0")
        first = next(iter(slices))
        return {"kernel_slices": first.n, "kernel_ns": first.total_ns,
                "threads": sorted(r.name for r in threads),
                "counters": {r.name: r.n for r in counters},
                "errors": {r.name: r.value for r in errors}}
    finally:
        tp.close()

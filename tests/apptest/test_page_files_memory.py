"""Files page: rendering it reads no download (issue 26). Every download is a callable that
Streamlit runs only on a click, and the refusal check of a ``.ncu-rep.gz`` inflates 1 MiB at a
time keeping nothing, so the page's memory does not grow with the files it lists: measured
with tracemalloc (every Python allocation, the bytes a read would hold included) over the
page's script run, with a 1 MB, a 60 MB (offered) and a 100 MB (over the cap) file, and a
worker.log of a tenth of that size (the bundle's own, repeated)."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

from apptest_helpers import texts

from tests.scenarios import largest_demo_report, scenario_dir

REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"


def _bundle(store: dict[str, Path], name: str, extra_bytes: int, large_report: bool) -> None:
    dest = store["bundled"] / name
    shutil.copytree(scenario_dir("h200-ncu-j1-fp16"), dest)
    if large_report:
        # the largest recorded report (4.5 MB .gz, 18.4 MB inflated), in place of J1's 0.7 MB
        shutil.copyfile(largest_demo_report(), dest / REPORT)
    with open(dest / "nsight" / "extra.bin", "wb") as fh:  # sparse: no disk, the same bytes
        fh.truncate(extra_bytes)
    log = (dest / "worker.log").read_text(encoding="utf-8")
    (dest / "worker.log").write_text(log * (extra_bytes // 10 // len(log)),
                                     encoding="utf-8")  # the page shows its last 200 lines


def _peak_mib(app, name: str) -> tuple[float, str, list[str]]:  # noqa: ANN001
    """The least tracemalloc peak of two page runs: tracemalloc counts every thread's
    allocations, so another thread of a whole-suite run (a job manager's watcher) adds to one
    run's peak; a read of a download would be in both."""
    peaks = []
    for _ in range(2):
        tracemalloc.start()
        try:
            at = app("files", query={"job": name})
            peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        finally:
            tracemalloc.stop()
        assert not at.exception
    return min(peaks), texts(at), [b.proto.label for b in at.get("download_button")]


def test_a_render_holds_no_download_whatever_their_size(store, app) -> None:
    sizes = {"small": 1_000_000, "offered": 60_000_000, "refused": 100_000_000}
    for name, size in sizes.items():
        _bundle(store, name, size, large_report=name != "small")
    app("files", query={"job": "small"})  # warm-up: modules imported, caches built
    peaks = {}
    for name in sizes:
        peaks[name], text, labels = _peak_mib(app, name)
        assert "Download .ncu-rep" in labels  # the report passed its check, and is offered
        assert ("`nsight/extra.bin` is 100.0 MB, more than the 67.1 MB a download may take"
                in text) == (name == "refused")
    # 60 MB offered and 100 MB refused cost what 1 MB costs (the J1 bundle's page): a read of
    # either, or of the 18 MB inflated report, would show as its size here
    print("tracemalloc peak of the page run, MiB:", peaks)  # the figure in docs/performance.md
    assert peaks["offered"] - peaks["small"] < 8, peaks
    assert peaks["refused"] - peaks["small"] < 8, peaks

"""Which bundled jobs take the same code path on a page: the grounds of the pairs that
``tests/apptest/test_page_bundled.py`` leaves out.

Opens each job of ``app/bundled`` as that test does (fresh caches, the default page first,
then the other pages in one AppTest session) and records, for each page's script run, the arcs
(line to line, as coverage.py's branch mode counts them) executed in ``app/`` and
``profiling_worker/``, less the frame's (:data:`FRAME`: the same for a job on every page, and
the test keeps every job's default page). Jobs whose arcs on a page are equal run the same code
of the product there: they differ in data only. One job is opened first, untraced, so that no
job's arcs include the imports. Prints, per page, the groups of jobs with equal arcs, then
each job's :func:`fingerprint`: the test's ``MEASURED``, so that a job recorded anew since (its
files changed) is caught there (``test_the_measured_jobs_are_the_bundles_shipped``).

Usage: ``python benchmarks/bundled_page_paths.py [page ...]`` (default: the test's pages)
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

import streamlit as st
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "app" / "bundled"
PAGES = ("sweep", "results", "files", "history", "environment")  # the test's, in its order
ROOTS = tuple(str(REPO / d) + os.sep for d in ("app", "profiling_worker"))
#: The app's frame around every page: entry script, sidebar, Streamlit patches.
FRAME = ("app/streamlit_app.py", "app/sidebar/", "app/streamlit_patches/")
Arc = tuple[str, int, int]


def fingerprint(job: Path) -> str:
    """The first 12 hex digits of the SHA-256 of every file of the bundle folder ``job`` (its
    path relative to ``job`` and its bytes, in path order): equal while no file of the job
    changes, is added or goes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in job.rglob("*") if p.is_file()):
        digest.update(path.relative_to(job).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


class ArcTracer:
    """Arcs (file, from line, to line; a negative line is a code object's entry or exit) of
    the Python code under :data:`ROOTS`, in every thread started while it runs."""

    def __init__(self) -> None:
        self.arcs: set[Arc] = set()
        self._last: dict[FrameType, int] = {}

    def _global(self, frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename.startswith(ROOTS):
            self._last[frame] = -frame.f_code.co_firstlineno
            return self._local
        return None

    def _local(self, frame: FrameType, event: str, _arg: Any) -> Any:
        name = frame.f_code.co_filename
        if event == "line":
            self.arcs.add((name, self._last.get(frame, 0), frame.f_lineno))
            self._last[frame] = frame.f_lineno
        elif event == "return":
            self.arcs.add((name, self._last.pop(frame, 0), -frame.f_code.co_firstlineno))
        return self._local

    def __enter__(self) -> "ArcTracer":
        threading.settrace(self._global)
        sys.settrace(self._global)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]


def page_arcs(job: str, pages: tuple[str, ...], results: Path) -> dict[str, frozenset[Arc]]:
    """The arcs of each page of ``pages`` opened on ``job`` as the test opens them."""
    os.environ["KPROF_RESULTS_DIR"] = str(results)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(REPO / "app" / "streamlit_app.py"), default_timeout=300)
    at.query_params["job"] = job
    out = {}
    for page in PAGES:
        if page != PAGES[0]:
            at.switch_page(f"app_pages/{page}.py")
        tracer = ArcTracer()
        if page in pages:
            with tracer:
                at.run()
            arcs = ((str(Path(f).relative_to(REPO)), a, b) for f, a, b in tracer.arcs)
            out[page] = frozenset(arc for arc in arcs if not arc[0].startswith(FRAME))
        else:
            at.run()
        assert not at.exception, (job, page, at.exception)
    st.cache_resource.clear()  # shuts the job manager down
    return out


def main() -> None:
    pages = tuple(sys.argv[1:]) or PAGES
    os.environ["KPROF_BUNDLED_DIR"] = str(BUNDLED)
    os.environ["KPROF_WORKER_PYTHON"] = sys.executable
    jobs = sorted(p.name for p in BUNDLED.iterdir() if (p / "manifest.json").is_file())
    by_page: dict[str, dict[str, frozenset[Arc]]] = defaultdict(dict)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "warm-up").mkdir()
        page_arcs(jobs[0], (), Path(tmp) / "warm-up")  # the imports, untraced
        for job in jobs:
            (Path(tmp) / job).mkdir()
            for page, arcs in page_arcs(job, pages, Path(tmp) / job).items():
                by_page[page][job] = arcs
    for page, arcs_of in by_page.items():
        groups: dict[frozenset[Arc], list[str]] = defaultdict(list)
        for job, arcs in arcs_of.items():
            groups[arcs].append(job)
        common = frozenset.intersection(*arcs_of.values())
        print(f"{page}: {len(groups)} code paths over {len(arcs_of)} jobs "
              f"({len(common)} arcs common to all)")
        for arcs, members in sorted(groups.items(), key=lambda g: g[1]):
            files = sorted({f for f, _a, _b in arcs - common})
            print(f"  {len(members)} job(s), +{len(arcs - common)} arcs in {files}: "
                  f"{', '.join(members)}")
    print("MEASURED (job: fingerprint):")
    for job in jobs:
        print(f'    "{job}": "{fingerprint(BUNDLED / job)}",')


if __name__ == "__main__":
    main()

"""Issue 37, as a fresh user saw the job panel: it listed this server's last 5 jobs of other
sessions and, apart, the result store's newest 8, so a newer job of the server was hidden
while older stored ones were listed, and the link to History showed only above 8 stored
jobs. Now the panel lists the newest jobs of both, counts what it leaves out and links to
History whenever it leaves anything out. Another server's failed job, which kept a red error
box in this sidebar, is one quiet line; this server's own failure keeps its box.

The server's executor is a stand-in listing chosen jobs (no worker runs: the panel draws what
an executor's ``snapshot`` gives); the stored jobs are the real worker's cpu bundle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from apptest_helpers import TINY_SPEC, texts, unescape
from app.services.executor import Executors
from app.services.job_model import Job
from app.sidebar import job_panel
from app.ui import cached, state
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec

OWNER = "dashboard server pid 4242 on host elsewhere"


class _Listed:
    """An executor that lists ``jobs`` (oldest first) and runs nothing."""

    def __init__(self, jobs: list[Job]) -> None:
        self.jobs = jobs

    def snapshot(self) -> list[Job]:
        return list(self.jobs)

    def get(self, job_id: str) -> Job | None:
        return next((j for j in self.jobs if j.job_id == job_id), None)

    def active(self) -> bool:
        return any(j.active for j in self.jobs)

    def cancel(self, job_id: str, reason: str = "") -> None:
        raise AssertionError(f"nothing to cancel here: {job_id}")

    def wait(self, job_id: str, timeout_s: float) -> JobStatus:
        raise AssertionError(f"nothing to wait for: {job_id}")

    def shutdown(self) -> object:
        return None


def _job(job_id: str, day: int, **fields: object) -> Job:
    fields = {"status": JobStatus.DONE, **fields}
    return Job(job_id=job_id, path=Path(job_id), spec=validate_spec(TINY_SPEC), lane="cpu",
               submitted_at=f"2026-12-{day:02d}T10:00:00+00:00", **fields)  # type: ignore[arg-type]


def _store(results: Path, src: Path, days: range) -> list[str]:
    """Copies of the real cpu bundle, one created on each day of ``days`` (December 2026)."""
    ids = []
    for day in days:
        job_id = f"202612{day:02d}-090000-matmul-stored"
        shutil.copytree(src, results / job_id)
        manifest = json.loads((results / job_id / "manifest.json").read_text())
        manifest.update(job_id=job_id, created_at=f"2026-12-{day:02d}T09:00:00+00:00")
        (results / job_id / "manifest.json").write_text(json.dumps(manifest))
        ids.append(job_id)
    return ids


def _served(monkeypatch, jobs: list[Job]) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(cached, "executors", lambda: Executors(_Listed(jobs)))


def test_the_newest_jobs_are_listed_and_the_rest_counted(store, app, monkeypatch,
                                                         cpu_bundle_src) -> None:
    """Seven jobs of other sessions (days 3-9) and three stored ones (days 1, 2 and 10): the
    panel lists the 8 newest of the ten, none hidden behind an older one, and "2 more:
    History" (it hid days 3 and 4 of the server's jobs behind the stored days 1 and 2, and had
    no link: only 3 stored)."""
    served = [_job(f"2026120{day}-100000-matmul-other", day) for day in range(3, 10)]
    stored = _store(store["results"], cpu_bundle_src, range(1, 3))
    stored += _store(store["results"], cpu_bundle_src, range(10, 11))
    _served(monkeypatch, served)
    at = app()
    assert not at.exception, at.exception
    text = texts(at)
    newest = sorted([*stored, *(j.job_id for j in served)], reverse=True)  # ids sort by day
    listed = [job_id for job_id in newest if job_id in text]
    assert listed == newest[:job_panel.SHOW_LAST], listed
    assert [text.index(j) for j in listed] == sorted(text.index(j) for j in listed)
    links = [link.proto.label for link in at.get("page_link")]
    assert job_panel.more_text(len(newest) - job_panel.SHOW_LAST) in links, links
    assert "2 more: History" in links


def test_a_link_to_history_whenever_a_server_job_is_left_out(store, app, monkeypatch) -> None:
    """Only this server's jobs, more than the panel lists, none stored: counted and linked
    (the link counted the stored jobs only)."""
    served = [_job(f"202612{day:02d}-100000-matmul-other", day) for day in range(1, 13)]
    _served(monkeypatch, served)
    at = app()
    assert not at.exception, at.exception
    links = [link.proto.label for link in at.get("page_link")]
    assert job_panel.more_text(12 - job_panel.SHOW_LAST) in links, links
    assert served[-1].job_id in texts(at) and served[0].job_id not in texts(at)


def test_this_sessions_queued_job_is_listed_behind_newer_ones(store, app, monkeypatch) -> None:
    """A job of this session still queued behind other sessions' newer jobs is listed (it must
    be seen to run), and counted as listed."""
    mine = _job("20261201-100000-matmul-mine", 1, status=JobStatus.QUEUED)
    served = [mine, *(_job(f"202612{day:02d}-100000-matmul-other", day) for day in range(2, 13))]
    _served(monkeypatch, served)
    at = app()
    at.session_state[state.OWN_JOBS] = [mine.job_id]
    at.run()
    assert not at.exception, at.exception
    assert mine.job_id in texts(at)
    links = [link.proto.label for link in at.get("page_link")]
    assert job_panel.more_text(12 - job_panel.SHOW_LAST - 1) in links, links


def test_another_servers_failure_is_a_line_this_servers_a_box(store, app, monkeypatch) -> None:
    """Another server's failure is a line naming its owner; another tab's of this server is a
    line too (session 22: a fresh user read its red box, with the failure said three times);
    this session's own failure keeps its box."""
    error = {"kind": "worker_error", "message": "the worker exited with code 1 (see its log)",
             "hint": "run it again", "log_tail": "Traceback ..."}
    theirs = _job("20261202-100000-matmul-theirs", 2, status=JobStatus.FAILED,
                  error=dict(error), watched_by=OWNER)
    tab = _job("20261203-100000-matmul-tab", 3, status=JobStatus.FAILED, error=dict(error),
               warnings=[error["message"]])  # the worker's warning of the same failure
    ours = _job("20261201-100000-matmul-ours", 1, status=JobStatus.FAILED, error=dict(error))
    _served(monkeypatch, [ours, theirs, tab])
    at = app()
    at.session_state[state.OWN_JOBS] = [ours.job_id]
    at.run()
    assert not at.exception, at.exception
    boxes = [e.value for e in at.sidebar.error]
    assert len(boxes) == 1 and "the worker exited with code 1" in boxes[0], boxes
    (line,) = [c for c in at.sidebar.caption if OWNER in unescape(c.value)]
    assert "worker_error: the worker exited with code 1 …" in unescape(line.value)
    assert line.proto.help  # the whole message
    said = [unescape(c.value) for c in at.sidebar.caption if "exited with code 1" in c.value]
    assert said.count(job_panel.failure_line(tab, None)) == 1, said  # the tab's job: one line
    assert len(said) == 2, said  # theirs and the tab's, a line each; no warning repeats it

"""Issue 37: a dashboard lists every job of its result store, whoever queued it. A server that
starts on a store with jobs (ended before it started: another job queue's, a restart's) lists
them in its job panel, newest first, the newest ``SHOW_LAST`` with a link to History for the
rest; its empty-state text says the store holds no job only when it holds none. Real worker
(cpu backend), another process's job queue."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from apptest_helpers import JOB_ID, TINY_SPEC, submit_cpu_matmul, texts
from app.sidebar import job_panel
from app.ui import cached

REPO = Path(__file__).resolve().parents[2]
# Another job queue on the same results folder, in its own process: queues the spec, waits
# for its end, says its id and status, and exits (as a dashboard server stopped later would).
OTHER_QUEUE = """
import json, sys
from pathlib import Path
from app.services.job_manager import JobManager
from profiling_worker.bundle.schema.spec import validate_spec
manager = JobManager(Path(sys.argv[1]), sys.executable)
job_id = manager.submit(validate_spec(json.loads(sys.argv[2])))
print(job_id, manager.wait(job_id, 600), flush=True)
manager.shutdown()
"""


def test_empty_store_says_so(store, app) -> None:
    at = app()
    assert not at.exception
    text = texts(at)
    assert job_panel.EMPTY_TEXT in text
    assert "No jobs submitted from this server yet." not in text
    assert "In the result store" not in text


def test_a_fresh_server_lists_the_jobs_of_its_store(store, app, cpu_bundle_src) -> None:
    other = subprocess.run([sys.executable, "-c", OTHER_QUEUE, str(store["results"]),
                            json.dumps({**TINY_SPEC, "runs": 1})], cwd=REPO,
                           capture_output=True, text=True, timeout=300, check=False)
    assert other.returncode == 0, other.stdout + other.stderr
    other_id, status = other.stdout.split()
    assert status == "done"
    # nine more finished jobs of the real worker, older than the other queue's
    older = [JOB_ID.replace("0001", f"{i:04d}") for i in range(1, 10)]
    for job_id in older:
        shutil.copytree(cpu_bundle_src, store["results"] / job_id)
    at = app()  # a server that starts on this store: none of these jobs is its own
    assert not at.exception
    text = texts(at)
    assert job_panel.EMPTY_TEXT not in text
    assert "No jobs submitted from this server yet." not in text
    assert "**In the result store**, newest first:" in text
    listed = [j for j in [other_id, *reversed(older)] if j in text]
    assert listed == [other_id, *reversed(older)][:job_panel.SHOW_LAST]  # the newest, only
    # newest first: the other queue's job (created now) above the copies (same time: by id)
    assert text.index(other_id) < text.index(older[-1]) < text.index(older[-2])
    assert "✓ **done** · matmul · cpu" in text
    links = [link.proto.label for link in at.get("page_link")]
    more = 10 - job_panel.SHOW_LAST
    assert job_panel.more_text(more) in links


def test_a_store_of_fewer_than_shown_links_to_no_more(seeded, app) -> None:
    """One stored job, fewer than ``SHOW_LAST``: no link to History for the rest (there is
    none; it read "-7 more in History")."""
    at = app()
    assert not at.exception
    assert JOB_ID in texts(at)
    assert not [link.proto.label for link in at.get("page_link")
                if link.proto.label.endswith("more: History")]


def test_the_servers_own_job_is_not_listed_again_from_the_store(seeded, app) -> None:
    at = app()
    new_id = submit_cpu_matmul(at, "32", 1)
    assert cached.job_manager().wait(new_id, 300) == "done"
    at.run()
    assert not at.exception
    store_list = [m.value for m in at.sidebar.markdown if "In the result store" in m.value]
    assert len(store_list) == 1 and JOB_ID in store_list[0]  # the job before this server
    assert new_id not in store_list[0]  # its card says it all
    assert any(new_id in m.value and "**done**" in m.value for m in at.sidebar.markdown)


def test_store_jobs_are_listed_among_the_servers_by_submission_time(seeded, app,
                                                                    cpu_bundle_src) -> None:
    """A fresh user's find: a job the CLI (or ``kernel-sweep``) submitted after this server's
    job was listed below its card, under "Earlier in the result store". Every job of the panel
    is in the order it was submitted, newest first: the CLI's job above this server's card,
    the job of before the server below it."""
    at = app()
    new_id = submit_cpu_matmul(at, "32", 1)
    assert cached.job_manager().wait(new_id, 300) == "done"
    later = "20991231-000000-matmul-0009"  # submitted after this server's job
    shutil.copytree(cpu_bundle_src, seeded["results"] / later)
    manifest = json.loads((seeded["results"] / later / "manifest.json").read_text())
    manifest.update(job_id=later, created_at="2099-12-31T00:00:00+00:00")
    (seeded["results"] / later / "manifest.json").write_text(json.dumps(manifest))
    at.run()
    assert not at.exception
    panel = [m.value for m in at.sidebar.markdown]
    where = {job: next(i for i, text in enumerate(panel) if job in text)
             for job in (later, new_id, JOB_ID)}
    assert where[later] < where[new_id] < where[JOB_ID], panel
    assert "Earlier in the result store" not in texts(at)
    # the two store lists, either side of the card, under one heading with one help icon
    headed = [m for m in at.sidebar.markdown if "In the result store" in m.value]
    assert len(headed) == 1 and later in headed[0].value, panel
    assert headed[0].proto.help == job_panel.STORE_HELP


def test_a_job_failed_outside_names_what_its_spec_asked_for(store, app) -> None:
    """Issue 37: a job the worker refused from a shell (an unknown kernel) read
    "✗ failed ·  · ? · bad-kernel" in the panel: its manifest records no spec. The line names
    the kernels and backend its spec.json asked for, and says plainly when that file cannot be
    read."""
    files = {"bad-kernel": json.dumps({**TINY_SPEC, "kernels": ["nope"]}),
             "bad-json": "{not json"}
    for job_id, text in files.items():
        job = store["results"] / job_id
        job.mkdir()
        (job / "spec.json").write_text(text, encoding="utf-8")
        subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                       capture_output=True, timeout=120, check=False)
    infos = {i.job_id: i for i in cached.list_bundles()[0]}
    assert infos["bad-kernel"].kernels == ("nope",) and infos["bad-kernel"].backend == "cpu"
    at = app()
    assert not at.exception
    shown = texts(at)
    for job_id in files:
        assert job_panel.store_line(infos[job_id]) in shown
    assert job_panel.what_ran(infos["bad-kernel"]) == "nope · cpu"
    assert job_panel.what_ran(infos["bad-json"]) == job_panel.SPEC_UNREADABLE
    assert " · ? · " not in shown

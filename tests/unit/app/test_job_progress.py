"""The job panel says where a running job is, from what the real worker reports (issue 37: a
kernel that hung showed "starting" for 15 s): its config, its run and the seconds in that
config; the warm-up of a config is reported before its calls."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

from profiling_worker.bundle.schema import columns as C, events
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec

from app.services.job_book import JobBook
from app.services.job_model import Job, TaskView
from app.sidebar.job_panel import (WRITING_CANCEL_HELP, WRITING_CANCELLING, cancel_help,
                                   cancel_note, cancelling_text, progress_text, steps_text,
                                   task_progress, write_cut_note)
from profiling_worker.bundle.number_text import counted
from tests.unit.app.conftest import TINY_SPEC


def _events(bundle: Path) -> list[dict]:
    lines = (bundle / C.EVENTS_FILE).read_text(encoding="utf-8").splitlines()
    return [ev for ev in map(events.parse_line, lines) if ev is not None]


def _followed(evs: list[dict]) -> Job:
    """A job as the job manager's event reader (``JobBook._apply``) leaves it after ``evs``."""
    job = Job("j", Path("."), validate_spec(TINY_SPEC), "cpu")
    JobBook._apply(SimpleNamespace(_lock=threading.Lock()), job, evs)  # type: ignore[arg-type]
    return job


def test_the_progress_text_of_a_real_cpu_jobs_events(cpu_bundle_src: Path) -> None:
    evs = _events(cpu_bundle_src)
    progress = [ev for ev in evs if ev["event"] == "progress"]
    # TINY_SPEC: 2 configs x 3 runs, one warm-up call: each config's warm-up is reported first
    assert [(ev["stage"], ev.get("config"), ev.get("run")) for ev in progress][:5] == [
        ("warm-up", 0, None), ("profiling", 0, 0), ("profiling", 0, 1), ("profiling", 0, 2),
        ("warm-up", 1, None)]
    warm = evs[:evs.index(progress[0]) + 1]
    assert progress_text(_followed(warm), now=progress[0]["t"] + 15) == (
        "warm-up: config 1 of 2, 15 s in this config · 0 of 6 runs")
    third = progress[3]  # config 0's third run begun: the hang the issue saw
    job = _followed(evs[:evs.index(third) + 1])
    assert progress_text(job, now=progress[0]["t"] + 15) == (
        "profiling: config 1 of 2, run 3 of 3, 15 s in this config · 3 of 6 runs")
    second = progress[5]  # config 1's first run: its seconds count from its warm-up
    job = _followed(evs[:evs.index(second) + 1])
    assert progress_text(job, now=progress[4]["t"] + 2) == (
        "profiling: config 2 of 2, run 1 of 3, 2 s in this config · 4 of 6 runs")
    done = _followed(evs)  # the last stage has no config: none is named
    assert progress_text(done) == "writing bundle · 1 of 1 step"


def test_a_sweep_tasks_progress_says_its_configs_and_runs(cpu_bundle_src: Path) -> None:
    """The cluster sweep's task table read a bare "3/6 profiling" (issue 37): each real
    progress event of a worker, as a task of the sweep shows it, in words with its counts."""
    spec = validate_spec(TINY_SPEC)
    configs = tuple(range(len(spec.configs)))
    progress = [ev for ev in _events(cpu_bundle_src) if ev["event"] == "progress"]
    for ev in progress:
        task = TaskView("0", "running", 0, configs, done=ev["done"], total=ev["total"],
                        stage=ev["stage"])
        said = task_progress(task, spec.runs)
        assert said.startswith(f"{ev['stage']}: ") and said.endswith(
            steps_text(ev["stage"], ev["done"], ev["total"])), said
        if ev["stage"] != events.WRITING_STAGE:  # whole configs measured of the task's
            assert f"{ev['done'] // spec.runs:,} of {counted(len(configs), 'config')}" in said
        assert "config" not in task_progress(task, None)  # runs "auto": the runs alone
    assert task_progress(TaskView("0", "pending", 0, configs, stage="submitting"), 3) == \
        "submitting"


def test_a_job_without_progress_is_starting() -> None:
    assert progress_text(_followed([])) == "starting"


def test_cancel_says_what_it_does_once_the_worker_writes(cpu_bundle_src: Path) -> None:
    """Before the writing stage a Cancel stops the measuring; at it (the last progress event
    of a real job), the button's help and the caption after it say the results are kept, and
    a job that still ended cancelled there was stopped mid-write: its note says the tables
    are set aside."""
    evs = _events(cpu_bundle_src)
    progress = [ev for ev in evs if ev["event"] == "progress"]
    running = _followed(evs[:evs.index(progress[1]) + 1])
    assert cancel_help(running) is None and cancelling_text(running) == "Cancelling…"
    writing = _followed(evs)
    assert writing.stage == events.WRITING_STAGE == progress[-1]["stage"]
    assert cancel_help(writing) == WRITING_CANCEL_HELP
    assert cancelling_text(writing) == WRITING_CANCELLING
    writing.status = JobStatus.CANCELLED
    assert cancel_note(writing).startswith(write_cut_note())
    assert "discarded" not in cancel_note(writing)

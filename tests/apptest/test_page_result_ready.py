"""Issue 40: a job whose worker has written its runs and aggregated tables and said so
(manifest ``result_ready``, the job still running) draws its Size sweep, with a short note of
the tables pending; a job whose worker died there draws it too, naming them missing. The
bundle is the real worker's (cpu backend, in-process ``runner.run_job``), copied at the
runner's hook between its two manifest writes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from apptest_helpers import plotly_specs, texts, unescape
from app.services.job_book import JobBook
from app.core.pages import SECTIONS
from app.services.job_model import Job
from app.ui.panels import unwritten_note
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus, update_manifest
from profiling_worker.bundle.schema.spec import load_spec
from profiling_worker.job import runner

READY = "20261129-231000-matmul-0009"
SPEC = {"kernels": ["matmul"], "annotations": ["fp32", "fp16"],
        "configs": [{"n": 32}, {"n": 64}], "runs": 3, "backend": "cpu", "warmup": 1}


@pytest.fixture(scope="module")
def ready_src(finished_src: Path) -> Path:
    """The bundle of SPEC as it stood between the worker's two manifest writes."""
    return finished_src.parent.parent / "ready" / READY


@pytest.fixture(scope="module")
def finished_src(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bundle of SPEC as the worker finished it; its copy at the hook beside it
    (:func:`ready_src`)."""
    job = tmp_path_factory.mktemp("worker") / READY
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps(SPEC), encoding="utf-8")
    copy = job.parent.parent / "ready" / READY
    before, term = runner.AFTER_RESULT_READY, signal.getsignal(signal.SIGTERM)
    runner.AFTER_RESULT_READY = lambda job_dir: shutil.copytree(job_dir, copy)
    try:
        assert runner.run_job(job, Channel(job, None)) == 0
    finally:
        runner.AFTER_RESULT_READY = before
        signal.signal(signal.SIGTERM, term)
    yield job


@pytest.fixture
def live_worker() -> Iterator[subprocess.Popen[bytes]]:
    """A process that stands for the worker still writing the bundle: the job's owner lives,
    so the app does not end it ``interrupted`` (the in-process worker named this test's own
    process, which the app counts as a gone owner)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def _in_store(store: dict[str, Path], src: Path,
              owner: subprocess.Popen[bytes] | None = None) -> Path:
    """A copy of ``src`` in the results folder; its worker entry names ``owner``'s pid."""
    path = Path(shutil.copytree(src, store["results"] / READY))
    if owner is not None:
        update_manifest(path, lambda m: {**m, "worker": {**m["worker"], "pid": owner.pid}})
    return path


def test_a_result_ready_job_draws_its_size_sweep(store, app, ready_src: Path,
                                                 live_worker) -> None:
    path = _in_store(store, ready_src, live_worker)
    bundle = load_bundle(path)
    assert bundle.status == JobStatus.RUNNING and bundle.pending  # as the worker left it
    at = app(query={"job": READY})
    assert not at.exception
    (spec,) = plotly_specs(at)
    assert [t["name"] for t in spec["data"]] == SPEC["annotations"]
    shown = texts(at)
    assert load_bundle(path).pending  # still running: its owner lives
    assert unwritten_note(bundle) in [unescape(c.value) for c in at.caption]  # a short line
    for table in bundle.pending:
        assert table in unwritten_note(bundle)
    assert "Part of this bundle is damaged" not in shown  # pending is no fault


def test_the_page_reads_the_final_write(store, app, ready_src: Path, finished_src: Path,
                                        live_worker) -> None:
    """The app's cache of a bundle is keyed by its manifest's mtime: the worker's final write
    (its manifest, the tables it wrote after the result) is read on the next run."""
    path = _in_store(store, ready_src, live_worker)
    pending = unwritten_note(load_bundle(path))
    at = app(query={"job": READY})
    assert load_bundle(path).pending and pending in texts(at)
    shutil.copytree(finished_src, path, dirs_exist_ok=True)  # copy2: the worker's mtimes
    at.run()
    assert not at.exception
    assert load_bundle(path).status == JobStatus.DONE
    assert pending not in texts(at)
    assert [t["name"] for t in plotly_specs(at)[0]["data"]] == SPEC["annotations"]


def test_a_job_whose_worker_died_after_its_result_draws_it(store, app, ready_src: Path) -> None:
    path = _in_store(store, ready_src)
    # the job manager's end of a worker SIGKILLed there
    job = Job(job_id=READY, path=path, spec=load_spec(str(path / C.SPEC_FILE)), lane="cpu",
              status=JobStatus.RUNNING)
    book = JobBook(process="dashboard server")
    book._jobs[READY] = job
    book._settle(job, -9)
    bundle = load_bundle(path)
    assert bundle.status == JobStatus.FAILED and bundle.missing
    at = app(query={"job": READY})
    assert not at.exception
    (spec,) = plotly_specs(at)
    assert [t["name"] for t in spec["data"]] == SPEC["annotations"]
    assert unwritten_note(bundle) in [unescape(w.value) for w in at.warning]  # a warning box
    assert unwritten_note(bundle) not in [unescape(c.value) for c in at.caption]


@pytest.mark.parametrize("page", [e.script.removesuffix(".py") for entries in SECTIONS.values()
                                  for e in entries])
def test_no_page_raises_on_a_result_ready_job(store, app, ready_src: Path, page: str,
                                              live_worker) -> None:
    """The pages that read the pending tables (work, launches, NVML trace) get them empty, as
    a failed job's, and none raises."""
    _in_store(store, ready_src, live_worker)
    at = app(query={"job": READY})
    if page != "sweep":
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, (page, at.exception)

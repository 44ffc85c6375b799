"""A job that kept part of its configs, written by the real worker (cpu backend, the kernels of
tests/fixtures/kernel_files_partial): one cancelled while config n=4 ran, one whose kernel
raised at n=3. Every page that draws the job says at its top what was measured and what not,
and draws the configs measured; the job panel says it too, and the HTML report."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest
from apptest_helpers import plotly_specs, texts, trace_values, wait_until

from app.core.share.build import job_report
from app.sidebar import job_panel
from app.ui import cached
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from tests.partial_job import CONFIGS, KERNELS, record_partial_job

#: The pages that draw a cpu job's values (the GPU-only pages say they need a GPU).
PAGES = ("results", "sweep", "stability", "one_kernel", "kernels", "files")


@pytest.fixture(scope="module")
def partial_src(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """kernel -> its job written once by the real worker (exit 1: not done)."""
    return {kernel: record_partial_job(tmp_path_factory.mktemp("worker")
                                       / f"20270101-000000-{kernel}-0001", kernel)
            for kernel in ("cancel_at_4", "raise_at_3")}


@pytest.fixture(params=["cancel_at_4", "raise_at_3"])
def partial_job(request, store, partial_src) -> str:
    src = partial_src[request.param]
    shutil.copytree(src, store["results"] / src.name)
    return src.name


#: What each job kept, as its manifest records it: the configs measured (indices of
#: CONFIGS, n = 1..6), the first config not measured, and words its why must hold: the signal
#: the kernel sent its worker, the error it raised (tests/fixtures/kernel_files_partial).
KEPT = {"cancel_at_4": ([0, 1, 2], "n=4", "SIGTERM"),
        "raise_at_3": ([0, 1, 3, 4, 5], "n=3", "size 3 is refused by this kernel")}


def _kernel(job_id: str) -> str:
    return job_id.split("-", 2)[2].rsplit("-", 1)[0]


def _note(job: Path) -> str:
    """The note the pages, the panel and the report show of ``job``, after checking that its
    manifest records what the job's kernel kept (:data:`KEPT`)."""
    manifest = read_manifest(job)
    record = manifest[partial.CONFIGS_KEY]
    measured, label, why = KEPT[_kernel(job.name)]
    assert record["measured"] == measured and record["total"] == len(CONFIGS), record
    first = record["not_measured"][0]
    assert first["label"] == label and why in first["why"], record
    note = partial.note(manifest)
    assert note is not None and label in note and why in note, note  # named, and why
    return note


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_what_a_partial_job_measured(page, partial_job, store, app) -> None:
    at = app(page, query={"job": partial_job})
    assert not at.exception, at.exception
    # Markdown escapes left out; a failed job's note is in its error's box (one box for both)
    shown = [w.value.replace("\\", "") for w in (*at.warning, *at.error)]
    note = _note(store["results"] / partial_job)
    assert len([w for w in shown if note in w]) == 1, shown  # one note, at the page's top
    why = KEPT[_kernel(partial_job)][2]  # the failure (or the cancel) said in one box only
    assert len([w for w in shown if why in w]) == 1, shown
    assert "it holds no complete result" not in texts(at)
    if page == "sweep":  # the configs measured are drawn
        xs = {x for spec in plotly_specs(at) for trace in spec["data"] if "x" in trace
              for x in trace_values(trace, "x")}
        measured = {"cancel_at_4": {1, 2, 3}, "raise_at_3": {1, 2, 4, 5, 6}}
        assert xs == measured[_kernel(partial_job)], xs


def test_cancel_in_the_panel_keeps_the_configs_measured(store, app, monkeypatch) -> None:
    """The app's Cancel (SIGTERM to the worker, SIGKILL after the grace) while config n=4
    runs: the panel says what was kept, the pages open the job, and the report says it; the
    job records that the user cancelled it, as a server stop records its own reason."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    at = app()
    manager = cached.job_manager()
    job_id = manager.submit(validate_spec({"kernels": ["slow_from_4"], "configs": CONFIGS,
                                           "runs": 3, "backend": "cpu", "warmup": 0}))
    wait_until(lambda: manager.get(job_id).done > 9)  # in config n=4's runs
    at.run()
    at.button(key=f"panel-cancel-{job_id}").click().run()  # the panel's own button
    assert manager.wait(job_id, 60) == "cancelled"
    at.run()
    assert not at.exception, at.exception
    panel = "\n".join(c.value for c in at.sidebar.caption).replace("\\", "")
    record = read_manifest(store["results"] / job_id)[partial.CONFIGS_KEY]
    assert record["measured"] == [0, 1, 2] and record["cancelled"], record  # n=4 cut
    assert record["cancelled"].startswith("SIGTERM")
    assert record["cancelled"].endswith(partial.USER_CANCEL)  # why: the user's cancel
    note = partial.note(read_manifest(store["results"] / job_id))
    assert note and note in panel, panel
    assert job_panel.cancel_note(manager.get(job_id)) not in panel  # every run discarded: not
    report = job_report(load_bundle(store["results"] / job_id))
    head = report[:report.index("<nav>")]
    assert note in html.unescape(head)


def test_the_agent_door_names_it_first_among_the_caveats(store, partial_src) -> None:
    from app.agent_door.door import Door

    src = partial_src["raise_at_3"]
    shutil.copytree(src, store["results"] / src.name)
    summary = Door().job_summary(src.name)
    assert summary["status"] == "failed"
    assert summary["caveats"][0] == _note(store["results"] / src.name), summary["caveats"]
    configs = {row[C.CONFIG_LABEL] for row in summary["durations"]["rows"]}
    assert configs == {"n=1", "n=2", "n=4", "n=5", "n=6"}, configs


def test_a_failed_job_of_another_tab_is_one_line_naming_its_config(store, app,
                                                                   monkeypatch) -> None:
    """A fresh user of session 21: another tab's failed job showed a red box, a warning and a
    note, the failure said three times, its config as a Python tuple ``(3,)``. Another tab's
    failure is one line, the config as the pages label it (n=3); the tab that queued it keeps
    its box, and no warning there repeats it."""
    from app.sidebar import job_panel
    from app.ui import state

    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    at = app()
    manager = cached.job_manager()
    job_id = manager.submit(validate_spec({"kernels": ["raise_at_3"], "configs": CONFIGS,
                                           "runs": 2, "backend": "cpu", "warmup": 0}))
    assert manager.wait(job_id, 120) == "failed"
    at.run()  # this session did not queue it: another tab's job
    assert not at.exception, at.exception
    panel = [c.value.replace("\\", "") for c in at.sidebar.caption]
    assert not at.sidebar.error and not at.sidebar.warning
    said = [line for line in panel if "raise_at_3" in line]  # its own lines, not the CPU's
    assert said == [job_panel.failure_line(manager.get(job_id),
                                           job_panel.kept_note(manager.get(job_id)))], panel
    assert "n=3" in said[0] and "(3,)" not in said[0]
    at.session_state[state.OWN_JOBS] = [job_id]  # the tab that queued it
    at.run()
    (box,) = [e.value.replace("\\", "") for e in at.sidebar.error]
    assert "at config n=3 raised" in box and "(3,)" not in box
    # (a contended CPU's warning may stand there: it says something else)
    assert not [c for c in at.sidebar.caption if c.value.startswith("⚠") and "raise" in c.value]

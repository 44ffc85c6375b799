"""Compare with an unfinished job in the sidebar, and with a partial job (session 22's fresh
user): real cpu jobs of the worker with the kernels of tests/fixtures/kernel_files_partial.

- A running or cancelled sidebar job is not compared; the pair the page picks instead runs
  forward in time (the earlier job the baseline: it showed the older job as Candidate).
- A job cancelled after 3 of its 6 configs is compared with a done job on the 3 both measured;
  the page says which side is partial and which configs it lacks, and the gate (page, agent
  door) gives no verdict: every row not comparable, ``compare``'s exit 3.
- The job lists say "cancelled, partial: 3 of 6 configs" (sidebar Job box, History)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from apptest_helpers import unescape
from app.core.markdown import code, esc
from app.core.views.compare import NOT_SHOWN_WHY, lacking_configs, partial_text
from app.services.result_store import SOURCE_LOCAL, read_info
from app.sidebar.job_selector import box_label
from profiling_worker.bundle.gate import context as gate_context, report
from profiling_worker.bundle.gate.exit_codes import EXIT_NOT_JUDGED
from profiling_worker.bundle.gate.judge import GateOptions, judge
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from tests.partial_job import CONFIGS, record_job

DONE, PARTIAL = "20270101-000000-cancel_at_4-0001", "20270101-010000-cancel_at_4-0002"
#: A copy of DONE submitted later, and a job submitted after both that has no result.
AGAIN, UNFINISHED = "20270101-020000-cancel_at_4-0003", "20270101-030000-cancel_at_4-0004"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The worker's two jobs of ``cancel_at_4``, once: done at n=1..3 (the kernel cancels its
    job at n=4 only), cancelled at n=4 of n=1..6 (3 configs kept)."""
    root = tmp_path_factory.mktemp("worker")
    return {DONE: record_job(root / DONE, "cancel_at_4", CONFIGS[:3], 0),
            PARTIAL: record_job(root / PARTIAL, "cancel_at_4", CONFIGS, 1)}


def _plant(results: Path, src: Path, job_id: str, hour: int) -> Path:
    """``src`` as ``job_id`` in the store, submitted at ``hour`` on 2027-01-01 (UTC)."""
    dest = results / job_id
    shutil.copytree(src, dest)
    manifest = json.loads((dest / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest.update(job_id=job_id, created_at=f"2027-01-01T{hour:02d}:00:00+00:00")
    (dest / C.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return dest


@pytest.fixture
def jobs(store, recorded) -> dict[str, Path]:
    """The store with the done job (00:00) and the partial one (01:00)."""
    return {job: _plant(store["results"], recorded[job], job, hour)
            for hour, job in enumerate((DONE, PARTIAL))}


def _pair(at) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    assert not at.exception, at.exception
    return (at.selectbox(key="compare-baseline").value,
            at.selectbox(key="compare-candidate").value)


@pytest.mark.parametrize("status", ["running", "cancelled"])
def test_an_unfinished_sidebar_job_gives_a_pair_forward_in_time(store, recorded, app,
                                                                status: str) -> None:
    """Two done jobs and a newer one without results selected: the page shows the two, the
    earlier as baseline (it showed the newer as baseline, the older as candidate), and says
    why the selected job is not shown."""
    _plant(store["results"], recorded[DONE], DONE, 0)
    _plant(store["results"], recorded[DONE], AGAIN, 2)
    unfinished = _plant(store["results"], recorded[DONE], UNFINISHED, 3)
    shutil.rmtree(unfinished / C.TABLES_DIR)
    manifest = json.loads((unfinished / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest.update(status=status, finished_at=None)
    (unfinished / C.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    at = app("compare", query={"job": UNFINISHED})
    assert _pair(at) == (DONE, AGAIN)
    (said,) = [unescape(i.value) for i in at.info if UNFINISHED in i.value]
    assert NOT_SHOWN_WHY in said and f"`{DONE}`" in said and f"`{AGAIN}`" in said, said


def test_a_partial_job_is_compared_on_the_configs_both_measured(jobs, app) -> None:
    at = app("compare", query={"job": PARTIAL})
    assert _pair(at) == (DONE, PARTIAL)  # the done job was submitted first
    manifest = read_manifest(jobs[PARTIAL])
    assert lacking_configs(manifest) == ["n=4", "n=5", "n=6"]  # cancelled while n=4 ran
    said = partial_text("candidate", PARTIAL, str(JobStatus.CANCELLED), manifest, code, esc)
    assert said in [w.value for w in at.warning], [w.value for w in at.warning]
    frame = at.dataframe[0].value
    assert sorted(frame["n"]) == [1, 2, 3]
    assert set(frame["Verdict"]) == {"not comparable"}  # no verdict with a partial side
    assert frame["Ratio"].notna().all()  # but the ratios, each config's
    # the gate's own judgement of the two folders: not judged, said as incomplete results
    gate = judge(GateSide.load(jobs[DONE]), GateSide.load(jobs[PARTIAL]), GateOptions())
    assert report.exit_code(gate) == EXIT_NOT_JUDGED
    assert "the candidate results are incomplete" in gate.context_headline
    shown = unescape(" ".join(w.value for w in at.warning))
    assert gate.context_headline in shown and "measured differently" not in shown
    # said once: the partial box has the configs measured and lacking; the Not comparable
    # box names the side partial without its record again (session 23's fresh user)
    assert manifest[gate_context.PARTIAL]  # its record: "Partial: 3 of 6 configs ...", ...
    for sentence in map(str, manifest[gate_context.PARTIAL]):
        assert shown.count(sentence) == 0, sentence
    assert unescape(" ".join(w.value for w in at.warning)).count(unescape(said)) == 1
    assert "the candidate is partial, as said above" in shown
    # the counts in the CLI's words (report.pair_counts), the page's outcomes only
    captions = [unescape(c.value) for c in at.caption]
    assert report.pair_counts(gate, every_outcome=False) in captions, captions
    assert report.pair_counts(gate) in report.headline(gate)
    # picked the other way round by the user: the baseline is the partial side
    at.selectbox(key="compare-baseline").set_value(PARTIAL).run()
    at.selectbox(key="compare-candidate").set_value(DONE).run()
    assert _pair(at) == (PARTIAL, DONE)
    said = partial_text("baseline", PARTIAL, str(JobStatus.CANCELLED), manifest, code, esc)
    assert said in [w.value for w in at.warning]


def test_the_agent_door_gives_no_verdict_with_a_partial_side(jobs) -> None:
    """The door judges through the page's gate call: not judged (exit 3), never passed."""
    from app.agent_door.door import Door

    decision = Door().compare_jobs(DONE, PARTIAL)
    assert decision["verdict"] == "not judged" and decision["exit_code"] == EXIT_NOT_JUDGED
    assert decision["counts"]["not comparable"] == 3 and decision["counts"]["same"] == 0
    assert any("candidate bundle is partial" in c for c in decision["context"])


def test_the_job_lists_say_a_cancelled_job_kept_configs(jobs, app) -> None:
    """Session 22's fresh user read "cancelled" of a job that kept 3 configs: the sidebar's
    Job box and History say partial, and how many; the box's label says the picked job's
    status (issue 37: the closed box cut it)."""
    said = partial.status_text(JobStatus.CANCELLED, read_manifest(jobs[PARTIAL]))
    assert said == "cancelled, partial: 3 of 6 configs"
    at = app("history")
    assert not at.exception, at.exception
    box = at.sidebar.selectbox(key="sidebar-job")
    assert [o for o in box.options if o.startswith(PARTIAL) and said in o], box.options
    for job_id, status in ((DONE, "done"), (PARTIAL, said)):
        at.sidebar.selectbox(key="sidebar-job").set_value(job_id).run()
        assert not at.exception, at.exception
        label = at.sidebar.selectbox(key="sidebar-job").label
        assert label == box_label(read_info(jobs[job_id], SOURCE_LOCAL)), label
        assert label.endswith(status), label
    table = at.dataframe[0].value
    status = dict(zip(table["Job"], table["Status"]))
    # History says how the cancel came too (session 25)
    manifest = read_manifest(jobs[PARTIAL])
    how = partial.cancel_said(manifest)
    cancelled = dict(zip(table["Job"], table["How cancelled"]))  # its own column (session 27)
    assert how.startswith("SIGTERM") and (status[PARTIAL], cancelled[PARTIAL]) == (said, how)
    assert status[DONE] == "done" and pd.isna(cancelled[DONE]), (status, cancelled)

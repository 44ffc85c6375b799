"""Files page, "Replicate this job": the recorded H200 pair of one spec judged reproduced
(TOST), the tolerance changes the verdict, and a cpu job's spec is run again from the page."""

from __future__ import annotations

from apptest_helpers import texts, wait_until

from app.ui import cached
from tests.scenarios import SCENARIOS

JOB = "20261129-230000-matmul-0001"  # the seeded cpu bundle (conftest)


def _table(at):
    return next(df.value for df in at.dataframe if "Replication" in df.value.columns)


def test_h200_pair_of_one_spec_is_judged_reproduced(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("files", query={"job": "h200-cupti-gate-base"})
    assert not at.exception
    assert at.selectbox(key="files-replica").options == ["h200-cupti-gate-again"]
    assert "**reproduced**: `h200-cupti-gate-again` against `h200-cupti-gate-base`" in texts(at)
    assert _table(at)["Replication"].tolist() == ["reproduced"] * 3
    assert "No re-run here" in texts(at)  # this machine has no CUPTI: said, no button
    at.number_input(key="files-tolerance").set_value(0.5).run()
    assert "**not decided**" in texts(at)
    assert "runs a side would likely decide it" in " ".join(_table(at)["ReplicationReason"])


def test_a_cpu_jobs_spec_is_run_again_and_offered_as_replica(seeded, app) -> None:
    at = app("files", query={"job": JOB})
    assert "No other done job ran this spec yet." in texts(at)
    at.button(key="files-replicate").click().run()
    assert not at.exception
    new = [j for j in cached.job_manager().snapshot() if j.job_id != JOB]
    assert len(new) == 1
    wait_until(lambda: not cached.job_manager().get(new[0].job_id).active)
    assert cached.job_manager().get(new[0].job_id).status == "done"
    at.run()
    assert at.selectbox(key="files-replica").options == [new[0].job_id]
    verdict = set(_table(at)["Replication"])
    assert verdict <= {"reproduced", "not reproduced", "not decided", "not comparable"}

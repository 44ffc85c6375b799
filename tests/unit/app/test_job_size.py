"""A very large job is asked about before it is queued (issue 37: 2,000 sizes x 10 runs, 20,000
runs, was queued silently), by every door: the estimate (app/core/job_size.py), kernel-sweep's
--yes and the agent door's confirm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling_worker.bundle.schema.spec import validate_spec

from app import sweep_cli
from app.agent_door.door import Door
from app.core import job_size, preflight

BIG = {"kernels": ["matmul"], "annotations": ["fp32"],
       "configs": [{"n": n} for n in range(1, 2001)], "runs": 10, "backend": "cpu"}
SMALL = {**BIG, "configs": [{"n": 32}, {"n": 64}], "runs": 3}


def ask(spec, preflight_s: float | None = None) -> str | None:  # type: ignore[no-untyped-def]
    """:func:`job_size.confirm_text` of ``spec``'s own estimate, as the doors ask it."""
    return job_size.confirm_text(spec, job_size.estimate(spec, preflight_s))


def test_a_cpu_estimate_without_a_preflight_is_an_assumption_said_as_such() -> None:
    est = job_size.estimate(validate_spec(BIG))
    assert est.runs == 20_000
    # the fixed start of a cpu job plus the assumed seconds of each run
    assert est.seconds == pytest.approx(2.0 + 20_000 * job_size.CPU_RUN_S)
    assert "assumed" in est.source and "not measured" in est.source
    text = ask(validate_spec(BIG))
    assert text is not None and text.startswith(
        "This job has 20,000 runs (2,000 configs × 10 runs × 1 kernel), about 3 min on cpu "
        "(assumed 10 ms a run, not measured; Pre-flight measures it): over 10 min or 10,000 "
        "runs.")
    assert ask(validate_spec(SMALL)) is None


def test_a_preflight_of_the_spec_wins_and_its_time_alone_can_ask() -> None:
    small = validate_spec(SMALL)  # 6 runs: under the runs bound, over the time bound
    est = job_size.estimate(small, preflight_s=1500.0)
    assert (est.seconds, est.source) == (1500.0, "by its Pre-flight")
    text = ask(small, 1500.0)
    assert text is not None and "about 25 min on cpu (by its Pre-flight)" in text
    assert ask(small, 30.0) is None


def test_a_gpu_estimate_is_the_preflight_fit_at_one_launch_a_region() -> None:
    """Nsight Compute: 0.19 s a launch and 10 s fixed (app/core/preflight.py's fit), each run
    at least one launch of its one region: 4,000 runs are over 10 minutes, 1,000 are not."""
    ncu = validate_spec({**BIG, "configs": BIG["configs"][:400], "backend": "ncu"})
    est = job_size.estimate(ncu)
    assert est.seconds == pytest.approx(preflight.planned_seconds(ncu, 4000, 0.0))
    assert est.seconds == pytest.approx(10.0 + 0.19 * 4000)
    assert est.source.startswith("at least")
    assert ask(ncu) is not None
    assert ask(validate_spec({**BIG, "configs": BIG["configs"][:100],
                                                "backend": "ncu"})) is None


def test_the_runs_bound_asks_whatever_the_time() -> None:
    many = validate_spec({**BIG, "configs": BIG["configs"][:1001]})  # 10,010 runs, ~2 min
    assert job_size.estimate(many).seconds < job_size.ASK_ABOVE_S
    assert ask(many) is not None
    assert ask(validate_spec({**BIG, "configs": BIG["configs"][:1000]})) is None


@pytest.mark.parametrize(("seconds", "said"), [(40, "about 40 s"), (1500, "about 25 min"),
                                               (11_520, "about 3.2 h")])
def test_duration_text(seconds: float, said: str) -> None:
    assert job_size.duration_text(seconds) == said


def test_kernel_sweep_refuses_a_large_job_unless_yes(tmp_path: Path, capsys) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(BIG), encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir()
    assert sweep_cli.main([str(spec_file), "--results", str(results), "--local"]) == 5
    err = capsys.readouterr().err
    assert "This job has 20,000 runs" in err and "--yes" in err
    assert list(results.iterdir()) == [], "nothing was queued"


def test_the_agent_door_returns_the_estimate_and_queues_only_on_confirm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(results))
    door = Door()
    try:
        answer = door.submit_and_wait(BIG, timeout_s=0)
        assert answer["job_id"] is None and answer["status"] == "not queued"
        assert answer["estimate"]["runs"] == 20_000
        assert answer["estimate"]["ask_above_runs"] == job_size.ASK_ABOVE_RUNS
        assert "confirm=true" in answer["note"]
        assert not results.exists() or not any(results.iterdir())
        queued = door.submit_and_wait(BIG, timeout_s=0, confirm=True)
        assert queued["job_id"] and queued["status"] in ("queued", "running")
        door.cancel_job(str(queued["job_id"]))
    finally:
        door.shutdown()

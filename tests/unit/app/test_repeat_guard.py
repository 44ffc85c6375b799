"""One submission per intent (issue 37): an identical spec queued moments ago is found in the
store, by its folder's submit second and its spec.json, whichever door queued it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import write_manifest
from profiling_worker.bundle.schema.spec import JobSpec, validate_spec

from app import sweep_cli
from app.services import repeat_guard
from app.services.job_model import claim_job_dir

SPEC = {"kernels": ["matmul"], "configs": [{"n": 32}], "runs": 2, "backend": "cpu"}


def _queued(results: Path, spec: JobSpec, when: float) -> str:
    """A job folder as every door makes it: a time-based id and the spec beside it."""
    from app.services.job_model import new_job_id
    job_id, path = claim_job_dir(results, spec, lambda s: new_job_id(s, when))
    (path / columns.SPEC_FILE).write_text(json.dumps(spec.to_json()), encoding="utf-8")
    return job_id


def test_a_twin_of_the_last_seconds_is_found_and_an_older_or_other_one_is_not(tmp_path) -> None:
    spec, now = validate_spec(SPEC), float(int(time.time()))  # ids have whole seconds
    assert repeat_guard.recent_twin(tmp_path / "absent", spec) is None
    old = _queued(tmp_path, spec, now - 120)
    _queued(tmp_path, validate_spec({**SPEC, "runs": 3}), now - 1)
    assert repeat_guard.recent_twin(tmp_path, spec, now) is None, old
    twin = _queued(tmp_path, validate_spec({**SPEC, "label": "again"}), now - 2)
    assert repeat_guard.recent_twin(tmp_path, spec, now) == twin  # the label is not the spec
    text = repeat_guard.twin_text(tmp_path, twin, now)
    assert twin in text and "2 s ago" in text
    (tmp_path / "not-a-job").mkdir()
    assert repeat_guard.submitted_at("not-a-job") is None


def test_the_twin_text_says_the_twins_status_now(tmp_path) -> None:
    """A fresh user's find: "An identical job (<id>) was queued 4 s ago" of a job already
    done. The text says it was submitted, and its status as its manifest has it now."""
    now = float(int(time.time()))
    twin = _queued(tmp_path, validate_spec(SPEC), now - 4)
    assert repeat_guard.twin_text(tmp_path, twin, now).startswith(  # no manifest yet
        f"An identical job ({twin}) was submitted 4 s ago. Queue another copy? It would run "
        "after the first")
    manifest = {"schema_version": 1, "job_id": twin, "spec": SPEC, "backend": {"name": "cpu"}}
    # a fresh user's find: "It would run measure" of a done twin
    for status, after in (("queued", "run after the first and "), ("done", "")):
        write_manifest(tmp_path / twin, {**manifest, "status": status})
        assert repeat_guard.twin_text(tmp_path, twin, now) == (
            f"An identical job ({twin}) was submitted 4 s ago, {status}. Queue another copy? "
            f"It would {after}measure the same configs again.")


def test_kernel_sweep_refuses_a_twin_unless_again(tmp_path, capsys) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC), encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir()
    twin = _queued(results, validate_spec(SPEC), time.time())
    assert sweep_cli.main([str(spec_file), "--results", str(results), "--local"]) == 4
    err = capsys.readouterr().err
    assert twin in err and "--again" in err
    assert sorted(p.name for p in results.iterdir()) == [twin], "nothing else was queued"


def test_a_sweep_names_the_process_that_owns_it() -> None:
    """Issue 37: a sweep started by kernel-sweep was said to be watched by "the dashboard
    server"; the manifest now names the process, and the panel's text reads it."""
    from app.services import job_book, sweep_resume

    assert job_book.process_name("/venv/bin/kernel-sweep") == "kernel-sweep"
    assert job_book.process_name("/repo/app/sweep_cli.py") == "kernel-sweep"
    assert job_book.process_name("/venv/bin/streamlit") == "dashboard server"
    server = {"pid": 7, "host": "h", "process": "kernel-sweep"}
    assert sweep_resume.watcher_text({"server": server}) == "kernel-sweep pid 7 on host h"
    assert sweep_resume.watcher_text({"server": {"pid": 7, "host": "h"}}).startswith(
        "dashboard server pid 7")


def test_the_readme_states_the_window_the_guard_uses() -> None:
    """The README's walk-through says how soon a repeat is asked about: the constant itself,
    named where it is defined, so the two cannot drift apart."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    said = re.search(r"only within (\d+) s of the first:\s+`REPEAT_WINDOW_S` in "
                     r"app/services/repeat_guard\.py", readme)
    assert said, "README no longer states the repeat window with its constant"
    assert float(said.group(1)) == repeat_guard.REPEAT_WINDOW_S

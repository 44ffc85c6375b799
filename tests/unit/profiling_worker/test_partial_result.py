"""A cancelled job, and one whose kernel raises at one config, keep the configs they measured:
run in-process through ``runner.run_job`` on the cpu backend with user kernels that cancel the
job (SIGTERM to the worker itself, as the app's Cancel sends it) or raise at one size. The
bundle's tables hold the whole configs measured, its manifest says which were not and why, the
loader reads it, and the gate refuses it as incomplete."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from types import ModuleType

import pytest

from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.gate.context import INCOMPLETE, differences
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.number_text import when_text
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from profiling_worker.job import runner

KERNELS = Path(__file__).parents[2] / "fixtures" / "kernel_files_partial"
CONFIGS = [{"n": n} for n in (1, 2, 3, 4, 5, 6)]


@pytest.fixture
def kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two kernels' folder; run_job's SIGTERM handler undone after."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def _run(tmp_path: Path, kernel: str) -> Path:
    job = tmp_path / "results" / f"20270101-000000-{kernel}-0001"
    job.mkdir(parents=True)
    spec = {"kernels": [kernel], "configs": CONFIGS, "runs": 3, "backend": "cpu", "warmup": 1}
    (job / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    assert runner.run_job(job, Channel(job, None)) == 1  # not done
    return job


def test_a_cancel_keeps_the_whole_configs_measured_before_it(tmp_path: Path, kernels) -> None:
    job = _run(tmp_path, "cancel_at_4")
    manifest = read_manifest(job)
    assert manifest["status"] == JobStatus.CANCELLED.value
    record = manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0, 1, 2] and record["total"] == 6
    assert record["cancelled"].startswith("SIGTERM at 20")
    why = {m["label"]: m["why"] for m in record["not_measured"]}
    assert why["n=4"].startswith("cut mid-way by the cancel") and "dropped" in why["n=4"]
    assert why["n=6"].startswith("not run: cancelled (SIGTERM at")
    note = partial.note(manifest)
    assert note is not None and note.startswith("Partial: 3 of 6 configs measured; cancelled")
    assert "config n=4 was cut mid-way" in note
    # the record keeps the ISO 8601 time; the note a person reads says it as "... UTC"
    stamp = record["cancelled"].removeprefix("SIGTERM at ").split(": ")[0]
    assert stamp not in note and when_text(stamp) in note, note
    assert manifest[partial.PARTIAL_KEY] == [note]
    assert manifest["error"]["kind"] == "cancelled"
    # the configs not measured are said by the note, not again as "have no runs"
    assert not [n for n in manifest["notes"] if "have no runs" in n["message"]], manifest["notes"]
    bundle = load_bundle(job)  # the loader reads the tables of the configs measured
    runs = bundle.table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0, 1, 2]
    assert runs.groupby(C.CONFIG).size().tolist() == [3, 3, 3]  # whole configs only
    assert sorted(bundle.table(C.TABLE_AGGREGATED)[C.CONFIG].unique()) == [0, 1, 2]


def test_a_config_that_raises_is_skipped_and_the_others_kept(tmp_path: Path, kernels) -> None:
    before = signal.getsignal(signal.SIGTERM)
    job = _run(tmp_path, "raise_at_3")
    # no cancel came: the handler from before the job is back (a warm worker between jobs is
    # stopped by a SIGTERM, not only noted)
    assert signal.getsignal(signal.SIGTERM) == before
    manifest = read_manifest(job)
    assert manifest["status"] == JobStatus.FAILED.value
    record = manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0, 1, 3, 4, 5] and record["cancelled"] is None
    (missing,) = record["not_measured"]
    assert missing["label"] == "n=3" and "size 3 is refused" in missing["why"]
    assert manifest["error"]["kind"] == "kernel_failed"
    # the config as the pages label it, once (a fresh user read "(3,)", a Python tuple)
    assert manifest["error"]["message"].startswith(
        "1 of 6 configs failed; kernel raise_at_3 at config n=3 raised ValueError")
    note = partial.note(manifest)
    assert note is not None and note.startswith("Partial: 5 of 6 configs measured; "
                                                + partial.failed_text(missing))
    # the config said once: a fresh user read "config n=3 failed: kernel … at config n=3"
    assert note.count("n=3") == 1 and "failed: kernel raise_at_3 raised ValueError" in note
    assert "(3,)" not in note + manifest["error"]["message"]
    runs = load_bundle(job).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0, 1, 3, 4, 5]


def test_the_gate_never_judges_a_partial_job_as_complete(tmp_path: Path, kernels) -> None:
    manifest = read_manifest(_run(tmp_path, "raise_at_3"))
    done = {**manifest, "status": JobStatus.DONE.value}  # even were its status done
    found = [d for d in differences(done, done) if d.kind == INCOMPLETE]  # a busy host: contended
    assert [d.sides for d in found] == [("baseline",), ("candidate",)]
    assert "bundle is partial (Partial: 5 of 6 configs measured" in found[0].text


def test_a_partial_side_never_passes_the_gate_and_is_said_incomplete(tmp_path: Path,
                                                                     kernels) -> None:
    """A cancelled job that kept 3 configs against a done job of those 3 (its copy, made
    whole): the gate judges every row not comparable (exit 3, not judged; never a pass on the
    configs measured, which would say nothing of those it lacks), and says the candidate is
    incomplete, not that the two were "measured differently" (a status is no way of
    measuring)."""
    import shutil

    from profiling_worker.bundle.gate import report
    from profiling_worker.bundle.gate.exit_codes import EXIT_NOT_JUDGED
    from profiling_worker.bundle.gate.judge import GateOptions, judge
    from profiling_worker.bundle.gate.sides import GateSide

    cut = _run(tmp_path, "cancel_at_4")
    whole = tmp_path / "results" / "whole"
    shutil.copytree(cut, whole)
    manifest = read_manifest(whole)
    for key in (partial.PARTIAL_KEY, partial.CONFIGS_KEY, "error"):
        manifest.pop(key, None)
    manifest["status"] = JobStatus.DONE.value
    (whole / C.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    result = judge(GateSide.load(whole), GateSide.load(cut), GateOptions())
    assert report.exit_code(result) == EXIT_NOT_JUDGED
    assert set(result.rows["Outcome"]) == {"not comparable"}, result.rows
    # a busy host adds that both were timed on a contended CPU: said apart, before this
    assert result.context_headline.endswith("the candidate results are incomplete")
    assert "measured differently" not in result.context_headline
    assert "job status: done vs cancelled" in result.context


def test_a_kernel_that_raises_at_every_config_fails_as_before(tmp_path: Path,
                                                              kernels) -> None:
    job = tmp_path / "results" / "20270101-000000-raise-0002"
    job.mkdir(parents=True)
    spec = {"kernels": ["raise_at_3"], "configs": [{"n": 3}], "runs": 2, "backend": "cpu"}
    (job / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    assert runner.run_job(job, Channel(job, None)) == 1
    manifest = read_manifest(job)
    assert manifest["status"] == JobStatus.FAILED.value and "size 3" in manifest["error"]["message"]
    assert partial.CONFIGS_KEY not in manifest and partial.note(manifest) is None


def _cancel_after(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Send this process SIGTERM (the app's Cancel) right after the real ``results.<name>``
    (``write_table``: the bundle's tables, ``finish_bundle``: its manifest) first returns:
    every run was measured by then."""
    real = getattr(_results(), name)
    sent: list[bool] = []

    def then_cancel(*args, **kwargs):
        out = real(*args, **kwargs)
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)
        return out

    monkeypatch.setattr(_results(), name, then_cancel)


def _results() -> ModuleType:
    """The run path's writer module (runner imports it inside run_job)."""
    from profiling_worker.job import results

    return results


def _run_cpu(tmp_path: Path, kernel: str, configs: list[dict[str, int]]) -> tuple[Path, int]:
    job = tmp_path / "results" / f"20270101-000000-{kernel}-0003"
    job.mkdir(parents=True)
    spec = {"kernels": [kernel], "configs": configs, "runs": 3, "backend": "cpu", "warmup": 1}
    (job / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    return job, runner.run_job(job, Channel(job, None))


@pytest.mark.parametrize("during", ["write_table", "finish_bundle"])
def test_a_cancel_after_every_run_was_measured_keeps_the_whole_result(
        tmp_path: Path, kernels, monkeypatch: pytest.MonkeyPatch, during: str) -> None:
    """The cancel lands while the tables (or the manifest) are written: the job ends done with
    every run, and its manifest and events say when the cancel came."""
    _cancel_after(monkeypatch, during)
    job, code = _run_cpu(tmp_path, "raise_at_3", [{"n": 1}, {"n": 2}])
    manifest = read_manifest(job)
    assert code == 0 and manifest["status"] == JobStatus.DONE.value, manifest.get("error")
    # the job over, later SIGTERMs stay ignored after a cancel: the process exits with the
    # job's own code (a sweep task's worker is signalled on every poll)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    assert manifest[partial.LATE_CANCEL_KEY].startswith("SIGTERM at 20")
    note = partial.late_cancel(manifest)
    assert note == partial.late_cancel_note(manifest[partial.LATE_CANCEL_KEY], done=True)
    stamp = manifest[partial.LATE_CANCEL_KEY].removeprefix("SIGTERM at ").split(": ")[0]
    assert stamp not in note and when_text(stamp) in note, note  # no ISO 8601 for a person
    assert note in manifest["warnings"] and partial.note(manifest) is None
    events = [json.loads(line) for line in (job / C.EVENTS_FILE).read_text().splitlines()]
    assert {"event": "warning", "message": note} in [
        {k: e.get(k) for k in ("event", "message")} for e in events]
    runs = load_bundle(job).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {0: 3, 1: 3}  # every run of both


def test_a_cancel_while_a_partial_result_is_written_keeps_its_configs(
        tmp_path: Path, kernels, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job whose kernel raised at one config: a cancel while its tables are written stops
    nothing; it ends failed with the other configs, and says the cancel came after them."""
    _cancel_after(monkeypatch, "write_table")
    job, code = _run_cpu(tmp_path, "raise_at_3", [{"n": n} for n in (1, 2, 3, 4)])
    manifest = read_manifest(job)
    assert code == 1 and manifest["status"] == JobStatus.FAILED.value
    assert manifest[partial.CONFIGS_KEY]["measured"] == [0, 1, 3]
    assert partial.late_cancel(manifest) == partial.late_cancel_note(
        manifest[partial.LATE_CANCEL_KEY], done=False)
    runs = load_bundle(job).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {0: 3, 1: 3, 3: 3}

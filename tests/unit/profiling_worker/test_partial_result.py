"""A cancelled job, and one whose kernel raises at one config, keep the configs they measured:
run in-process through ``runner.run_job`` on the cpu backend with user kernels that cancel the
job (SIGTERM to the worker itself, as the app's Cancel sends it) or raise at one size. The
bundle's tables hold the whole configs measured, its manifest says which were not and why, the
loader reads it, and the gate refuses it as incomplete."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.gate.context import INCOMPLETE, differences
from profiling_worker.bundle.loader import load_bundle
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
    job = _run(tmp_path, "raise_at_3")
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
    assert note is not None and note.startswith("Partial: 5 of 6 configs measured; config n=3 "
                                                "failed: kernel raise_at_3 at config n=3 ")
    assert "(3,)" not in note + manifest["error"]["message"]
    runs = load_bundle(job).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0, 1, 3, 4, 5]


def test_the_gate_never_judges_a_partial_job_as_complete(tmp_path: Path, kernels) -> None:
    manifest = read_manifest(_run(tmp_path, "raise_at_3"))
    done = {**manifest, "status": JobStatus.DONE.value}  # even were its status done
    found = [d for d in differences(done, done) if d.kind == INCOMPLETE]  # a busy host: contended
    assert [d.sides for d in found] == [("baseline",), ("candidate",)]
    assert "bundle is partial (Partial: 5 of 6 configs measured" in found[0].text


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

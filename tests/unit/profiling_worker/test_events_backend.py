"""The CUDA-events backend (profiling_worker/backends/events.py) where there is no CUDA, as on
this machine: its probe, its refusal, a job refused by the worker; and the region loop it
shares with the cpu backend (backends/region_timer.py), run on the host clock that the cpu
backend measures with. Its timings on the H200: tests/gpu/test_events_gpu.py."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.job import runner
from profiling_worker.backends.events import EventsBackend
from profiling_worker.backends.region_timer import HostClock, time_regions
from profiling_worker.backends.registry import choose_backends, run_side
from profiling_worker.backends.run_side import BackendStatus, RunJob
from profiling_worker.catalog.registry import load_registry, make_body
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.errors import BackendUnavailable
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

from tests.unit.profiling_worker.test_backend_choice import env

torch = pytest.importorskip("torch")
SPEC = {"kernels": ["fusion"], "configs": [{"n": 256}, {"n": 512}], "runs": 3, "warmup": 2,
        "backend": B.EVENTS}


def test_the_events_backend_is_registered_like_the_others_and_says_what_it_measures():
    assert run_side(B.EVENTS).name == B.EVENTS and isinstance(run_side(B.EVENTS), EventsBackend)
    caps = B.get(B.EVENTS)
    assert caps.on_gpu and caps.warm and not caps.counters and caps.l2_flush == B.FLUSH_REGION
    assert "launch overhead" in caps.measures and "inter-kernel gaps" in caps.measures
    status = choose_backends(env())[B.EVENTS]
    assert status.available and caps.measures in status.reason
    assert status.reason.startswith("torch 2.11.0+cu130 CUDA events")


def test_the_probe_refuses_without_a_gpu_or_torch_and_names_the_fix():
    no_gpu = choose_backends(env(gpus=[]))[B.EVENTS]
    assert no_gpu == BackendStatus(False, "no NVIDIA GPU visible to NVML",
                                   "run on a machine with an NVIDIA GPU and driver")
    no_torch = choose_backends(env(torch=None))[B.EVENTS]
    assert not no_torch.available and no_torch.reason == "torch is not installed"
    assert "CUDA build of torch" in no_torch.fix and "cpu backend" in no_torch.fix


@pytest.mark.skipif(torch.cuda.is_available(), reason="this checks a host without CUDA")
def test_without_cuda_its_run_and_warm_up_refuse_with_the_torch_build_named(tmp_path: Path):
    """The probe reads NVML only (it never starts CUDA): a GPU host whose torch is a CPU build
    passes it, and the run itself refuses, naming the torch it found."""
    registry = load_registry()
    spec = validate_spec(SPEC, registry.kernels)
    job = RunJob(spec, registry, {"fusion": ("unfused", "fused")}, tmp_path,
                 BackendStatus(True, "probed"), Channel(tmp_path, None), None)
    for call in (lambda: EventsBackend().run(job), lambda: EventsBackend().warm_up(job.status)):
        with pytest.raises(BackendUnavailable) as refused:
            call()
        assert f"torch {torch.__version__} sees none" in str(refused.value)
        assert "torch.cuda.is_available() is False" in str(refused.value)
        assert "CUDA build of torch" in refused.value.hint


def test_a_job_on_a_host_without_a_gpu_fails_as_backend_unavailable(tmp_path: Path,
                                                                     monkeypatch):
    monkeypatch.setattr("profiling_worker.probes.environment.probe_gpus", lambda: [])
    job = tmp_path / "events-job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps(SPEC))
    assert runner.run_job(job, Channel(job, None)) == 1
    manifest = read_manifest(job)
    assert manifest["status"] == "failed"
    assert manifest["error"]["kind"] == "backend_unavailable"
    assert manifest["error"]["message"] == ("backend events cannot run here: no NVIDIA GPU "
                                            "visible to NVML")


class _CountingHostClock(HostClock):
    """The host clock (what the cpu backend measures), noting the order of its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def before_region(self) -> None:
        self.calls.append("before")

    def mark(self) -> int:
        self.calls.append("mark")
        return super().mark()

    def settle(self) -> None:
        self.calls.append("settle")


def test_the_region_loop_times_each_region_once_per_run_after_untimed_warm_up():
    """One row per region, config and run; the flush hook just before each region's start mark
    (outside it); warm-up calls untimed; marks read once per config, after its runs."""
    registry = load_registry()
    spec = validate_spec(SPEC, registry.kernels)
    calls: list[tuple[Any, ...]] = []

    def body(kernel_id, timed):
        real = make_body(registry, kernel_id, ("unfused", "fused"), "cpu", timed)

        def counted(*values, annotate=None):
            calls.append(values)
            return real(*values, annotate=annotate) if annotate else real(*values)
        return counted

    clock = _CountingHostClock()
    t0 = time.perf_counter_ns()
    rows, auto_runs, host_ns, end_mark_ns, shortfall = time_regions(
        spec, body, lambda *a, **k: None, clock)
    assert auto_runs is None and shortfall is None
    # the host time is taken inside the two marks: never above the region's value
    assert len(host_ns) == len(rows) and all(0 < h <= r[C.VALUE] for h, r in zip(host_ns, rows))
    assert len(end_mark_ns) == len(rows) and all(e > 0 for e in end_mark_ns)
    wall = time.perf_counter_ns() - t0
    assert len(calls) == 2 * (2 + 3)  # per config: 2 warm-up calls, 3 timed runs
    regions = 2 * 3 * 2  # configs x runs x regions (unfused, fused)
    assert len(rows) == regions
    per_config = ["before", "mark", "mark"] * (3 * 2) + ["settle"]
    assert clock.calls == per_config * 2
    assert {(r[C.CONFIG], r[C.RUN], r[C.ANNOTATION]) for r in rows} == {
        (c, r, a) for c in (0, 1) for r in range(3) for a in ("unfused", "fused")}
    assert {r[C.KERNEL] for r in rows} == {"host:unfused", "host:fused"}
    assert all(r[C.METRIC] == C.HOST_TIME and r[C.UNIT] == "ns" for r in rows)
    assert all(0 < r[C.VALUE] for r in rows) and sum(r[C.VALUE] for r in rows) < wall


def test_info_collectors_asked_of_the_events_backend_are_named_as_ignored(tmp_path: Path):
    """A GPU backend without nsight-python's info collectors: the job says it dropped them
    (before, only a host backend's were named)."""
    raw = {**SPEC, "collectors": ["sm_clock", "power"]}
    (tmp_path / C.SPEC_FILE).write_text(json.dumps(raw))
    spec = validate_spec(raw, load_registry().kernels)
    assert runner._ignored_by_backend(spec, tmp_path) == [
        "the events backend takes no nsight-python info collectors (the NVML trace samples the "
        "GPU); ignored info collectors: sm_clock, power"]


def test_an_events_spec_times_regions_under_its_own_metric_name() -> None:
    """The events backend's duration is not Nsight Compute's kernel duration: it is named
    events__time_duration.sum, whether the spec asks for nothing or for gpu__time_duration.sum
    (the kernel duration every backend measures); any other metric is refused."""
    base = {"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "events"}
    assert validate_spec(base).metrics == (C.EVENTS_TIME,)
    assert validate_spec({**base, "metrics": [C.GPU_TIME]}).metrics == (C.EVENTS_TIME,)
    with pytest.raises(SpecInvalid, match="measures durations only"):
        validate_spec({**base, "metrics": ["dram__bytes_read.sum"]})
    assert B.duration_metric("events") == C.EVENTS_TIME and C.EVENTS_TIME in C.DURATION_METRICS


def test_the_thermal_limits_of_an_events_spec_are_named_as_ignored(tmp_path: Path):
    """The events backend applies no thermal_mode, so not its limits either (backends.unused,
    the form's rule: s20 greys them out for events); a CLI spec's limits were ignored without a
    word."""
    raw = {**SPEC, "thermal_mode": "off", "thermal_wait": 5, "thermal_cont": 30}
    (tmp_path / C.SPEC_FILE).write_text(json.dumps(raw))
    spec = validate_spec(raw, load_registry().kernels)
    assert runner._ignored_by_backend(spec, tmp_path) == [
        "the events backend does not apply thermal_mode 'off'; ignored",
        "the events backend does not apply thermal_wait 5; ignored",
        "the events backend does not apply thermal_cont 30; ignored"]


@pytest.mark.parametrize("thermal", [None, "off", "manual"])
def test_the_events_run_leaves_the_unapplied_thermal_mode_to_the_job_said_once(
        tmp_path: Path, monkeypatch, thermal: str | None):
    """The form sends no thermal_mode with events (backends.unused): the worker's default then
    warned "does not apply thermal_mode 'auto'" on every job from the sidebar. The backend says
    nothing of it; the job's note (runner._ignored_by_backend) names a non-default mode, once."""
    from profiling_worker.backends import events

    timed = events.Timed([], None, [], [])
    monkeypatch.setattr(events, "require_cuda", lambda: None)
    monkeypatch.setattr(events, "CudaEventClock", lambda torch, flush: None)
    monkeypatch.setattr(events, "L2Flush", lambda: None)
    monkeypatch.setattr(events, "time_regions", lambda *args: timed)
    monkeypatch.setattr(events.nb, "cuda_device", lambda uuid: {})
    raw = {**SPEC, **({"thermal_mode": thermal} if thermal else {})}
    registry = load_registry()
    spec = validate_spec(raw, registry.kernels)
    job = RunJob(spec, registry, {"fusion": ("unfused", "fused")}, tmp_path,
                 BackendStatus(True, "probed"), Channel(tmp_path, None), None)
    said = EventsBackend().run(job).warnings + runner._ignored_by_backend(spec, raw)
    assert [w for w in said if "thermal_mode" in w] == (
        [f"the events backend does not apply thermal_mode {thermal!r}; ignored"]
        if thermal else [])

"""The backend registry (profiling_worker/bundle/schema/backends.py: names, variants, capabilities;
profiling_worker/backends/registry.py: one RunSide object per name)."""

import inspect
import types
from typing import get_args

import pytest

from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.registry import RUN_SIDES, choose_backends, run_side
from profiling_worker.backends.run_side import BackendStatus, RunJob, RunSide
from profiling_worker.catalog.registry import load_registry
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.spec import validate_spec

from tests.unit.profiling_worker.test_backend_choice import env


def test_the_spec_literal_and_the_registry_name_the_same_backends():
    assert set(get_args(B.Name)) == set(B.NAMES)
    assert B.NAMES[0] == B.DEFAULT  # the sidebar offers the default first


def test_each_environment_report_entry_resolves_to_the_variant_it_describes():
    old = env(nsight_python="0.9.6", ncu={"path": "/n", "version": "2025.3.1.0"})
    for probed, ncu_mode in ((env(), B.ATTACH), (old, B.LAUNCH)):
        report = choose_backends(probed)
        assert set(report) == set(B.NAMES)
        assert B.resolve(B.NCU, report[B.NCU].nsight_mode).mode == ncu_mode
    cupti = choose_backends(env())[B.CUPTI]
    assert B.resolve(B.CUPTI, cupti.nsight_mode) is B.CUPTI_BACKEND


def test_launch_mode_is_the_only_variant_a_warm_worker_cannot_serve():
    assert [(b.name, b.mode) for b in B.ALL if not b.warm] == [(B.NCU, B.LAUNCH)]
    assert set(B.WARM_NAMES) == set(B.NAMES)


def test_capabilities_answer_the_questions_callers_ask():
    assert not B.on_gpu(B.CPU) and B.on_gpu(B.NCU) and B.on_gpu("unknown")
    assert B.duration_metric(B.CPU) == C.HOST_TIME and B.duration_metric("unknown") == C.GPU_TIME
    assert B.find("unknown") is None and B.find(B.CUPTI) is B.CUPTI_BACKEND
    assert [b.name for b in B.ALL if b.section_sets] == [B.NCU, B.NCU]
    assert B.CUPTI_BACKEND.l2_flush == B.FLUSH_REGION
    # nsight-python 1.1's CUPTI collector takes no clock_control or replay_mode
    assert set(B.OPTIONS) - set(B.CUPTI_BACKEND.options) == {"clock_control", "replay_mode"}
    assert B.CPU_BACKEND.options == () and B.NCU_ATTACH.options == B.OPTIONS
    with pytest.raises(KeyError, match=f"is not one of {', '.join(B.NAMES)}"):
        B.get("no-such-backend")


def test_every_backend_name_has_one_run_side_object_that_owns_probe_warm_up_and_run():
    assert list(RUN_SIDES) == list(B.NAMES)
    for name in B.NAMES:
        side = run_side(name)
        assert isinstance(side, RunSide) and side.name == name
        assert not inspect.isabstract(type(side)), name
        assert side.probe(env()) == choose_backends(env())[name]
        assert isinstance(side.probe(env()), BackendStatus)
    with pytest.raises(KeyError, match="is not one of"):
        run_side("no-such-backend")


def test_a_status_crosses_the_report_as_the_json_the_app_reads():
    """The app reads ``available``, ``reason``, ``fix``, ``nsight_mode`` (and CUPTI's
    ``libcupti``) from the report; a warm worker reads its cached report back."""
    for status in choose_backends(env()).values():
        entry = status.to_json()
        assert {"available", "nsight_mode", "reason", "fix"} <= set(entry)
        assert BackendStatus.from_json(entry) == status
    assert choose_backends(env())[B.CUPTI].to_json()["libcupti"] == "/x/libcupti.so.13"
    assert "libcupti" not in choose_backends(env())[B.CPU].to_json()
    assert BackendStatus.from_json({}) == BackendStatus(False, "")


class _FakeNsightBackend(nb.NsightBackend):
    """An nsight-python backend whose ``load`` and ``collect`` are the test's: the run order
    of :meth:`NsightBackend.run` is what is under test."""

    name = B.NCU

    def __init__(self, load, collect):
        self._load, self._collect = load, collect

    def probe(self, env):
        return BackendStatus(True, "test")

    def load(self, status):
        return self._load()

    def collect(self, nsight, spec, bodies, out_dir, emit, uuid):
        return self._collect(nsight, spec, bodies, out_dir, emit, uuid)


def _job(tmp_path, nsight_mode):
    spec = validate_spec({"kernels": ["vector_add"], "configs": [{"n": 1024}], "runs": 2})
    registry = load_registry()
    annotations = {"vector_add": registry.kernels["vector_add"].annotations}
    return RunJob(spec, registry, annotations, tmp_path, BackendStatus(True, "", "", nsight_mode),
                  Channel(tmp_path, None), "GPU-1")


@pytest.mark.parametrize("nsight_mode, warms_up", [(B.LAUNCH, False), (B.ATTACH, True)])
def test_a_launch_mode_parent_profiles_without_starting_cuda(monkeypatch, tmp_path, nsight_mode,
                                                              warms_up):
    """nsight-python 0.9.x re-runs the worker under ncu: the parent must not touch CUDA (its
    child runs the kernels); attach mode warms up and profiles in this process."""
    warmed, profiled = [], []
    monkeypatch.setattr(nb, "_LOADED", {})
    monkeypatch.delenv(nb.LAUNCH_CHILD_ENV, raising=False)
    monkeypatch.setattr(nb, "warm_up_bodies", lambda spec, bodies, uuid, warming, times=None,
                        only=None: warmed.append(uuid) or {})
    fake = types.SimpleNamespace(annotate=lambda _name: None)

    def profile(nsight, spec, bodies, out_dir, emit, uuid):
        profiled.append((nsight, len(bodies), out_dir.name, uuid))

    assert _FakeNsightBackend(lambda: fake, profile).run(_job(tmp_path, nsight_mode)) is None
    assert profiled == [(fake, 1, C.NSIGHT_DIR, "GPU-1")]
    assert warmed == (["GPU-1"] if warms_up else [])


@pytest.mark.parametrize("nsight_mode", [B.LAUNCH, B.ATTACH])
def test_the_preflight_verdict_comes_after_the_nsight_import_and_before_profiling(
        monkeypatch, tmp_path, nsight_mode):
    """The ncu metric query runs in the background while nsight-python is imported (1.2-1.7 s
    each on the H200); its verdict is taken once the import is done, before any profiling."""
    order: list[str] = []
    monkeypatch.setattr(nb, "_LOADED", {})
    monkeypatch.delenv(nb.LAUNCH_CHILD_ENV, raising=False)
    monkeypatch.setattr(nb, "warm_up_bodies", lambda spec, bodies, uuid, warming, times=None,
                        only=None: order.append("warm-up") or {})
    fake = types.SimpleNamespace(annotate=lambda _name: None)
    job = _job(tmp_path, nsight_mode)
    job = RunJob(job.spec, job.registry, job.annotations, job.job_dir, job.status, job.channel,
                 job.uuid, lambda: order.append("verdict"))

    def load():
        order.append("import")
        return fake

    _FakeNsightBackend(load, lambda *a: order.append("profile")).run(job)
    assert order[:2] == ["import", "verdict"] and order[-1] == "profile"


def test_a_refused_preflight_stops_the_job_even_when_the_import_fails(monkeypatch, tmp_path):
    """No counter permission is the cause to name, not the import error that followed it."""
    monkeypatch.setattr(nb, "_LOADED", {})
    job = _job(tmp_path, B.ATTACH)

    def refused():
        raise nb.WorkerError("no permission to read GPU performance counters", "fix",
                             kind="counter_permission")

    job = RunJob(job.spec, job.registry, job.annotations, job.job_dir, job.status, job.channel,
                 job.uuid, refused)

    def load():
        raise ImportError("no nsight")

    with pytest.raises(nb.WorkerError, match="permission"):
        _FakeNsightBackend(load, lambda *a: None).run(job)


def _warm_up(monkeypatch, times: list[float] | None = None,
             only: list[int] | None = None) -> list[tuple[str, object]]:
    """The steps of :func:`nb.warm_up_bodies` over 2 configs x 2 warm-up calls: each config's
    ``warming``, each ``call``, each ``sync`` (CUDA's, stood in for: no GPU)."""
    import torch

    spec = validate_spec({"kernels": ["vector_add"], "configs": [{"n": 1024}, {"n": 2048}],
                          "runs": 2, "warmup": 2})
    seen: list[tuple[str, object]] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: seen.append(("sync", None)))
    monkeypatch.setattr(nb, "cuda_device", lambda uuid: {"uuid": uuid})

    def body(*values, annotate):
        seen.append(("call", values))

    nb.warm_up_bodies(spec, [body], "GPU-1", lambda config: seen.append(("warming", config)),
                      times, only)
    return seen


def test_the_warm_up_names_each_config_before_its_calls(monkeypatch, tmp_path):
    """A GPU job's warm-up reports each config as it begins (stage ``warm-up`` in the job's
    events), before that config's calls; CUDA's sync and device check are left out here (no
    GPU): ``tests/gpu/test_h200_bundles.py`` checks the recorded events on the card."""
    expected = [step for i, n in enumerate((1024, 2048))
                for step in [("warming", i), *[("call", (n,))] * 2]]
    assert _warm_up(monkeypatch) == [*expected, ("sync", None)]


def test_the_timed_warm_up_times_each_configs_last_call(monkeypatch):
    """For the CUPTI backend's plan of calls (cupti.plan_calls): CUDA's start synchronised
    first, each config's last warm-up call between two syncs."""
    times: list[float] = []
    per_config = [[("warming", i), ("call", (n,)), ("sync", None), ("call", (n,)),
                   ("sync", None)] for i, n in enumerate((1024, 2048))]
    assert _warm_up(monkeypatch, times) == [("sync", None), *sum(per_config, []),
                                            ("sync", None)]
    assert len(times) == 2 and all(t >= 0 for t in times)


def test_a_launch_child_warms_up_its_calls_configs_only(monkeypatch):
    """An Nsight Compute launch-mode child runs one call of the job (ncu_calls.py): it warms up
    that call's configs, not every config of the job again."""
    assert _warm_up(monkeypatch, only=[1]) == [("warming", 1), ("call", (2048,)),
                                               ("call", (2048,)), ("sync", None)]

"""Which GPU (issue 11, case 3): the spec's ``gpu`` indexes the visible GPUs; CUDA, NVML
sampling, the info collectors, thermal control and the manifest address one UUID. NVML is a
fake with two GPUs whose readings differ, so a reading from the wrong GPU shows."""

from __future__ import annotations

import sys
import time
import types

import pytest

from profiling_worker.probes import gpu_select
from profiling_worker.bundle.errors import SpecRejected

GPUS = [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0a0a0a0a-0000-0000-0000-000000000000"},
        {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-1b1b1b1b-1111-1111-1111-111111111111"}]
UUID0, UUID1 = GPUS[0]["uuid"], GPUS[1]["uuid"]
MIG = "MIG-2c2c2c2c-2222-2222-2222-222222222222"


def _fake_nvml() -> types.ModuleType:
    """pynvml with GPU 0 at 30 C / 345 MHz, 100 GiB free and GPU 1 at 61 C / 1980 MHz,
    7 GiB free; a MIG instance of GPU 1 with 3 GiB free. Handles are the UUIDs; ``by_index``
    records index lookups."""
    nv = types.ModuleType("pynvml")
    temps = {UUID0: 30, UUID1: 61}
    clocks = {UUID0: 345, UUID1: 1980}
    nv.NVML_CLOCK_SM, nv.NVML_CLOCK_MEM, nv.NVML_TEMPERATURE_GPU = 1, 2, 0
    nv.by_index = []
    nv.nvmlInit = nv.nvmlShutdown = lambda: None

    def by_uuid(uuid):
        if uuid not in temps and uuid != MIG:
            raise RuntimeError(f"NVML: no device {uuid}")
        return uuid

    def by_index(i):
        nv.by_index.append(i)
        return GPUS[i]["uuid"]

    nv.nvmlDeviceGetHandleByUUID = by_uuid
    nv.nvmlDeviceGetHandleByIndex = by_index
    nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle = lambda h: UUID1 if h == MIG else None
    nv.nvmlDeviceGetTemperature = lambda h, _kind: temps[h]
    nv.nvmlDeviceGetClockInfo = lambda h, kind: clocks[h] if kind == 1 else 3201
    nv.nvmlDeviceGetPowerUsage = lambda h: 100_000 if h == UUID0 else 650_000
    nv.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0
    free = {UUID0: 100 * 2**30, UUID1: 7 * 2**30, MIG: 3 * 2**30}  # bytes free now
    nv.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(
        total=(16 if h == MIG else 140) * 2**30, free=free[h], used=0)
    return nv


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    fake = _fake_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    return fake


@pytest.mark.parametrize(("visible", "gpu", "uuid"), [
    (None, 0, UUID0), (None, 1, UUID1),          # nothing inherited: NVML (PCI bus) order
    ("1", 0, UUID1),                             # Slurm: CUDA_VISIBLE_DEVICES=1, "gpu": 0
    ("1,0", 1, UUID0),                           # the inherited order counts
    (UUID1, 0, UUID1), ("GPU-1b1b", 0, UUID1),   # UUIDs, a unique prefix as CUDA takes it
])
def test_gpu_indexes_the_visible_gpus(visible, gpu, uuid) -> None:
    environ = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
    selected = gpu_select.resolve(gpu, GPUS, environ)
    assert selected.uuid == uuid and selected.index == gpu
    assert selected.nvml_index == (0 if uuid == UUID0 else 1)
    assert selected.visible_devices == visible


def test_a_mig_id_is_used_as_it_is_and_sampled_on_its_parent_gpu(nvml) -> None:
    selected = gpu_select.resolve(0, GPUS, {"CUDA_VISIBLE_DEVICES": MIG})
    assert (selected.uuid, selected.nvml_index) == (MIG, None)
    assert gpu_select.nvml_handle(nvml, MIG) == UUID1


@pytest.mark.parametrize(("visible", "gpu", "listed"), [
    ("1", 1, "1"),             # one GPU allocated, the spec asks for the second
    ("", 0, "none"),           # nothing visible
    ("1,7,0", 1, "1"),         # CUDA stops at the first entry that names no device
])
def test_a_gpu_that_is_not_visible_is_rejected_naming_the_field(visible, gpu, listed) -> None:
    with pytest.raises(SpecRejected) as err:
        gpu_select.resolve(gpu, GPUS, {"CUDA_VISIBLE_DEVICES": visible})
    assert err.value.message.startswith(f"gpu: {gpu} is not a visible GPU")
    assert f"CUDA_VISIBLE_DEVICES={visible!r}: {listed})" in err.value.message


def test_pin_keeps_the_inherited_value_so_a_second_resolution_agrees() -> None:
    environ = {"CUDA_VISIBLE_DEVICES": "1"}
    selected = gpu_select.resolve(0, GPUS, environ)
    gpu_select.pin(selected, environ)
    assert environ == {"CUDA_VISIBLE_DEVICES": UUID1, "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                       "KPROF_VISIBLE_DEVICES": "1"}
    assert gpu_select.resolve(0, GPUS, environ) == selected  # a warm worker's next job
    assert gpu_select.pinned_uuid(environ) == UUID1          # the launch-mode child
    unset: dict[str, str] = {}
    gpu_select.pin(gpu_select.resolve(1, GPUS, unset), unset)
    assert unset["KPROF_VISIBLE_DEVICES"] == "all" and gpu_select.resolve(1, GPUS, unset).uuid == UUID1


def test_same_device_compares_torch_uuid_with_nvml_uuid() -> None:
    assert gpu_select.same_device(UUID1, UUID1[4:])
    assert not gpu_select.same_device(UUID1, UUID0[4:])


def test_nvml_trace_and_collectors_read_the_selected_gpu(nvml) -> None:
    from profiling_worker.probes.collectors import CollectorRecorder
    from profiling_worker.probes.nvml_trace import NvmlSampler

    with NvmlSampler(UUID1, 1) as sampler:
        time.sleep(0.02)
    frame = sampler.frame()
    assert sampler.error is None and len(frame)
    assert set(frame["TempC"]) == {61} and set(frame["SmClockMHz"]) == {1980}
    recorder = CollectorRecorder(UUID1, lambda _c: 0, lambda _v: 0)
    assert recorder.callback("temperature")(4096) == 61.0
    assert nvml.by_index == []  # nothing looked a GPU up by index


def test_nsight_096_thermal_guard_is_pointed_at_the_job_gpu(nvml, monkeypatch) -> None:
    """0.9.x's ThermalController calls nvmlDeviceGetHandleByIndex(0): physical GPU 0."""
    from profiling_worker.backends import ncu

    pkg = types.ModuleType("fake_nsight096")
    thermo = types.ModuleType("fake_nsight096.thermovision")
    thermo.nvmlDeviceGetHandleByIndex = nvml.nvmlDeviceGetHandleByIndex  # as 0.9.6 imports it
    monkeypatch.setitem(sys.modules, "fake_nsight096", pkg)
    monkeypatch.setitem(sys.modules, "fake_nsight096.thermovision", thermo)
    note = ncu.point_thermal_guard(pkg, UUID1)
    assert UUID1 in note and "0.9.x" in note
    handle = thermo.nvmlDeviceGetHandleByIndex(0)  # what its init() does
    assert nvml.nvmlDeviceGetTemperature(handle, 0) == 61 and nvml.by_index == []


def test_serve_pins_its_gpu_among_the_visible_ones(monkeypatch) -> None:
    from profiling_worker.job import serve

    for name in ("CUDA_VISIBLE_DEVICES", "KPROF_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setattr(serve, "environment_report", lambda: {
        "environment": {"gpus": GPUS}, "backends": {"cupti": {"available": False}}})
    r, w = __import__("os").pipe()
    monkeypatch.setattr(serve.os, "dup", lambda _fd: w)
    assert serve.serve("cupti", 0, iter(())) == 1  # the backend is unavailable: it says so
    assert __import__("os").environ["CUDA_VISIBLE_DEVICES"] == UUID1


@pytest.mark.parametrize("environ, expected", [
    ({}, [(0, UUID0, 0), (1, UUID1, 1)]),
    ({"CUDA_VISIBLE_DEVICES": "1"}, [(0, UUID1, 1)]),
    ({"CUDA_VISIBLE_DEVICES": "GPU-1b1b,0"}, [(0, UUID1, 1), (1, UUID0, 0)]),
    ({"CUDA_VISIBLE_DEVICES": ""}, []),
])
def test_the_environment_report_lists_the_gpus_a_spec_can_name(environ, expected) -> None:
    """The sidebar and the submit-time memory check read ``visible_gpus``: under Slurm's
    CUDA_VISIBLE_DEVICES=1, index 0 is physical GPU 1, as the worker resolves it."""
    from profiling_worker.probes.environment import visible_gpus

    listed = visible_gpus(GPUS, environ)
    assert [(g["index"], g["uuid"], g["nvml_index"]) for g in listed] == expected


def test_the_app_maps_a_spec_gpu_through_the_visible_list() -> None:
    from app.core.spec_form import visible_gpu
    from profiling_worker.probes.environment import visible_gpus

    report = {"environment": {"gpus": GPUS,
                              "visible_gpus": visible_gpus(GPUS, {"CUDA_VISIBLE_DEVICES": "1"})}}
    assert visible_gpu(report, 0)["uuid"] == UUID1
    assert visible_gpu(report, 1) is None
    assert visible_gpu({"environment": {"gpus": GPUS}}, 1)["uuid"] == UUID1  # older report

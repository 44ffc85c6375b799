"""The keyword arguments that reach ``nsight.analyze.kernel``, per backend and nsight-python
version, with nsight mocked: each fake ``kernel`` has the real release's signature, copied
from nsight-python's ``nsight/analyze.py`` (git tags v0.9.5-beta and v0.9.6 of
github.com/NVIDIA/nsight-python; the 1.1.0 wheel on PyPI). Only the names, kinds and defaults
matter: the worker reads them with ``inspect.signature``."""

import enum
import gzip
import inspect
import shutil
import sys
import types
from collections import namedtuple
from pathlib import Path

import pytest

from profiling_worker.backends import cupti, ncu
from profiling_worker.bundle.errors import ProfilingFailed
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.spec import validate_spec
from tests.scenarios import scenario_report

REPORT = scenario_report("h200-ncu-j1-fp16")
METRICS = ["gpu__time_duration.sum"]


class VerbosityLevel(enum.IntEnum):  # nsight/utils.py, 1.1.0
    SILENT = 0
    INFO = 3
    DEBUG = 4


def kernel_0_9_5(_func=None, *, configs=None, runs=1, derive_metric=None, normalize_against=None,
                 output="progress", metrics=METRICS, ignore_kernel_list=None,
                 clock_control="none", cache_control="all", replay_mode="kernel",
                 thermal_control=True, combine_kernel_metrics=None, output_prefix=None,
                 output_csv=False):
    raise AssertionError("replaced by fake_nsight")


def kernel_0_9_6(_func=None, *, configs=None, runs=1, derive_metric=None, normalize_against=None,
                 output="progress", metrics=METRICS, ignore_kernel_list=None,
                 clock_control="none", cache_control="all", replay_mode="kernel",
                 thermal_mode="auto", thermal_wait=None, thermal_cont=None, thermal_timeout=None,
                 combine_kernel_metrics=None, output_prefix=None, output_csv=False):
    raise AssertionError("replaced by fake_nsight")


def kernel_1_1_0(_func=None, *, configs=None, runs=1, derive_metric=None, normalize_against=None,
                 verbosity=VerbosityLevel.INFO, metrics=METRICS, ignore_kernel_list=None,
                 clock_control="none", cache_control="all", replay_mode="kernel",
                 thermal_mode="auto", thermal_wait=None, thermal_cont=None, thermal_timeout=None,
                 thermal_device=None, combine_kernel_metrics=None, output_prefix=None,
                 output_csv=False, info_collectors=None):
    raise AssertionError("replaced by fake_nsight")


VERSIONS = {"0.9.5": kernel_0_9_5, "0.9.6": kernel_0_9_6, "1.1.0": kernel_1_1_0}
InfoCollector = namedtuple("InfoCollector", "name callback scope")


class Stop(Exception):
    """Raised by the fake profiled call once the options are recorded."""


def fake_nsight(monkeypatch, version, on_call=None):
    """An nsight module whose analyze.kernel has ``version``'s signature and records the
    keyword arguments; the decorated call runs ``on_call(options)`` (default: raise Stop)."""
    name = f"fake_nsight_{version.replace('.', '_')}"
    calls = []

    def kernel(**options):
        calls.append(options)

        def decorate(func):
            def run(configs):
                if on_call is None:
                    raise Stop()
                on_call(options)
            return run
        return decorate

    kernel.__signature__ = inspect.signature(VERSIONS[version])
    module = types.SimpleNamespace(
        __name__=name, __version__=version, analyze=types.SimpleNamespace(kernel=kernel),
        annotate=lambda _n: None, extraction=types.SimpleNamespace(
            extract_df_from_data=lambda *a, **k: None),
        InfoCollector=InfoCollector, CollectionScope=types.SimpleNamespace(RUN="run"))
    monkeypatch.setitem(sys.modules, f"{name}.collection.cupti", types.ModuleType("cupti"))
    monkeypatch.setitem(sys.modules, "nvtx", types.SimpleNamespace(annotate=lambda *a, **k: None))
    return module, calls


def job_spec(backend, **over):
    raw = {"kernels": ["matmul"], "annotations": ["fp16"], "runs": 10, "backend": backend,
           "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)], **over}
    return validate_spec(raw)


def profile(monkeypatch, tmp_path, backend, version, **over):
    """The options of one profiling call of ``backend`` under nsight-python ``version``."""
    nsight, calls = fake_nsight(monkeypatch, version)
    collect = cupti.collect_cupti if backend == B.CUPTI else ncu.collect_ncu
    with pytest.raises(ProfilingFailed) as failed:
        collect(nsight, job_spec(backend, **over), [], tmp_path, lambda *a, **k: None, "GPU-1")
    tool = "CUPTI" if backend == B.CUPTI else "Nsight Compute"  # ncu's said "CUPTI" before
    assert failed.value.message == f"{tool} profiling failed: Stop: "
    assert len(calls) == 1  # the first config's call (CUPTI: one call per config)
    return calls[0]


def expected(tmp_path, version, backend):
    common = {"runs": 10, "metrics": METRICS, "clock_control": "none", "cache_control": "all",
              "replay_mode": "kernel", "thermal_mode": "auto", "thermal_wait": None,
              "thermal_cont": None, "thermal_timeout": None, "output_csv": True,
              "output_prefix": f"{tmp_path / 'c0' if backend == B.CUPTI else tmp_path}/"}
    if version == "0.9.6":
        common["output"] = "progress"
    else:
        common.update(thermal_device=0, info_collectors=None)
    if backend == B.NCU:
        common["ignore_kernel_list"] = None
    return common


@pytest.mark.parametrize("version", ["0.9.6", "1.1.0"])
def test_ncu_passes_these_options(monkeypatch, tmp_path, version):
    assert profile(monkeypatch, tmp_path, B.NCU, version) == expected(tmp_path, version, B.NCU)


def test_ncu_passes_the_exact_ignore_names_and_the_jobs_settings(monkeypatch, tmp_path):
    options = profile(monkeypatch, tmp_path, B.NCU, "1.1.0", ignore_kernels=["fill", "re:rand"],
                      clock_control="base", cache_control="none", replay_mode="range",
                      thermal_mode="manual", thermal_wait=5, thermal_cont=15,
                      thermal_timeout=60, runs=3)
    assert options["ignore_kernel_list"] == ["fill"]
    assert {k: options[k] for k in ("clock_control", "cache_control", "replay_mode",
                                    "thermal_mode", "thermal_wait", "thermal_cont",
                                    "thermal_timeout", "runs")} == {
        "clock_control": "base", "cache_control": "none", "replay_mode": "range",
        "thermal_mode": "manual", "thermal_wait": 5, "thermal_cont": 15, "thermal_timeout": 60,
        "runs": 3}


def test_cupti_adds_durations_and_passes_no_ignore_list(monkeypatch, tmp_path):
    # cache_control "none": "all" makes the worker allocate its L2-flush buffer on the GPU
    options = profile(monkeypatch, tmp_path, B.CUPTI, "1.1.0", cache_control="none")
    combine = options.pop("combine_kernel_metrics")
    assert combine(2.0, 3.5) == 5.5
    assert options == {**expected(tmp_path, "1.1.0", B.CUPTI), "cache_control": "none"}


def test_info_collectors_reach_1_1_only(monkeypatch, tmp_path):
    class Recorder:
        def __init__(self, uuid, next_run, config_index):
            self.uuid = uuid

        def callback(self, name):
            return name

    monkeypatch.setattr("profiling_worker.probes.collectors.CollectorRecorder", Recorder)
    options = profile(monkeypatch, tmp_path, B.NCU, "1.1.0", collectors=["sm_clock", "power"])
    assert options["info_collectors"] == [InfoCollector("sm_clock", "sm_clock", "run"),
                                          InfoCollector("power", "power", "run")]
    assert "info_collectors" not in profile(monkeypatch, tmp_path, B.NCU, "0.9.6",
                                            collectors=["sm_clock"])


def test_an_option_the_installed_version_lacks_is_a_job_warning(monkeypatch, tmp_path):
    """nsight-python 0.9.5 had thermal_control, not thermal_mode: the job's finished
    collection (read from the real H200 report) carries a warning naming the setting."""
    def write_report(options):
        with gzip.open(REPORT) as src, open(Path(options["output_prefix"]) / "j1.ncu-rep",
                                             "wb") as dst:
            shutil.copyfileobj(src, dst)

    nsight, calls = fake_nsight(monkeypatch, "0.9.5", on_call=write_report)
    out_dir = tmp_path / C.NSIGHT_DIR
    out_dir.mkdir()
    result = ncu.collect_ncu(nsight, job_spec(B.NCU, thermal_wait=5), [], out_dir,
                            lambda *a, **k: None)
    assert "thermal_mode" not in calls[0] and "thermal_device" not in calls[0]
    dropped = [w for w in result.warnings if "does not accept" in w]
    assert dropped == ["nsight-python 0.9.5 does not accept thermal_mode; the job's "
                       "thermal_mode 'auto' was not applied",
                       "nsight-python 0.9.5 does not accept thermal_wait; the job's "
                       "thermal_wait 5 was not applied"]
    assert len(result.launches) > 0

"""choose_backends: the backend and nsight-python mode picked from a given environment."""

from profiling_worker.backends.registry import choose_backends
from profiling_worker.probes.environment import unknown_metrics, version_tuple

GPU = [{"index": 0, "name": "NVIDIA H200"}]
LIB_NEW = [{"path": "/x/libcupti.so.13", "version": "13.4.92"}]
LIB_OLD = [{"path": "/y/libcupti.so.13", "version": "13.0.85"}]


def env(**over):
    base = {"gpus": GPU, "nsight_python": "1.1.0", "ncu": {"path": "/usr/bin/ncu",
            "version": "2026.2.1.0"}, "ncu_report": "2026.3.1", "cupti_python": "13.4.0",
            "libcupti": LIB_NEW, "torch": "2.11.0+cu130"}
    return {**base, **over}


def test_new_nsight_with_new_ncu_attaches():
    b = choose_backends(env())
    assert b["ncu"].available and b["ncu"].nsight_mode == "attach"
    assert b["cupti"].available and b["cupti"].libcupti == "/x/libcupti.so.13"


def test_new_nsight_with_old_ncu_says_which_versions_fix_it():
    b = choose_backends(env(ncu={"path": "/usr/bin/ncu", "version": "2025.3.1.0"}))
    assert not b["ncu"].available
    assert "2026.2.1" in b["ncu"].reason and "nsight-python==0.9.6" in b["ncu"].fix


def test_old_nsight_uses_launch_mode_with_any_ncu():
    b = choose_backends(env(nsight_python="0.9.6", ncu={"path": "/n", "version": "2025.3.1.0"}))
    assert b["ncu"].available and b["ncu"].nsight_mode == "launch"
    assert not b["cupti"].available and "1.1" in b["cupti"].reason


def test_no_ncu_on_path_gives_install_fix():
    b = choose_backends(env(ncu={"path": None, "version": None}))
    assert not b["ncu"].available and "PATH" in b["ncu"].fix


def test_old_libcupti_is_named_with_the_fix():
    b = choose_backends(env(libcupti=LIB_OLD))
    assert not b["cupti"].available
    assert "13.0.85" in b["cupti"].reason and "nvidia-cuda-cupti>=13.4" in b["cupti"].fix


def test_no_gpu_leaves_only_cpu():
    b = choose_backends(env(gpus=[]))
    assert not b["ncu"].available and not b["cupti"].available and b["cpu"].available
    assert "not GPU" in b["cpu"].reason


def test_versions_and_metric_bases():
    assert version_tuple("2025.3.1.0") < (2026, 2, 1) <= version_tuple("2026.2.1.0")
    assert unknown_metrics(("dram__bytes_read.sum", "foo__bar.sum"),
                           frozenset({"dram__bytes_read"})) == ["foo__bar.sum"]

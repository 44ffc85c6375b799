"""Run side of the ``ncu`` backend: Nsight Compute through nsight-python.

The installed nsight-python decides how it runs (schema/backends.py NCU_LAUNCH, NCU_ATTACH):
0.9.x re-runs the worker under ``ncu`` (launch mode), >= 1.0 attaches ncu >= 2026.2.1 to the
running worker (attach mode; nsight/collection/ncu.py in the 1.1.0 wheel compares against
2026.2.1.0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from profiling_worker.backends.registry import RunJob
from profiling_worker.environment import NO_GPU, unavailable, version_tuple
from profiling_worker.schema import backends as B

if TYPE_CHECKING:
    from profiling_worker.backends.base import Collection

ATTACH_MIN_NCU = (2026, 2, 1)


def probe(env: dict[str, Any]) -> dict[str, Any]:
    """Whether Nsight Compute can run here, and in which mode (``nsight_mode``)."""
    nspy = version_tuple(env.get("nsight_python"))
    ncu = env.get("ncu") or {}
    if not env.get("gpus"):
        return unavailable(*NO_GPU)
    if not nspy:
        return unavailable("nsight-python is not installed",
                           "pip install nsight-python (>=1.1 needs Nsight Compute >= 2026.2.1; "
                           "use nsight-python==0.9.6 with an older ncu)")
    if not ncu.get("path"):
        return unavailable("Nsight Compute CLI (ncu) not found on PATH", "install Nsight Compute "
                           "and put its ncu on PATH (e.g. /usr/local/cuda/bin)")
    if not env.get("ncu_report"):
        return unavailable("the ncu-report package is missing", "pip install ncu-report")
    if nspy < (1, 0):
        return {"available": True, "nsight_mode": B.NCU_LAUNCH.nsight_mode,
                "reason": f"nsight-python {env['nsight_python']} launch mode (re-runs the worker "
                          f"under ncu {ncu.get('version')})", "fix": ""}
    if version_tuple(ncu.get("version"))[:3] < ATTACH_MIN_NCU:
        return unavailable(f"nsight-python {env['nsight_python']} needs Nsight Compute >= "
                           f"2026.2.1 (attach mode), found {ncu.get('version')}",
                           "install Nsight Compute >= 2026.2.1, or pip install "
                           "nsight-python==0.9.6 (launch mode works with this ncu)")
    return {"available": True, "nsight_mode": B.NCU_ATTACH.nsight_mode,
            "reason": f"nsight-python {env['nsight_python']} attach mode, ncu {ncu['version']}",
            "fix": ""}


def load() -> Any:
    """Import nsight (1.x activates Nsight Compute at import)."""
    import nsight

    return nsight


def warm_up(entry: dict[str, Any]) -> None:
    """Import nsight, then torch, and start CUDA (attach mode only: a launch-mode worker is
    never warm)."""
    from profiling_worker.backends import nsight_backend as nb

    nb.warm_up_process(B.NCU, load)


def run(job: RunJob) -> Collection | None:
    """Profile ``job`` with Nsight Compute (None in the launch-mode child)."""
    from profiling_worker.backends import nsight_backend as nb

    return nb.profile_job(job, load, nb.collect_ncu)

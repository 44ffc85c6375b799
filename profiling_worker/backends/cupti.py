"""Run side of the ``cupti`` backend: kernel durations from CUPTI activity records through
nsight-python >= 1.1 (its CUPTI tool), with a libcupti from CUDA >= 13.4 (nsight-python 1.1.1
runtime requirements) loaded before torch loads its own older copy."""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any

from profiling_worker.backends.registry import RunJob
from profiling_worker.environment import NO_GPU, unavailable, version_tuple
from profiling_worker.errors import BackendUnavailable
from profiling_worker.schema import backends as B

if TYPE_CHECKING:
    from profiling_worker.backends.base import Collection

CUPTI_MIN = (13, 4)


def probe(env: dict[str, Any]) -> dict[str, Any]:
    """Whether CUPTI can run here; ``libcupti``: the newest libcupti found (preloaded)."""
    if not env.get("gpus"):
        return unavailable(*NO_GPU)
    if version_tuple(env.get("nsight_python")) < (1, 1):
        return unavailable(f"the CUPTI backend needs nsight-python >= 1.1 (found "
                           f"{env.get('nsight_python') or 'none'})",
                           "pip install 'nsight-python[cupti]>=1.1'")
    if version_tuple(env.get("cupti_python")) < CUPTI_MIN:
        return unavailable(f"cupti-python >= 13.4 is required (found "
                           f"{env.get('cupti_python') or 'none'})", "pip install 'cupti-python>=13.4'")
    libs = env.get("libcupti") or []
    if not libs or version_tuple(libs[0]["version"])[:2] < CUPTI_MIN:
        newest = (f"{libs[0]['version'] or 'unknown version'} at {libs[0]['path']}" if libs
                  else "none")
        return unavailable(f"libcupti from CUDA >= 13.4 is required (newest found: {newest})",
                           "pip install 'nvidia-cuda-cupti>=13.4' (the worker preloads the "
                           "newest copy)")
    return {"available": True, "nsight_mode": B.CUPTI_BACKEND.nsight_mode,
            "libcupti": libs[0]["path"], "fix": "",
            "reason": f"nsight-python {env['nsight_python']} CUPTI, libcupti {libs[0]['version']}"}


def loader(entry: dict[str, Any]) -> Any:
    """A ``load()`` for this environment entry: with Nsight Compute's import-time activation
    switched off (``NSPY_NCU_INIT_AT_IMPORT=0``) and the entry's ``libcupti`` loaded
    RTLD_GLOBAL first, import nsight and activate its CUPTI tool.

    Raises (when called):
        BackendUnavailable: cupti-python cannot be imported.
    """
    def load() -> Any:
        os.environ["NSPY_NCU_INIT_AT_IMPORT"] = "0"
        if entry.get("libcupti"):
            ctypes.CDLL(entry["libcupti"], mode=ctypes.RTLD_GLOBAL)
        try:  # nsight-python hides this error behind "cupti-python is required"
            from cupti import cupti  # noqa: F401
        except ImportError as exc:
            raise BackendUnavailable(
                f"cupti-python cannot be imported: {exc}",
                "pip install 'cupti-python>=13.4' with its dependencies "
                "(pyelftools, cuda-pathfinder>=1.4.1, nvidia-cuda-cupti>=13.4)") from exc
        import nsight

        nsight.activate(nsight.Tool.CUPTI)
        return nsight

    return load


def warm_up(entry: dict[str, Any]) -> None:
    """Load libcupti and nsight, then torch, and start CUDA."""
    from profiling_worker.backends import nsight_backend as nb

    nb.warm_up_process(B.CUPTI, loader(entry))


def run(job: RunJob) -> Collection | None:
    """Profile ``job``'s kernel durations with CUPTI, one nsight-python call per config."""
    from profiling_worker.backends import nsight_backend as nb

    return nb.profile_job(job, loader(job.entry), nb.collect_cupti)

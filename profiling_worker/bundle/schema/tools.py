"""The profiling tools a measurement depends on: the one place that names them and their keys in
the environment report (``python -m profiling_worker env``, profiling_worker/probes/environment.py)
and in a bundle's manifest ``environment``.

Which backend uses which tool is :attr:`~profiling_worker.bundle.schema.backends.Backend.tools`; the
regression gate (profiling_worker/bundle/gate/context.py) holds two bundles whose versions differ
not comparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tool:
    """One profiling tool.

    Attributes:
        key: its key in the environment report and the manifest's ``environment``.
        words: its name in the user's words.
        distribution: the Python package whose installed version is the tool's (None: not a
            Python package; ncu's version comes from ``ncu --version``).
    """

    key: str
    words: str
    distribution: str | None

    def version(self, env: dict[str, Any]) -> str | None:
        """The tool's version in an environment report or manifest ``environment`` (ncu's
        entry is ``{"path", "version"}``, a package's is the version string); None when
        absent."""
        value = env.get(self.key)
        if isinstance(value, dict):
            value = value.get("version")
        return None if value in (None, "") else str(value)


NSIGHT_PYTHON = Tool("nsight_python", "nsight-python", "nsight-python")
NCU = Tool("ncu", "Nsight Compute", None)
CUPTI_PYTHON = Tool("cupti_python", "cupti-python", "cupti-python")
#: Every tool, in the order reasons and reports list them.
ALL: tuple[Tool, ...] = (NSIGHT_PYTHON, NCU, CUPTI_PYTHON)



__all__ = ["Tool", "NSIGHT_PYTHON", "NCU", "CUPTI_PYTHON", "ALL"]

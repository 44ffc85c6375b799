"""What every reader hands the one assembler (:mod:`.assemble`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

NOT_READ = "not read"  # starts the note on a given file whose values the bundle does not hold
# manifest provenance: names of the given files whose values were not read
NOT_READ_KEY = "not_read"


@dataclass
class Job:
    """What the readers hand the assembler.

    Attributes:
        params, configs: config parameter names and one dict of values per Config index.
        runs, agg, launches, collectors: bundle tables laid out by
            :func:`~profiling_worker.bundle.writer.table_columns` (launches/collectors None
            when the files hold none); values in the bundle's units (ns, byte, Hz, %).
        kernels, label: spec inputs (kernel names from the file names, a label).
        environment, provenance: manifest sections (GPU name, how each table was made).
        notes: what the import did to values (shown where the values are drawn).
        roles: metric roles (:mod:`.roles`), manifest ``metric_roles``.
        warnings: why the bundle holds only part of a job (shown on every page).
    """

    params: list[str]
    configs: list[dict[str, Any]]
    runs: pd.DataFrame
    agg: pd.DataFrame
    launches: pd.DataFrame | None = None
    collectors: pd.DataFrame | None = None
    kernels: list[str] = field(default_factory=list)
    label: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


__all__ = ["Job", "NOT_READ", "NOT_READ_KEY"]

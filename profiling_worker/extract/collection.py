"""What a backend's collection returns, below both ``backends/`` and ``extract/``: the backends
build it, ``extract/ignored.py`` filters it, and neither package imports the other for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema.partial import Shortfall


@dataclass
class Collection:
    """What a backend returns.

    ``launches``: the per-launch long table (columns in bundle/schema/columns.py, Value in the
    metric's Unit). ``warnings``: things the user must know (shown in the app).
    ``backend_info``: merged into the manifest's ``backend`` entry.
    ``collectors``: info collector values per config and run (None when none were asked for).
    ``unattributed``: launches outside every config's range or every annotation (table
    ``unattributed``; None when there were none).
    ``launch_times``: CUPTI start/end of each launch (table ``launch_times``; None when the
    backend has none), or what makes that table (called once, after the result-ready write:
    issue 40, the first chart does not read it).
    ``shortfall``: the configs a cancel or a failing kernel left unmeasured (None: every
    config was measured; bundle/schema/partial.py).
    """

    launches: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    backend_info: dict[str, Any] = field(default_factory=dict)
    collectors: pd.DataFrame | None = None
    unattributed: pd.DataFrame | None = None
    launch_times: pd.DataFrame | Callable[[], pd.DataFrame | None] | None = None
    shortfall: Shortfall | None = None

"""What every backend shares: the per-launch record, the run counter and progress events."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiling_worker.schema import columns as C
from profiling_worker.schema.spec import JobSpec

Emit = Callable[..., None]  # emit(event, **fields), see schema/events.py


@dataclass
class Collection:
    """What a backend returns.

    ``launches``: the per-launch long table (columns in schema/columns.py, Value in the
    metric's Unit). ``warnings``: things the user must know (shown in the app).
    ``backend_info``: merged into the manifest's ``backend`` entry.
    ``collectors``: info collector values per config and run (None when none were asked for).
    """

    launches: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    backend_info: dict[str, Any] = field(default_factory=dict)
    collectors: pd.DataFrame | None = None


def launch_columns(param_names: Sequence[str]) -> list[str]:
    """Column order of the per-launch table for these config parameters."""
    return [C.ANNOTATION, C.CONFIG, *param_names, C.RUN, C.LAUNCH, C.KERNEL, C.GRID, C.BLOCK,
            C.METRIC, C.VALUE, C.UNIT]


def launches_frame(rows: list[dict[str, Any]], spec: JobSpec) -> pd.DataFrame:
    """Build the per-launch table from row dicts, adding the config parameter columns."""
    params = spec.parameter_names
    for row in rows:
        row.update(spec.configs[row[C.CONFIG]])
    return pd.DataFrame(rows, columns=launch_columns(params))


class RunCounter:
    """Maps each call of the profiled function to (config index, run index) and reports progress.

    nsight-python runs configs in order, ``runs`` consecutive calls each; the counter relies
    only on the config values, so a skipped or failed run cannot shift later ones.
    """

    def __init__(self, spec: JobSpec, emit: Emit | None):
        self._index = {tuple(c.values()): i for i, c in enumerate(spec.configs)}
        self._runs: dict[int, int] = {}
        self._done = 0
        self._total = len(spec.configs) * spec.runs
        self._emit = emit

    def config_index(self, config: Sequence[Any]) -> int:
        """Index of the config with these values."""
        return self._index[tuple(config)]

    def next_run(self, config_index: int) -> int:
        """The run index the next call of this config will get."""
        return self._runs.get(config_index, 0)

    def next(self, config: Sequence[Any]) -> tuple[int, int]:
        """Return (config index, run index) for a call with these values and count it."""
        idx = self._index[tuple(config)]
        run = self._runs.get(idx, 0)
        self._runs[idx] = run + 1
        self._done += 1
        if self._emit:
            self._emit("progress", done=self._done, total=self._total, stage="profiling",
                       config=idx, run=run)
        return idx, run

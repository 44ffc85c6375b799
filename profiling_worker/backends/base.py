"""What every backend shares: the per-launch record, the run counter and progress events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from profiling_worker.catalog.user_collectors import RUN, CollectorRun
# Re-exported (the "as" form says so to mypy): backends return it; extract/ignored.py filters it.
from profiling_worker.extract.collection import Collection as Collection
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import JobSpec

Emit = Callable[..., None]  # emit(event, **fields), see bundle/schema/events.py


#: The cancel the worker's signal handler raised during the job in this process (empty: none;
#: runner.CancelWatch sets and clears it). nsight-python calls info collectors inside ``try:
#: ... except Exception`` (``run_profile_session`` in 0.9.6 and 1.1), so a cancel that lands
#: while one runs is swallowed there, and the job would run on with later signals ignored; the
#: next profiled run raises it again (:func:`raise_pending_cancel`).
_PENDING_CANCEL: list[BaseException] = []


def note_cancel(exc: BaseException | None) -> None:
    """Keep ``exc`` as the job's cancel until the job ends (None: forget it)."""
    _PENDING_CANCEL[:] = [exc] if exc is not None else []


def raise_pending_cancel() -> None:
    """Raise the job's cancel again where one was raised (:func:`note_cancel`); a profiled
    run calls it before the kernels, outside every nsight-python ``try``."""
    if _PENDING_CANCEL:
        raise _PENDING_CANCEL[0]


def launch_columns(param_names: Sequence[str]) -> list[str]:
    """Column order of the per-launch table for these config parameters."""
    return [C.ANNOTATION, C.CONFIG, *param_names, C.RUN, C.LAUNCH, C.KERNEL, C.GRID, C.BLOCK,
            C.METRIC, C.VALUE, C.UNIT]


def launches_frame(rows: list[dict[str, Any]], spec: JobSpec) -> pd.DataFrame:
    """Build the per-launch table from row dicts, adding the config parameter columns.

    Raises:
        ValueError: a row's Config is not an index of ``spec.configs`` (split those off first
            with :func:`split_unattributed`; a negative index would pick the last config).
    """
    params = spec.parameter_names
    for row in rows:
        if not 0 <= row[C.CONFIG] < len(spec.configs):
            raise ValueError(f"launch of {row[C.KERNEL]} has Config {row[C.CONFIG]}, not a config "
                             f"of this job (0..{len(spec.configs) - 1})")
        row.update(spec.configs[row[C.CONFIG]])
    return pd.DataFrame(rows, columns=launch_columns(params))


def launch_times_frame(rows: list[dict[str, Any]], spec: JobSpec) -> pd.DataFrame | None:
    """The ``launch_times`` table of launch rows carrying StartNs/EndNs (None when no row has a
    start: nothing to place on a timeline). Rows already hold their config parameters."""
    from profiling_worker.bundle.writer import table_columns

    timed = [r for r in rows if r.get(C.START_NS) is not None]
    if not timed:
        return None
    return pd.DataFrame(timed).reindex(
        columns=table_columns(C.TABLE_LAUNCH_TIMES, spec.parameter_names))


#: Reason of a launch inside an annotation but outside the worker's config/run range.
OUTSIDE_CONFIG_RANGE = ("inside the annotation but outside every config/run range (launched "
                        "from another thread, or between runs)")


def split_unattributed(rows: list[dict[str, Any]], n_configs: int
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(attributed, unattributed): rows whose Config is not in ``0..n_configs-1`` (Config -1:
    the launch had no ``c<config>r<run>`` range) are never merged into a config."""
    inside = [r for r in rows if 0 <= r[C.CONFIG] < n_configs]
    outside = [{**r, C.CONFIG: C.NO_CONFIG, C.REASON: OUTSIDE_CONFIG_RANGE}
               for r in rows if not 0 <= r[C.CONFIG] < n_configs]
    return inside, outside


def unattributed_frame(rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The ``unattributed`` table of these rows (None when there are none)."""
    if not rows:
        return None
    from profiling_worker.bundle.writer import table_columns

    return pd.DataFrame(rows).reindex(columns=table_columns(C.TABLE_UNATTRIBUTED))


def unattributed_warning(frame: pd.DataFrame | None, duration_metric: str = C.GPU_TIME
                         ) -> str | None:
    """One sentence for the job's warnings: how many launches are unattributed, per
    annotation, and why (None when there are none)."""
    if frame is None or frame.empty:
        return None
    metric = (duration_metric if (frame[C.METRIC] == duration_metric).any()
              else frame[C.METRIC].iloc[0])
    timed = frame[frame[C.METRIC] == metric]  # one row per launch
    parts = [f"{len(g)} in {str(a or 'no annotation')} ({g[C.REASON].iloc[0]})"
             for a, g in timed.groupby(C.ANNOTATION, sort=False, dropna=False)]
    return ("kernel launches not attributed to any config (not in any table's values; see the "
            "Kernels page): " + "; ".join(parts))


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
        #: (config index, run index) of the latest call counted, None before the first.
        self.last: tuple[int, int] | None = None

    def config_index(self, config: Sequence[Any]) -> int:
        """Index of the config with these values."""
        return self._index[tuple(config)]

    def next_run(self, config_index: int) -> int:
        """The run index the next call of this config will get."""
        return self._runs.get(config_index, 0)

    @property
    def done(self) -> int:
        """Calls counted so far (the progress events' ``done``)."""
        return self._done

    def restart(self, configs: Iterable[int] | None = None) -> None:
        """Count the runs of ``configs`` (None: every config) from their first run again (the
        runs of a call whose results were not kept are measured again)."""
        for idx in list(self._runs) if configs is None else configs:
            self._done -= self._runs.pop(idx, 0)

    def resume_at(self, done: int) -> None:
        """Count on from ``done`` calls: a process that runs a later call of the job (the
        launch-mode child of an Nsight Compute call, ncu_calls.py) reports the job's progress."""
        self._done = done

    def warming(self, config_index: int) -> None:
        """Report that this config's untimed warm-up calls begin (stage ``warm-up``): without
        it a kernel that hangs in them showed the job "starting", with no config named."""
        if self._emit:
            self._emit("progress", done=self._done, total=self._total, stage="warm-up",
                       config=config_index)

    def next(self, config: Sequence[Any]) -> tuple[int, int]:
        """Return (config index, run index) for a call with these values and count it."""
        idx = self._index[tuple(config)]
        run = self._runs.get(idx, 0)
        self._runs[idx] = run + 1
        self._done += 1
        self.last = (idx, run)
        if self._emit:
            self._emit("progress", done=self._done, total=self._total, stage="profiling",
                       config=idx, run=run)
        return idx, run


def user_collector_frame(run: CollectorRun, spec: JobSpec) -> pd.DataFrame | None:
    """The RUN values of a job's user collectors (the ``collectors`` table's rows), None when
    the job has none of RUN scope."""
    if not any(c.scope == RUN for c in run.collectors):
        return None
    return run.frame([dict(c) for c in spec.configs], list(spec.parameter_names))


def user_collector_info(run: CollectorRun) -> dict[str, Any]:
    """The manifest's ``backend.user_collectors`` (each collector, its ONCE value, its
    failure), empty when the job named none."""
    return {"user_collectors": run.report()} if run.collectors else {}

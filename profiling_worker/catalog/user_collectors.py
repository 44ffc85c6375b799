"""User info collectors: functions of a user file (any ``.py`` in a kernel folder,
``KPROF_KERNEL_DIRS`` / ``kernel-dashboard --kernels DIR``) tagged the way nsight-python's seed
(step 8) teaches, with ``nsight.experimental.collect(scope=...)``, or with this module's
:func:`collect` where nsight-python is not installed (the cpu backend). Example::

    from profiling_worker.catalog.user_collectors import collect

    @collect(scope="once")
    def torch_version():
        import torch
        return torch.__version__

    @collect(scope="run", unit="MHz")
    def sm_clock_now(*config):
        ...

Scopes (nsight-python's ``CollectionScope``, experimental.py / info_collector.py of 1.1.0):
ONCE is called once before the first config, RUN just before each run with the config's values
(a callback with ``*args`` gets them all, one of fixed arity the leading values it has room
for, as nsight-python binds them). A RUN collector sees the state between runs, not during the
kernel (on the H200 the first run's sample read the 345 MHz idle clock, docs/facts).

:class:`CollectorRun` calls them, in nsight-python's own collection where the backend takes
info collectors (CUPTI, ncu attach mode) and around each run in the worker otherwise (cpu,
events): each call has a time limit; a collector that raises, returns no number (RUN) or runs
past the limit is named with the reason, its value is missing, and the job goes on (a timed-out
collector is not called again: its thread cannot be stopped).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Real
from types import ModuleType
from typing import Any, TypeVar

import pandas as pd

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import COLLECTORS

ONCE, RUN = "once", "run"
SCOPES = (ONCE, RUN)
#: Seconds one call may take (``unit``/``timeout_s`` can be given to :func:`collect`): a
#: collector runs between runs, so a slow one stretches the idle gap the next run starts after.
DEFAULT_TIMEOUT_S = 2.0

F = TypeVar("F", bound=Callable[..., Any])


def collect(func: F | None = None, *, scope: str, unit: str = "",
            timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """Tag ``func`` as an info collector of ``scope`` (``"once"`` or ``"run"``), with the same
    attributes as ``nsight.experimental.collect`` (``_nsight_collector_scope``,
    ``_nsight_collector_name``) plus the value's ``unit`` and the call's time limit (s).

    Raises:
        ValueError: an unknown scope.
    """
    if _scope(scope) not in SCOPES:
        raise ValueError(f"collector scope {scope!r}: use 'once' or 'run'")

    def tag(f: F) -> F:
        setattr(f, "_nsight_collector_scope", _scope(scope))
        setattr(f, "_nsight_collector_name", f.__name__)
        setattr(f, "_kprof_unit", unit)
        setattr(f, "_kprof_timeout_s", float(timeout_s))
        return f

    return tag(func) if func is not None else tag


def _scope(scope: Any) -> str:
    """``"once"`` from ``"ONCE"`` or nsight-python's ``CollectionScope.ONCE``."""
    return str(getattr(scope, "value", scope)).lower()


@dataclass(frozen=True)
class UserCollector:
    """One collector of a user file: its name (the column), scope, the value's unit, the
    call's time limit (s), the file it came from and the function."""

    name: str
    scope: str
    unit: str
    timeout_s: float
    source: str
    func: Callable[..., Any]

    def describe(self) -> dict[str, Any]:
        """JSON-able: name, scope, unit, timeout_s, source (the env report's ``collectors``)."""
        return {"name": self.name, "scope": self.scope, "unit": self.unit,
                "timeout_s": self.timeout_s, "source": self.source}


def found_in(module: ModuleType, source: str) -> list[UserCollector]:
    """The collectors defined in ``module`` (file name ``source``), in definition order;
    functions imported from elsewhere are left out.

    Raises:
        ValueError: a collector of another scope than ONCE or RUN (CONFIG, ANNOTATION).
    """
    out = []
    for obj in vars(module).values():
        scope = getattr(obj, "_nsight_collector_scope", None)
        if (scope is None or not callable(obj)
                or getattr(obj, "__module__", None) != module.__name__):
            continue
        name = str(getattr(obj, "_nsight_collector_name", obj.__name__))
        if _scope(scope) not in SCOPES:
            raise ValueError(f"collector {name}: scope {_scope(scope).upper()} is not run by the "
                             "worker; use ONCE or RUN")
        out.append(UserCollector(name, _scope(scope), str(getattr(obj, "_kprof_unit", "")),
                                 float(getattr(obj, "_kprof_timeout_s", DEFAULT_TIMEOUT_S)),
                                 source, obj))
    return out


def drop_builtin_names(collectors: dict[str, UserCollector]) -> list[dict[str, str]]:
    """Remove the user collectors named like a built-in one (:data:`COLLECTORS`) from
    ``collectors``; returns one ``{"file", "error"}`` each."""
    clash = [n for n in collectors if n in COLLECTORS]
    return [{"file": collectors.pop(n).source, "error": f"collector {n!r} is a built-in collector"}
            for n in clash]


def bind(func: Callable[..., Any], config: Sequence[Any]) -> tuple[Any, ...]:
    """The config values ``func`` is called with: all of them when it takes ``*args``, else the
    leading ones it has positional room for (nsight-python 1.1's binding, info_collector.py)."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return tuple(config)
    room = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    return tuple(config)[:room]


class CollectorRun:
    """Calls one job's user collectors, each under its time limit, and records what they gave:
    RUN values per (config, run) as rows of the ``collectors`` table, ONCE values and every
    failure for the manifest (:meth:`report`)."""

    def __init__(self, collectors: Sequence[UserCollector]):
        self.collectors = list(collectors)
        self.rows: list[dict[str, Any]] = []
        self.once: dict[str, Any] = {}
        self.failed: dict[str, str] = {}  # name -> the first failure, said once

    def _call(self, c: UserCollector, args: tuple[Any, ...]) -> Any:
        """The value, or None when the collector raised or ran past its limit (recorded)."""
        if self.failed.get(c.name, "").startswith("did not return"):
            return None  # its thread may still be running: never call it twice
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = c.func(*args)
            except BaseException as exc:  # user code may raise anything, SystemExit included
                box["error"] = f"{type(exc).__name__}: {exc}"[:300]

        thread = threading.Thread(target=call, name=f"collector-{c.name}", daemon=True)
        thread.start()
        thread.join(c.timeout_s)
        if thread.is_alive():
            self.failed[c.name] = (f"did not return within {c.timeout_s:g} s; not called "
                                   "again in this job")
            return None
        if "error" in box:
            self.failed.setdefault(c.name, f"raised {box['error']}")
            return None
        return box.get("value")

    def value_once(self, c: UserCollector) -> Any:
        """Call ONCE collector ``c`` and keep its value (for the manifest)."""
        self.once[c.name] = _json_value(self._call(c, ()))
        return self.once[c.name]

    def run_once(self) -> None:
        """Call every ONCE collector (before the first config)."""
        for c in self.collectors:
            if c.scope == ONCE:
                self.value_once(c)

    def value_before_run(self, c: UserCollector, config_index: int, run: int,
                         config: Sequence[Any]) -> float | None:
        """Call RUN collector ``c`` before run ``run`` of config ``config_index`` (values
        ``config``) and record its value (a number; anything else is a failure, named)."""
        value = self._call(c, bind(c.func, config))
        number = _number(value)
        if value is not None and number is None:
            self.failed.setdefault(c.name, f"returned {type(value).__name__} {str(value)[:40]!r}, "
                                   "not a number (a RUN value is a column of numbers)")
        self.rows.append({C.CONFIG: config_index, C.RUN: run, C.COLLECTOR: c.name,
                          C.VALUE: number, C.UNIT: c.unit})
        return number

    def before_run(self, config_index: int, run: int, config: Sequence[Any]) -> None:
        """Call every RUN collector before run ``run`` of config ``config_index``."""
        for c in self.collectors:
            if c.scope == RUN:
                self.value_before_run(c, config_index, run, config)

    def frame(self, configs: list[dict[str, Any]], param_names: list[str]) -> pd.DataFrame:
        """The RUN values: Config, <params>, Run, Collector, Value (float, NaN where missing),
        Unit (the ``collectors`` table's columns)."""
        rows = [{**r, **configs[r[C.CONFIG]]} for r in self.rows]
        frame = pd.DataFrame(rows, columns=[C.CONFIG, *param_names, C.RUN, C.COLLECTOR, C.VALUE,
                                            C.UNIT])
        return frame.astype({C.VALUE: "float64"})

    def report(self) -> list[dict[str, Any]]:
        """One entry per collector for the manifest's ``backend.user_collectors``: name, scope,
        unit, source, ``value`` (ONCE), ``error`` (None when every call gave a value)."""
        return [{**c.describe(), **({"value": self.once.get(c.name)} if c.scope == ONCE else {}),
                 "error": self.failed.get(c.name)} for c in self.collectors]

    def warnings(self) -> list[str]:
        """One sentence per collector that failed: its name, file and why."""
        by_name = {c.name: c for c in self.collectors}
        return [f"info collector {name} ({by_name[name].source}, {by_name[name].scope.upper()}) "
                f"{why}; its values are missing, the job went on"
                for name, why in self.failed.items()]


def _number(value: Any) -> float | None:
    """A real number as float (bool and numpy scalars included), else None."""
    if isinstance(value, Real):
        return float(value)
    item = getattr(value, "item", None)  # numpy / torch scalars
    if callable(item):
        try:
            got = item()
        except (TypeError, ValueError, RuntimeError):
            return None
        return float(got) if isinstance(got, Real) else None
    return None


def _json_value(value: Any) -> Any:
    """A ONCE value as the manifest can hold it: str, number, bool, None, else its str."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    number = _number(value)
    return number if number is not None else str(value)[:200]

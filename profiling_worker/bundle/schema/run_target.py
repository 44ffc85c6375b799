"""``runs: "auto"``: the precision a job asks for instead of a fixed number of runs (issue 22).

A spec with ``"runs": "auto"`` carries a ``run_target`` object; every key is optional::

    "runs": "auto",
    "run_target": {"rel_ci95_pct": 0.5, "min_runs": 5, "max_runs": 100, "budget_s": 60}

The worker's stopping rule (profiling_worker/bundle/stats/adaptive.py) runs each config ``min_runs``
times, stops a config once the relative CI95 half-width of every annotation is at most
``rel_ci95_pct``, and spends what is left of ``budget_s`` on the config whose interval is the
widest, never past ``max_runs``. The JobSpec's ``runs`` is then ``max_runs`` (the most runs a
config can get), so code that sizes tables by ``runs`` stays right.

Stdlib and ``schema`` only (the worker imports it in a bare GPU environment). Which backends
run "auto" each backend declares (``Backend.auto_runs``, :mod:`.backends`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.spec_errors import FieldError

#: The spec's ``runs`` value that asks for the stopping rule.
AUTO = "auto"
FIELD = "run_target"


@dataclass(frozen=True)
class RunTarget:
    """What ``runs: "auto"`` stops at."""

    rel_ci95_pct: float = 0.5
    """Target relative CI95 half-width of the mean, % of the mean (nvbench's default noise
    target is 0.5 % relative std dev; NVIDIA/nvbench nvbench/detail/stdrel_criterion.cxx)."""
    min_runs: int = 5
    """Runs every config gets before the rule looks at its interval (>= 2: a CI needs a
    spread)."""
    max_runs: int = 100
    """Most runs one config may get, whatever its interval."""
    budget_s: float = 60.0
    """Wall-clock seconds the measuring may take for the whole job (profiled calls, their L2
    flushes and the profiler's own overhead; warm-up excluded). The first ``min_runs`` of every
    config always run; extra runs start only while budget is left."""

    def to_json(self) -> dict[str, Any]:
        """The target as the spec's ``run_target`` object."""
        return dataclasses.asdict(self)


_DEFAULT = RunTarget()
_LIMITS: dict[str, tuple[float, float]] = {"rel_ci95_pct": (0.01, 50.0), "min_runs": (2, 10_000),
                                           "max_runs": (2, 10_000), "budget_s": (1.0, 86_400.0)}


def parse(raw: Mapping[str, Any], backend: str, errors: list[FieldError]) -> RunTarget | None:
    """The spec's run target: None for a whole-number ``runs`` (no ``run_target`` allowed then),
    a :class:`RunTarget` for ``runs: "auto"``. Problems are appended to ``errors``, each naming
    its field (``run_target.min_runs``...)."""
    target = raw.get(FIELD)
    if raw.get("runs") != AUTO:
        if target is not None:
            errors.append(FieldError(FIELD, "is given but runs is not \"auto\"",
                                     'set runs to "auto", or leave run_target out'))
        return None
    if backend not in B.AUTO_NAMES:
        errors.append(FieldError("runs", f'"auto" runs on the {backend} backend is not supported',
                                 "press Pre-flight in the sidebar (a CUPTI pass of runs \"auto\" "
                                 "chooses the runs for Nsight Compute), give a whole number of "
                                 f"runs, or choose {B.said(B.AUTO_NAMES, 'or')}"))
        return None
    if target is None:
        return _DEFAULT
    if not isinstance(target, Mapping):
        errors.append(FieldError(FIELD, "is not an object",
                                 'write it as {"rel_ci95_pct": 0.5, "min_runs": 5, ...}'))
        return _DEFAULT
    unknown = sorted(set(target) - set(_LIMITS))
    if unknown:
        errors.append(FieldError(FIELD, f"unknown key(s): {', '.join(map(str, unknown))}",
                                 f"use only {', '.join(_LIMITS)}"))
    values = {name: _number(target, name, errors) for name in _LIMITS}
    out = RunTarget(**values)
    if out.min_runs > out.max_runs:
        errors.append(FieldError(f"{FIELD}.min_runs", f"{out.min_runs} is above max_runs "
                                 f"{out.max_runs}", "make min_runs at most max_runs"))
    return out


def _number(target: Mapping[str, Any], name: str, errors: list[FieldError]) -> Any:
    """``target[name]`` checked against its range (whole for the run counts), else its default
    after recording the error."""
    default = getattr(_DEFAULT, name)
    value = target.get(name)
    if value is None:
        return default
    lo, hi = _LIMITS[name]
    whole = isinstance(default, int)
    ok_type = (isinstance(value, int) if whole else isinstance(value, (int, float))) \
        and not isinstance(value, bool)
    if not ok_type or not lo <= value <= hi:
        kind = "a whole number" if whole else "a number"
        errors.append(FieldError(f"{FIELD}.{name}", f"{value!r} is not {kind} from {lo:g} to "
                                 f"{hi:g}", f"set {name} between {lo:g} and {hi:g}"))
        return default
    return int(value) if whole else float(value)

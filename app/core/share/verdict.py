"""The regression gate's verdict as a small JSON decision (at most :data:`MAX_BYTES`), for the
comparison report and the agent door alike. The judgement itself is the gate's
(:func:`app.core.views.compare.gate_result`, the call the compare page makes, which calls
``profiling_worker.bundle.gate.judge.judge`` as ``python -m profiling_worker compare`` does); this
module only words and trims it, so the three never disagree."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from profiling_worker.bundle.gate import judge as gate, report as gate_report
from profiling_worker.bundle.gate.exit_codes import EXIT_BAD_INPUT
from profiling_worker.bundle.schema import columns as C

from profiling_worker.bundle.loader import Bundle
from app.core.views.compare import CompareOptions, gate_refusals, gate_result, refusal_text

#: The decision's size limit in bytes (UTF-8 JSON): small enough for an agent's context.
MAX_BYTES = 4096


def judged(baseline: Bundle, candidate: Bundle, max_slowdown_pct: float = 3.0,
           metric: str | None = None) -> gate.GateResult:
    """The gate's judgement of ``candidate`` against ``baseline`` (the compare page's call)."""
    return gate_result(baseline, candidate, CompareOptions(metric, max_slowdown_pct))


def refused(baseline: Bundle, candidate: Bundle, where: str) -> dict[str, Any] | None:
    """The decision when CI's gate refuses the pair (a side it cannot judge:
    :func:`app.core.views.compare.gate_refusals`, the Compare page's check), else None:
    ``verdict`` ``refused``, ``exit_code`` 2 (the CLI's), ``baseline``, ``candidate``,
    ``refused`` (side -> why) and ``reason``, the page's sentence
    (:func:`~app.core.views.compare.refusal_text`) naming ``where`` gives no verdict."""
    sides = gate_refusals(baseline, candidate)
    if not sides:
        return None
    ids = {"baseline": baseline.job_id, "candidate": candidate.job_id}
    return {"verdict": "refused", "exit_code": EXIT_BAD_INPUT, **ids, "refused": sides,
            "reason": refusal_text(sides, ids, where)}


def _figure(value: Any) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else round(float(value), 3)


def _row(r: pd.Series) -> dict[str, Any]:
    return {"region": str(r[C.ANNOTATION]), "config": str(r[gate.CONFIG_LABEL]),
            "outcome": str(r[gate.OUTCOME]), "diff_pct": _figure(r[gate.DIFF_PCT]),
            "detectable_pct": _figure(r[gate.DETECTABLE_PCT]), "reason": str(r[gate.REASON]),
            "caveats": [c for c in str(r.get(gate.CAVEATS) or "").split(", ") if c]}


def decision(result: gate.GateResult) -> dict[str, Any]:
    """The verdict in at most :data:`MAX_BYTES` of JSON (indented by 2, as the MCP SDK writes
    a tool's result as text; compact it is smaller still).

    Returns:
        ``verdict`` (``passed`` / ``regressed`` / ``not judged``: the gate's exit code in
        words), ``exit_code`` (0, 1 or 3, as the CLI's), ``baseline``, ``candidate``,
        ``metric``, ``max_slowdown_pct``, ``counts`` (outcome -> rows), ``context`` (why the
        jobs are not comparable, if they are not: each recorded field with both values),
        ``context_headline`` (what that amounts to, in words), ``interval`` (the method and
        coverage of the 95 % interval each reason gives: the CLI's and the report's line,
        :func:`profiling_worker.bundle.gate.report.interval_line`), ``job_caveats`` (each side's
        job-wide caveat with its evidence, once: a row's reason names its runs only),
        ``rows`` (region, config, outcome, diff_pct, detectable_pct in %, reason, caveats: what
        the runs say beside the outcome, e.g. ``"clock not checked"``, ``"power-capped
        runs"``; regressions first) and ``rows_not_listed`` (rows left out to stay under the
        limit; the report and the compare page list them all).
    """
    order = {o.value: i for i, o in enumerate(gate.Outcome)}
    rows = result.rows.sort_values(gate.OUTCOME, key=lambda s: s.map(order), kind="stable") \
        if len(result.rows) else result.rows
    out: dict[str, Any] = {
        "verdict": gate_report.exit_label(result), "exit_code": gate_report.exit_code(result),
        "baseline": result.baseline, "candidate": result.candidate, "metric": result.metrics_text,
        "max_slowdown_pct": result.options.max_slowdown_pct,
        "counts": {o.value: result.count(o) for o in gate.Outcome},
        "context": list(result.context), "context_headline": result.context_headline,
        "interval": gate_report.interval_line(result), "job_caveats": list(result.job_caveats),
        "rows": [], "rows_not_listed": len(rows)}
    for _, r in rows.iterrows():
        out["rows"].append(_row(r))
        out["rows_not_listed"] -= 1
        if len(json.dumps(out, indent=2).encode("utf-8")) > MAX_BYTES:  # as MCP servers print
            out["rows"].pop()
            out["rows_not_listed"] += 1
            break
    return out

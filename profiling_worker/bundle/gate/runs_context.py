"""What each side's runs say about a row's verdict, from the validity audit of every run
(:mod:`profiling_worker.bundle.schema.run_audit`, one implementation for the gate, the pages and the
report): a side whose runs are not one population, or whose times fail the timer sanity check,
has no single mean to judge, so the row is **not comparable** (issue 34:
``h200-cupti-gate-base`` -> ``h200-cupti-timeline`` n = 8192 read "+7.98 % regressed" while
61 of the timeline's 100 runs sat in a slow mode); power-capped or clock-dropped runs, idle
gaps, launch-bound regions and a warm L2 the spec did not ask for are **caveats**, said beside
the outcome; a direction (regressed, improved) without the cycle check says
**clock not checked**.
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling_worker.bundle.gate.verdict import Outcome
from profiling_worker.bundle.schema import run_audit as A
from profiling_worker.bundle.schema.run_audit import ConfigAudit

#: The caveat a direction carries when neither side's SM clock per run was compared.
CLOCK_NOT_CHECKED = "clock not checked"
POWER_CAPPED = "power-capped runs"
#: Audit check -> the caveat's words (the clock's when no run was capped: "clock-dropped runs").
CAVEAT_WORDS = {A.CLOCK: "clock-dropped runs", A.IDLE_GAP: "idle gaps before runs",
                A.LAUNCH_BOUND: "launch-bound runs", A.L2: "L2 warm against the spec"}
INVALID_WORDS = {A.POPULATION: "runs are not one population", A.TIMER: "timer sanity failed"}


def job_caveats(sides: dict[str, dict[A.Check, str]]) -> list[str]:
    """Each side's job-wide caveat (:data:`~profiling_worker.bundle.schema.run_audit.JOB_WIDE`)
    with its evidence, once for the pair: a row's details name its runs only (its evidence was
    repeated per config). ``sides``: ``"baseline"``/``"candidate"`` -> that side's
    :func:`~profiling_worker.bundle.schema.run_audit.job_evidence`."""
    return [f"{CAVEAT_WORDS[check]} in the {name} (every config): {check}: {evidence}"
            for name, found in sides.items() for check, evidence in found.items()
            if check in CAVEAT_WORDS]


@dataclass(frozen=True)
class RunsContext:
    """Attributes:
        blockers: why the row cannot be judged (a side's invalid runs), one sentence each.
        caveats: short labels said beside the outcome (``"power-capped runs"``...).
        details: the caveats with their evidence, one sentence each.
    """

    blockers: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    details: tuple[str, ...] = ()


def runs_context(sides: dict[str, ConfigAudit | None], outcome: Outcome,
                 cycle_checked: bool, on_gpu: bool) -> RunsContext:
    """The row's blockers and caveats.

    Args:
        sides: ``"baseline"``/``"candidate"`` -> that side's audit of the row's config (None:
            the side has no such config or no runs table).
        outcome: the outcome the runs alone give (a caveat of the clock only beside a
            direction).
        cycle_checked: the cycle check ran on this row.
        on_gpu: the metric is a GPU time (a host timer has no SM clock to check).
    """
    blockers, caveats, details = [], [], []
    for name, audit in sides.items():
        if audit is None:
            continue
        for check in audit.invalid:  # a population's evidence counts its runs itself
            said = audit.evidence[check] if check == A.POPULATION else audit.describe(check)
            blockers.append(f"the {name}'s {INVALID_WORDS[check]}: {said}")
        for check, words in CAVEAT_WORDS.items():
            if check not in audit.flagged:
                continue
            capped = check == A.CLOCK and "capped" in audit.evidence[check]
            label = POWER_CAPPED if capped else words
            caveats.append(label)
            details.append(f"{label} in the {name}: {audit.describe(check)}")
    directed = outcome in (Outcome.REGRESSED, Outcome.IMPROVED)
    if directed and on_gpu and not cycle_checked:
        caveats.insert(0, CLOCK_NOT_CHECKED)
        details.insert(0, f"{CLOCK_NOT_CHECKED}: the two jobs do not both hold each run's SM "
                       "clock, so a clock change cannot be told from the kernel's")
    return RunsContext(tuple(blockers), tuple(dict.fromkeys(caveats)), tuple(details))

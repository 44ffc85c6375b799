"""The one line said beside every interval the product shows (pages, shared reports, the
regression gate's Markdown, CLI text and JUnit): the interval's method and its coverage.

The coverage is the method's own, from the recorded coverage study (``docs/statistics.md``):
its nominal level for simulated normal runs (95 %; 90 % for the replication verdict's
interval), and on recorded H200 GPU timings the range of its coverage averaged over the
recorded populations (or their ordered pairs, for an interval of two sides) at 3-20 runs (a
side, for two), with its lowest population or pair. The figures are read from
``interval_coverage.json`` beside this module, which ``python benchmarks/interval_coverage.py
--write docs/statistics.md`` writes from the same simulation as the page's tables
(``tests/unit/profiling_worker/test_interval_coverage.py`` recomputes and compares both).

Host timings (the cpu backend) were never part of the study: for them the line says the
coverage was measured on H200 GPU timings and is not known for host timings.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from profiling_worker.bundle.number_text import counted

#: The intervals, as the coverage study names them: the Student-t CI95 of a mean, Welch's CI95
#: of a difference of two means, Fieller's CI95 of a ratio of two means (the gate's relative
#: difference is that ratio minus 1), and Fieller's 90 % interval of that ratio (the replication
#: verdict's: its TOST at 5 % a side holds when that interval lies inside the tolerance).
MEAN, DIFFERENCE, RATIO, RATIO90 = "mean", "difference", "ratio", "ratio90"
#: Each interval's method in a few words (the full statement: ``intervals.CI_METHOD``,
#: ``intervals.RATIO_METHOD``).
METHOD_NAMES = {MEAN: "Student-t CI95 of the mean",
                DIFFERENCE: "Welch's CI95 of the difference of two means",
                RATIO: "Fieller's CI95 of the ratio of two means (a % difference: ratio − 1)",
                RATIO90: "Fieller's 90 % interval of the ratio of two means (a % difference: "
                         "ratio − 1; the TOST at 5 % a side)"}
#: Each interval's nominal coverage (%): what it holds on simulated normal runs.
NOMINAL_PCT = {MEAN: 95, DIFFERENCE: 95, RATIO: 95, RATIO90: 90}
#: The recorded figures (benchmarks/interval_coverage.py writes them).
FIGURES = Path(__file__).with_name("interval_coverage.json")


@functools.cache
def figures() -> dict[str, Any]:
    """The recorded coverage figures (:data:`FIGURES`): ``runs_a_side`` [lowest, highest],
    ``populations``, ``pairs`` and per method ``low_pct``, ``high_pct`` (coverage in %, averaged
    over the populations or pairs, at its lowest and highest runs a side), ``lowest_pct`` (%)
    and ``lowest_runs`` (the runs a side there)."""
    loaded: dict[str, Any] = json.loads(FIGURES.read_text(encoding="utf-8"))
    return loaded


def coverage(method: str, host_timer: bool = False) -> str:
    """How often ``method``'s interval held (one sentence, no final stop; figures in %).

    Args:
        method: :data:`MEAN`, :data:`DIFFERENCE`, :data:`RATIO` or :data:`RATIO90`.
        host_timer: the values are host wall-clock times (cpu backend): the study's H200 GPU
            figures are not theirs, and the sentence says so instead of giving them.

    Raises:
        KeyError: ``method`` is none of the four.
    """
    f = figures()
    own = f["methods"][method]
    # a mean's interval has one side: "runs a side" only where there are two
    side = "" if method == MEAN else " a side"
    runs = f"{f['runs_a_side'][0]}-{f['runs_a_side'][1]} runs{side}"
    said = f"{NOMINAL_PCT[method]} % for simulated normal runs"
    if host_timer:
        return (f"{said}; measured on H200 GPU timings only ({runs}), not known for host "
                "timings like these (docs/statistics.md)")
    populations = counted(f["populations"], "recorded population")
    over = populations if method == MEAN else f"{counted(f['pairs'], 'pair')} of {populations}"
    lowest = "population" if method == MEAN else "pair"
    return (f"{said}; on recorded H200 GPU timings at {runs} it held in "
            f"{own['low_pct']:.1f}-{own['high_pct']:.1f} % of draws on average over {over}, "
            f"{own['lowest_pct']:.1f} % for the lowest {lowest} "
            f"({counted(own['lowest_runs'], 'run')}{side}; docs/statistics.md)")


def line(method: str, host_timer: bool = False) -> str:
    """The line beside an interval: ``"Interval: <method>. Coverage: <coverage>."``
    (:data:`METHOD_NAMES`, :func:`coverage`; same arguments)."""
    return f"Interval: {METHOD_NAMES[method]}. Coverage: {coverage(method, host_timer)}."

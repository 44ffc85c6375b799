"""What the gate hands a CI system: the exit code, a Markdown summary and a JUnit XML file.

Exit codes (:func:`exit_code`, :mod:`profiling_worker.bundle.gate.exit_codes`): 0 every region x
config same or improved; 1 at least one regressed (whatever else happened); 3 none regressed
but at least one could not be judged (not comparable); 4 all comparable, none regressed, at
least one ambiguous or clock-explained; 2 argparse's usage error and a bundle that cannot be
read.

JUnit XML: one ``<testsuite>`` with one ``<testcase>`` per region x config, counted the way the
exit code treats them, so a failing exit always has a failure or an error in the file: a
regression (exit 1) is a ``<failure>``; a row not comparable (exit 3), ambiguous or
clock-explained (exit 4) is an ``<error>`` (typed with its outcome: the gate could not decide
it); same and improved pass. The reason and figures are the element's text as well as its
``message`` attribute (GitLab and junit2html show the text), and every case carries them in
``<system-out>``; the suite's ``<properties>`` hold ``interval``, the interval's method and
coverage (:func:`interval_line`, the line under the Markdown table). A judgement with no rows
is one ``<error>`` case, and a bad input (exit 2: usage, an unreadable bundle, a metric the
bundles lack) writes a file with one ``<error>`` case saying what was wrong. The document
itself: :mod:`profiling_worker.bundle.gate.junit`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from profiling_worker.bundle import number_text
from profiling_worker.bundle.gate import junit
from profiling_worker.bundle.gate.cycles import source_words
from profiling_worker.bundle.gate.exit_codes import (EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSED,
                                                     EXIT_UNDECIDED)
from profiling_worker.bundle.gate.judge import (AVG, BASELINE, CANDIDATE, CAVEATS, CONFIG_LABEL,
                                                CYCLES_DIFF_PCT, DIFF_CI95_LOWER_PCT,
                                                DIFF_CI95_UPPER_PCT, DIFF_PCT, OUTCOME, REASON,
                                                RUNS_ALONE, GateResult)
from profiling_worker.bundle.gate.verdict import UNDECIDED, Outcome
from profiling_worker.bundle.schema import columns as C, interval_words as W

def exit_code(result: GateResult) -> int:
    """The process exit code for ``result`` (module docstring); an empty judgement (no rows at
    all) counts as not judged."""
    if result.count(Outcome.REGRESSED):
        return EXIT_REGRESSED
    if result.count(Outcome.NOT_COMPARABLE) or result.rows.empty:
        return EXIT_NOT_JUDGED
    if any(result.count(o) for o in UNDECIDED):
        return EXIT_UNDECIDED
    return EXIT_OK


#: What the report's means and spreads are, beside each ``mean ± spread`` it writes: the ±
#: is the runs' standard deviation, not the half-width of the "difference (95 % CI)" beside it.
MEANS_SAID = "mean ± SD"


def side_name(label: str, folder: str) -> str:
    """A side as the report names it: ``"gate baseline" (folder base)`` from the job's label
    (:attr:`~profiling_worker.bundle.gate.judge.GateResult.baseline_label`), else
    ``base (folder name: the job has no label)``."""
    return (f"\"{label}\" (folder {folder})" if label
            else f"{folder} (folder name: the job has no label)")


def headline(result: GateResult) -> str:
    """One line: what was compared (each job by its label, else its folder's name:
    :func:`side_name`) and the rows counted as Compare counts them (:func:`pair_counts`)."""
    return (f"candidate {side_name(result.candidate_label, result.candidate)} vs baseline "
            f"{side_name(result.baseline_label, result.baseline)} ({result.metrics_text}): "
            f"{pair_counts(result)}")


#: How the CLI and Compare name the rows of one side only (each not comparable).
ONE_SIDE = "more on one side only (not comparable)"


def pair_counts(result: GateResult, every_outcome: bool = True) -> str:
    """The rows of ``result`` counted as the CLI's headline and Compare's caption say them,
    in the same words (session 23's fresh user read "12 not comparable" in the CLI, "6 ... not
    comparable. 6 more on one side only." on the page): ``"6 matching annotation × config
    pairs: 0 regressed, ..., 6 not comparable (allowed slowdown 3 %). 6 more on one side only
    (not comparable)."`` The pairs are the rows both jobs hold; ``every_outcome``: each
    outcome counted, 0 too (a CI log greps them), else only those present (the page)."""
    rows = result.rows
    both = rows[rows[BASELINE + C.RUNS].notna() & rows[CANDIDATE + C.RUNS].notna()] \
        if len(rows) else rows
    found: dict[str, int] = {str(k): int(n) for k, n in both[OUTCOME].value_counts().items()} \
        if len(both) else {}
    counts = ", ".join(f"{found.get(o.value, 0)} {o}" for o in Outcome
                       if every_outcome or o.value in found)
    said = (f"{number_text.counted(len(both), 'matching annotation × config pair')}: "
            f"{counts or 'none'} (allowed slowdown {result.options.max_slowdown_pct:g} %).")
    one_side = len(rows) - len(both)
    return said + (f" {one_side:,} {ONE_SIDE}." if one_side else "")


def not_comparable(result: GateResult) -> str:
    """``"Not comparable: both jobs were timed on a contended CPU, ...: host contention (...)"``:
    what makes the pair not comparable (:attr:`GateResult.context_headline`), then its evidence,
    each recorded field with both sides' values; "" when the pair is comparable."""
    if not result.context:
        return ""
    said = result.context_headline or "the two jobs were measured differently"
    return f"Not comparable: {said}. The evidence: {'; '.join(result.context)}."


#: A row's why where it begins with the pair's context, said once above it (:func:`markdown`).
CONTEXT_SAID = "not comparable (above)"


def row_why(result: GateResult, reason: str) -> str:
    """A row's ``reason`` as the Markdown table's *why* cell writes it: the pair's context
    differences, said once above the table (:func:`not_comparable`), as :data:`CONTEXT_SAID`."""
    context = "; ".join(result.context)
    return CONTEXT_SAID + reason[len(context):] if context and reason.startswith(context) \
        else reason


def blocked_by_row(result: GateResult, reason: str) -> bool:
    """Whether a not comparable row's ``reason`` names a cause of its own, beyond the pair's
    context (:func:`not_comparable` says that once for every row): a side's runs not one
    population or failing the timer sanity check, too few runs, a truncated bundle, a
    baseline mean of 0, a row on one side only, no interval to form. False where the context
    alone blocks it (its why is :data:`CONTEXT_SAID` and the runs' figures)."""
    why = row_why(result, reason)
    rest = why[len(CONTEXT_SAID):] if why.startswith(CONTEXT_SAID) else why
    return bool(rest.strip("; ")) and not rest.startswith(f"; {RUNS_ALONE}")


def _row_unit(row: pd.Series) -> tuple[str, str, float]:
    """A gate row's unit as the bundles give it, the unit its figures are read in, and the
    size of that in the first: a time (ns) in the unit that fits the smaller mean ("8.700 ±
    3.297 ms", never "8,700,436.0 ± 3,296,528.6 ns"), any other metric in the unit the pages
    show it in (:func:`~profiling_worker.bundle.number_text.shown_unit`: Hz in MHz)."""
    unit = str(row[C.UNIT]) if pd.notna(row[C.UNIT]) else ""
    if unit == "ns":
        avgs = [float(row[side + AVG]) for side in (BASELINE, CANDIDATE)]
        return (unit, *number_text.fitting_time_unit(a for a in avgs if not math.isnan(a)))
    return (unit, *number_text.shown_unit(unit))


def _means(row: pd.Series) -> tuple[str, str]:
    """The baseline's and candidate's ``mean ± std dev unit (n=runs)``, both in one unit
    (:func:`_row_unit`) and with one number of decimals; "–" for a side without a mean."""
    _, unit, size = _row_unit(row)
    avgs = [float(row[side + AVG]) for side in (BASELINE, CANDIDATE)]
    sides = []
    for side, avg in zip((BASELINE, CANDIDATE), avgs):
        std = float(row[side + C.STD]) / size if pd.notna(row[side + C.STD]) else None
        sides.append((avg / size, std, row[side + C.RUNS]))
    decimals = max((number_text.mean_decimals(a, s) for a, s, _ in sides if not math.isnan(a)),
                   default=0)
    said = ["–" if math.isnan(a) else f"{number_text.mean_text(a, s, unit, decimals)} "
            f"(n={int(runs)})" for a, s, runs in sides]  # one run: no std dev
    return said[0], said[1]


def _pct(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:+.2f} %"


def _interval(row: pd.Series) -> str:
    """``+3.10 % (+2.65 .. +3.56)``; the difference alone where a side has no spread;
    ``(unbounded)`` where the baseline mean cannot be told from 0 (Fieller's g >= 1)."""
    if pd.isna(row[DIFF_PCT]) or pd.isna(row[DIFF_CI95_UPPER_PCT]):
        return _pct(row[DIFF_PCT])
    if math.isinf(row[DIFF_CI95_UPPER_PCT]):
        return f"{row[DIFF_PCT]:+.2f} % (unbounded)"
    return (f"{row[DIFF_PCT]:+.2f} % ({row[DIFF_CI95_LOWER_PCT]:+.2f} .. "
            f"{row[DIFF_CI95_UPPER_PCT]:+.2f})")


def _caveats(row: pd.Series) -> str:
    """``" (clock not checked, power-capped runs)"`` beside an outcome; "" without caveats."""
    said = row.get(CAVEATS)
    return f" ({said})" if isinstance(said, str) and said else ""


def interval_line(result: GateResult) -> str:
    """The method and coverage of the "difference (95 % CI)" (Fieller's interval of the ratio
    of means, minus 1: :func:`profiling_worker.bundle.schema.interval_words.line`), said under
    the Markdown table and in the JUnit suite's properties; for host timings (the cpu
    backend's duration) it says their coverage is not known."""
    return W.line(W.RATIO, host_timer=result.metric == C.HOST_TIME)


def job_caveats_line(result: GateResult) -> str:
    """The job-wide caveats with their evidence, said once above the table (Markdown, the CLI)
    and in the JUnit suite's properties: each row's reason names its runs only."""
    return "Caveats of whole jobs: " + "; ".join(result.job_caveats) + "."


def cycle_check_line(result: GateResult) -> str:
    """Whether the cycle check ran and on what, so a "–" in its column is never unexplained."""
    if result.cycles_source:
        return (f"Cycle check: each run's SM cycles, {source_words(result.cycles_source)}, on "
                "both sides.")
    return ("Cycle check: not run (\"–\" in cycles): the two bundles do not both hold each "
            "run's SM clock (an ncu clock or cycles metric, or the sm_clock info collector), so "
            "a regressed or improved row says \"clock not checked\".")


def markdown(result: GateResult) -> str:
    """A Markdown summary: the headline, the context differences, then one table row per
    region x config (each side's mean ± SD, so headed: :data:`MEANS_SAID`; the difference
    with its 95 % interval, the cycles' difference, outcome, reason), regressions first, and
    under it the interval's method and coverage (:func:`interval_line`)."""
    lines = [f"## Kernel regression gate: {exit_label(result)}", "", headline(result), "",
             cycle_check_line(result), ""]
    if result.context:
        lines += [not_comparable(result), ""]
    if result.job_caveats:
        lines += [job_caveats_line(result), ""]
    lines += [f"| region | config | baseline ({MEANS_SAID}) | candidate ({MEANS_SAID}) | "
              "difference (95 % CI) | in cycles | "
              "outcome | why |", "| --- | --- | --- | --- | ---: | ---: | --- | --- |"]
    order = {o.value: i for i, o in enumerate(Outcome)}
    rows = result.rows.sort_values(OUTCOME, key=lambda s: s.map(order), kind="stable")
    for _, r in rows.iterrows():
        # in the unit of the means beside it
        why = number_text.values_in(row_why(result, str(r[REASON])), *_row_unit(r))
        cells = [r[C.ANNOTATION], r[CONFIG_LABEL], *_means(r), _interval(r),
                 _pct(r[CYCLES_DIFF_PCT]), f"**{r[OUTCOME]}**{_caveats(r)}", why]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join([*lines, "", interval_line(result)]) + "\n"


def self_comparison(result: GateResult) -> str:
    """The note for a bundle judged against itself, as the verdict has it: every difference is
    0 by construction, but a row is ``same`` only where its 95 % interval (the runs' own
    spread) fits inside the threshold, and not comparable where its runs are not one
    population; the rows that are not ``same`` are counted, not hidden."""
    total = len(result.rows)
    others = total - result.count(Outcome.SAME)
    said = (f"baseline and candidate are the same bundle: every difference is 0 by "
            f"construction; {total - others} of {number_text.counted(total, 'row')} same")
    if not others:
        return said
    counts = ", ".join(f"{result.count(o)} {o}" for o in Outcome
                       if o is not Outcome.SAME and result.count(o))
    return (f"{said}, {counts}: the runs' own spread is wider than ±"
            f"{result.options.max_slowdown_pct:g} % there, or they are not one population "
            "(each row's reason says which)")


def exit_label(result: GateResult) -> str:
    """``passed``, ``regressed``, ``not judged`` or ``undecided`` (the exit code in words)."""
    return {EXIT_OK: "passed", EXIT_REGRESSED: "regressed",
            EXIT_UNDECIDED: "undecided"}.get(exit_code(result), "not judged")


#: The JUnit element of each outcome that does not pass (same and improved pass).
JUNIT_ELEMENT = {Outcome.REGRESSED.value: "failure", Outcome.NOT_COMPARABLE.value: "error",
                 **{o.value: "error" for o in UNDECIDED}}


def junit_xml(result: GateResult) -> str:
    """The JUnit XML document (module docstring) as a string."""
    if result.rows.empty:
        return junit.error_document(f"{headline(result)} No region x config in both bundles.",
                                    "not judged")
    return junit.document([
        junit.Case(f"gate.{result.candidate}", f"{r[C.ANNOTATION]} {r[CONFIG_LABEL]}",
                   JUNIT_ELEMENT.get(str(r[OUTCOME])), str(r[OUTCOME]),
                   f"{r[REASON]}{_caveats(r)}",
                   f"baseline {result.baseline} ({MEANS_SAID}): {means[0]}\n"
                   f"candidate {result.candidate} ({MEANS_SAID}): {means[1]}")
        for _, r in result.rows.iterrows() for means in [_means(r)]],
        {"interval": interval_line(result),
         **({"job_caveats": job_caveats_line(result)} if result.job_caveats else {})})


def write(result: GateResult, markdown_path: Path | None, junit_path: Path | None) -> None:
    """Write the Markdown summary and/or the JUnit XML where asked (files replaced)."""
    if markdown_path is not None:
        markdown_path.write_text(markdown(result), encoding="utf-8")
    if junit_path is not None:
        junit_path.write_text(junit_xml(result), encoding="utf-8")

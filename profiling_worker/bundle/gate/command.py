"""``python -m profiling_worker compare BASE CANDIDATE``: the regression gate on the command line
(the parser's options and the run; the judgement is :mod:`profiling_worker.bundle.gate.judge`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path

from profiling_worker.bundle.gate import exit_codes, junit

# The judgement (pandas, scipy) is imported in run(): building the worker's parser must work
# in an interpreter that lacks them, so `run` can end a job "failed" naming what is missing.


def percent(text: str) -> float:
    """``"3%"`` or ``"3"`` -> 3.0 (percent); refuses negatives, non-numbers, inf and a bare
    number below 1 (``0.03`` reads as a fraction: it would mean 0.03 %, a 100x stricter gate)."""
    bare = not text.strip().endswith("%")
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage; write e.g. 3%") from None
    value += 0.0  # -0 -> 0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the allowed slowdown must be a finite "
                                         "percentage >= 0, e.g. 3%")
    if bare and 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a bare number is percent ({value:g} %); "
                                         f"write {value:g}% if that is meant, or "
                                         f"{value * 100:g}% for a fraction")
    return value


#: Options whose value may start with "-": argparse takes "-3%" after one for another option
#: and says only "expected one argument".
SIGNED_OPTIONS = ("--max-slowdown",)


def join_signed_values(argv: list[str]) -> list[str]:
    """``["--max-slowdown", "-3%"]`` -> ``["--max-slowdown=-3%"]`` for :data:`SIGNED_OPTIONS`,
    so the value reaches :func:`percent` and its message (a slowdown is >= 0)."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in SIGNED_OPTIONS and len(arg) > 1 \
                and arg[0] == "-" and arg[1] in "0123456789.":
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def slowdown_arg(value: str | float) -> float:
    """:func:`percent` of a value that may come as a number (the agent door's JSON): the same
    checks and messages, raised as ValueError."""
    try:
        return percent(str(value))
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(exc)) from None


def unknown_metric(field: str, metric: str | None, held: dict[str, set[str]]) -> str | None:
    """Why ``metric`` cannot be judged, else None (no metric asked, or every side holds it).

    Args:
        field: the argument's name as the caller's user wrote it (``--metric``, ``metric``).
        held: job id -> the metrics of its aggregated table; a side with none is not checked
            (the gate says it has nothing to judge).
    """
    lacking = [job for job, metrics in held.items() if metric and metrics
               and metric not in metrics]
    if not lacking:
        return None
    return (f"{field} {metric} is not in {' or '.join(lacking)}; give a metric the bundles hold "
            "(their tables/aggregated Metric column)")


def run_count(text: str) -> int:
    """``--min-runs``: a whole number >= 2 (one run has no spread)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"{value}: at least 2 (one run has no spread)")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``compare`` sub-command's arguments."""
    parser.description = ("Judge every region x config of CANDIDATE against BASE on the 95 % "
                          "interval of the relative difference (Fieller's interval of the ratio "
                          "of means, minus 1): regressed or improved "
                          "(the whole interval beyond the allowed change), same (the whole "
                          "interval inside it), ambiguous (it straddles the threshold: the "
                          "runs a side that would likely decide it are said), clock-explained "
                          "(the time differs but the SM cycles do not) or not comparable "
                          "(measured differently, truncated, too few runs, a side's runs not one "
                          "population). Caveats (clock not checked, power-capped runs) are said "
                          "beside an outcome. "
                          + exit_codes.HELP + ".")
    parser.add_argument("baseline", type=Path, help="baseline bundle directory")
    parser.add_argument("candidate", type=Path, help="candidate bundle directory")
    parser.add_argument("--max-slowdown", type=percent, default=3.0, metavar="PCT",
                        help="allowed change: the whole 95 %% interval must be above it to "
                             "count as regressed (below minus it: improved; inside +/- it: "
                             "same), e.g. 3%% (default 3%%)")
    parser.add_argument("--min-runs", type=run_count, default=2, metavar="N",
                        help="fewer runs on a side: not comparable (default and minimum 2: one "
                             "run has no spread)")
    parser.add_argument("--metric", metavar="NAME",
                        help="metric to judge (default: the duration metric, "
                             "gpu__time_duration.sum or host__time_duration.sum on cpu); an "
                             "increase counts as a regression, so name one where lower is better")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help="write the Markdown summary here (also printed on stdout)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML file here")


def _bad_input(args: argparse.Namespace, message: str) -> int:
    """Say ``message`` on stderr and in the JUnit file asked for; exit 2."""
    print(f"compare: {message}", file=sys.stderr)
    unwritten = junit.write_error(args.junit, message)
    if unwritten:
        print(f"compare: {unwritten}", file=sys.stderr)
    return exit_codes.EXIT_BAD_INPUT


def _junit_path(argv: list[str]) -> Path | None:
    """The ``--junit FILE`` (or ``--junit=FILE``) that ``argv`` names, else None."""
    for i, arg in enumerate(argv):
        if arg == "--junit" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if arg.startswith("--junit="):
            return Path(arg.removeprefix("--junit="))
    return None


@contextlib.contextmanager
def junit_on_usage_error(argv: list[str]) -> Iterator[None]:
    """Around argument parsing: a usage error of ``compare ... --junit FILE`` (argparse's
    exit 2, e.g. ``--max-slowdown 0.03``) also writes FILE with an ``<error>`` case holding
    argparse's message, so a CI page shows why the gate did not run. stderr is passed on."""
    path = _junit_path(argv) if argv[:1] == ["compare"] else None
    if path is None:
        yield
        return
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            yield
    except SystemExit as exc:
        if exc.code == exit_codes.EXIT_BAD_INPUT:
            lines = [ln for ln in said.getvalue().splitlines() if ln.strip()]
            why = lines[-1].split("error: ", 1)[-1] if lines else "see stderr"
            junit.write_error(path, f"usage: {why}")
        raise
    finally:
        sys.stderr.write(said.getvalue())


def run(args: argparse.Namespace) -> int:
    """Judge, print the Markdown summary, write the files asked for; the exit code of
    :func:`profiling_worker.bundle.gate.report.exit_code` (2 when a bundle cannot be read)."""
    from profiling_worker.bundle.gate import judge, report
    from profiling_worker.bundle.gate.sides import GateInputError, GateSide
    from profiling_worker.bundle.schema import columns as C

    try:
        sides = [GateSide.load(p) for p in (args.baseline, args.candidate)]
    except GateInputError as exc:
        return _bad_input(args, str(exc))
    unknown = unknown_metric("--metric", args.metric,
                             {s.job_id: set(s.aggregated.get(C.METRIC, ())) for s in sides})
    if unknown:
        return _bad_input(args, unknown)
    options = judge.GateOptions(max_slowdown_pct=args.max_slowdown, min_runs=args.min_runs,
                                metric=args.metric)
    result = judge.judge(sides[0], sides[1], options)
    if args.baseline.resolve() == args.candidate.resolve():
        print(f"compare: {report.self_comparison(result)}", file=sys.stderr)
    print(report.markdown(result), end="")
    try:
        report.write(result, args.markdown, args.junit)
    except OSError as exc:
        print(f"compare: cannot write the summary ({exc}); the judgement above stands",
              file=sys.stderr)
        return report.exit_code(result) or exit_codes.EXIT_BAD_INPUT
    return report.exit_code(result)

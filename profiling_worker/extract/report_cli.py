"""``python -m profiling_worker rules|deepdive|pmsampling BUNDLE``: what a bundle's ``.ncu-rep``
explains.

``rules`` prints the rule digest (:mod:`profiling_worker.extract.rule_digest`) as CSV on stdout
and a one-line note on stderr; ``deepdive`` prints the deep-dive tables
(:mod:`profiling_worker.extract.ncu_sections`) as JSON: the ``nsight/deep_dive.json`` the worker
wrote for a section-set job (or its bundled ``.json.gz``), else read from the bundle's first
report (imported reports); ``rules`` reads that written deep dive when the report is absent;
``pmsampling`` prints every launch's sampled series (:mod:`profiling_worker.extract.pm_sampling`)
as JSON ``{"report", "pm_sampling", "problems"}``, with the launch ids of the deep dive: from the
written
deep dive when it holds them, else read from the report it was written from.
The app calls these in a subprocess so that it never imports ``ncu_report``. Exit codes: 0 done,
1 the report is missing or unreadable (the reason on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from profiling_worker.bundle.schema import columns as C


def _rules(bundle: Path) -> int:
    from profiling_worker.extract.deep_dive_file import deep_dive_path
    from profiling_worker.extract.rule_digest import bundle_digest, bundle_reports

    if not bundle_reports(bundle) and deep_dive_path(bundle) is None:
        print(f"{bundle.name}: no Nsight Compute report in {C.NSIGHT_DIR}/", file=sys.stderr)
        return 1
    table, note = bundle_digest(bundle)
    table.to_csv(sys.stdout, index=False)
    print(note, file=sys.stderr)
    return 0


def _deep_dive(bundle: Path) -> int:
    from profiling_worker.extract.deep_dive_file import written_deep_dive
    from profiling_worker.extract.ncu_sections import deep_dive
    from profiling_worker.extract.rule_digest import bundle_reports
    from profiling_worker.bundle.inflate import plain_file

    written = written_deep_dive(bundle)
    if written is not None:
        json.dump(written, sys.stdout)
        return 0
    reports = bundle_reports(bundle)
    if not reports:
        print(f"{bundle.name}: no Nsight Compute report in {C.NSIGHT_DIR}/", file=sys.stderr)
        return 1
    with plain_file(reports[0]) as plain:
        out = deep_dive(plain)
    out["report"] = reports[0].name
    json.dump(out, sys.stdout, default=str)
    return 0


def _pm_sampling(bundle: Path) -> int:
    from profiling_worker.extract.deep_dive_file import written_deep_dive
    from profiling_worker.extract.ncu_report_reader import placed_actions
    from profiling_worker.extract.ncu_sections import MAX_LAUNCHES
    from profiling_worker.extract.pm_sampling import sampled_series
    from profiling_worker.extract.rule_digest import bundle_reports
    from profiling_worker.bundle.inflate import plain_file

    written = written_deep_dive(bundle)
    if written is not None and "pm_sampling" in written:
        json.dump({"report": written.get("report"), "pm_sampling": written["pm_sampling"],
                   "problems": [p for p in written.get("problems") or () if "pm_sampling" in p]},
                  sys.stdout)
        return 0
    reports = bundle_reports(bundle)
    if not reports:
        print(f"{bundle.name}: no Nsight Compute report in {C.NSIGHT_DIR}/ (PM sampling is "
              "read from the report)", file=sys.stderr)
        return 1
    # the launch ids of the deep dive the page shows: the written one came from the last
    # report's nsight-python ranges, the one read here from the first report's every launch
    report = reports[-1] if written is not None else reports[0]
    rows: list[dict[str, object]] = []
    problems: list[str] = []
    with plain_file(report) as plain:
        for i, placed in enumerate(placed_actions(plain, other_ranges=written is None)):
            if i >= MAX_LAUNCHES:
                break
            try:
                rows += [{"launch_id": i, **series} for series in sampled_series(placed[0])]
            except (AttributeError, TypeError, ValueError, RuntimeError) as exc:
                # an ncu_report without a call this needs costs that launch's series only
                problems.append(f"launch {i} pm_sampling: {type(exc).__name__}: {exc}")
    json.dump({"report": report.name, "pm_sampling": rows, "problems": problems}, sys.stdout)
    return 0


COMMANDS = {"rules": _rules, "deepdive": _deep_dive, "pmsampling": _pm_sampling}


def main(command: str, bundle: Path) -> int:
    """Run ``rules``, ``deepdive`` or ``pmsampling`` on ``bundle``; returns the exit code."""
    from profiling_worker.bundle.inflate import InflateError

    try:
        return COMMANDS[command](bundle)
    except InflateError as exc:
        print(f"{exc.message} ({exc.hint})", file=sys.stderr)
    except ImportError as exc:  # this interpreter has no ncu_report
        print(f"the worker interpreter {sys.executable} cannot read reports ({exc}): "
              "pip install ncu-report into it", file=sys.stderr)
    except ValueError as exc:  # a written deep dive that is not JSON
        print(f"{bundle.name}: {C.DEEP_DIVE_FILE} cannot be read ({exc})", file=sys.stderr)
    except BrokenPipeError:  # stdout's reader went away (| head): not the report's fault
        raise
    except (OSError, RuntimeError) as exc:  # ncu_report's own errors
        print(f"{bundle.name}: the report cannot be read ({type(exc).__name__}: {exc})",
              file=sys.stderr)
    return 1

"""Write the shareable HTML report of a job or a comparison (``app.core.share.build``), asking
the worker for what the bundle's ``.ncu-rep`` explains (deep dive, rule digest) as the pages
do (:mod:`app.services.report_client`). Used by the Files page, ``kernel-dashboard --report``
and the agent door."""

from __future__ import annotations

import sys
from pathlib import Path

from app.core.bundle_files import explains_launches, summary_has_no_rules
from profiling_worker.bundle.loader import Bundle, load_bundle
from app.core.share.build import comparison_report, job_report
from app.core.share.launches import WorkerAnswers
from app.services import report_client


def worker_answers(bundle: Bundle, worker_python: str = sys.executable,
                   env: dict[str, str] | None = None) -> WorkerAnswers:
    """The worker's ``deepdive`` and ``rules`` answers for ``bundle`` (none asked for a job
    without a report; a failed answer becomes the sentence shown instead)."""
    if not explains_launches(bundle):
        why = (f"This job has no Nsight Compute report (backend {bundle.backend}): rule "
               "results come from an ncu job's .ncu-rep.")
        return WorkerAnswers(why_not={"rules": why, "deep_dive": why})
    why_not: dict[str, str] = {}
    deep = report_client.ask(worker_python, "deepdive", bundle.path, env)
    data = None
    if deep.ok:
        data = deep.data()
    else:
        why_not["deep_dive"] = f"The report could not be read: {deep.message}"
    known = summary_has_no_rules(bundle)
    if known:
        return WorkerAnswers(data, None, {**why_not, "rules": f"No rule results in this "
                                                              f"report. {known}"})
    rules = report_client.ask(worker_python, "rules", bundle.path, env)
    if not rules.ok:
        why_not["rules"] = f"The report's rules could not be read: {rules.message}"
        return WorkerAnswers(data, None, why_not)
    return WorkerAnswers(data, rules.table(), why_not, rules.note)


def job_report_html(bundle: Bundle, worker_python: str = sys.executable,
                    env: dict[str, str] | None = None) -> str:
    """The job's whole report (HTML document)."""
    return job_report(bundle, worker_answers(bundle, worker_python, env))


def report_bytes(bundles: list[Path], max_slowdown_pct: float = 3.0,
                 worker_python: str = sys.executable, env: dict[str, str] | None = None) -> bytes:
    """The report (UTF-8 HTML) of one bundle directory (a job) or two (baseline, candidate).

    Raises:
        ManifestError: a directory is not a readable bundle.
        ValueError: not one or two bundles.
    """
    if len(bundles) not in (1, 2):
        raise ValueError(f"give one bundle (a job's report) or two (baseline, candidate), "
                         f"not {len(bundles)}")
    loaded = [load_bundle(p) for p in bundles]
    html = (job_report_html(loaded[0], worker_python, env) if len(loaded) == 1
            else comparison_report(loaded[0], loaded[1], max_slowdown_pct))
    return html.encode("utf-8")


def write_report(bundles: list[Path], out: Path, max_slowdown_pct: float = 3.0,
                 worker_python: str = sys.executable, env: dict[str, str] | None = None) -> int:
    """Write :func:`report_bytes` of ``bundles`` to ``out``; returns its size in bytes.

    Raises:
        ManifestError: a directory is not a readable bundle.
        OSError: ``out`` cannot be written.
        ValueError: not one or two bundles.
    """
    data = report_bytes(bundles, max_slowdown_pct, worker_python, env)
    out.write_bytes(data)
    return len(data)

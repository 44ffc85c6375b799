"""The two reports as HTML strings: one job (every analysis view, its deep dive and rule
digest, notes, provenance) and one comparison (the gate's verdict and table, the compare page's
ratio chart and table, both jobs' notes and provenance)."""

from __future__ import annotations

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.gate import judge as gate, report as gate_report
from profiling_worker.bundle.schema import columns as C, interval_words as W, intervals
from profiling_worker.bundle.schema import partial, run_audit as A

from app.core import metric_roles
from profiling_worker.bundle.loader import Bundle
from app.core.figures.compare import build_compare_figure
from app.core.metrics import MissingData
from app.core.share import document as H
from app.core.share.analyses import analysis_sections, left_out
from app.core.share.job import caption, job_colors, notes, provenance
from app.core.share.launches import WorkerAnswers, deep_dive_section, rules_section
from app.core.share.verdict import decision, judged, refused
from app.core.views.compare import (CompareOptions, caveated_pairs, compare_frame,
                                    compare_table)
from app.core.views.run_audit import (AUDIT_ELSEWHERE, BADGE_PAIRS, SLOW_NAMED, SLOW_TABLE,
                                      audit_source, badge_frame, badges_summary, failed_rows,
                                      flagged_frame, job_evidence_text, said_above,
                                      slow_configs_frame,
                                      slow_configs_text)

#: Shown under the title of every report: what the file is and that it works offline.
OFFLINE_NOTE = ("A self-contained report of the kernel profiling dashboard: the charts are "
                "interactive (plotly.js is inside this file) and need no network. A table column "
                "shows all its numbers with the same decimals, enough for four significant digits "
                "of its median value and one of its smallest, and a mean and its CI95 bounds "
                "enough for two of the narrowest interval's width (at most six), so larger "
                "values show more digits (2,684,749.49 beside 16.77); hover a number for its "
                "exact value.")


def job_report(bundle: Bundle, answers: WorkerAnswers | None = None) -> str:
    """The job's report (HTML document). ``answers``: the worker's deep dive and rule digest
    of the bundle's report (None for a job without one)."""
    answers = answers or WorkerAnswers()
    sections = [notes(bundle), audit_section(bundle), *analysis_sections(bundle)]
    lead = [H.paragraph(caption(bundle), "verdict"), H.paragraph(OFFLINE_NOTE)]
    if short := partial.note(bundle.manifest):  # what it measured, before any of its values
        lead.insert(1, H.note(short, "warning"))
    omitted = left_out(bundle)
    if omitted:  # a job that ran on no GPU: its GPU-only sections would only say "none"
        lead.append(H.paragraph(f"Left out, as they need a GPU and this {bundle.backend}-backend "
                                f"job ran on none: {', '.join(omitted)}."))
    elif answers.deep_dive is not None:
        sections.append(deep_dive_section(bundle, answers.deep_dive))
    elif answers.why_not and "deep_dive" in answers.why_not:
        sections.append(H.Section("Deep dive").add(H.note(answers.why_not["deep_dive"])))
    if not omitted:
        sections.append(rules_section(answers))
    sections.append(provenance(bundle))
    return H.page(f"Kernel profiling report: {bundle.job_id}", lead, sections)


def audit_section(bundle: Bundle) -> H.Section:
    """The run audit (:mod:`app.core.views.run_audit`): each config's runs passed, then the
    runs that were flagged or could not be checked, with the evidence. Above
    :data:`~app.core.views.run_audit.BADGE_PAIRS` pairs, as the pages: the pairs counted and
    the failed ones' table; above :data:`~app.core.views.run_audit.SLOW_NAMED` configs below
    the fastest's clock, those counted and their table."""
    section = H.Section("Run audit").add(H.paragraph(
        f"Every run checked for {', '.join(A.CHECKS)} ({audit_source(bundle)})."))
    badges = badge_frame(bundle)
    if len(badges) <= BADGE_PAIRS:
        section.add(H.table(badges, "Runs passed per region × config"))
    else:  # a big job: 30,000 rows of which a table would show the first, passed or not
        section.add(H.paragraph(badges_summary(badges, "the table below", AUDIT_ELSEWHERE)))
        if len(failed := failed_rows(badges)):
            section.add(H.table(failed, "Runs passed per region × config that failed"))
    # the same on every run: not in each row; a contention the backend warned of is the
    # warning's under the notes, with its figures (said there, not again here)
    said = said_above(bundle)
    wide = "; ".join(w for w in (job_evidence_text(bundle, {c.value for c in A.JOB_WIDE} - said),
                                 *(f"{c}: {NOTES_SAY}" for c in sorted(said))) if w)
    if wide:
        section.add(H.paragraph(f"The Evidence column leaves out what holds for the whole "
                                f"job: {wide}."))
    if (slow := slow_configs_text(bundle, f"the table “{SLOW_TABLE}” below")) is not None:
        section.add(H.paragraph(slow))
        if len(frame := slow_configs_frame(bundle)) > SLOW_NAMED:
            section.add(H.table(frame, SLOW_TABLE))
    details = flagged_frame(bundle)
    return section.add(H.table(details, "Runs flagged or not checked, with the evidence")) \
        if len(details) else section


#: Where the report says a contention the backend warned of, with its figures.
NOTES_SAY = "the contended-CPU warning under “Notes on the values” gives its figures"


def _gate_section(result: gate.GateResult) -> H.Section:
    section = H.Section("Regression gate").add(
        H.paragraph(f"Verdict: {gate_report.exit_label(result)} (exit code "
                    f"{gate_report.exit_code(result)} of python -m profiling_worker compare)",
                    "verdict"), H.paragraph(gate_report.headline(result)))
    if result.context:
        section.add(H.note(gate_report.not_comparable(result), "warning"))
    if result.job_caveats:  # the same on every row: its evidence not in each Reason
        section.add(H.paragraph(gate_report.job_caveats_line(result)))
    first = [C.ANNOTATION, gate.CONFIG_LABEL, gate.OUTCOME, gate.CAVEATS, gate.DIFF_PCT,
             gate.DETECTABLE_PCT, gate.REASON]  # the judgement first, as on the compare page
    rows = result.rows[[c for c in first if c in result.rows]
                       + [c for c in result.rows if c not in first]]
    return section.add(H.table(rows, "Every region × config, as the gate judged it"))


def _ratio_section(baseline: Bundle, candidate: Bundle, options: CompareOptions) -> H.Section:
    section = H.Section("Candidate / baseline")
    try:
        frame = compare_frame(baseline, candidate, options)
    except MissingData as exc:
        return section.add(H.missing(exc, exc.hint))
    metric = options.metric or baseline.duration_metric
    table = compare_table(frame)
    fig = build_compare_figure(frame, f"{candidate.job_id} / {baseline.job_id}: "
                               f"{metric_roles.label(baseline.manifest, metric)}",
                               baseline.host_timer or candidate.host_timer, table)
    caveated = caveated_pairs(frame)
    if caveated:  # the compare page's warning above its chart
        section.add(H.note(f"{len(caveated)} of {counted(len(frame), 'verdict')} "
                           f"{'carries' if len(caveated) == 1 else 'carry'} caveats (column "
                           f"{gate.CAVEATS}; the Reason gives the evidence): "
                           + "; ".join(caveated), "warning"))
    shown = metric_roles.with_words(table, baseline.manifest)  # as the page's
    return section.add(H.figure(fig, "compare", job_colors(baseline)), H.table(shown),
                       H.paragraph(f"RatioCI95 (and the gate's DiffCI95, the same interval "
                                   f"minus 1): {intervals.RATIO_METHOD}; inf: unbounded. "
                                   + W.line(W.RATIO, baseline.host_timer
                                            or candidate.host_timer)))


def comparison_report(baseline: Bundle, candidate: Bundle, max_slowdown_pct: float = 3.0,
                      metric: str | None = None) -> str:
    """The comparison's report (HTML document): the gate's verdict first; where CI's gate
    refuses the pair, its refusal (as the Compare page says it) and no verdict, ratio or
    table, as on the page."""
    refusal = refused(baseline, candidate, "this report")
    if refusal is None:
        result = judged(baseline, candidate, max_slowdown_pct, metric)
        said = f"Gate verdict: {decision(result)['verdict']}"
    else:
        said = refusal["reason"]
    lead = [H.paragraph(f"Baseline {caption(baseline)}"),
            H.paragraph(f"Candidate {caption(candidate)}"),
            H.paragraph(said, "verdict"), H.paragraph(OFFLINE_NOTE)]
    if baseline.host_timer != candidate.host_timer:
        lead.append(H.note("One job measured host wall-clock (cpu backend), the other GPU "
                           "time: the ratio compares different things.", "warning"))
    sections = [] if refusal is not None else [
        _gate_section(result),
        _ratio_section(baseline, candidate, CompareOptions(metric, max_slowdown_pct))]
    for side, job in (("baseline", baseline), ("candidate", candidate)):
        part = notes(job)
        part.title = f"Notes on the {side}, {job.job_id}"
        sections.append(part)
    sections += [provenance(baseline), provenance(candidate)]
    return H.page(f"Kernel comparison: {candidate.job_id} vs {baseline.job_id}", lead, sections)

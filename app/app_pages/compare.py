"""Compare two jobs: candidate / baseline ratio per annotation x config with a CI, and the
regression gate's outcome (the judgement `python -m profiling_worker compare` makes in CI)."""

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.gate import report as gate_report
from profiling_worker.bundle.gate.judge import CAVEATS
from profiling_worker.bundle.gate.cycles import source_words
from profiling_worker.bundle.gate.verdict import Outcome
from profiling_worker.bundle.schema import columns as C, intervals, plausibility as P
from profiling_worker.bundle.schema import interval_words as W

from app.core.figures import common as figures_common
from app.core.figures.compare import build_compare_figure
from app.core import metric_roles, numbers, preflight
from app.core.derived import DEFAULT_TIME_UNIT
from app.core.views import energy as energy_view
from app.core.metrics import MissingData, available_metrics
from app.core.views.compare import (CompareOptions, JobSummary, candidates, caveated_pairs,
                                    compare_frame, compare_table,
                                    ALIKE_MEANS, MOST_ALIKE, REFUSED_GROUPS, gate_refusals,
                                    blocked_pairs, blocked_text,
                                    gate_result,
                                    NOT_SHOWN_WHY, comparable_job, default_pair, is_partial,
                                    measured_unlike, named_job, none_alike_text, pair_line,
                                    partial_text, alike_jobs, refused_groups, refused_title,
                                    refusal_text, evidence_unsaid)
from app.ui import analysis, cached, energy, notes, panels, share, state
from app.ui.jobs import SOURCE_BUNDLED
from app.core.markdown import code, esc
from app.core.provenance import is_imported
from app.core import frame_columns as F

PAGE = "compare"  # widget keys of this page: state.key(PAGE, field)

analysis.header(
    "Compare jobs",
    "Pick a **baseline** and a **candidate** job. Rows are matched by annotation and config "
    "values (e.g. n=4096), so jobs with different size lists still line up. The ratio is "
    f"candidate mean / baseline mean; its 95 % interval: {intervals.RATIO_METHOD} "
    "(docs/statistics.md), the verdict's interval of the relative difference (below) plus 1: "
    f"RatioCI95 − 1 = DiffCI95 / 100. Each job's own means: {intervals.CI_METHOD}.\n\n"
    "The **verdict** is the regression gate's, the same as `python -m profiling_worker compare` "
    "gives in CI, judged on the whole 95 % interval of the difference d = (m_c − m_b)/m_b "
    "(Fieller's interval of m_c/m_b, minus 1): **regressed** / **improved** when "
    "the whole interval is beyond the allowed change, **same** when it lies inside ±it, "
    "**ambiguous** when it straddles it (RunsToDecide: the runs a side that would likely decide "
    "it, where an estimate can be given: not for an unbounded interval), **clock-explained** "
    "when the time is beyond it but the SM cycles (time × the clock each run ran at, where "
    "both jobs hold it: CyclesDiffPct, CyclesOutcome) are not, "
    "**not comparable** when backend, cache or clock control, replay mode, thermal control, "
    "GPU model, clocks, driver, tool versions, (cpu) the host CPU model or architecture or "
    "(ncu) the metric set differ, a bundle is "
    f"truncated, a side has fewer than {intervals.MIN_RUNS} runs, the baseline is 0, or a "
    "side's runs are not one population (two modes or a step) or fail the timer sanity check "
    "(the run audit; the reason still gives the runs' figures, but no outcome of them: "
    "TimeOutcome and CyclesOutcome say not comparable too). **Caveats** beside a "
    "verdict: *clock not checked* (no per-run SM clock on both sides), *power-capped runs*, "
    "clock-dropped runs, idle gaps, launch-bound runs, an L2 left warm against the spec. "
    "Markers: ▲ regressed, ▼ improved, ○ same, □ ambiguous, ✕ clock-explained, ◇ not "
    "comparable. For a metric "
    "that is not a duration the directed outcomes read *candidate higher* / *lower*.\n\n"
    "Only jobs that can be compared are offered as candidate (same duration metric, a kernel, "
    "an annotation and a config in common); the others are listed with the reason. Pre-flight "
    "passes are offered on neither side. The "
    "page opens on the job selected in the sidebar (the one you just ran) and the job most "
    "like it: same kernels and duration metric, measured alike where one is "
    "(the gate judges it: same backend, run options, GPU, tools, ncu metric set), then most "
    "configs in common (then same annotations, same backend, most recent), so the ratios show "
    "a real difference rather than a job divided by itself. Of the two, the one submitted "
    "earlier is the baseline and the later the candidate, so a ratio below 1 means the later "
    "job is faster; a job still running is not compared (the newest finished job and the job "
    "most like it are shown). A new baseline keeps the candidate you picked where it can be "
    "compared with it, else brings the selected job as candidate, or the job most like it "
    "where the selected one cannot be compared with it; a new candidate keeps the baseline. "
    "On a "
    "bundled example (no job of yours has finished yet) the page opens on a pair the gate "
    "can judge. A job cancelled or failed after some configs (partial) is compared on the "
    "configs both jobs measured, without a verdict. "
    "`kernel-dashboard --compare BASE CANDIDATE` opens this page on two bundles "
    "(`?baseline=…&candidate=…`).")
bundles, _problems = cached.list_bundles()
# a Pre-flight pass (2 calls, no warm-up) is a look at a job, not one to compare: the newest
# done job, it was the default baseline, and the gate judged its 2 runs "ambiguous"
passes = {b.job_id: b.spec for b in bundles if preflight.is_pass(b.spec)}
# done jobs, and those that kept part of their configs (compared on the configs both measured)
ids = ([b.job_id for b in bundles if comparable_job(b.status, b.manifest)
        and b.job_id not in passes]
       or [b.job_id for b in bundles if b.job_id not in passes])
if (selected_pass := passes.get(state.selected_job_id() or "")) is not None:
    # what the pass is, as every results page says it at its top (app.ui.panels.bundle_caption)
    st.info(f"{esc(preflight.pass_line(selected_pass) or '')} {code(state.selected_job_id())} "
            "is not compared, as no pass is; its job, once run, is.",
            icon=":material/flight_takeoff:")
if len(ids) < 1:
    st.info("No jobs to compare yet.")
    panels.stop_page()
summaries = [JobSummary.of(b.job_id, b.created_at, b.spec, is_imported(b.manifest), b.manifest)
             for b in bundles if b.job_id in ids]


#: Shown when the candidate is the baseline itself (issue 37: nothing said so).
SAME_JOB = ("Baseline and candidate are the same job: every ratio is 1 by construction (a check "
            "of the page, not a comparison). Pick another candidate to compare two jobs.")


#: The page's pickers: they follow the sidebar's job, but for the user's picks for that job.
PICKERS = (state.key(PAGE, "baseline"), state.key(PAGE, "candidate"))


def _follow_baseline() -> None:
    """A new baseline keeps the candidate the user picked (:func:`state.user_pick`), which the
    Candidate box keeps where it is offered with the new baseline; else, and where the user
    picked none or the new baseline is that job, the new baseline brings its own default
    candidate (never the baseline itself). A fresh user's picked candidate went back to the
    sidebar's job on a new baseline, though offered with it (issue 37)."""
    picked = state.user_pick(PAGE, PICKERS[1])
    st.session_state.pop(PICKERS[1], None)
    if picked is not None and picked != st.session_state.get(PICKERS[0]):
        st.session_state[PICKERS[1]] = picked  # dropped on the rerun where not offered
    state.remember_picks(PAGE, PICKERS)


# a compare link's pair (?baseline=, ?candidate=), until a new job in the sidebar drops it
asked = {side: st.query_params.get(side) for side in state.QUERY_PAIR}
selected = state.selected_job_id()
# no link: the page picks the pair, the earlier job as baseline (the app's example: a pair the
# gate can judge); a link's unknown baseline gives way to the selected job
pair = default_pair(selected, summaries, example=state.job_is_default())
current = (asked["baseline"] if asked["baseline"] in ids else pair[0] if not asked["baseline"]
           else selected)
# the job the user selected (or just ran), in the page's pair, against the most alike
mine = selected if not asked["baseline"] and not state.job_is_default() and selected in ids \
    else None
# two per row: four in one row cut the job ids short at 1000 px ("h200-ncu-deepdive-fp16-40…")
# the metric's box wider than the slowdown's: "Host wall-clock time (host__time_duration.sum)"
# was cut at 1000 px in half the row (issue 37)
picks, criteria = st.columns(2), st.columns([3, 1])
shown = st.container()  # the two ids in full, once both are chosen
baseline_id = picks[0].selectbox("Baseline", state.job_picker(PAGE, PICKERS[0], ids, current),
                                 key=PICKERS[0], on_change=_follow_baseline)
offered, refused = candidates(baseline_id, summaries)
_unshown = {side: job for side, job in asked.items() if job and job not in ids}
if asked["candidate"] in refused:  # a shared link names a pair the gate cannot judge
    st.warning(f"{code('?candidate=' + asked['candidate'])} is not comparable with "
               f"{code(baseline_id)}: {esc(refused[asked['candidate']])}"
               + (f"; showing {MOST_ALIKE} instead." if offered else "."),
               icon=":material/warning:")
for side, job in _unshown.items():
    st.warning(f"{code(f'?{side}={job}')}: no such job in this dashboard's results; showing "
               f"{'the selected job' if side == 'baseline' else MOST_ALIKE} instead.",
               icon=":material/warning:")


def refused_box() -> None:
    """The jobs not offered as candidate, with why, in an expander (nothing without any)."""
    if not refused:
        return
    groups = refused_groups(refused, [b.job_id for b in bundles if b.source == SOURCE_BUNDLED],
                            state.own_jobs())
    with st.expander(refused_title(groups), icon=":material/filter_alt:"):
        st.markdown("\n\n".join(
            f"{REFUSED_GROUPS[name][1].capitalize()} ({REFUSED_GROUPS[name][2]}):\n\n"
            + "\n".join(f"- {code(job)}: {esc(why)}" for job, why in jobs.items())
            for name, jobs in groups.items()))


if not offered:
    refused_box()  # why no candidate is offered: each job's reason
    st.info(f"No other job can be compared with `{baseline_id}`: a candidate must measure the "
            "same duration metric and share a kernel, an annotation and a config with it (see "
            "above). Run the same kernels and sizes again, e.g. with another cache or clock "
            "control, to compare.", icon=":material/info:")
    panels.stop_page()
# a value kept from another baseline is dropped (e.g. the user picked another baseline): the
# pair's candidate with its baseline, else the selected job (never the baseline itself)
choices = state.job_picker(PAGE, PICKERS[1], offered + [baseline_id], asked["candidate"] or (
    pair[1] if baseline_id == pair[0] else mine if mine != baseline_id else None))
candidate_id = picks[1].selectbox("Candidate", choices, key=PICKERS[1],
                                  on_change=state.remember_picks, args=(PAGE, PICKERS),
                                  help="Jobs comparable with the baseline, the most alike "
                                       f"first ({ALIKE_MEANS}); the baseline itself last "
                                       "(ratio 1: a check)")
job_labels = {b.job_id: b.label for b in bundles}  # the spec's label, as History lists it
shown.markdown(pair_line(*(named_job(job, job_labels.get(job), code, esc)
                           for job in (candidate_id, baseline_id))))
if selected not in passes:  # a pass is said above
    with shown:  # a running or queued job has no result to compare yet
        panels.selected_job_not_shown((baseline_id, candidate_id), NOT_SHOWN_WHY
                                      if selected not in ids else "pick it above to compare it")
none_alike = bool(mine and (baseline_id, candidate_id) == pair and pair[0] != pair[1]
                  and not alike_jobs(mine, summaries))
if candidate_id == baseline_id:  # offered last as a check; a user read it as a comparison
    shown.info(SAME_JOB, icon=":material/info:")
baseline, candidate = cached.bundle_for(baseline_id), cached.bundle_for(candidate_id)
if baseline is None or candidate is None:
    st.error("One of the jobs could not be read.")
    panels.stop_page()
for side_job in (baseline, candidate):  # before anything that may stop the page for lack of them
    panels.data_notes(side_job, name_job=True)
for side, side_job in (("baseline", baseline), ("candidate", candidate)):
    if is_partial(side_job.manifest):  # compared on the configs both measured, never passed
        st.warning(partial_text(side, side_job.job_id, str(side_job.status), side_job.manifest,
                                code, esc), icon=":material/rule:")
gate_refused = gate_refusals(baseline, candidate)  # CI's own refusal: no verdict here either
if gate_refused:
    st.error(refusal_text(gate_refused, {"baseline": baseline_id, "candidate": candidate_id},
                          "this page", code, esc), icon=":material/block:")
    panels.stop_page()
common = [m for m in available_metrics(baseline) if m in set(available_metrics(candidate))]
manifest = baseline.manifest  # the lambda below reads it after the page's checks
# never None (the options are not empty); the fallback says so to the type check
metric = criteria[0].selectbox("Metric", common or [baseline.duration_metric],
                           key=state.key(PAGE, "metric"),
                           format_func=metric_roles.picker(manifest, metric_roles.units(baseline))
                           ) or baseline.duration_metric
if baseline.host_timer != candidate.host_timer:
    st.warning("One job measured host wall-clock (cpu backend), the other GPU time: the ratio "
               "compares different things.")
max_slowdown = criteria[1].number_input("Allowed slowdown (%)", min_value=0.0, max_value=1000.0,
                                    value=3.0, step=0.5, key=state.key(PAGE, "max-slowdown"),
                                    help="the gate's --max-slowdown: regressed only when the "
                                         "whole 95 % interval is above it, same when inside ±it")
options = CompareOptions(metric=metric, max_slowdown_pct=float(max_slowdown))
judged = gate_result(baseline, candidate, options)  # once: the frame's judgement too
try:
    frame = compare_frame(baseline, candidate, options, judged=judged)
except MissingData as exc:
    analysis.missing(exc)
for side, side_job in (("baseline", baseline), ("candidate", candidate)):
    notes.show(side_job, f"compare-{side}", [metric], extra_checks=(P.INTERVAL_BELOW_ZERO,))
by_id = {j.job_id: j for j in summaries}
alike = [j for j in offered if not measured_unlike(by_id[baseline_id], by_id[j])]
partial_sides = [side for side, side_job in (("baseline", baseline), ("candidate", candidate))
                 if is_partial(side_job.manifest)]


def under_chart() -> None:
    """The pairs' count, the user's job compared with none alike, why the jobs are not
    comparable and each pair not comparable for a reason of its own, right under the chart:
    over it they put its top at y 907 at 1000x700 (issue 37); the chart's title says when no
    pair has a verdict."""
    if none_alike:  # said of the user's job, before the pair's verdicts
        st.info(none_alike_text(str(mine), pair[pair.index(str(mine)) - 1], code),
                icon=":material/info:")
    # the gate's own count, in the CLI's words: the pairs both jobs hold, then those of one side
    st.caption(esc(gate_report.pair_counts(judged, every_outcome=False)))
    if judged.context:
        context_box()
    blocked = blocked_pairs(frame, judged)
    if blocked:  # each pair's own reason: an empty Caveats cell said nothing (issue 37)
        st.warning(blocked_text(blocked, len(frame), code, esc), icon=":material/block:")


def context_box() -> None:
    """Why the two jobs are not comparable (the gate's context), what is comparable instead."""
    st.warning(f"**Not comparable**: {esc(judged.context_headline)}. The evidence: "
               + "; ".join(esc(c) for c in evidence_unsaid(judged, partial_sides)) + "."
               + (f" Comparable with the baseline: {', '.join(code(j) for j in alike)}."
                  if alike else ("" if none_alike else  # said just before, of the user's job
                                 f" No job here is comparable with {code(baseline_id)}: the "
                                 "ratios are shown without a verdict.")
                  + f" The Candidate box lists {MOST_ALIKE} first."), icon=":material/block:")


title = f"{candidate_id} / {baseline_id}: {metric_roles.readable(baseline.manifest, metric)}"
if not frame.empty and set(frame[F.VERDICT]) == {Outcome.NOT_COMPARABLE.value}:
    title = f"No verdict, every pair not comparable: {title}"  # ratios, not a judgement
# the table and CSV in µs as Size sweep and Stability (the frame keeps ns for the report)
table = compare_table(frame, DEFAULT_TIME_UNIT)
# the hover's means and why as the table shows them
fig = build_compare_figure(frame, title, baseline.host_timer or candidate.host_timer, table)
analysis.figure_panel(fig, metric_roles.with_words(table, manifest), key=PAGE,
                      filename=f"compare-{candidate_id}-vs-{baseline_id}.csv",
                      note=figures_common.open_end_note(fig) or None,  # unbounded CI95s
                      under=under_chart)
share.comparison_button(baseline, candidate, float(max_slowdown), metric)
# the jobs not offered, the cycle check and the caveats: under the chart, since above it they
# put its top below the fold at 1000x700 (y 760, issue 37)
refused_box()
if metric == C.GPU_TIME:
    st.caption(f"Cycle check: each run's SM cycles, {source_words(judged.cycles_source, code)}"
               ", on both jobs; a time verdict they do not confirm reads clock-explained."
               if judged.cycles_source else
               "No cycle check: the two jobs do not both hold each run's SM clock (an ncu "
               "clock or cycles metric, or the sm_clock info collector).")
caveated = caveated_pairs(frame)
if caveated:
    st.warning(f"**{len(caveated)} of {counted(len(frame), 'verdict')} "
               f"{'carries' if len(caveated) == 1 else 'carry'} caveats** (column "
               f"{code(CAVEATS)}; the Reason gives the evidence): "
               + "; ".join(esc(pair) for pair in caveated), icon=":material/report:")
    if judged.job_caveats:  # the same on every row: its evidence not in each Reason
        # its durations in the table's unit, as the Reason's (compare_table)
        st.caption(esc(numbers.durations_in(gate_report.job_caveats_line(judged),
                                            DEFAULT_TIME_UNIT)))
st.caption(W.line(W.RATIO, baseline.host_timer or candidate.host_timer))
if metric in C.DURATION_METRICS:
    st.caption("For durations a ratio below 1 means the candidate is faster.")
if energy_view.asked(baseline) or energy_view.asked(candidate):  # else nothing to say
    left, right = st.columns(2)
    with left:
        energy.show(baseline, PAGE, "Energy, baseline")
    with right:
        energy.show(candidate, PAGE, "Energy, candidate")
for line in metric_roles.describe(baseline.manifest):
    if line.startswith(f"`{metric}`"):
        st.caption(f"Not a measurement: {line}.")

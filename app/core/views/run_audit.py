"""The validity audit of a job's runs (profiling_worker/bundle/schema/run_audit.py, issue 36) as the
pages show it: one badge per annotation x config, the evidence on demand. The table is the
worker's ``tables/run_audit``; bundles without it (recorded before it, imports) get it derived
on load from the files they have, and the checks those files cannot support say so."""

from __future__ import annotations

import weakref

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import backends as B, columns as C, run_audit as A

from profiling_worker.bundle.gate.sides import beside_tables, unread_beside
from profiling_worker.bundle.loader import Bundle
from app.core.metrics import in_job_order, with_labels
from app.core import derived, frame_columns as F, numbers

#: Where the audit came from, as the page says it.
STORED, DERIVED = "written by the worker", "derived on load from the bundle's files"
#: A stored audit of older checks (:func:`profiling_worker.bundle.schema.run_audit.stored_audit`).
REDERIVED = ("derived on load from the bundle's files: its stored run_audit table was made by "
             "older checks (the clock compared with the whole job's median)")


def audit_source(bundle: Bundle) -> str:
    """:data:`STORED` when the bundle holds a readable ``tables/run_audit`` of today's checks,
    :data:`REDERIVED` when one of older checks, else :data:`DERIVED`."""
    tables = beside_tables(bundle)
    if tables[C.TABLE_RUN_AUDIT].empty:
        return DERIVED
    return STORED if A.stored_audit(tables, bundle.manifest) is not None else REDERIVED


def unread_note(bundle: Bundle) -> str | None:
    """What the pages say when a table the audit reads has an unreadable file (None: none
    has): the audit, as CI's gate, reads no other file in its place
    (:func:`~profiling_worker.bundle.gate.sides.beside_tables`)."""
    damaged = unread_beside(bundle)
    if not damaged:
        return None
    files = ", ".join(p.file for p in damaged)
    return (f"{files} cannot be read, so the run audit, as CI's gate (python -m "
            "profiling_worker compare), leaves it out rather than audit the CSV beside it: "
            "the checks that need it say 'not checked' or the job has no audit. Restore the "
            "file from the job's artifacts or record the job again.")


#: id(bundle) -> (a weak reference to it, its audit): the compare page judges a pair several
#: times a render (its frame, its verdict, the report button) on the same loaded bundles. Keyed
#: by the object, not its path: a bundle may be changed in memory (an import's preview).
_DERIVED: dict[int, tuple[weakref.ref[Bundle], pd.DataFrame]] = {}
_KEEP = 32


def audit_frame(bundle: Bundle) -> pd.DataFrame:
    """Every run x check (Annotation, Config, Run, Check, Result, Evidence), stored or derived
    (:func:`profiling_worker.bundle.schema.run_audit.run_audit`) from the tables the gate reads
    (:func:`~profiling_worker.bundle.gate.sides.beside_tables`: an unreadable file's table
    empty, never the CSV beside it); derived once per loaded bundle."""
    kept = _DERIVED.get(id(bundle))
    if kept is not None and kept[0]() is bundle:
        return kept[1]
    audit = A.run_audit({**bundle.tables, **beside_tables(bundle)}, bundle.manifest)
    for key in [k for k, (ref, _) in _DERIVED.items() if ref() is None][:_KEEP]:
        del _DERIVED[key]  # bundles gone since
    if len(_DERIVED) >= _KEEP:
        _DERIVED.pop(next(iter(_DERIVED)))  # the oldest first
    _DERIVED[id(bundle)] = (weakref.ref(bundle), audit)
    return audit


def badge_frame(bundle: Bundle, time_unit: str = derived.DEFAULT_TIME_UNIT) -> pd.DataFrame:
    """One row per annotation x config: Annotation, Config, <params>, ConfigLabel, Runs,
    Passed, Flags (``check n, ...``), NotChecked (checks the files cannot support), Badge
    (``"39 of 100 runs passed (clock 6, population 61)"``), Evidence (each flagged check's
    evidence: the run's value, the reference and the limit; a job-wide check's is
    :func:`job_evidence_text`'s; last, as it is long); by annotation
    in the job's order (:func:`~app.core.metrics.in_job_order`), then config. ``time_unit``:
    the page's (ns, µs, ms), the unit of the evidence's durations (:func:`evidence_in`; a page
    of µs showed "(3,677,390 vs 1,440,196 ns)" beside "33.57")."""
    out = _labelled(A.summary_frame(evidence_in(audit_frame(bundle), time_unit)), bundle)
    params = bundle.parameters
    return out[[C.ANNOTATION, C.CONFIG, *[p for p in params if p in out], F.CONFIG_LABEL,
                C.RUNS, "Passed", "Flags", "NotChecked", "Badge", C.EVIDENCE]]


def evidence_in(audit: pd.DataFrame, time_unit: str) -> pd.DataFrame:
    """``audit`` (:func:`audit_frame`) as :data:`~profiling_worker.bundle.schema.run_audit.
    COLUMNS`, the evidence of each row a page shows (flag, not checked) with its durations in
    ``time_unit`` (ns, µs, ms) by :func:`app.core.numbers.durations_said`, from the durations
    the audit holds as data (tables/run_audit layout 2: ``EvidenceTemplate``, ``...Ns``).

    Raises:
        KeyError: ``time_unit`` is none of ns, µs, ms.
    """
    shown = audit[A.RESULT].isin([A.FLAG, A.NOT_CHECKED]).to_numpy()
    evidence = audit[A.EVIDENCE].to_numpy(dtype=object, copy=True)
    if A.TEMPLATE in audit:
        rows = shown & audit[A.TEMPLATE].notna().to_numpy()
        evidence[rows] = [numbers.durations_said(t, v, r, time_unit) for t, v, r in zip(
            audit[A.TEMPLATE].to_numpy()[rows], audit[A.VALUE_NS].to_numpy(float)[rows],
            audit[A.REFERENCE_NS].to_numpy(float)[rows])]
    elif shown.any():
        # Fallback, only for a stored table written before the durations were data (layout
        # 1, no EvidenceTemplate: a worker's bundle of sessions 19 to 23): the ns its text
        # states, found by a pattern, rewritten in the page's unit
        evidence[shown] = numbers.durations_in_column(
            pd.Series(evidence[shown], dtype=object), time_unit).to_numpy(dtype=object)
    return audit[A.COLUMNS].assign(**{A.EVIDENCE: evidence})


def _labelled(frame: pd.DataFrame, bundle: Bundle) -> pd.DataFrame:
    """``frame`` (rows of Annotation, Config) with each config's parameters (from the job's
    aggregated table) and ConfigLabel, by annotation in the job's order, then config."""
    params = bundle.parameters
    agg = bundle.table(C.TABLE_AGGREGATED)
    if params and not agg.empty and set(params) <= set(agg):
        values = agg[[C.ANNOTATION, C.CONFIG, *params]].drop_duplicates([C.ANNOTATION, C.CONFIG])
        frame = frame.merge(values, on=[C.ANNOTATION, C.CONFIG], how="left")
    return with_labels(in_job_order(frame, bundle, (C.ANNOTATION, C.CONFIG)), params)


#: The most configs below the job's fastest clock that the slow-config caption names; above,
#: it counts them per cause and names the slowest of each: a 10,000-config sweep's caption
#: named 20,000 configs (issue 37). The matmul sweep's 10 are named, as before.
SLOW_NAMED = 12
#: The title of the table of every slow config (:func:`slow_configs_frame`).
SLOW_TABLE = "Configs below the fastest config's clock"
#: Where every slow config is when the caption summarises them, as the pages name it.
SLOW_EVIDENCE = (f"the table “{SLOW_TABLE}” in “Run audit: the checks and their evidence”, "
                 "further down, and its CSV")


def slow_configs_frame(bundle: Bundle) -> pd.DataFrame:
    """The configs whose runs' median SM clock is more than the clock check's limit below the
    job's fastest config's (:func:`profiling_worker.bundle.schema.run_audit.config_clocks`):
    Annotation, Config, <params>, ConfigLabel, ClockMHz (MHz), BelowPct (%), Cause, and the
    fastest config's FastestAnnotation, FastestConfig, FastestMHz; by annotation in the job's
    order, then config; empty when there is none."""
    slow = A.config_clocks({**bundle.tables, **beside_tables(bundle)}, bundle.manifest)
    if slow.empty:
        return slow
    out = _labelled(slow, bundle)
    params = [p for p in bundle.parameters if p in out]
    return out[[C.ANNOTATION, C.CONFIG, *params, F.CONFIG_LABEL, "ClockMHz", "BelowPct",
                "Cause", "FastestAnnotation", "FastestConfig", "FastestMHz"]]


def slow_configs_text(bundle: Bundle, where: str = SLOW_EVIDENCE) -> str | None:
    """The configs of :func:`slow_configs_frame` said as no failed audit, each cause with its
    configs after it: ``"Clock by config (not a failed audit: each run is checked against its
    own config's median). The job's fastest config, fp32 n=8192, ran at 1,979 MHz (its runs'
    median); 10 configs ran more than 5 % below it. Cause not shown (...): fp16 n=8192 at
    1,515 MHz (23 % below), ..."``; above :data:`SLOW_NAMED` configs, each cause's count and
    its slowest config, and ``where`` every one is (e.g. :data:`SLOW_EVIDENCE`). None when
    there is none."""
    slow = slow_configs_frame(bundle)
    if slow.empty:
        return None
    fastest = _labelled(slow.head(1)[["FastestAnnotation", "FastestConfig"]].set_axis(
        [C.ANNOTATION, C.CONFIG], axis=1), bundle).iloc[0]
    summarised = len(slow) > SLOW_NAMED
    if summarised:  # each cause's slowest first
        slow = slow.sort_values("BelowPct", ascending=False, kind="stable")
    counts = slow["Cause"].astype(str).value_counts(sort=False)
    groups: dict[str, list[str]] = {}
    for ann, label, mhz, below, cause in slow[
            [C.ANNOTATION, F.CONFIG_LABEL, "ClockMHz", "BelowPct", "Cause"]].itertuples(
                index=False):
        names = groups.setdefault(str(cause), [])
        if not summarised or not names:
            names.append(f"{ann} {label} at {mhz:,.0f} MHz ({below:.0f} % below)")
    said = " ".join(
        f"{cause[:1].upper()}{cause[1:]}: "
        + (f"{counted(int(counts[cause]), 'config')}, the slowest {names[0]}" if summarised
           else ", ".join(names)) + "."
        for cause, names in groups.items())
    return ("Clock by config (not a failed audit: each run is checked against its own "
            f"config's median). The job's fastest config, {fastest[C.ANNOTATION]} "
            f"{fastest[F.CONFIG_LABEL]}, ran at {slow['FastestMHz'].iloc[0]:,.0f} MHz (its "
            f"runs' median); {counted(len(slow), 'config')} ran more than "
            f"{A.CLOCK_DROP_PCT:g} % below it" + (", summarised" if summarised else "") + ". "
            + said + (f" Every one: {where}." if summarised else ""))


#: A badge's mark: text symbols any font draws. A Material icon is a ligature: its name is the
#: text ("report") until the icon font loads, and Streamlit's font-display:block shows the name
#: after 3 s, so a badge read "report n=8192: 39/100 passed" (issue 37).
PASSED_MARK, FLAGGED_MARK = F.AUDIT_PASSED_MARK, F.AUDIT_FLAGGED_MARK


def badge_text(where: str, passed: int, runs: int, flags: str) -> str:
    """A config's badge: its mark, the runs passed and the checks that failed, each with its
    runs flagged (``flags``: :func:`badge_frame`'s ``Flags``, ``"clock 6, population 61"``):
    ``"⚠ n=8192: 39/100 passed; failed clock (6), population (61)"``, ``"✓ n=1024: 100/100
    passed"``. A badge that said only "0/10 passed" left the failed check to the expander.
    ``where`` "": the badge without its config (``"⚠ 39/100 passed; ..."``), as a table's
    :data:`~app.core.frame_columns.RUN_AUDIT` cell beside the config says it."""
    failed = [f"{check} ({n})" for check, _, n in
              (item.rpartition(" ") for item in flags.split(", ") if item)]
    said = f"{where}: {passed}/{runs} passed" if where else f"{passed}/{runs} passed"
    return (f"{FLAGGED_MARK} {said}; failed {', '.join(failed)}" if failed
            else f"{PASSED_MARK if passed == runs else FLAGGED_MARK} {said}")


#: The most runs (annotation x config x run) whose audit a chart reads to mark its points:
#: summarising the stored audit of a 1,000-config sweep's 30,000 runs took 2.0 s, deriving it
#: 3.8 s, on the 2-core machine (2026-12-06), more than the 3 s the Size sweep's first chart
#: has (issue 37). A larger job's audit is on the Results page, and the chart says so.
CHART_AUDIT_RUNS = 5_000


def audited_runs(bundle: Bundle) -> int:
    """How many runs (annotation x config x run) the job's audit judges: the per-run rows of
    its duration metric (of any metric where it has none); 0 without a runs table."""
    runs = bundle.table(C.TABLE_RUNS)
    if runs.empty or C.METRIC not in runs:
        return len(runs)
    durations = int((runs[C.METRIC] == bundle.duration_metric).sum())
    return durations or len(runs)


def chart_reads_audit(bundle: Bundle) -> bool:
    """Whether a chart marks its points by the run audit: at most :data:`CHART_AUDIT_RUNS`
    runs (:func:`audited_runs`)."""
    return audited_runs(bundle) <= CHART_AUDIT_RUNS


def audit_not_read_note(bundle: Bundle, evidence: str) -> str | None:
    """What a chart says when it does not read the run audit (:func:`chart_reads_audit`),
    naming where each run's checks are (``evidence``), else None."""
    if chart_reads_audit(bundle):
        return None
    # measurements, not runs: a run (one call of a config) times each region once, and the
    # job panel counts runs; "12,000 runs" here read beside its "4,000 runs" (3 regions)
    return (f"Not marked by the run audit: this job's {audited_runs(bundle):,} measurements "
            f"(runs × regions) are more than the {CHART_AUDIT_RUNS:,} whose audit is read "
            f"while the chart draws; each run's checks: {evidence}.")


def with_outcome(frame: pd.DataFrame, bundle: Bundle) -> pd.DataFrame:
    """``frame`` (rows of annotation x config: Annotation, Config) with the column
    :data:`~app.core.frame_columns.RUN_AUDIT`: each row's badge (:func:`badge_frame`,
    :func:`badge_text` without the config), "" for a pair the audit did not judge; ``frame``
    as it is when the job has no audit (an import without per-run rows, a cancelled job) or
    more runs than a chart reads the audit of (:func:`chart_reads_audit`)."""
    if (frame.empty or not {C.ANNOTATION, C.CONFIG} <= set(frame)
            or not chart_reads_audit(bundle)):
        return frame
    badges = badge_frame(bundle)
    if badges.empty:
        return frame
    said = dict(zip(zip(badges[C.ANNOTATION], badges[C.CONFIG]),
                    (badge_text("", int(p), int(r), str(f)) for p, r, f in
                     zip(badges["Passed"], badges[C.RUNS], badges["Flags"]))))
    out = frame.drop(columns=F.RUN_AUDIT, errors="ignore")
    out.insert(identity_end(out, bundle.parameters), F.RUN_AUDIT,
               [said.get((a, int(c)), "") for a, c in zip(out[C.ANNOTATION], out[C.CONFIG])])
    return out


def identity_end(frame: pd.DataFrame, parameters: tuple[str, ...]) -> int:
    """Where the run audit's verdict goes in a table: after the leading columns that say which
    row it is (Annotation, the Size sweep's Series, Config and the config's ``parameters``),
    before the measured ones.
    At the end it sat off screen at 1400x900, right of a long kernel name (the Kernels table:
    a fresh user's find)."""
    naming = {C.ANNOTATION, F.SERIES, C.CONFIG, *parameters}
    end = 0
    for column in frame.columns:
        if column not in naming:
            break
        end += 1
    return end


def _failed_pairs(bundle: Bundle, pairs: tuple[tuple[str, int], ...]) -> pd.DataFrame:
    """The rows of :func:`failed_frame` among ``pairs``, in their order; empty when there is
    none, or the job has more runs than a chart reads the audit of
    (:func:`chart_reads_audit`)."""
    if not pairs or not chart_reads_audit(bundle):
        return pd.DataFrame()
    asked = pd.DataFrame(list(dict.fromkeys(pairs)), columns=[C.ANNOTATION, C.CONFIG])
    return asked.merge(failed_frame(bundle), on=[C.ANNOTATION, C.CONFIG])  # pairs' order


def flagged_points_text(bundle: Bundle, pairs: tuple[tuple[str, int], ...]) -> str | None:
    """:func:`failed_pairs_text` of the ``pairs`` (annotation, config index: e.g. a chart's
    points) with runs that did not pass the run audit, in their order; None when there is
    none, or the job has more runs than a chart reads the audit of
    (:func:`chart_reads_audit`)."""
    failed = _failed_pairs(bundle, pairs)
    return None if failed.empty else failed_pairs_text(bundle, failed)


#: What a flag of each check says about a run, in a reader's words (the checks' definitions:
#: profiling_worker/bundle/schema/run_audit.py's docstring).
FLAG_MEANING: dict[A.Check, str] = {
    A.L2: "the run's L2 was warm although the job asked for it flushed",
    A.CLOCK: f"the run's SM clock was more than {A.CLOCK_DROP_PCT:g} % below the median of its "
             "own config's runs (same annotation and size), or power or thermal capped",
    A.IDLE_GAP: "the GPU sat idle before the run long enough for its clock to drop more than "
                f"{A.CLOCK_DROP_PCT:g} % below its config's median",
    A.HOST_CONTENTION: "the cpu backend's threads waited for a CPU",
    A.LAUNCH_BOUND: "the GPU waited for the host: launch-bound, not kernel time",
    A.TIMER: "the run's duration is below what the timer resolves or the kernel's work allows",
    A.POPULATION: "the config's runs fall in two groups (two modes or a step): the runs of the "
                  "slower group are flagged",
}


def flags_said(flags: "pd.Series[str]") -> str:
    """The meaning of each check named in ``flags`` (:func:`badge_frame`'s ``Flags`` cells,
    ``"clock 6, population 61"``), once each in :data:`A.CHECKS` order:
    ``"population: the config's runs fall in two groups ...; clock: ..."``; "" when none."""
    named = _checks_named(flags)
    return "; ".join(f"{check}: {FLAG_MEANING[check]}" for check in A.CHECKS if check in named)


def _checks_named(flags: "pd.Series[str]") -> set[str]:
    """The checks named in :func:`badge_frame`'s ``Flags`` cells (``"clock 6, population
    61"``)."""
    return {item.rpartition(" ")[0] for cell in flags for item in str(cell).split(", ") if item}


def failed_frame(bundle: Bundle) -> pd.DataFrame:
    """The rows of :func:`badge_frame` where some run did not pass (a flag or not checked)."""
    return failed_rows(badge_frame(bundle))


#: The most annotation x config pairs whose badges are all drawn, and the most failed pairs'
#: badges drawn above it: a 1,000-config sweep's 3,000 badges were 3,000 markdown elements, most
#: of what a later visit of its Stability page cost (issue 37). Every bundled job is below it.
BADGE_PAIRS = 30
#: Where every pair's badge is when the badges are summarised, as the pages name it.
BADGES_EVIDENCE = "“Run audit: the checks and their evidence”, further down, and its CSV"


def drawn_badges(badges: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The rows of ``badges`` (a :func:`badge_frame`) whose badges a page draws and what it
    says of the rest: every row and None for at most :data:`BADGE_PAIRS` pairs; above, the
    failed pairs' rows (:func:`failed_rows`), the first :data:`BADGE_PAIRS` of them, and
    ``"Run audit of 3,000 region × config pairs, summarised: 12 failed (their badges above),
    2,988 passed every run. Every pair's badge: ..."`` (:data:`BADGES_EVIDENCE`)."""
    if len(badges) <= BADGE_PAIRS:
        return badges, None
    failed = failed_rows(badges)
    drawn = failed.head(BADGE_PAIRS)
    more = len(failed) - len(drawn)
    shown = ("their badges above" if not more
             else f"the first {len(drawn):,} badges above, {more:,} more not drawn")
    return drawn, badges_summary(badges, shown, BADGES_EVIDENCE)


def badges_summary(badges: pd.DataFrame, shown: str, evidence: str) -> str:
    """``badges`` (a :func:`badge_frame` of more than :data:`BADGE_PAIRS` pairs) counted:
    ``"Run audit of 3,000 region × config pairs, summarised: 12 failed (<shown>), 2,988 passed
    every run. Every pair's badge: <evidence>."``, ``shown`` (where the failed pairs are) left
    out when none failed."""
    failed = len(failed_rows(badges))
    return (f"Run audit of {counted(len(badges), 'region × config pair')}, summarised: "
            f"{failed:,} failed{f' ({shown})' if failed else ''}, {len(badges) - failed:,} "
            f"passed every run. Every pair's badge: {evidence}.")


def failed_rows(badges: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``badges`` (a :func:`badge_frame`, e.g. a cached one) where some run did not
    pass."""
    return badges[badges["Passed"] < badges[C.RUNS]]


def failed_pairs_text(bundle: Bundle, failed: pd.DataFrame,
                      chars: int | None = None) -> str:
    """The pairs of :func:`failed_frame` (or some of its rows) in words, in their order: each
    pair's runs passed and its checks that failed, each with its runs flagged and the evidence
    of its first flagged run (:meth:`~profiling_worker.bundle.schema.run_audit.ConfigAudit.
    evidence_text`; 'not checked' where no check flagged the runs that did not pass), pairs of
    the same outcome named together; then, once, the evidence of the job-wide checks among
    them (:func:`~profiling_worker.bundle.schema.run_audit.job_evidence`): ``"fp16 n=8192:
    7/10 runs passed (clock 3: 1,402 MHz vs its config's median 1,515 MHz (-7.5 %; limit
    5 %); ...); fp16 n=64, fp16 n=128: 0/3 runs passed each (l2_state 3); for the whole
    job, l2_state: ..."``; not a contention the backend warned of (:func:`said_above`: its own
    warning says it, with the figures). ``chars``
    bounds the whole text: the pairs after the first that do not fit are named without their
    evidence (:func:`_within`); None: every pair in full."""
    groups: dict[tuple[int, int, str], list[str]] = {}
    for a, c, passed, runs, said in zip(failed[C.ANNOTATION], failed[F.CONFIG_LABEL],
                                        failed["Passed"], failed[C.RUNS], failed[C.EVIDENCE]):
        groups.setdefault((int(passed), int(runs), str(said) or "not checked"),
                          []).append(f"{a} {c}")
    said_groups = [f"{', '.join(names)}: {passed}/{counted(runs, 'run')} passed"
                   + (" each" if len(names) > 1 else "") + f" ({said})"
                   for (passed, runs, said), names in groups.items()]
    # a contention the backend warned of is said over the chart with its figures one click
    # away: its evidence here said it a third time (session 23's fresh user)
    wide = job_evidence_text(bundle, _checks_named(failed["Flags"]) - said_above(bundle))
    tail = f"; for the whole job, {wide}" if wide else ""
    return _within(said_groups, list(groups.values()),
                   None if chars is None else chars - len(tail)) + tail


#: The most characters of a chart's note of marked points (:func:`chart_audit_notes`): a
#: contended cpu job's 9 marked points, each config with its own population evidence, made a
#: 1,233-character note under the chart (CI, session 21); past it, the points after the first
#: are named without their evidence, which the table's Run audit column has.
NOTE_CHARS = 1_200
#: The most further marked points a chart's note names without their evidence.
NOTE_MORE_NAMES = 12


def _within(said_groups: list[str], names: list[list[str]], chars: int | None) -> str:
    """``said_groups`` joined, or with ``chars`` (a bound) as many of the first of them as fit
    in it with the rest's pair names (``names``, group by group; at most
    :data:`NOTE_MORE_NAMES`) after them: ``"...; 2 more: fp16 n=128, bf16 n=64"``. The first
    group is always spelled out ("" when there is none)."""
    def joined(kept: int) -> str:
        rest = [name for group in names[kept:] for name in group]
        more = ", ".join(rest[:NOTE_MORE_NAMES]) + (" …" if len(rest) > NOTE_MORE_NAMES else "")
        return "; ".join(said_groups[:kept]) + (f"; {len(rest):,} more: {more}" if rest else "")

    kept = len(said_groups)
    while kept > 1 and chars is not None and len(joined(kept)) > chars:
        kept -= 1
    return joined(kept)


def said_above(bundle: Bundle) -> set[str]:
    """The job-wide checks whose evidence every page, the report and the agent door say in a
    warning of their own: ``{"host_contention"}`` for a cpu job the backend warned of host
    contention (:func:`app.core.share.job.contention_note`), else none."""
    backend = bundle.manifest.get("backend") or {}
    warned = bundle.host_timer and B.contention_text(backend) is not None
    return {A.HOST_CONTENTION.value} if warned else set()


def job_evidence_text(bundle: Bundle, named: set[str] | None = None) -> str:
    """The evidence of the job-wide checks that flagged runs of the job
    (:func:`~profiling_worker.bundle.schema.run_audit.job_evidence`; ``named``: of those
    checks alone), said once: ``"host_contention: the time its threads waited for a CPU adds
    up to 0.49 x ..."``, checks apart by " | "; "" when none."""
    return " | ".join(f"{check}: {text}" for check, text in
                      A.job_evidence(audit_frame(bundle)).items()
                      if named is None or check in named)


#: Where every pair's badge is, for a text read away from the pages' folds (the report, the
#: agent door).
AUDIT_ELSEWHERE = ("the dashboard's Stability or Results page (“Run audit: the checks and their "
                   "evidence”) and its CSV")


def failed_text(bundle: Bundle) -> str | None:
    """What the run audit failed, in one plain sentence for every place that would otherwise
    call a job clean (the report's notes): ``"the run audit failed runs in 5 of 15 region ×
    config pairs: bf16 n=4096: 0/10 runs passed (clock 10: ...); ..."``
    (:func:`failed_pairs_text`); above :data:`BADGE_PAIRS` failed pairs, the first of them
    and ``"; 3,000 more failed: every pair's badge: ..."`` (:data:`AUDIT_ELSEWHERE`). None
    when every run of every pair passed."""
    failed = failed_frame(bundle)
    if failed.empty:
        return None
    more = len(failed) - BADGE_PAIRS  # a big job's every failed pair was 100,000s of characters
    return (f"the run audit failed runs in {len(failed):,} of {len(badge_frame(bundle)):,} "
            f"region × config pairs: {failed_pairs_text(bundle, failed.head(BADGE_PAIRS))}"
            + (f"; {more:,} more failed: every pair's badge: {AUDIT_ELSEWHERE}"
               if more > 0 else ""))


def pair_failed_text(bundle: Bundle, annotation: str, config: int) -> str | None:
    """What the run audit failed in one annotation x config (config: its index), for a view
    whose RSD and Stable are over every recorded run (One kernel): ``"Run audit: fp16 n=8192:
    7/10 runs passed (clock 3: 1,402 MHz vs its config's median 1,515 MHz (-7.5 %; limit
    5 %); ...); the RSD and Stable are over every recorded run, so stable here means
    repeatable, not valid."`` (:func:`failed_pairs_text`); None when every run passed."""
    failed = failed_frame(bundle)
    row = failed[(failed[C.ANNOTATION] == annotation) & (failed[C.CONFIG] == config)]
    if row.empty:
        return None
    return (f"Run audit: {failed_pairs_text(bundle, row)}; the RSD and Stable are over every "
            "recorded run, so stable here means repeatable, not valid.")


def marked_points_note(flagged: str, evidence: str, meaning: str = "") -> str:
    """The note under a chart whose points of failed runs are marked (the Size sweep, its
    section of the report), for a reader new to the audit: first, in one sentence, what an ×
    means, what to do and where to read more (``evidence``: the Results tables page, the
    report's Run audit section); then the points, ``flagged`` from
    :func:`flagged_points_text`, and ``meaning``, what each failed check means
    (:func:`flags_said`; "" says none)."""
    return (f"An × marks a point whose runs failed the run audit (the checks that each run "
            "timed the kernel undisturbed), so its value may not be the kernel's own: read "
            f"why ({evidence}) before trusting it, and record the point again once the cause "
            f"is gone. Marked: {flagged}."
            + (f" What the failed checks mean: {meaning}." if meaning else "")
            + f" The table's {F.RUN_AUDIT} column has every point's outcome.")


#: Where each run's checks are, as a marked chart's caption names it: on the pages, in the report.
PAGE_EVIDENCE = "the Results tables page, “Run audit”"
REPORT_EVIDENCE = "this report's Run audit section"


def points_of(frame: pd.DataFrame) -> tuple[tuple[str, int], ...]:
    """The (annotation, config index) of each row of a chart's frame, in its order, for
    :func:`chart_audit_notes` (hashable, as :func:`app.ui.cached.view` needs); () for a frame
    without both columns."""
    if not {C.ANNOTATION, C.CONFIG} <= set(frame):
        return ()
    return tuple((str(a), int(c)) for a, c in zip(frame[C.ANNOTATION], frame[C.CONFIG]))


def chart_audit_notes(bundle: Bundle, pairs: tuple[tuple[str, int], ...],
                      evidence: str) -> tuple[str, ...]:
    """What goes under a chart whose points (or bars) are ``pairs`` (:func:`points_of` of the
    rows drawn), every such chart of the pages and the report alike: the points marked × named
    (:func:`marked_points_note` of :func:`flagged_points_text`) and, for a job with more runs
    than a chart reads the audit of, that none is marked (:func:`audit_not_read_note`);
    ``evidence`` (:data:`PAGE_EVIDENCE`, :data:`REPORT_EVIDENCE`) says where each run's checks
    are. () when every point passed."""
    failed = _failed_pairs(bundle, pairs)  # once: the marked points and what their checks mean
    meaning = "" if failed.empty else flags_said(failed["Flags"])
    room = NOTE_CHARS - len(marked_points_note("", evidence, meaning))  # for the points
    flagged = None if failed.empty else failed_pairs_text(bundle, failed, room)
    unread = audit_not_read_note(bundle, evidence)
    return tuple(note for note in (None if flagged is None else
                                   marked_points_note(flagged, evidence, meaning), unread)
                 if note is not None)


def flagged_frame(bundle: Bundle, time_unit: str = derived.DEFAULT_TIME_UNIT) -> pd.DataFrame:
    """The audit's rows that did not pass (flag or not checked), for the details, with the
    evidence's durations in ``time_unit`` (:func:`evidence_in`)."""
    audit = evidence_in(audit_frame(bundle), time_unit)
    flagged = audit[audit[A.RESULT].isin([A.FLAG, A.NOT_CHECKED])]
    return in_job_order(flagged, bundle).reset_index(drop=True)

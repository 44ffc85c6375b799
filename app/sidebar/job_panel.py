"""The sidebar job panel: queue, live progress, cancel, errors of the executors' jobs, and the
result store's other jobs (its cached listing, :func:`app.ui.jobs.store_jobs`) among them, all
newest submitted first.

The panel is a fragment that reruns every second while a job is queued or running and every
few seconds when none is (a sweep submitted elsewhere appears without a click); when the last job
finishes it reruns the whole app once, so the job
selector and the pages show the new result.
"""

from __future__ import annotations

import json

import time
from typing import Any

import streamlit as st

from profiling_worker.bundle.number_text import counted, times_in
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.events import WRITING_STAGE
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest

from app.ui import job_status, navigation, panels, state
from app.ui.jobs import (PARTIAL_DIR, READ_ONLY_STAGE, SCAN_S, UNKNOWN_BACKEND, BundleInfo,
                         Executor, Job, TaskView, store_jobs, store_owner)
from app.core import spec_form
from app.core.markdown import code, esc

#: The most jobs the panel lists: the newest submitted, of this server's executors (any session)
#: and of its result store alike, so that no job is hidden behind an older one; this session's
#: queued and running jobs are listed besides, wherever they fall. The rest are counted, with a
#: link to the History page, which lists them all.
SHOW_LAST = 8
#: The panel's text when the result store holds no job at all.
EMPTY_TEXT = "No jobs in this result store yet."
POLL_S = 1.0
#: How often an idle panel looks again: a sweep that ``kernel-sweep`` or another server submits
#: later is found by the executor's scan (every ``SCAN_S``) and listed without a click.
IDLE_POLL_S = SCAN_S
#: How the note under the form shows the submitted job in each state.
NOTICES = {JobStatus.QUEUED: (st.success, ":material/schedule:"),
           JobStatus.RUNNING: (st.info, ":material/autorenew:"),
           JobStatus.DONE: (st.success, ":material/check_circle:"),
           JobStatus.FAILED: (st.warning, ":material/error:"),
           JobStatus.CANCELLED: (st.info, ":material/cancel:"),
           JobStatus.INTERRUPTED: (st.warning, ":material/warning:")}
#: Each job's mark in its line of text: text symbols any font draws, not Material icons, whose
#: name is the text until the icon font loads ("schedule queued"; issue 37).
STATUS_ICON = {JobStatus.QUEUED: "◷", JobStatus.RUNNING: "↻", JobStatus.DONE: "✓",
               JobStatus.FAILED: "✗", JobStatus.CANCELLED: "⊘", JobStatus.INTERRUPTED: "⚠"}



#: The Cancel button's help while the worker writes the bundle (its stage is
#: :data:`~profiling_worker.bundle.schema.events.WRITING_STAGE`): what a cancel then does. A
#: fresh user's cancel at that stage used to end the job with "no result tables" (session 21).
WRITING_CANCEL_HELP = ("Measuring has ended and the worker is writing the results: a Cancel now "
                       "stops nothing and loses nothing. The results are written whole and "
                       "kept; a job whose every run was measured ends done, with a note that "
                       "the cancel came after them.")
#: The caption of a cancelled job whose worker writes its bundle: a cancel that came then, or
#: one that stopped the measuring, whose configs measured are written.
WRITING_CANCELLING = ("Cancelling… measuring has stopped: the worker writes what it measured, "
                      "whole, and it is kept.")


#: Where a warning's head ends: its first parenthesis, colon or semicolon past these
#: characters (a cpu job's contention warning took nine lines of each card in the panel).
_HEAD_CHARS = 24


def warning_head(warning: str) -> str:
    """A job warning's first clause, for its card (the whole of it is the caption's help):
    the text up to its first " (", ": " or "; " past :data:`_HEAD_CHARS` characters, else
    all of it; "…" where cut."""
    cuts = [i for sep in (" (", ": ", "; ") if (i := warning.find(sep, _HEAD_CHARS)) > 0]
    return warning[:min(cuts)] + " …" if cuts else warning

def render_job_panel(manager: Executor) -> None:
    """Draw the panel; it polls the manager once a second while any job is active, else every
    :data:`IDLE_POLL_S`. ``manager``: :func:`app.ui.cached.executors`, whose jobs it reads
    through :func:`app.ui.job_status.jobs_here` (in a full run of the app, the snapshot its
    page and Job box said)."""

    @st.fragment(run_every=POLL_S if manager.active() else IDLE_POLL_S)
    def _panel() -> None:
        # the full run's snapshot, which its page and Job box said, or a tick's fresh one
        jobs = list(job_status.jobs_here().values())
        if job_status.page_behind(jobs):
            st.rerun()  # the page named an earlier state of a job: draw it again
        active = any(j.active for j in jobs)
        if st.session_state.get(state.PANEL_WAS_ACTIVE) and not active:
            # the last job just finished: refresh the whole app once, before drawing anything.
            # A rerun ends this run before Streamlit clears what it no longer draws, so a job
            # drawn first kept the previous run's progress bar under its new header ("✓ done"
            # over "106/120") for as long as the app took to run again.
            st.session_state[state.PANEL_WAS_ACTIVE] = False
            st.rerun()
        st.session_state[state.PANEL_WAS_ACTIVE] = active
        stored = store_jobs({j.job_id for j in jobs})
        if not jobs and not stored:
            st.caption(EMPTY_TEXT)
        lines: list[BundleInfo] = []  # store jobs between two cards, drawn as one list
        headed = False  # the store's heading and help, once: above its first list only
        shown, more = newest_first(jobs, state.own_jobs(), stored)
        for item in shown:
            if isinstance(item, BundleInfo):
                lines.append(item)
                continue
            headed = _store_list(lines, headed)
            lines = []
            _job(manager, item, queue_position(jobs, item))
        _store_list(lines, headed)
        if more:
            navigation.link("history.py", more_text(more))
        _notice(jobs)

    _panel()


def newest_first(jobs: list[Job], own: list[str], stored: list[BundleInfo]
                 ) -> tuple[list[Job | BundleInfo], int]:
    """What the panel lists, newest submitted first, and how many jobs it leaves out.

    Of this server's jobs (``jobs``, oldest first, every session's) and the result store's
    others (``stored``, :func:`app.ui.jobs.store_jobs`) in one order (a job's
    ``submitted_at``, a stored one's ``created_at``: both the manifest's ISO UTC time; on a
    tie this server's job first), the newest :data:`SHOW_LAST`, and every queued or running
    job of this session (ids ``own``) wherever it falls: with many sessions on one server, a
    session's job can wait behind the others' newer ones, and it must still see it run. A
    job left out is never newer than a listed one, except for those of this session.
    """
    def submitted(item: Job | BundleInfo) -> str:
        return item.created_at if isinstance(item, BundleInfo) else item.submitted_at

    both: list[Job | BundleInfo] = [*reversed(jobs), *stored]
    everything = sorted(both, key=submitted, reverse=True)  # stable
    mine = set(own)
    shown = [item for i, item in enumerate(everything) if i < SHOW_LAST or (
        isinstance(item, Job) and item.active and item.job_id in mine)]
    return shown, len(everything) - len(shown)


def more_text(more: int) -> str:
    """The History link's label under the panel's list: how many jobs it leaves out."""
    return f"{more:,} more: History"


#: The heading of the panel's first list of store jobs, and its help.
STORE_HEADING = "**In the result store**, newest first:"
STORE_HELP = ("Jobs of this server's results folder that this server did not queue since it "
              "started: ended earlier, or queued by another process (the panel follows those "
              f"within {IDLE_POLL_S:g} s).")


def _store_list(stored: list[BundleInfo], headed: bool) -> bool:
    """Jobs of the result store that this server's executors do not list (``stored``, newest
    first), one line each, where they fall among this server's jobs (:func:`newest_first`);
    under :data:`STORE_HEADING` unless a list above has it (``headed``: it was repeated with
    its help icon between every two cards). Returns whether the heading is drawn now."""
    if not stored:
        return headed
    items = "\n".join(f"- {store_line(info)}" for info in stored)
    if headed:
        st.markdown(items)
    else:
        st.markdown(f"{STORE_HEADING}\n\n{items}", help=STORE_HELP)
    return True


#: What a store job's line says for a spec of which neither kernels nor backend can be read
SPEC_UNREADABLE = "spec unreadable"


def what_ran(info: BundleInfo) -> str:
    """``kernels · backend`` of a store job as its spec names them; what it does not name said
    so (``kernels not recorded``), and :data:`SPEC_UNREADABLE` where it names neither (a job
    another process failed before it read its spec showed ``✗ failed ·  · ? · id``)."""
    kernels = ",".join(info.kernels)
    backend = "" if info.backend == UNKNOWN_BACKEND else info.backend
    if not kernels and not backend:
        return SPEC_UNREADABLE
    return f"{kernels or 'kernels not recorded'} · {backend or 'backend not recorded'}"


def store_line(info: BundleInfo) -> str:
    """One job of the store as the panel lists it: mark, status (`` · Pre-flight pass`` after
    it for a pass, as its card says while it runs), kernels, backend, id; for a
    queued or running one, the process its manifest names as owner."""
    status = JobStatus(info.status)
    said = partial.status_text(status, info.manifest)  # a cancelled job that kept configs
    line = (f"{STATUS_ICON.get(status, '')} **{esc(said)}**{job_status.kind_after(info.spec)}"
            f" · {esc(what_ran(info))} · "
            f"{code(info.job_id)}")
    if not status.finished:
        owner = store_owner(info)
        line += (f" · owned by the {esc(owner)}" if owner else " · its manifest names no owner")
    return line


def queue_position(jobs: list[Job], job: Job) -> int:
    """1-based place of a queued job among the queued jobs of its lane (0 if not queued)."""
    if job.status != JobStatus.QUEUED:
        return 0
    queued = [j.job_id for j in jobs if j.lane == job.lane and j.status == JobStatus.QUEUED]
    return queued.index(job.job_id) + 1


def _job(manager: Executor, job: Job, position: int) -> None:
    with st.container(border=True, key=state.key("panel", f"job-{job.job_id}")):
        icon = STATUS_ICON.get(job.status, "")
        kernels = ",".join(job.spec.kernels)
        st.markdown(f"{icon} **{esc(status_text(job))}**{job_status.kind_after(job.spec)} · "
                    f"{esc(kernels)} · {esc(job.spec.backend)}  \n{code(job.job_id)}")
        # the progress bar and the Cancel button have places of their own, filled or left empty
        # whatever the job's state: a finished job's empty place replaces its bar at once, where
        # the next element of another kind left the bar of an earlier run under "✓ done"
        progress, cancel = st.empty(), st.empty()
        if job.watched_by and job.active:  # another process runs (a sweep: submits, retries,
            # merges) it; an ended job has no owner left to name, nothing left to cancel
            st.caption(owner_caption(job))
        elif job.active and job.cancel_requested:  # the worker is stopping; no Cancel button
            st.caption(cancelling_text(job))
        elif job.status == JobStatus.QUEUED:
            st.caption(f"Waiting for {esc(job.lane)}: place {position} in its queue.")
        if job.tasks:
            task_table(job, progress)
        elif (job.status == JobStatus.RUNNING or job.stage == READ_ONLY_STAGE and job.active) \
                and not job.cancel_requested:  # a sweep read from its folder: tasks done
            text = progress_text(job)
            if job.spec.run_target is not None and job.total:  # the total is every config's most
                text += " at most (runs auto stops each config at its target)"
            progress.progress(job.fraction, text=esc(text))
        if job.active and not job.cancel_requested and not job.watched_by:
            cancel.button("Cancel", key=state.key("panel", f"cancel-{job.job_id}"),
                          on_click=manager.cancel, args=(job.job_id, partial.USER_CANCEL),
                          icon=":material/stop:",
                          help=cancel_help(job))
        kept = kept_note(job)
        failed = job.status in (JobStatus.FAILED, JobStatus.INTERRUPTED) and bool(job.error)
        for warning in job.warnings[-3:]:  # a contended CPU's figures; its advice: the page
            if failed and said_elsewhere(warning, job, kept):
                continue  # a failing config's warning: the failure below says it
            # the form's label, not the spec's key; a recorded time as a person reads it
            warning = times_in(spec_form.in_form_words(warning))
            st.caption(f"⚠ {esc(warning_head(warning))}", help=esc(warning))
        # another tab's or server's failure is a line (the tab that queued it shows the box;
        # the Files page keeps its log): a fresh user read one failure three times
        boxed = failed and not job.watched_by and job.job_id in state.own_jobs()
        if kept and not (failed and not boxed):  # part of the configs measured: shown
            st.caption(f":material/rule: {esc(kept)}")
        if job.status == JobStatus.CANCELLED:
            if not kept:
                st.caption(esc(cancel_note(job)))
        elif failed and not boxed:
            st.caption(esc(failure_line(job, kept)),
                       help=esc(error_message(job)))
        elif failed and job.error:
            panels.render_error(str(job.error.get("message", "")), job.error.get("hint"),
                                job.error.get("log_tail"), kind=job.error.get("kind"),
                                key=state.key("panel", job.job_id))


def progress_text(job: Job, now: float | None = None) -> str:
    """A running job's progress line: ``stage: where · 2,119 of 4,000 runs`` (the worker's
    steps: a run is one measured call of one config, every region of it timed; configs x
    runs, :func:`where_text` says where), ``writing bundle · 1 of 1 step`` at the last stage,
    or, for a sweep another process watches, its tasks done of all, read from its folder.
    ``now``: epoch s (default the clock)."""
    if job.watched_by and job.stage == READ_ONLY_STAGE and job.total:
        return f"{job.done:,} of {counted(job.total, 'task')} done"
    if not job.total:
        return "starting"
    where = where_text(job, time.time() if now is None else now)
    return (f"{job.stage or 'starting'}{': ' + where if where else ''} · "
            f"{steps_text(job.stage, job.done, job.total)}")


def steps_text(stage: str, done: int, total: int) -> str:
    """A worker's progress steps said by name, ``2,119 of 4,000 runs`` (``writing bundle``'s
    ``1 of 1 step``): "2,119/4,000" read beside the Size sweep's 12,000 measurements (runs x
    regions) as another count of runs."""
    return f"{done:,} of {counted(total, 'step' if stage == WRITING_STAGE else 'run')}"


def task_progress(task: TaskView, runs: int | None) -> str:
    """A sweep task's progress in words with its counts (the task table's column, which read a
    bare "23/40 profiling"): ``profiling: 2 of 4 configs · 23 of 40 runs``, the configs
    measured where each of the task's configs takes ``runs`` steps (``runs``: the spec's runs
    per config, None for runs "auto"), else the runs alone; its stage alone before its worker
    counted any (``submitting``), "waiting" with no stage."""
    if not task.total:
        return task.stage or "waiting"
    steps = steps_text(task.stage, task.done, task.total)
    configs = len(task.configs)
    if task.stage == WRITING_STAGE or not runs or task.total != configs * runs:
        return f"{task.stage or 'starting'}: {steps}"
    return (f"{task.stage or 'starting'}: {task.done // runs:,} of "
            f"{counted(configs, 'config')} · {steps}")


def where_text(job: Job, now: float) -> str:
    """Where the worker's last progress event put it, ``config 1 of 4, run 3 of 10, 15 s in
    this config`` (the run is left out in a warm-up, its count for runs "auto", whose runs are
    at most the spec's); "" when no event named a config. A kernel that hangs shows its config
    and the seconds growing, where it showed "starting" (issue 37)."""
    if job.config is None:
        return ""
    parts = [f"config {job.config + 1:,} of {len(job.spec.configs):,}"]
    if job.run is not None:
        parts.append(f"run {job.run + 1:,}" + ("" if job.spec.run_target is not None
                                                 else f" of {job.spec.runs:,}"))
    if job.config_since is not None:
        parts.append(f"{max(0.0, now - job.config_since):.0f} s in this config")
    return ", ".join(parts)


def owner_caption(job: Job) -> str:
    """Who runs a job this server shows read-only (``job.watched_by``: the process its
    manifest names, pid and host). No Cancel here: a queued job lives in its owner's queue
    (no signal from here can take it out), and its worker may be a warm one serving later
    jobs or run on another host; its owner's panel, Ctrl-C or ``cancel_job`` cancels it."""
    if job.stage == READ_ONLY_STAGE:  # a sweep: its watcher submits, retries and merges it
        return f"Read-only here: watched by the {esc(job.watched_by)}."
    return f"Read-only here: owned by the {esc(job.watched_by)}, which alone can cancel it."


def said_elsewhere(warning: str, job: Job, kept: str | None) -> bool:
    """True when a failed job's ``warning`` (a failing config's, as the worker sent it: its
    error, then "; config skipped, the others run on") is said by its error message or its
    note of the configs kept (``kept``): the warning, or all of it before its last "; "."""
    said = (str(job.error.get("message", "")) if job.error else "") + "\n" + (kept or "")
    return any(part and part in said for part in {warning.strip(),
                                                  warning.rsplit("; ", 1)[0].strip()})


def error_message(job: Job) -> str:
    """The message of ``job``'s error ("" without one), a recorded time in it as a person
    reads it (:func:`~profiling_worker.bundle.number_text.times_in`: "SIGTERM at 09:12:33
    UTC", never ISO 8601's "2026-12-07T09:12:33.123456+00:00")."""
    return times_in(str(job.error.get("message", "")) if job.error else "")


def failure_line(job: Job, kept: str | None) -> str:
    """The one line of a failed or interrupted job that is not this session's: another
    process's (:func:`other_failure`), else its note of the configs kept (``kept``, which
    names the failure), else its error's kind and first clause."""
    if job.watched_by:
        return other_failure(job)
    if kept:
        return kept
    message = error_message(job)
    kind = job.error.get("kind") if job.error else None
    return f"{kind}: {warning_head(message)}" if kind else warning_head(message)


def other_failure(job: Job) -> str:
    """One line for a failed or interrupted job another process owns (``job.watched_by``):
    whose it is and its error's first clause (:func:`warning_head`; the whole of it is the
    line's help)."""
    message = error_message(job)
    kind = job.error.get("kind") if job.error else None
    head = f"{kind}: {warning_head(message)}" if kind else warning_head(message)
    return f"Owned by the {job.watched_by}, which shows its error: {head}"


def _worker_log(job: Job) -> str:
    """"the worker log and " where the job's worker.log holds anything; "" where it is empty
    or absent (issue 37: an empty log was named as kept)."""
    try:
        return "the worker log and " if (job.path / "worker.log").stat().st_size else ""
    except OSError:
        return ""


def kept_note(job: Job) -> str | None:
    """The note of a finished job that kept part of its configs (a cancel or a kernel that
    raised at some: :func:`profiling_worker.bundle.schema.partial.note`, from its manifest);
    None for any other job, or one whose manifest cannot be read."""
    if not job.status.finished or job.status == JobStatus.DONE:
        return None
    try:
        return partial.note(read_manifest(job.path))
    except ManifestError:
        return None


def status_text(job: Job) -> str:
    """The job's status as its card heads it, in the words of every other list and label
    (:func:`app.ui.job_status.job_words`)."""
    return job_status.job_words(job)


def cancel_help(job: Job) -> str | None:
    """The Cancel button's help: what a cancel does while the worker writes the bundle
    (:data:`WRITING_CANCEL_HELP`); None before (a cancel then stops the measuring)."""
    return WRITING_CANCEL_HELP if job.stage == WRITING_STAGE else None


def cancelling_text(job: Job) -> str:
    """The caption of a job cancelled but not ended yet: :data:`WRITING_CANCELLING` while its
    worker writes the bundle, else "Cancelling…"."""
    return WRITING_CANCELLING if job.stage == WRITING_STAGE else "Cancelling…"


def cancel_note(job: Job) -> str:
    """What a cancel that kept no config kept and what it did not, in runs (one run = one
    call of a config, the worker's progress steps): the cancel came before a config was
    measured whole, or the backend keeps none (the nsight ones), so the job has no result
    tables and the runs measured before the cancel are discarded; its spec, log (when not
    empty) and manifest stay (Files page). A cancel that kept configs says
    :func:`kept_note` instead; one after every run was measured ends the job done. A job still
    at the writing stage was stopped while it wrote (:func:`write_cut_note`)."""
    planned = len(job.spec.configs) * job.spec.runs
    kept = (f"Kept: the spec, {_worker_log(job)}the manifest (Files page); no result tables.")
    if job.stage == WRITING_STAGE:
        return f"{write_cut_note()} {kept}"
    done, total = (job.done, job.total) if job.stage == "profiling" and job.total else (0, planned)
    per = "most runs per config, runs auto" if job.spec.run_target else "runs per config"
    # the product named: "0 of 21 runs" of 3 configs x 7 runs read as a third count of runs
    made = f"{counted(len(job.spec.configs), 'config')} × {job.spec.runs:,} {per}"
    # how it came, as the job's manifest records it (queued and running jobs alike)
    said = partial.cancel_said({"error": job.error or {}})
    head = f"Cancelled ({said})" if said else "Cancelled"
    if not done:
        return (f"{head} before any run was measured: 0 of {counted(total, 'run')} "
                f"({made}); nothing discarded. {kept}")
    return (f"{head} after {done:,} of {counted(total, 'run')} ({made}): "
            f"{counted(done, 'measured run')} discarded, {total - done:,} not run. {kept}")


def write_cut_note() -> str:
    """A cancelled job whose worker was stopped while it wrote its bundle, after it had
    stopped measuring: the job manager waits for such a write (``write_grace_s``, 10 min by
    default) and SIGKILLs it after, or the worker died. Its tables are set aside."""
    return (f"Cancelled after measuring ended, and the worker was stopped before its bundle "
            f"was written whole: the tables it wrote are set aside in {PARTIAL_DIR}/, "
            "not a result.")


def tasks_progress_text(ended: int, total: int, stage: str) -> str:
    """A cluster sweep's progress bar text: its tasks ended of all, and ``stage`` (the count
    per state, :func:`app.services.sweep_watch.state_count`)."""
    return f"{ended:,} of {counted(total, 'task')} ended · {stage}"


def task_table(job: Job, progress: Any) -> None:
    """A cluster sweep: tasks ended of all (progress bar in the place ``progress``, an
    ``st.empty``, with the count per state) and one row per array task: state, attempt, node,
    configs, the worker's progress, why it failed."""
    if job.active:
        progress.progress(job.fraction,
                    text=esc(tasks_progress_text(job.done, job.total, job.stage)))
    rows = [{"task": t.name, "state": t.state, "attempt": t.attempt, "node": t.node,
             "configs": ",".join(map(str, t.configs)),
             "progress": task_progress(t, None if job.spec.run_target else job.spec.runs),
             "Slurm id": t.scheduler_id, "reason": t.reason} for t in job.tasks]
    with st.container(key=state.key("panel", f"tasks-{job.job_id}")):
        st.dataframe(rows, hide_index=True, width="stretch", placeholder=panels.MISSING,
                     height=min(36 * (len(rows) + 1) + 2, 250))


def _notice(jobs: list[Job]) -> None:
    """The last submit's notice, below the jobs so that it never pushes their progress out of
    sight, from the panel's own snapshot (field errors stay under the form)."""
    job_id = st.session_state.get(state.BUILDER_NOTICE)
    job = next((j for j in jobs if j.job_id == job_id), None)
    if job is not None:  # the note follows the job; its box above has the details
        say, icon = NOTICES[job.status]
        say(f"Job {code(job.job_id)} {job.status}.", icon=icon)
        if scroll_once(job.job_id):
            st.html(scroll_script(job.job_id), unsafe_allow_javascript=True)


#: Brings a job's card into the sidebar's sight with room below its top for the card it grows to
#: once running (tried for up to 5 s while the card is not yet in the page): at 1000x700 the
#: panel began below the sidebar's fold, so after Run the job's status was out of sight until
#: the user scrolled (issue 37); a scroll to the queued card's foot left the running card,
#: 174 px tall, past the fold. The sidebar scrolls by the least that shows the card's top and
#: the room, never moving its top above the sidebar's.
SCROLL_TO_CARD = ("<script>(function find(tries) {"
                  "const card = document.querySelector('.st-key-' + CSS.escape({card}));"
                  "if (!card) { if (tries > 0) { setTimeout(() => find(tries - 1), 100); }"
                  " return; }"
                  "let pane = card.parentElement;"
                  "while (pane && !(pane.scrollHeight > pane.clientHeight"
                  " && /auto|scroll/.test(getComputedStyle(pane).overflowY))) {"
                  " pane = pane.parentElement; }"
                  "if (!pane) { return; }"
                  "const c = card.getBoundingClientRect(), p = pane.getBoundingClientRect();"
                  "const up = c.top - p.top;"
                  "const down = c.top + Math.max(c.height, {room})"
                  " - Math.min(p.bottom, window.innerHeight);"
                  "if (up < 0) { pane.scrollTop += up; }"
                  "else if (down > 0) { pane.scrollTop += Math.min(down, up); }"
                  "})(50);</script>")

#: The room below a job card's top that :data:`SCROLL_TO_CARD` keeps in sight, px: a running
#: cpu job's card at 1000x700 (status, progress bar, Cancel) was 174 px tall.
CARD_ROOM_PX = 180


def scroll_script(job_id: str) -> str:
    """:data:`SCROLL_TO_CARD` for the card of ``job_id``: its key as a JSON string (``<``
    escaped) that the page passes through ``CSS.escape``, so that no job id can end the script
    or the selector."""
    card = json.dumps(state.key("panel", f"job-{job_id}")).replace("<", "\\u003c")
    # the room first: a job id holding "{room}" stays as it is
    return SCROLL_TO_CARD.replace("{room}", str(CARD_ROOM_PX)).replace("{card}", card)


def scroll_once(job_id: str) -> bool:
    """Whether the sidebar is to be scrolled to the card of ``job_id``, the job Run submitted
    last: True once per job and session (session key :data:`app.ui.state.PANEL_SCROLLED`),
    so that the panel's reruns, every second, leave the sidebar where the user scrolls it."""
    if st.session_state.get(state.PANEL_SCROLLED) == job_id:
        return False
    st.session_state[state.PANEL_SCROLLED] = job_id
    return True

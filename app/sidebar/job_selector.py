"""The sidebar job selector: every bundle, newest first, synced with ``?job=`` in the URL."""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from profiling_worker.bundle.number_text import when_text
from profiling_worker.bundle.schema.manifest import JobStatus

from app.ui import job_status, state
from app.ui.jobs import SOURCE_BUNDLED, BundleInfo, Job
from app.core import preflight
from app.core.markdown import code, visible


#: The bundled job a GPU-less machine opens on: the fp32/fp16/bf16 matmul sweep of the guide.
FIRST_BUNDLED_JOB = "h200-ncu-matmul-sweep"


class DefaultJob(NamedTuple):
    """The job a tab opens on when neither the URL nor the user named one, and why."""

    job_id: str
    why: str  # one sentence for the page: which job this is and why it was chosen
    example: bool  # a bundled example, not a job of the result store


def _ended(info: BundleInfo) -> str:
    """When the job ended (the manifest's ``finished_at``, else when it was created): ISO."""
    return str(info.manifest.get("finished_at") or info.created_at)


def default_job(bundles: list[BundleInfo], gpu_here: bool) -> DefaultJob | None:
    """Which job to show first (``bundles`` newest first; no Pre-flight pass,
    :func:`app.core.preflight.is_pass`): the result store's last job to end done (the user's
    newest result: a job they ran, a ``kernel-sweep`` that finished); else a bundled example, on
    a machine without a GPU the matmul sweep of the guide (else the newest bundled done job);
    else the newest done job; else the newest job of any status. None without bundles."""
    done = [b for b in bundles if b.status == JobStatus.DONE and not preflight.is_pass(b.spec)]
    mine = [b for b in done if b.source != SOURCE_BUNDLED]
    if mine:
        last = max(mine, key=_ended)
        return DefaultJob(last.job_id, f"Showing {code(last.job_id)}: the last job of this "
                          "result store to finish with results "
                          f"({when_text(_ended(last))}). Pick another in the "
                          "sidebar's Job box.", False)
    bundled = [b for b in done if b.source == SOURCE_BUNDLED]
    preferred = [b for b in bundled if b.job_id == FIRST_BUNDLED_JOB and not gpu_here]
    if preferred or bundled:
        pick = (preferred or bundled)[0].job_id
        return DefaultJob(pick, f"Showing {code(pick)}, an example shipped with the app: no job "
                          "of this result store has finished with results yet. Run one with the "
                          "sidebar's "
                          "New job, or pick another in its Job box.", True)
    if bundles:
        return DefaultJob(bundles[0].job_id, f"Showing {code(bundles[0].job_id)}, the newest "
                          "job: none has finished with results yet.", False)
    return None


def _status(info: BundleInfo, job: Job | None) -> str:
    """The job's status as the job lists say it (``done``; ``cancelled, partial: 3 of 6
    configs``): ``job``'s, this server's executors' state of it, when they hold it, else the
    listed manifest's (:func:`app.ui.job_status.status_words`, the job panel's words), then
    `` · Pre-flight pass`` for a pass (:func:`app.ui.job_status.kind_after`)."""
    return visible(job_status.status_words(info.status, info.manifest, job)
                   + job_status.kind_after(info.spec))


#: The most characters of a job id the Job box shows whole: its closed field has 228 px for
#: text (app/streamlit_app.py, ``SIDEBAR_LIST_CSS``), which every bundled id and run id of up to
#: 33 characters fits; a ``batched_matmul`` run's 35 (240 px) lost its last ~16 px (issue 37).
ID_CHARS = 33
#: The characters of an id shown cut (:func:`shown_id`): 31, since "…" and digits are wider
#: than the letters of the ids that fit (the batched_matmul run's, cut to 33, took 233 px).
CUT_CHARS = 31


def shown_id(job_id: str) -> str:
    """``job_id`` as the Job box's entries say it: whole up to :data:`ID_CHARS` characters,
    else its start (a run's date and time) and its end (its kernel's last letters and hex)
    around a "…" in the middle, :data:`CUT_CHARS` in all. The entry names the kernel whole
    after it, the box's help the whole id, the page's caption and the URL too."""
    if len(job_id) <= ID_CHARS:
        return job_id
    head = (CUT_CHARS - 1) // 2
    return f"{job_id[:head]}…{job_id[head + 1 - CUT_CHARS:]}"


def _picked(value: object, ids: list[str]) -> str | None:
    """The id of a stale entry's label that shows a shortened id (:func:`shown_id`): a label
    whose job's status moved on since it was drawn comes back as the label
    (:func:`app.ui.state.job_id_of` reads a whole id from its head); None for any other."""
    head = value.split(state.LABEL_SEP, 1)[0] if isinstance(value, str) else ""
    return next((i for i in ids if "…" in head and shown_id(i) == head), None)


def _label(info: BundleInfo, job: Job | None = None) -> str:
    """An entry of the Job box: ``<job id> · <kernels> · <backend> · <status>[ · bundled]``
    (:data:`app.ui.state.LABEL_SEP`; the id first, :func:`shown_id`: read back by
    :func:`app.ui.state.job_id_of`, or :func:`_picked` where shortened; ``<status>``:
    :func:`_status`, a pass's kind included); ``job``: this server's executors' job of that
    id, if any."""
    kernels = ",".join(info.kernels) or "?"
    where = " · bundled" if info.source == SOURCE_BUNDLED else ""
    return visible(state.LABEL_SEP.join([shown_id(info.job_id), kernels, info.backend,
                                         f"{_status(info, job)}{where}"]))


#: The Job box's own label, before the shown job's status (:func:`box_label`).
BOX_LABEL = "Job"


def box_label(shown: BundleInfo | None, job: Job | None = None) -> str:
    """The Job box's label: ``Job · done``, the status of the job shown (:func:`_status`).

    The closed box shows its entry in a one-line field about 220 px wide, which cut every entry
    before its status ("cpu-contended · matmul · cpu · d…", issue 37) and long job ids before
    their end; the label above it has the room, and wraps (app/streamlit_app.py,
    ``SIDEBAR_LIST_CSS``), so the status is said whole there and the field's width is left to
    the job id. ``shown``: None when no job is shown (the label is ``Job``); ``job``: this
    server's executors' job of that id, if any, whose state the label says (the panel's)."""
    return BOX_LABEL if shown is None else f"{BOX_LABEL}{state.LABEL_SEP}{_status(shown, job)}"


UNKNOWN_ASKED = "sidebar-job-unknown"  # a ?job= that named no job, for the selector's warning


def resolve_job(bundles: list[BundleInfo], gpu_here: bool) -> str | None:
    """The job the pages show: the selection, else ``?job=``, else :func:`default_job`; kept in
    the session and the URL. Called before the page runs (the selector is drawn after it, so
    the page's chart reaches the browser first)."""
    ids = [b.job_id for b in bundles]
    if not ids:
        return None
    asked = st.query_params.get(state.QUERY_JOB)
    # a /compare?baseline=…&candidate=… link (kernel-dashboard --compare) names its job too
    picked = st.session_state.get(state.SELECTED_JOB)
    current = (state.job_id_of(picked) or _picked(picked, ids) or state.url_job()
               or st.query_params.get("baseline"))
    if current not in ids:
        chosen = default_job(bundles, gpu_here)  # never None: ids is not empty
        current = chosen.job_id if chosen else None
        if chosen:  # not the user's choice: the page says which job this is and why
            state.opened_on_default(chosen.why, chosen.example)
    if asked and asked not in ids:  # a stale link or a typo: the selector says so
        st.session_state[UNKNOWN_ASKED] = (asked, current)
    st.session_state[state.SELECTED_JOB] = current
    if current is not None and state.url_job() != current:  # never None: ids is not empty
        st.query_params[state.QUERY_JOB] = current
    return current


def default_job_note() -> None:
    """Say, above the page, which job the app opened on and why (:func:`default_job`), while
    the user has named none (no ``?job=``, no pick)."""
    if why := state.default_why():
        st.caption(f":material/history: {why}")


def unknown_job_warning() -> bool:
    """Say, above the page, that the URL's ``?job=`` named no job and which job is shown
    instead (a stale link or a typo; drawn where a wrong page path is said, not in the
    sidebar, which a narrow window folds away); True when it did, so the page draws no second
    note of which job it opened on (:func:`default_job_note`)."""
    unknown = st.session_state.pop(UNKNOWN_ASKED, None)
    if not unknown:
        return False
    asked, current = unknown
    st.warning(unknown_job_text(asked, current, state.default_why()),
               icon=":material/search_off:")
    return True


def unknown_job_text(asked: str, current: str | None, why: str = "") -> str:
    """The one box of a ``?job=`` that named no job: that job is not here, then which job is
    shown and why (``why``: :func:`default_job`'s sentence, which ends with where to pick
    another), else which job it is (the session's pick). Session 22's fresh user read this
    and the default's note, two boxes saying one thing."""
    missing = f"There is no job {code(asked[:80])} in the results or the bundled results"
    if why:
        return f"{missing}. {why}"
    return f"{missing}: this is {code(str(current))}. Pick a job in the sidebar's Job box."


def render_job_selector(bundles: list[BundleInfo]) -> str | None:
    """Draw the selector (after :func:`resolve_job`); returns the selected job id (None when
    there are no bundles)."""
    ids = [b.job_id for b in bundles]
    if not ids:
        st.caption("No results yet.")
        return None
    here = job_status.jobs_here()  # one snapshot: the words of the job panel's cards
    labels = {b.job_id: _label(b, here.get(b.job_id)) for b in bundles}
    shown = next((b for b in bundles if b.job_id == state.selected_job_id()), None)
    job = here.get(shown.job_id) if shown is not None else None
    job_status.named(job)  # the panel reruns the app when it moves on
    # the key is the widget's identity (Streamlit 1.67): a label that follows the job keeps it
    whole = (f" Shown: {code(shown.job_id)}." if shown is not None
             and shown_id(shown.job_id) != shown.job_id else "")  # its id, cut in the middle
    return st.selectbox(box_label(shown, job), ids, key=state.SELECTED_JOB,
                        format_func=lambda job_id: labels[job_id],
                        on_change=state.on_job_selected,
                        help=f"Newest first; the URL keeps it.{whole}")

"""Every session-state key, widget key and URL parameter of the app, in one place.

Widget keys are ``"<page>-<field>"``. The selected job id lives in the session under
:data:`SELECTED_JOB` (the sidebar job selector's key) and is mirrored into the URL as
``?job=<id>`` so that a reload or a shared link reopens the same job.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from app.services.result_store import JOB_ID_RE

QUERY_JOB = "job"
SELECTED_JOB = "sidebar-job"
#: True while the job shown is a bundled example the app chose (no ?job=, no pick, no
#: finished job in the result store)
SELECTED_BY_DEFAULT = "sidebar-job-default"
#: Which job the app opened on and why, while it is the app's choice (the page says it)
DEFAULT_WHY = "sidebar-job-default-why"
BUILDER_ERRORS = "builder-errors"  # list[FieldError] of the last rejected submit
BUILDER_CHECKED = "builder-checked"  # the form values those errors were found in
BUILDER_CHECKED_BY = "builder-checked-by"  # the button that found them: "Run" or "Pre-flight"
BUILDER_NOTICE = "builder-notice"  # id of the job submitted last (its note follows its state)
BUILDER_NOTICE_NOTE = "builder-notice-note"  # (job id, no-rate note) said under Run
BUILDER_CONFIRM = "builder-confirm"  # (spec hash, text, monotonic s, button, note) asked
BUILDER_CONFIRM_PAGE = "builder-confirm-page"  # (monotonic s asked, page hash) drawn on
BUILDER_PREFLIGHT = "builder-preflight-job"  # {"job": pre-flight job id, "planned": spec JSON}
BUILDER_FROM_URL = "builder-from-url"  # the form's values the URL gave this session's first run
#: the URL's kernels not in the catalog, until the first run has checked the link's values
BUILDER_URL_UNCHECKED = "builder-url-unchecked"
#: the URL path that named no page, as the browser asked for it (app.ui.navigation)
UNKNOWN_PAGE = "nav-unknown-page"
PANEL_WAS_ACTIVE = "panel-was-active"
PANEL_SCROLLED = "panel-scrolled"  # the job whose card the sidebar was scrolled to, once
PAGE_JOB_STATUS = "page-job-status"  # job id -> the state the page named this run
RUN_JOBS = "run-jobs"  # this server's jobs as this full run of the app read them (job_status)
LAST_LISTING = "cached-last-listing"  # the store's jobs as app.ui.cached.list_bundles last read
OWN_JOBS = "own-jobs"  # ids of the jobs this browser session submitted, oldest first
#: page -> {job: {widget key: the user's pick}}: the picks of :func:`remember_picks`
PAGE_PICKS = "page-picks"


def key(page: str, field: str) -> str:
    """Widget key ``"<page>-<field>"`` (also the e2e helpers' ``st-key-<key>`` CSS class)."""
    return f"{page}-{field}"


#: The pickers that follow the selected job (:func:`job_picker`): a new job in the sidebar drops
#: their values, so each page opens its own pair for that job.
JOB_PICKERS = frozenset({key("compare", "baseline"), key("compare", "candidate"),
                         key("backends", "ncu"), key("backends", "cupti"),
                         key("clocks", "thermal-a"), key("clocks", "thermal-b"),
                         key("files", "replica")})
#: ``?baseline=<job>&candidate=<job>`` of a compare link (``kernel-dashboard --compare``): the
#: pair of the job it opened on, dropped with the pickers when the job changes.
QUERY_PAIR = ("baseline", "candidate")


#: No value in the session (None may be an option).
_ABSENT = object()


def keep_if_offered(widget_key: str, options: Iterable[Any], default: Any = None) -> list[Any]:
    """``options`` as a list, for a selectbox ``widget_key``; call before drawing it, with no
    ``index``. A value the widget kept from another job (not among them) is dropped first, so
    the widget starts at its default instead of showing a blank box or a stale choice.

    When the session holds no value of it (first draw, a value dropped), the widget opens on
    ``default`` where offered, else on the first option, and that value is written into the
    session state, not given as the widget's ``index``: a browser keeps a keyed selectbox's
    value over a new ``index`` (Streamlit 1.67 sends ``set_value`` only for a value set
    through ``st.session_state``) and sends it back on the next run, so a picker kept a value
    of the job shown before (the deep dive's Point: a point the new job does not have) while
    AppTest showed the new one."""
    offered = list(options)
    if widget_value(widget_key, _ABSENT) not in (_ABSENT, *offered):
        del st.session_state[widget_key]
    if widget_value(widget_key, _ABSENT) is _ABSENT and offered:
        st.session_state[widget_key] = default if default in offered else offered[0]
    return offered


def widget_value(widget_key: str, default: Any) -> Any:
    """The value of the widget ``widget_key`` in the session (kept from the page's last run,
    written by :func:`keep_if_offered`, or set by the user's change that started this run),
    else ``default``: the one reading of it that :func:`keep_if_offered` and
    :meth:`app.ui.controls_later.Later.value` (a control read before it is drawn) share."""
    return st.session_state.get(widget_key, default)


#: Between an option's id and the rest of the job selector's label (``<id> · matmul · ...``).
LABEL_SEP = " · "


def job_id_of(value: object) -> str | None:
    """The job id in a selector value: the id itself, or the id that starts a selector label.

    The browser sends a selectbox's value as its label; a label that no longer matches an option
    (the job's status moved on since it was drawn: ``... · queued`` -> ``... · running``) comes
    back from Streamlit as the label itself, not as the id (Streamlit 1.67
    ``SelectboxSerde.deserialize``). None when ``value`` holds no well-formed id."""
    if not isinstance(value, str):
        return None
    head = value.split(LABEL_SEP, 1)[0]
    return head if JOB_ID_RE.match(head) else None


def url_job() -> str | None:
    """The ``?job=`` parameter if it is a well-formed id, else None."""
    value = st.query_params.get(QUERY_JOB)
    return value if isinstance(value, str) and JOB_ID_RE.match(value) else None


def selected_job_id() -> str | None:
    """The job the pages show: the sidebar selection, else the URL's ``?job=``."""
    return job_id_of(st.session_state.get(SELECTED_JOB)) or url_job()


def select_job(job_id: str) -> None:
    """Make ``job_id`` the selected job (call before the selector is drawn, e.g. in a callback);
    another job than the selected one drops the pickers that follow the job."""
    forget_default()
    if job_id != selected_job_id():
        _drop_job_picks()
    st.session_state[SELECTED_JOB] = job_id
    st.query_params[QUERY_JOB] = job_id


def deselect_job() -> None:
    """Forget the selected job (it was deleted): no pick, no ``?job=``; the next run opens
    on the app's default job and its note."""
    _drop_job_picks()
    st.session_state.pop(SELECTED_JOB, None)
    st.query_params.pop(QUERY_JOB, None)


def on_job_selected() -> None:
    """Selector callback: mirror the new selection's id (never its label) into the URL, and
    drop the pickers that follow the job when the id changed (not just its label).

    It also runs in a rerun of the job panel's fragment, which draws no selector and does not
    reach :func:`app.sidebar.job_selector.resolve_job`: a stale label written here stayed in
    the URL (``?job=<id>+·+matmul+·+cpu+·+running``)."""
    forget_default()  # the user chose it
    job_id = job_id_of(st.session_state.get(SELECTED_JOB))
    if job_id:
        if job_id != url_job():  # the URL still names the job shown before
            _drop_job_picks()
        st.session_state[SELECTED_JOB] = job_id
        st.query_params[QUERY_JOB] = job_id


def _drop_job_picks() -> None:
    """Forget the values of :data:`JOB_PICKERS` and a compare link's pair (a fresh user's
    find: Compare and backends kept the pair of the job shown before): each page then opens
    its own pair for the new job, or the user's picks for it (:func:`job_picker`). A deep
    dive's pinned ``?baseline=<job>:<launch id>`` names no job and stays."""
    for widget in JOB_PICKERS:
        st.session_state.pop(widget, None)
    if JOB_ID_RE.match(st.query_params.get(QUERY_PAIR[0]) or ""):
        st.query_params.pop(QUERY_PAIR[0], None)
    st.query_params.pop(QUERY_PAIR[1], None)


def opened_on_default(why: str, example: bool) -> None:
    """The app chose the selected job (no ``?job=``, no pick): ``why`` says which and why
    (:func:`default_why`); ``example``: it is a bundled example, not a job of the result
    store (:func:`job_is_default`)."""
    st.session_state[DEFAULT_WHY] = why
    st.session_state[SELECTED_BY_DEFAULT] = example


def forget_default() -> None:
    """The user chose the job: it is no longer the app's choice."""
    st.session_state.pop(SELECTED_BY_DEFAULT, None)
    st.session_state.pop(DEFAULT_WHY, None)


def default_why() -> str:
    """Which job the app opened on and why, while the user has chosen none; else ""."""
    return str(st.session_state.get(DEFAULT_WHY) or "")


def job_is_default() -> bool:
    """True while the selected job is a bundled example the app opened on (no ``?job=``, no
    choice made since, no finished job in the result store): a page may then open on a better
    example of what it shows. The store's newest finished job, the app's choice too, is the
    user's own result and is treated as their pick."""
    return bool(st.session_state.get(SELECTED_BY_DEFAULT))


def job_picker(page: str, widget_key: str, options: Iterable[Any], default: Any) -> list[Any]:
    """``options`` as a list, for a selectbox ``widget_key`` (one of :data:`JOB_PICKERS`) of
    ``page`` that follows the selected job; call before drawing it, with no ``index`` and with
    ``on_change=remember_picks``.

    A value the session holds that is offered is kept. Else (first draw, a new job: see
    :func:`select_job`) the widget opens on the user's own pick on ``page`` for the selected
    job (:func:`remember_picks`: a job the user comes back to keeps what they chose for it),
    else on ``default``, else on the first option, written into the session state by
    :func:`keep_if_offered` (the pickers kept the job shown before until a reload, while
    AppTest showed the new pair).

    Raises:
        ValueError: ``widget_key`` is not in :data:`JOB_PICKERS` (a new job would not drop it).
    """
    if widget_key not in JOB_PICKERS:
        raise ValueError(f"{widget_key} is not in state.JOB_PICKERS")
    offered = list(options)
    mine = user_pick(page, widget_key)
    return keep_if_offered(widget_key, offered, mine if mine in offered else default)


def user_pick(page: str, widget_key: str) -> Any:
    """The user's pick of the :func:`job_picker` ``widget_key`` on ``page`` for the selected
    job (:func:`remember_picks`), else None (never picked: the page's default shows)."""
    by_job = st.session_state.get(PAGE_PICKS, {}).get(page, {})
    return by_job.get(selected_job_id(), {}).get(widget_key)


def remember_picks(page: str, keys: Iterable[str]) -> None:
    """``on_change`` of a :func:`job_picker`: the values of ``keys`` now are the user's picks
    on ``page`` for the selected job."""
    by_job = st.session_state.setdefault(PAGE_PICKS, {}).setdefault(page, {})
    by_job[selected_job_id()] = {k: st.session_state[k] for k in keys if k in st.session_state}


def own_jobs() -> list[str]:
    """Ids of the jobs this session submitted (the job panel always lists the queued and
    running ones)."""
    return list(st.session_state.get(OWN_JOBS) or [])


def add_own_job(job_id: str) -> None:
    """Remember that this session submitted ``job_id``."""
    st.session_state[OWN_JOBS] = [*own_jobs(), job_id]


QUERY_BASELINE = "baseline"  # ?baseline=<job>:<launch id>, once per pinned baseline
BASELINES = "deep-dive-baselines"  # list of "<job>:<launch id>" pins, oldest first


def baselines() -> list[str]:
    """The pinned baselines (``"<job>:<launch id>"``): this session's, else the URL's; the URL
    is brought back in line (a page switch drops its parameters but the job's)."""
    in_url = [v for v in st.query_params.get_all(QUERY_BASELINE) if isinstance(v, str)]
    if BASELINES not in st.session_state:
        st.session_state[BASELINES] = list(dict.fromkeys(in_url))
    pins = list(st.session_state[BASELINES])
    if pins and in_url != pins:
        st.query_params[QUERY_BASELINE] = pins
    return pins


def set_baselines(pins: Iterable[str]) -> None:
    """Pin exactly ``pins`` (order kept, duplicates dropped), in the session and the URL."""
    kept = list(dict.fromkeys(pins))
    st.session_state[BASELINES] = kept
    if kept:
        st.query_params[QUERY_BASELINE] = kept
    else:
        st.query_params.pop(QUERY_BASELINE, None)

"""The history page's access to the history index (app/services/history_index.py): the rows it
lists, and the tag and delete actions as widget callbacks that leave a one-time notice.

Pages talk to ``app/ui`` only; this module holds the settings (results and bundled folders)
and turns the index's errors into the notice the page shows after its rerun.
"""

from __future__ import annotations

import sqlite3

import streamlit as st

from app import settings
from app.services import history_index as hx
from app.ui import cached, state
from app.services.history_index import (ACTIVE_STATUSES, HistoryFilter, HistoryRow, SyncResult,
                                        facets, matches)

#: Session key of the (kind, text) notice an action leaves for the next run of the page.
NOTICE = "history-notice"


def read() -> tuple[SyncResult, list[HistoryRow], str]:
    """:func:`app.services.history_index.read_history` of this server's folders: the sync
    result (changed manifests only are read), every row, and the index's error text (empty
    when the index worked; else the rows come from the job folders)."""
    return hx.read_history(settings.results_dir(), settings.bundled_dir())


def on_tags(job_id: str, before: tuple[str, ...], key: str) -> None:
    """Tags widget callback: save each added tag on its own, so one rejected tag never drops
    the others, and take rejected ones out of the widget, so the next valid tag is compared
    with what is saved."""
    after = st.session_state.get(key) or []
    rejected = []
    for tag in [t for t in after if t not in before]:
        try:
            hx.add_tag(settings.results_dir(), job_id, tag)
        except (hx.InvalidTag, KeyError, sqlite3.OperationalError) as exc:
            rejected.append(tag)
            st.session_state[NOTICE] = ("error", str(exc).strip("'\""))
    for tag in set(before) - set(after):
        hx.remove_tag(settings.results_dir(), job_id, tag)
    st.session_state[key] = [t for t in after if t not in rejected]


def on_delete(job_id: str) -> None:
    """Delete button callback: remove the job's folder and index row, or say why not. A job
    gone leaves the job panel (the job manager's book, every session's) and, where it was the
    job shown, the selection and the URL: the page then opens on the app's default job, not
    on "There is no job … in the results" after a delete that worked (issue 37)."""
    try:
        hx.delete(settings.results_dir(), job_id)
    except (hx.NotDeletable, OSError, ValueError, sqlite3.OperationalError) as exc:
        st.session_state[NOTICE] = ("error", str(exc))
        return
    st.session_state[NOTICE] = ("success", deleted_text(job_id))
    cached.executors().forget(job_id)
    if state.selected_job_id() == job_id:
        state.deselect_job()


def deleted_text(job_id: str) -> str:
    """The notice of a job deleted."""
    return f"Deleted {job_id}."


def sync_quietly() -> None:
    """Index what changed (after an import); an index that cannot be written is left as is."""
    hx.sync_quietly(settings.results_dir(), settings.bundled_dir())


__all__ = ["ACTIVE_STATUSES", "HistoryFilter", "HistoryRow", "NOTICE", "facets", "matches",
           "on_delete", "on_tags", "read", "sync_quietly"]

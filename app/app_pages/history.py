"""Every bundle (this server's and the bundled ones), from the SQLite history index.

Filter by kernel, GPU, backend, status, tag and free text; select a row to open that job on
every page; tag the open job (tags live in the index, never in a bundle); delete a job of the
results directory after a confirmation (bundled results are read-only).
"""

import pandas as pd
import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from app.core import frame_columns as F
from app.ui import cached, history as hx, job_status, panels, state
from app.ui.jobs import BundleInfo, Job
from app.core.markdown import code, esc, visible

PAGE = "history"
CONFIRM = state.key(PAGE, "confirm-delete")  # job id waiting for the delete confirmation
COLUMNS = [F.JOB, F.STATUS, F.KERNEL_NAMES, F.BACKEND, F.CREATED, F.GPU, F.SOURCE, F.LABEL,
           F.TAGS, F.HOW_CANCELLED, F.SPEC_HASH]


#: Created as a date and time in UTC (issue 37: the raw ISO text "2026-12-05T23:55:01+00:00"
#: was shown); a datetime column sorts by time.
CREATED_COLUMN = st.column_config.DatetimeColumn(
    format="YYYY-MM-DD HH:mm:ss [UTC]", timezone="UTC",
    help="When the job was submitted (or imported), in UTC")


def _frame(found: list[hx.HistoryRow]) -> pd.DataFrame:
    # a cancelled or failed job that kept configs says so (the index holds the status alone;
    # the listed manifests, read once per change, hold the record)
    listed = {b.job_id: b for b in cached.list_bundles()[0]}
    here = job_status.jobs_here()  # this server's jobs: the job panel's state (issue 37)
    frame = pd.DataFrame([{
        F.JOB: r.job_id, F.STATUS: _status(r, listed.get(r.job_id), here.get(r.job_id)),
        F.KERNEL_NAMES: ", ".join(r.kernels),
        F.BACKEND: r.backend, F.CREATED: r.created_at, F.GPU: r.gpu, F.SOURCE: r.source,
        F.LABEL: r.label, F.TAGS: ", ".join(r.tags),
        F.HOW_CANCELLED: _how_cancelled(listed.get(r.job_id), here.get(r.job_id)),
        F.SPEC_HASH: r.spec_hash,
    } for r in found], columns=COLUMNS)
    # a job whose manifest lacks a readable time shows the missing-cell mark, not an error
    frame[F.CREATED] = pd.to_datetime(frame[F.CREATED], utc=True, errors="coerce",
                                      format="ISO8601")
    return frame


def _status(row: hx.HistoryRow, info: BundleInfo | None, job: Job | None) -> str:
    """A job's Status cell: its status words as the sidebar says them
    (:func:`app.ui.job_status.status_words`; ``job``: this server's executors' job of that id,
    if any; ``info``: its listing, None where the index alone has it), then a pass's kind
    (:func:`app.ui.job_status.kind_after`)."""
    manifest = info.manifest if info is not None else {}
    return (job_status.status_words(row.status, manifest, job)
            + job_status.kind_after(info.spec if info is not None else None))


def _how_cancelled(info: BundleInfo | None, job: Job | None) -> str | None:
    """A cancelled job's How cancelled cell (:func:`partial.cancel_said`: "SIGTERM at 22:52:17
    UTC: cancelled by the user in the job panel"), None for any other: in the Status cell it
    made the column so wide that Created, GPU and Source left the window (session 27's fresh
    user; session 25's asked for it in History)."""
    if job is not None and job.status == JobStatus.CANCELLED:
        try:  # its manifest now: the listing's may be the one written before its end
            manifest = read_manifest(job.path)
        except ManifestError:
            return None
    elif job is None and info is not None and info.status == JobStatus.CANCELLED:
        manifest = info.manifest
    else:
        return None
    return partial.cancel_said(manifest) or None


def _filters(facets: dict[str, list[str]]) -> hx.HistoryFilter:
    """The filter boxes: four equal columns, then Tag beside Search, so that at 1400 px a
    chip such as "cancelled" and the "Choose options" placeholder are shown whole."""
    top = st.columns(4)
    tag_col, text_col = st.columns([1, 3])
    boxes = [(top[0], "kernels", "Kernel"), (top[1], "gpus", "GPU"),
             (top[2], "backends", "Backend"), (top[3], "statuses", "Status"),
             (tag_col, "tags", "Tag")]
    picks = {name: col.multiselect(label, facets[name], key=state.key(PAGE, name),
                                   format_func=visible,  # Streamlit's own text was cut
                                   placeholder="Any" if facets[name] else "None yet")
             for col, name, label in boxes}
    text = text_col.text_input("Search", key=state.key(PAGE, "text"),
                               placeholder="job id, label, kernel, GPU or tag words")
    return hx.HistoryFilter(text=text, **{k: tuple(v) for k, v in picks.items()})


def _open_selected(job_ids: list[str]) -> None:
    """Selection callback (runs before the rerun, so the sidebar selector may be changed)."""
    rows = st.session_state[state.key(PAGE, "table")]["selection"]["rows"]
    if rows:
        state.select_job(job_ids[rows[0]])
        st.session_state.pop(CONFIRM, None)


def _on_delete(job_id: str) -> None:
    st.session_state.pop(CONFIRM, None)
    hx.on_delete(job_id)


def _render_actions(row: hx.HistoryRow, all_tags: list[str]) -> None:
    st.subheader(f"Open job: {esc(row.job_id)}")
    key = state.key(PAGE, f"tags-{row.job_id}")
    # one source for the value: session state (the callback writes it; a default beside it
    # made Streamlit warn, and the browser lost the first tag typed)
    st.session_state.setdefault(key, list(row.tags))
    st.multiselect("Tags", sorted(set(all_tags) | set(row.tags)), key=key,
                   accept_new_options=True, on_change=hx.on_tags, args=(row.job_id, row.tags, key),
                   help="Type a new tag and press Enter. Tags are kept in the history index, "
                        "never in the bundle.")
    if row.source != "local":
        st.caption("Bundled with the app: read-only, cannot be deleted.")
        return
    status = job_status.state_of(row.job_id, row.status)  # the job panel's (issue 37)
    if status in hx.ACTIVE_STATUSES:
        st.caption(f"The job is {esc(status)}: cancel it before deleting it.")
        return
    if st.session_state.get(CONFIRM) != row.job_id:
        st.button("Delete…", key=state.key(PAGE, "delete"), icon=":material/delete:",
                  on_click=lambda: st.session_state.__setitem__(CONFIRM, row.job_id))
        return
    st.warning(f"Delete **{esc(row.job_id)}** for good? This removes the directory "
               f"{code(row.path)} "
               "and its history entry.", icon=":material/warning:")
    yes, no = st.columns(2)
    yes.button("Delete for good", key=state.key(PAGE, "delete-confirm"), type="primary",
               on_click=_on_delete, args=(row.job_id,))
    no.button("Keep it", key=state.key(PAGE, "delete-cancel"),
              on_click=lambda: st.session_state.pop(CONFIRM, None))


def _actions(found: list[hx.HistoryRow], open_id: str | None, all_tags: list[str]) -> None:
    """Tag and delete only a job the filtered table shows (the selected row, or the sidebar's
    job while the filters keep it): never one the user cannot see."""
    shown = next((r for r in found if r.job_id == open_id), None)
    if shown is not None:
        _render_actions(shown, all_tags)
    elif open_id:
        st.session_state.pop(CONFIRM, None)  # a confirmation never outlives the job's row
        st.info(f"The open job {code(open_id)} is not in the filtered table: change the filters "
                "or select a row to tag or delete a job.", icon=":material/filter_alt:")


st.header("History")
sync, every, index_error = hx.read()
if index_error:
    st.warning(f"The history index cannot be updated ({esc(index_error)}): the list is read "
               "from the job folders; tags and deleting wait until the index can be written "
               "again (free space on the results disk).", icon=":material/warning:")
notice = st.session_state.pop(hx.NOTICE, None)
if notice:
    (st.success if notice[0] == "success" else st.error)(esc(notice[1]))
if not every:
    st.info("No results yet. Submit a job from the sidebar, or import nsight-python output.")
facets = hx.facets(every)
flt = _filters(facets)
found = [r for r in every if hx.matches(r, flt)]
frame = _frame(found)
panels.table(frame, key=state.key(PAGE, "table"), column_config={F.CREATED: CREATED_COLUMN},
             on_select=lambda: _open_selected(frame[F.JOB].tolist()),
             selection_mode="single-row")
st.caption(f"{len(found)} of {counted(len(every), 'job')}. Select a row to open that job on "
           "every page.")
panels.download_csv(frame, key=state.key(PAGE, "csv"), filename="history.csv")

_actions(found, state.selected_job_id(), facets["tags"])

if sync.problems:
    st.subheader("Not readable as results")  # a folder without a manifest, a bundle's zip
    for problem in sync.problems:
        st.warning(f"{code(problem.path)}: {esc(problem.reason)}")

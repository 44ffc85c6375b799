"""Import results made elsewhere: nsight-python CSVs and .ncu-rep files -> a new bundle.

Uploads only (no server paths from the browser). The files are saved under sanitised names in a
temporary folder and imported by the worker (``python -m profiling_worker import --each``), which
reads the report with ncu_report: each report or table, with the files that belong to it, becomes
a bundle of its own, with its own message; the first new bundle is then selected on every page.
"""

from typing import Any

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling_worker.bundle.loader import Bundle
from app.streamlit_patches.server_guard import (SESSION_UPLOAD_MB, server_upload_mb,
                                                upload_refusal)
from app.core import numbers
from app.core.markdown import code, esc, esc_spans
from app.ui import cached, importing, panels, state
from app.ui.importing import ImportOutcome
from profiling_worker.importing.how_read import FIELDS
from profiling_worker.importing.kinds import supported
from profiling_worker.bundle.schema import plausibility as P

PAGE = "import"  # widget keys of this page: state.key(PAGE, field)

FILES = state.key(PAGE, "files")  # the uploader's key; "<FILES>-<n>" after n imports
UPLOADER = state.key(PAGE, "uploader")  # how many imports this session made (the n above)
RUN = state.key(PAGE, "run")
OUTCOME = state.key(PAGE, "outcome")
NVTX = state.key(PAGE, "nvtx")
NVTX_CHOICES = {"innermost": "innermost range", "stack": "whole stack (outer > inner)"}


def _files_key() -> str:
    made = st.session_state.get(UPLOADER, 0)
    return FILES if not made else f"{FILES}-{made}"


def _on_import() -> None:
    """Button callback: runs before the rerun, so the sidebar selector can take the new job.
    The files are released and the uploader is a new, empty one: the old one would still show
    them and hand back placeholders of released files to a second click."""
    key = _files_key()
    uploads = st.session_state.get(key) or []
    st.session_state[OUTCOME] = importing.import_uploads(
        ((f.name, f.getvalue()) for f in uploads), nvtx=st.session_state.get(NVTX) or "innermost")
    importing.release_uploads(uploads)  # imported or refused: the server keeps no copy
    st.session_state[UPLOADER] = st.session_state.get(UPLOADER, 0) + 1
    del st.session_state[key]


def _show_import_notes(bundle: Bundle | None) -> None:
    """What the import left out (files not read, values missing: warning) and did (info), here
    at once rather than only on the pages that draw the values."""
    notes = [n for n in (bundle.notes if bundle else ()) if n.get("check") == P.IMPORT]
    for severity, box, icon in ((P.WARNING, st.warning, ":material/warning:"),
                                (P.INFO, st.info, ":material/info:")):
        lines = [f"- {esc_spans(n.get('message', ''))}" for n in notes
                 if n.get("severity") == severity]  # a command as code: `ncu --csv`
        if lines:
            box("\n".join(lines), icon=icon)


#: The first column of the how-read table: what each row says of the files.
HOW_READ = "Read"


def how_read_frame(rows: dict[str, dict[str, object]]) -> pd.DataFrame:
    """How each file of an import was read (manifest ``provenance.how_read``), a row per
    :data:`~profiling_worker.importing.how_read.FIELDS` entry (kind, tool version, page, units,
    where the regions come from, configs found, how launches were grouped, launches) and a
    column per file. A row per file put nine columns side by side, about 1,900 px of them, so
    Units (the fifth) was cut at the right edge of the page and the rest needed a scroll; a
    column per file is as wide as its longest value (:func:`app.ui.panels.text_width`, at most
    480 px), so one file's reading fits the page."""
    return pd.DataFrame({HOW_READ: [head for _, head in FIELDS],
                         **{name: [str(row.get(k, "")) for k, _ in FIELDS]
                            for name, row in rows.items()}})


def unrecorded(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """(``frame`` without the rows empty for every file, their headings): a job imported
    before its importer recorded a field (Launches of a .ncu-rep or an nsight-python CSV,
    before issue 37) showed an empty row with no word of why."""
    empty = (frame.drop(columns=HOW_READ).astype(str).apply(lambda c: c.str.strip()) == ""
             ).all(axis=1)
    return frame[~empty].reset_index(drop=True), frame.loc[empty, HOW_READ].tolist()


def _show_how_read(bundle: Bundle | None, key: str) -> None:
    """How each file of the import was read (:func:`how_read_frame`), so a user can check the
    reading at a glance; a long cell wraps (its rows taller: the Regions from of a .ncu-rep was
    cut at 480 px, issue 37)."""
    rows = ((bundle.manifest.get("provenance") or {}).get("how_read") or {}) if bundle else {}
    if not rows:
        return
    st.caption("How each file was read:")
    frame, missing = unrecorded(how_read_frame(rows))
    longest = int(frame.drop(columns=HOW_READ).astype(str).map(len).max().max())
    height = panels.wrapped_row_height(longest)
    wrap: dict[str, Any] = {"row_height": height} if height else {}
    panels.table(frame, key=state.key(PAGE, f"how-{key}"), **wrap)
    if missing:
        st.caption(NOT_RECORDED.format(fields=", ".join(missing)))


#: Said under the table for rows no file of the job has (:func:`unrecorded`).
NOT_RECORDED = ("{fields}: not recorded for these files (the importer that read them did not "
                "record it; importing them again records it).")


def _show_outcome(outcome: ImportOutcome, selected: bool) -> None:
    """One group's message, naming its files: the new job (and its import notes), or why
    these files were not imported."""
    names = ", ".join(outcome.files) or "the upload"
    if outcome.ok:
        where = "it is selected on every page" if selected else "pick it in the job selector"
        files = ", ".join(code(f) for f in outcome.files)
        if outcome.already_here:  # nothing imported: one box says so (its note said it twice)
            st.info(importing.already_here_text(outcome.job_id, files, where),
                    icon=":material/check_circle:")
        else:
            st.success(f"Imported as **{outcome.job_id}** ({files}); {where}.",
                       icon=":material/check_circle:")
        if outcome.note and not outcome.already_here:  # a reopened bundle zip's id was taken
            st.info(esc(outcome.note[:1].upper() + outcome.note[1:]) + ".",
                    icon=":material/drive_file_rename_outline:")
        if outcome.same_as:  # imported anyway: a second copy may be meant, but never unsaid
            earlier, when = outcome.same_as
            st.info(f"Same files as job **{earlier}**, imported at {esc(when or 'an unknown time')}"
                    f" (every file's SHA-256 matches): **{outcome.job_id}** is a second copy of "
                    "it.", icon=":material/content_copy:")
        bundle = cached.bundle_for(outcome.job_id)
        _show_how_read(bundle, outcome.job_id)
        _show_import_notes(bundle)
    else:
        panels.render_error(outcome.message, outcome.hint or None, outcome.log or None,
                            kind=importing.failed_kind(names))


#: The page's first words: what it opens, in one sentence (the list of formats and how files
#: group stand under the results, :func:`_show_formats`).
INTRO = ("Open nsight-python and Nsight Compute output made on another machine (no GPU needed "
         "here); each file is recognised by its content, whatever its name (formats below).")


def _show_formats() -> None:
    """What can be imported and how several files group, under the results: over the
    uploader they put the "Imported as" box below the fold at 1400x900 and 1000x700 (session
    26's fresh user)."""
    st.subheader("What can be imported")
    st.markdown(
        "\n".join(f"- {esc_spans(line)}" for line in supported())
        + "\n\nSeveral files at once: each report or table becomes a job of its own. The "
        "files nsight-python writes for one call (`profiled_data-`, `processed_data-`, "
        "`ncu-output-` with the same `<function>-<id>`) stay together, and so do CSV exports "
        "of one Nsight Compute profile (its raw and details pages). A job shared as the Files "
        "page's zip (\"Download the whole bundle\") is reopened as that job, its id kept where "
        "it is free. Not supported: Nsight Systems files, spreadsheets (.xlsx: save as CSV), "
        "edited reports.")


st.header("Import results")
st.markdown(INTRO)
st.html(importing.one_limit_css(FILES))
st.file_uploader("nsight-python or Nsight Compute output", type=importing.UPLOAD_TYPES,
                 accept_multiple_files=True, key=_files_key(),
                 max_upload_size=importing.MAX_UPLOAD_MB,
                 help="Files are parsed as data, never executed; their size limits are "
                      "under the box.")
_ctx = get_script_run_ctx()
if _ctx is not None and (_refused := upload_refusal(_ctx.session_id)):
    st.error(_refused, icon=":material/block:")  # the uploader shows only "AxiosError ... 413"
try:
    _all_tabs = f"{server_upload_mb():,} MB"
except ValueError as _bad_cap:  # a wrong KPROF_SERVER_UPLOAD_MB: say so; uploads are refused
    st.warning(str(_bad_cap), icon=":material/warning:")
    _all_tabs = "the server's cap"
st.caption(f"Up to {importing.MAX_UPLOAD_MB} MB per file, {SESSION_UPLOAD_MB} MB for all "
           f"the files chosen and not yet imported, and {_all_tabs} for those of all tabs on "
           "this server together: a file past that is refused (413, and this page says why): "
           "import or remove some first.")
# Import and the NVTX choice on one row: the outcome under them stays in the window
_run, _nvtx = st.columns([1, 5], vertical_alignment="bottom")
_run.button("Import", key=RUN, type="primary", on_click=_on_import,
            disabled=not st.session_state.get(_files_key()))
_nvtx.radio("Region of a launch in nested NVTX ranges (Nsight Compute CSV exports and console "
            "text)", list(NVTX_CHOICES), format_func=NVTX_CHOICES.get, key=NVTX,
            horizontal=True, help="The innermost range a launch ran in, or every open range "
                                  "joined outermost first; launches outside every range keep "
                                  "their kernel's name.")

# the outcome right under Import, where the user looks after pressing it; the longer text
# (formats, what a .ncu-rep adds) after it
outcomes: list[ImportOutcome] = st.session_state.get(OUTCOME) or []
first = next((o.job_id for o in outcomes if o.ok), None)
made, refused = [o for o in outcomes if o.ok], importing.group_refusals(outcomes)
if len(outcomes) > 1 and refused:  # a mixed upload: the count first, then one box per reason
    st.info(f"{len(made)} of {len(outcomes)} file groups imported; "
            f"{len(outcomes) - len(made)} not, for "
            f"{numbers.counted(len(refused), 'reason')} below.",
            icon=":material/info:")
for outcome in made + refused:  # successes first (they were four screens down)
    _show_outcome(outcome, outcome.ok and outcome.job_id == first)
if outcomes:
    st.caption("The uploaded files were released from the server's memory once read "
               "(imported or refused) and the list above is empty again: choose files to "
               "import more.")
_show_formats()
st.caption("A `.ncu-rep` adds the per-launch table (kernel names, grid, block, every metric "
           "read); nsight-python's CSVs give sizes and runs. What an import left out or "
           "re-derived is noted on the pages.")

"""Reusable page pieces: chart + table + CSV download, error box, bundle header."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler
import plotly.graph_objects as go
import streamlit as st

from profiling_worker.bundle.number_text import times_in
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import BACKEND_UNKNOWN
from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.spreadsheet import spreadsheet_safe

from app.core import numbers, preflight, spec_form, table_text
from profiling_worker.bundle.loader import Bundle
from app.core.share.job import contention_figures, contention_title, host_timer_note
from app.core.figures import theme
from app.streamlit_patches import styler_memo
from app.ui import cached, job_status, state
from app.core.environment import gpu_name
from app.core.provenance import is_imported
from app.core.markdown import code, esc, esc_spans


class PageStopped(Exception):
    """Raised by :func:`stop_page`; the app frame catches it after the page."""


def stop_page() -> NoReturn:
    """End the page here (instead of ``st.stop()``): the page runs before the sidebar, so that
    its chart reaches the browser first, and ``st.stop()`` would also stop the sidebar from
    being drawn; this ends only the page and the frame draws the sidebar after it."""
    raise PageStopped


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV without the index; text cells a spreadsheet would run as a
    formula start with ``'`` (profiling_worker/bundle/spreadsheet.py)."""
    return spreadsheet_safe(frame).to_csv(index=False).encode("utf-8")


def download_csv(frame: pd.DataFrame, key: str, filename: str, label: str = "Download CSV") -> None:
    """A CSV download button for ``frame``; the CSV is written when the button is clicked, not
    on every run of the page."""
    st.download_button(label, data=lambda: csv_bytes(frame), file_name=filename, mime="text/csv",
                       key=key, on_click="ignore", icon=":material/download:")


def table_with_csv(frame: pd.DataFrame, key: str, filename: str) -> None:
    """:func:`table` of ``frame`` (key ``key``) and its CSV download (key ``<key>-csv``)."""
    table(frame, key=key)
    download_csv(frame, key=state.key(key, "csv"), filename=filename)


def chart_config(filename: str) -> dict[str, object]:
    """Plotly modebar config: no logo; the camera button saves a PNG named after ``filename``
    at twice the on-screen resolution."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "scale": 2,
                                     "filename": filename.rsplit(".", 1)[0]}}


def chart_with_table(fig: go.Figure, frame: pd.DataFrame, key: str, filename: str,
                     shown: pd.DataFrame | None = None, which: str = "",
                     note: str | None = None, under: Callable[[], None] | None = None,
                     lead: Sequence[str] | None = None, parameters: Sequence[str] = ()) -> None:
    """The chart (Streamlit's light/dark plotly theme; the modebar camera saves a PNG), the exact
    numbers behind it, and a CSV of those numbers (keys ``<key>-*``). Traces of an annotation
    take the selected job's colour for it, the same in every view. ``shown``: the rows of
    ``frame`` the table shows, when not all: a caption says how many and ``which`` (e.g.
    "those of the points drawn"), and that the CSV has every row; that table is drawn once
    the user opens its fold (:data:`PART_TABLE`, :func:`fold`). ``note``: a caption right
    under the chart (markdown, escaped by the caller), e.g. what its marked points mean.
    ``under``: draws what stands right under the chart, after ``note``, over the table.
    ``lead``: the page's own columns, shown right after the row's identity (its ``parameters``
    after Config), columns of one value on every row left out and said in a caption
    (:func:`app.core.table_text.page_columns_first`); the CSV keeps every column."""
    theme.color_annotations(fig, cached.job_colors(state.selected_job_id()))
    st.plotly_chart(fig, key=state.key(key, "chart"), width="stretch", theme="streamlit",
                    config=chart_config(filename))
    if note:
        st.caption(note)
    if under is not None:
        under()
    rows, constant = table_rows(frame, shown, lead, parameters)
    where: Any = st  # the table's place: here, or a fold while it shows part of the frame
    if shown is not None and len(shown) < len(frame):
        st.caption(f"The table shows {len(shown):,} of the {len(frame):,} rows"
                   + (f": {which}" if which else "") + f"; the CSV below has all "
                   f"{len(frame):,}.")
        # a big sweep's first load (issue 37): the table (Streamlit's 0.5 MB grid chunk and
        # its canvas) was drawn in one pass with the chart; drawn once opened instead
        where = fold(PART_TABLE, state.key(key, "table-box"))
    if where is not None:
        if (said := table_text.constant_caption(constant)) is not None:
            where.caption(said)
        table(rows, key=state.key(key, "table"), where=where)
    download_csv(frame, key=state.key(key, "csv"), filename=filename,
                 label="Download CSV" if shown is None or len(shown) == len(frame)
                 else f"Download CSV (all {len(frame):,} rows)")


#: The fold of a table that shows part of its frame (:func:`chart_with_table`)
PART_TABLE = "Table"


def table_rows(frame: pd.DataFrame, shown: pd.DataFrame | None = None,
               lead: Sequence[str] | None = None, parameters: Sequence[str] = ()
               ) -> tuple[pd.DataFrame, dict[str, object]]:
    """The frame :func:`chart_with_table` draws as its table (``shown``, else ``frame``; with
    ``lead``, the page's columns first and the columns of one value on every row left out:
    :func:`app.core.table_text.page_columns_first`) and those left out (name -> value)."""
    rows = frame if shown is None else shown
    if lead is None:
        return rows, {}
    ordered, constant = table_text.page_columns_first(frame, lead, parameters)
    return rows[list(ordered.columns)], constant


def prepare_ahead(frame: pd.DataFrame) -> None:
    """What :func:`table` prepares of ``frame`` on its first draw, done now (the prefetch of
    :mod:`app.ui.prefetch`, off the script run): kept by its digest, its Styler marshalled
    (:func:`app.streamlit_patches.styler_memo.warm`), so the draw finds both."""
    ready = _prepared(frame_digest(frame), frame)
    if isinstance(ready.data, Styler):
        styler_memo.warm(ready.data)


#: What a table shows in a missing cell (the CSV download leaves it empty).
MISSING = "—"

#: The most cells a table styles (:func:`styled`): Streamlit's conversion of a pandas Styler
#: took 78 ms for 10,000 cells and 0.7 s for 50,000 on the 2-core machine, paid at every
#: script run (it translates every cell of the frame, styled or not). A larger table keeps
#: those columns numeric with one format for the whole column (its family's:
#: :func:`app.core.numbers.table_formats`), so a header click still sorts them by value, and
#: says so (:data:`_ONE_FORMAT_NOTE`); a column holding an unbounded (+inf) bound is written
#: as text there (:data:`_TEXT_SORT_NOTE`).
STYLED_CELLS = 4_000
_ONE_FORMAT_NOTE = ("{names}: one format for the whole column, not one per unit: every row "
                    "shows the most decimals any unit's rows need: this table has {cells:,} "
                    "cells (over {limit:,}, the most drawn with a format per unit). A click on "
                    "the header sorts by value; both CSV downloads have the numbers at full "
                    "precision.")
_TEXT_SORT_NOTE = ("{names}: written as text (an unbounded bound): this table has {cells:,} "
                   "cells (over {limit:,}, the most drawn as numbers with a format per row), so "
                   "a click on that header sorts it as text. The CSV has the numbers.")


def _widest(values: pd.Series, printf: str) -> int:
    """The most characters a value of ``values`` takes in ``printf``: the least's or the
    greatest's (the longest integer part and a minus sign are at the ends; the decimals are
    the format's), NaN and infinities left out; 0 for none."""
    finite = pd.to_numeric(values, errors="coerce").replace([np.inf, -np.inf], np.nan).dropna()
    if finite.empty:
        return 0
    return max(len(numbers.printf_text(float(v), printf)) for v in (finite.min(), finite.max()))


def text_width(chars: int, most: int) -> int:
    """The width (px) of a text column whose longest cell is ``chars`` characters: 7.2 px a
    character in the grid's font and the cell's padding, at most ``most``."""
    return min(int(chars * 7.2) + 24, most)


def number_width(chars: int) -> int:
    """The width (px) of a number column whose widest shown cell or header is ``chars``
    characters: 8 px a character in the grid's font and the cell's padding."""
    return chars * 8 + 24


#: The widest a text column is made to fit its longest value (px); a longer one (a Fix of two
#: sentences) is cut there, its whole text shown on a click in the cell.
TEXT_WIDTH_MAX = 480
#: The most lines :func:`wrapped_row_height` gives a row.
WRAP_LINES_MAX = 6


def wrapped_row_height(chars: int, most: int = TEXT_WIDTH_MAX) -> int | None:
    """A row height (px) that shows a text cell of ``chars`` characters whole, wrapped in a
    column of ``most`` px (:func:`text_width`'s 7.2 px a character), at most
    :data:`WRAP_LINES_MAX` lines; None where it fits one line. Streamlit wraps a cell's text
    only in rows taller than 4 rem (64 px), so two lines get 68 px."""
    per_line = max(1, int((most - 24) / 7.2))
    lines = min(WRAP_LINES_MAX, -(-chars // per_line))
    return None if lines <= 1 else max(68, 22 * lines + 14)


def _text_widths(frame: pd.DataFrame, skip: Iterable[str]) -> dict[str, Any]:
    """Widths (px) of the text columns whose longest value is longer than their header: the
    grid sized such a column by its header and cut "not comparable" to "not com…" (Compare's
    Verdict; Caveats, Environment's Fix), a fresh user's find (:func:`text_width`)."""
    out: dict[str, Any] = {}
    for name in frame.columns:
        column = frame[name]
        if name in skip or not (column.dtype == object or isinstance(column.dtype,
                                                                    pd.StringDtype)):
            continue
        lengths = column.dropna().astype(str).str.len()
        longest = int(lengths.max()) if len(lengths) else 0
        if longest > len(table_text.header(str(name))):
            out[name] = {"width": text_width(longest, TEXT_WIDTH_MAX)}
    return out


def _width(name: str, chars: int) -> int | None:
    """A number column's width (px) where its values are wider than its header, else None
    (Streamlit's own): the grid sized such a column by its header and cut its values on the
    left (StdDev ".000138" for 0.000138, a fresh user's find; a minus sign in the baselines'
    Difference)."""
    return number_width(chars) if chars > len(name) else None


def styled(frame: pd.DataFrame, cells: Iterable[numbers.CellFormat]) -> Any:
    """``frame`` as a pandas Styler whose cells of ``cells`` show their rows' format
    (:func:`app.core.numbers.printf_text`: missing "—", +inf "unbounded"), later entries over
    earlier ones; the values stay numbers, so a table sorts such a column by value (shown as
    text, "1,535,586,415" sorted before "183,360"). The index is renumbered (a Styler needs
    unique labels; :func:`table` hides it)."""
    frame = frame.reset_index(drop=True)
    styler = frame.style.format(na_rep=MISSING)
    for cell in cells:
        rows = slice(None) if cell.rows is None else cell.rows  # positions: labels after reset
        styler = styler.format(functools.partial(numbers.printf_text, printf=cell.printf),
                               subset=(rows, [cell.column]))
    return styler


def table(frame: pd.DataFrame | list[dict[str, Any]], key: str, where: Any = None,
          column_config: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """A table (``st.dataframe``, full width, no index) whose numeric columns show thousands
    separators and four significant digits, a value and its CI95 bounds alike, with the digits
    the narrowest interval's width needs (:func:`app.core.numbers.table_formats`); the values
    stay exact (sorting, CSV downloads). A missing cell (None, NaN) reads :data:`MISSING`, not
    Streamlit's "None"; an unbounded interval's upper bound reads "unbounded", its finite bounds
    in its family's format (:func:`app.core.numbers.unbounded_format`); a table whose rows are
    in several units writes each unit's values with that unit's decimals
    (:func:`app.core.numbers.unit_formats`): :func:`app.core.numbers.column_display` decides,
    as for the HTML report. Those columns stay numbers, so a click on their header sorts them
    by value (:func:`styled`; beyond :data:`STYLED_CELLS` cells each such column has one format,
    its family's, and a caption says so: :func:`_one_format`). What it draws of a frame is
    prepared once per distinct frame (:func:`_prepared`), not at every script run.
    ``where``: a column or container (default: here); ``column_config`` entries override the
    number formats."""
    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
    ready = _prepared(frame_digest(frame), frame)
    for note in ready.notes:
        (where or st).caption(note)
    config = {**ready.config, **(column_config or {})}  # a copy: the cached one stays as is
    if ready.short_chars:  # wide enough for the shortened names; the header's help says how
        config[C.KERNEL] = {**(config.get(C.KERNEL) or {}), "help": table_text.SHORT_HELP,
                            "width": text_width(ready.short_chars, 900)}
    if ready.joined_chars:
        config[C.KERNEL_NAMES] = {**(config.get(C.KERNEL_NAMES) or {}),
                                  "help": table_text.SHORT_NAMES_HELP,
                                  "width": text_width(ready.joined_chars, 900)}
    kwargs.setdefault("placeholder", MISSING)
    # a Styler of its own per draw: Streamlit's conversion sets attributes on it (its uuid, its
    # computed styles), and the cached one is shared by every session's thread
    data = styler_memo.copy_of(ready.data) if isinstance(ready.data, Styler) else ready.data
    (where or st).dataframe(data, key=key, hide_index=True, width="stretch",
                            column_config=config, **kwargs)


@dataclasses.dataclass(frozen=True)
class Prepared:
    """What :func:`table` draws of a frame, before the caller's column config: ``data`` (the
    frame shown, or its pandas Styler), ``config`` (column name -> Streamlit column config),
    ``notes`` (captions drawn above the table), and the widest shortened kernel name and
    joined kernel names (characters; None when none was shortened)."""

    data: Any
    config: dict[str, Any]
    notes: tuple[str, ...]
    short_chars: int | None
    joined_chars: int | None


#: The most frames whose table stays prepared (:func:`_prepared`), least recently used out
#: first: a page draws 1-6 tables, so this keeps every table of the pages of a few jobs.
TABLES_KEPT = 64


@st.cache_resource(max_entries=TABLES_KEPT, show_spinner=False)
def _prepared(digest: str, _frame: pd.DataFrame) -> Prepared:
    """:func:`prepare` of ``_frame``, once per ``digest`` (:func:`frame_digest`; the frame
    itself is not hashed again). Kept as is, not copied: a hit costs nothing, and nothing
    changes it (:func:`table` draws a shallow copy of the config and of the Styler)."""
    return prepare(_frame.copy(deep=False))  # the caller's later edits stay out (copy on write)


def frame_digest(frame: pd.DataFrame) -> str:
    """A hex digest of everything :func:`table` shows of ``frame``: its column labels and
    dtypes, its index and every cell, by value and, in a column of Python objects (text,
    mixed), by type too (pandas' own hash, and so Streamlit's, writes None and "None" and 1
    and "1" alike, and Streamlit's samples a frame of 50,000 rows or more)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr([(name, str(dtype)) for name, dtype in frame.dtypes.items()]
                       + [frame.index.names, str(frame.index.dtype)]).encode())
    for column in (frame.index.to_series(), *(frame.iloc[:, i] for i in range(frame.shape[1]))):
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufcmM":
            digest.update(column.to_numpy().tobytes())  # fixed-width: the bytes are the value
        else:  # repr escapes control characters: the separator cannot come from a value
            digest.update("\x1f".join(f"{type(v).__name__}:{v!r}"
                                       for v in column.to_numpy(dtype=object)).encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def prepare(frame: pd.DataFrame) -> Prepared:
    """What :func:`table` draws of ``frame`` (:class:`Prepared`): the text it shows (bidi
    controls visible, kernel names shortened), the number formats and widths of its columns,
    the Styler of a table up to :data:`STYLED_CELLS` cells, and the captions of a larger
    one."""
    frame = table_text.visible_text(frame)  # bidirectional controls shown, not obeyed
    frame, short_chars = table_text.short_kernel_names(frame)
    frame, joined_chars = table_text.short_joined_names(frame)
    frame = _shown_as(frame, {c: text for c in frame.columns
                              if (text := numbers.mixed_as_text(frame[c])) is not None
                              or (text := numbers.numbers_or_missing(frame[c])) is not None})
    shown = numbers.column_display(frame)
    config: dict[str, Any] = {name: st.column_config.NumberColumn(
        format=fmt, width=_width(table_text.header(str(name)), _widest(frame[name], fmt)))
        for name, fmt in shown.number_formats.items()}
    data: Any = frame
    notes: list[str] = []
    if shown.cells and frame.size <= STYLED_CELLS:  # no format: the Styler's text shows
        data = styler_memo.mark(styled(frame, shown.cells))  # kept as is: marshalled once
        config.update({name: st.column_config.NumberColumn(
            width=_width(table_text.header(str(name)), int(text.str.len().max() or 0)))
            for name, text in shown.text(frame).items()})
    elif shown.cells:
        data, big = _one_format(frame, shown)
        config.update(big)
        texts = sorted(shown.by_rows - set(big))
        config.update({name: st.column_config.TextColumn(alignment="right") for name in texts})
        notes = [note.format(names=", ".join(map(str, names)), cells=frame.size,
                             limit=STYLED_CELLS)
                 for note, names in ((_ONE_FORMAT_NOTE, sorted(big)), (_TEXT_SORT_NOTE, texts))
                 if names]
    if C.UNIT in frame.columns and C.UNIT not in config:  # "TFLOP/s" was cut to "TFLOP/"
        # a missing Unit (pandas 3's str dtype keeps it missing) has no length: count it as 0
        longest = int(frame[C.UNIT].astype(str).str.len().fillna(0).max()) if len(frame) else 0
        config[C.UNIT] = {"width": max(longest, len(C.UNIT)) * 9 + 28}
    config.update(_text_widths(frame, skip={*config, C.KERNEL, C.KERNEL_NAMES}))
    # headers in words with their units (RelativeStdDevPct: "Relative std dev (%)"); the CSV
    # downloads keep the names
    for name, said in table_text.header_config(frame.columns).items():
        config[name] = {**(config.get(name) or {}), **said}
    return Prepared(data, config, tuple(notes), short_chars, joined_chars)


def _one_format(frame: pd.DataFrame, shown: numbers.ColumnDisplay
                ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A table over :data:`STYLED_CELLS` cells whose columns ``shown`` writes per row: the
    frame to draw, and the column config of those columns it keeps numeric, each with one
    format for the whole column (:meth:`numbers.ColumnDisplay.one_format`: the most decimals
    any unit's rows need), so a header click sorts them by value (text sorted "1,535,586,415"
    before "183,360") and the table's own CSV download (its toolbar's, which writes the
    values, not the shown text) holds them at full precision: rows rounded each to its unit's
    decimals were what that CSV got (a reviewer's find); a column holding +inf (an unbounded
    bound, which a number format writes as no word) as text."""
    config: dict[str, Any] = {}
    for name in shown.by_rows:
        values = frame[name]
        fmt = shown.one_format(name) \
            or shown.formats.get(name) or numbers.printf_format(values)
        if fmt is None or (values.to_numpy(dtype="float64") == float("inf")).any():
            continue
        config[name] = st.column_config.NumberColumn(
            format=fmt, width=_width(str(name), _widest(values, fmt)))
    text = numbers.as_text(frame, [cell for cell in shown.cells if cell.column not in config])
    return _shown_as(frame, text), config


def fold(label: str, key: str, keep: bool = False, **kwargs: Any) -> Any:
    """An expander (key ``key``) whose content is drawn only once the user opens it, opening
    rerunning the app; returns the expander to draw into, or None while its content is not
    drawn. A closed expander's content is sent and mounted all the same, hidden: the browser
    draws it in one pass with the page's first chart and loads the JavaScript of any element
    kind new to the page (issue 37), so a page load sends none. Text alone may stay in a plain
    expander: drawing it costs less than the rerun opening it would.

    ``keep``: once opened in the session (session key ``<key>-seen``) the content stays drawn,
    open or closed, so that its widgets' values live on in widget state; else it is drawn only
    while open. ``kwargs``: :func:`streamlit.expander`'s (``expanded``, ``icon``)."""
    box = st.expander(label, key=key, on_change="rerun", **kwargs)
    seen = f"{key}-seen"
    if not (box.open or keep and st.session_state.get(seen)):
        return None
    if keep:
        st.session_state[seen] = True
    return box


def render_error(message: str, hint: str | None = None, log_tail: str | None = None,
                 kind: str | None = None, key: str = "error") -> None:
    """One error box: kind and message, the fix, and the log tail in an expander (keyed
    ``<key>-log-tail``, :func:`fold`). Every part is shown as text (messages of imported
    bundles are data, not Markdown), a `command` span as code
    (:func:`app.core.markdown.esc_spans`)."""
    message = times_in(message)  # a recorded time ("SIGTERM at ...") as a person reads it
    head = f"**{esc(kind)}**: {esc_spans(message)}" if kind else esc_spans(message)
    st.error(head + (f"\n\n**Fix:** {esc_spans(hint)}" if hint else ""), icon=":material/error:")
    if log_tail and (box := fold("Log tail", state.key(key, "log-tail"))) is not None:
        box.code(log_tail, language="text")


def render_bundle_error(bundle: Bundle) -> None:
    """The manifest error of a failed/interrupted job, if it has one; a cancelled job gets a
    neutral note (a cancel is the user's choice, not an error). A job that kept part of its
    configs (a cancel, a kernel that raised at some) says first what it measured and what not
    (:func:`profiling_worker.bundle.schema.partial.note`): the page draws those configs.
    Its end is said once the caption says it (:func:`app.ui.job_status.shown_status`): the
    worker writes its final manifest before the job manager settles the job, and the job panel
    reruns the page when it does."""
    err = bundle.error
    short = partial.note(bundle.manifest)
    status = job_status.shown_status(bundle)
    # configs that failed (a kernel that raised at some, a later Nsight Compute call that
    # failed): its error is the note's failure again (a fresh user read it twice, a warning and
    # a red box): one box says both
    one_box = bool(short and err and status == JobStatus.FAILED
                   and partial.failed_entries(bundle.manifest.get(partial.CONFIGS_KEY)))
    if short and not one_box:
        st.warning(esc(short), icon=":material/rule:")
    if status == JobStatus.CANCELLED:
        if not short:
            said = partial.cancel_said(bundle.manifest)
            st.info(esc(cancelled_banner(said)), icon=":material/cancel:")
    elif err and status.finished:
        render_error(str(short if one_box else err.get("message", "")), err.get("hint"),
                     err.get("log_tail"), kind=err.get("kind"))
    data_notes(bundle)
    unwritten = unwritten_note(bundle)
    if unwritten:
        (st.caption if bundle.pending else st.warning)(esc(unwritten))


def cancelled_banner(said: str) -> str:
    """A page's banner of a job cancelled before it kept any config, ``said`` how its cancel
    came (:func:`~profiling_worker.bundle.schema.partial.cancel_said`, "" when unrecorded)."""
    how = f" ({said})" if said else ""
    return f"This job was cancelled{how}: it holds no complete result."


def unwritten_note(bundle: Bundle) -> str | None:
    """What a page says of the tables a bundle whose result was ready lacks (issue 40): while
    its job runs, that they are pending (the views of runs and aggregated draw already); once
    it ended without them, that they are missing. None for any other bundle."""
    if bundle.pending:
        return (f"Result ready, tables pending: {', '.join(bundle.pending)}. The worker is "
                "writing them; the views that read them fill in when the job ends.")
    if bundle.missing:
        return (f"Tables missing: {', '.join(bundle.missing)}. The job ended before its worker "
                "wrote them; the runs and aggregated tables are whole, and the views that "
                "read only them draw.")
    return None


def data_notes(bundle: Bundle, name_job: bool = False) -> None:
    """The bundle's damaged parts (a warning each), the aggregated columns it lacks that were
    recomputed (an info each); ``name_job`` starts each with the job id (pages of two jobs).
    The CI95 bounds shown cut are said under the tables that show them
    (:func:`cut_bounds_note`)."""
    job = f"Job {code(bundle.job_id)}: " if name_job else ""
    for problem in bundle.problems:
        st.warning(f"{job}Part of this bundle is damaged: {esc(problem)}. Views that need it "
                   "show nothing; the files page still offers every file.",
                   icon=":material/warning:")
    for sentence in bundle.recomputed:
        st.info(job + esc(sentence), icon=":material/calculate:")


def cut_bounds_note(bundle: Bundle, metrics: Iterable[object]) -> None:
    """The bundle's note on CI95 lower bounds shown cut at 0 (``Bundle.restated``), as a
    caption, where a table shows a CI95 of one of those metrics (``metrics``: the table's);
    nothing elsewhere. On every page it read as the first fact about time-only pages that show
    no DRAM bytes (issue 37)."""
    if set(map(str, metrics)) & set(bundle.restated_metrics):
        for sentence in bundle.restated:
            st.caption(esc(sentence))


#: What an imported job of unknown backend means for its durations (shown under the caption).
UNKNOWN_BACKEND_NOTE = ("Backend unknown: the imported files do not say whether Nsight Compute "
                        "or CUPTI measured these durations (nsight-python 1.x writes both alike "
                        "when only gpu__time_duration.sum is collected). A CUPTI run may keep "
                        "the L2 warm between runs, so times may be L2-warm; this job is not "
                        "offered "
                        "on the backends page.")


def pass_note(bundle: Bundle) -> None:
    """Under a job's caption, for a Pre-flight pass, the one line that says what it is and
    what it measured (:func:`app.core.preflight.pass_line`): not the job's results."""
    if (line := preflight.pass_line(bundle.spec)) is not None:
        st.info(esc(line), icon=":material/flight_takeoff:")


def bundle_caption(bundle: Bundle) -> None:
    """One line naming the job, its status, backend, GPU and what the durations measure; for a
    cpu job one warning line saying so instead (host wall-clock, not GPU) or, if it was timed
    on a contended CPU, one line (:func:`contention_title`) whose fold holds that warning, the
    contention's figures and what to do: the chart stays in sight at 1000x700 (a fresh user's
    find: a box and a six-line paragraph stood above it on every page). A Pre-flight pass's
    pages say so under it, in one line (:func:`app.core.preflight.pass_line`)."""
    env = bundle.manifest.get("environment") or {}
    gpu = gpu_name(env, bundle.gpu_index) or (
        "GPU not named in the files" if is_imported(bundle.manifest) else "no GPU")
    status = job_status.shown_status(bundle)  # the caption's and the timer box's, one state
    timer = host_timer_note(bundle, status)  # says what the durations are: not said twice
    durations = "" if timer else f" · durations: {esc(bundle.measurement)}"
    st.caption(f"Job {code(bundle.job_id)} · {esc(status)} · backend "
               f"{esc(bundle.backend)} · {esc(gpu)}{durations}")
    pass_note(bundle)
    if bundle.backend == BACKEND_UNKNOWN:
        st.info(UNKNOWN_BACKEND_NOTE, icon=":material/help:")
    detail = contention_figures(bundle, esc, spec_form.in_form_words)
    if not detail:  # a cpu job not warned: the timer's one line
        if timer:
            st.warning(timer, icon=":material/schedule:")
        return
    # a contended job: one line, the fold's label, over the chart; the timer's line, the
    # contention's figures and what to do inside. A box of two lines over the fold put the
    # charts of Size sweep and Stability below the fold at 1000x700 (issue 37). The figures
    # are said here once: the sidebar lists them only while the job is listed.
    with st.expander(f":orange[{esc(contention_title(bundle))}]", icon=":material/schedule:"):
        st.warning(timer or "", icon=":material/schedule:")
        st.markdown(detail)


def _shown_as(frame: pd.DataFrame, shown: dict[Any, pd.Series]) -> pd.DataFrame:
    """``frame`` with the columns of ``shown`` replaced (a copy; ``frame`` itself if none):
    numbers and text as text, numbers and None as float (module :mod:`app.core.numbers`)."""
    if not shown:
        return frame
    frame = frame.copy()
    for name, text in shown.items():
        frame[name] = text
    return frame


def no_job_selected() -> None:
    """What a page shows when there is nothing to show."""
    st.info("No job selected. Submit one from the sidebar, or pick one in the job selector.")


def read_lazily(bundle_dir: Path, relpath: str) -> Callable[[], bytes]:
    """A zero-argument callable returning the bytes of the bundle's file ``relpath``, read
    only on click and only if it resolves inside the bundle.

    Raises (when called):
        FileNotFoundError: gone, or a link out of the bundle.
    """
    def read() -> bytes:
        path = inside_bundle(bundle_dir, relpath)
        if path is None:
            raise FileNotFoundError(f"{relpath}: not a file inside the bundle")
        return path.read_bytes()

    return read


def selected_job_not_shown(shown: Iterable[str], why: str) -> None:
    """An info line where a page compares jobs (Compare, CUPTI vs Nsight Compute, Clocks and
    thermal) and the sidebar's job is not among the ``shown`` ids: which job the page shows
    instead, and ``why`` the selected one is not (a fresh user's find: a cpu job selected,
    the backends page showed an H200 pair without a word). Nothing when it is shown."""
    selected, shown = state.selected_job_id(), list(dict.fromkeys(shown))
    if not selected or selected in shown:
        return
    st.info(f"The sidebar's job {code(selected)} is not shown here: {esc(why)}. Shown: "
            + " and ".join(code(j) for j in shown) + ".", icon=":material/info:")

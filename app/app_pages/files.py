"""Every file of the selected bundle with its size and a download (read only on click), a zip of
the whole bundle, the decompressed .ncu-rep of a .ncu-rep.gz, and the .ncu-rep summary."""

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import BinaryIO

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.schema import columns as C

from app.core import numbers
from app.core.metrics import REPORT_VALUES, available_metrics, no_values_text
from app.core.provenance import is_imported
from app.core.bundle_files import (MADE_ON_DOWNLOAD, ORIGINALS_NOTE, checked_download,
                                   download_name, gunzip_file, gunzipped_name,
                                   is_gzipped_report, is_original_upload, left_out_files,
                                   made_csv_problem, made_csvs, read_report_summary,
                                   report_download_problem, table_csv_file, tail_lines,
                                   too_large, zip_bundle, zip_name, zip_report_note)
from app.core.views.timeline import PERFETTO_UI, TRACE_SUFFIX, timeline_problem, trace_bytes
from app.core.download_grants import DownloadKind
from app.ui import analysis, downloads, job_status, panels, replication, share, state
from app.core.markdown import code, esc

PAGE = "files"  # widget keys of this page: state.key(PAGE, field)

st.header("Files")
bundle = analysis.selected_bundle()
st.caption(f"Directory: {code(bundle.path)}")



@st.cache_data(max_entries=64, show_spinner=False)
def _report_problem(path: str, mtime_ns: int, size: int,  # noqa: ARG001
                    cap: int) -> str | None:
    """report_download_problem, once per file version and cap (the key: path, mtime, size)."""
    return report_download_problem(Path(path), cap)


@st.cache_data(max_entries=256, show_spinner=False)
def _made_csv_problem(bundle_dir: str, relpath: str, mtime_ns: int, size: int  # noqa: ARG001
                      ) -> str | None:
    """made_csv_problem, once per Parquet file version (the key: its mtime and size)."""
    return made_csv_problem(Path(bundle_dir), relpath)


def made_csv_refusal(relpath: str) -> str | None:
    """Why the CSV ``relpath`` is refused before its click where downloads are held in memory
    (there a failure on click shows only Streamlit's "Failed to generate file"): its Parquet
    file's footer does not read. None where the route serves (its 422 says why) or the Parquet
    file is gone. No CSV is made: its size is known once made, on the click."""
    parquet = inside_bundle(bundle.path, f"{relpath.removesuffix('.csv')}.parquet")
    if not downloads.held_in_memory() or parquet is None:
        return None
    stat = parquet.stat()
    return _made_csv_problem(str(bundle.path), relpath, stat.st_mtime_ns, stat.st_size)


def on_click(make: Callable[[], BinaryIO], what: str) -> Callable[[], BinaryIO]:
    """``make`` refused on click where it comes out over the cap (a CSV's or the zip's size is
    known only once made; the message, in the server's log, names ``what`` and the folder)."""
    return partial(checked_download, make, what, str(bundle.path), downloads.cap())


made = {relpath: made_csv_refusal(relpath) for relpath in made_csvs(bundle)}  # made on click
total = sum(item.size for item in bundle.files)  # the CSVs' size is known once made
zip_refused = too_large("The bundle", total, code(bundle.path), downloads.cap())
if zip_refused:
    st.caption(f"No zip: {zip_refused}.")
else:
    what = f"{counted(len(bundle.files), 'file')}, {numbers.fmt_bytes(total)} before compression"
    if made:
        what += f", and {counted(len(made), 'CSV')} {MADE_ON_DOWNLOAD} (size known when made)"
    downloads.button(st, f"Download the whole bundle (zip, {what})",
                     kind=DownloadKind.ZIP,
                     bundle_dir=bundle.path, relpath="", filename=zip_name(bundle),
                     data=on_click(lambda: zip_bundle(bundle), f"The zip of {bundle.job_id}"),
                     mime="application/zip",
                     key=state.key(PAGE, "zip"), icon=":material/folder_zip:", type="primary",
                     help="Built when clicked; unzips into one directory that the "
                          "dashboard (or `python -m profiling_worker`) can open again.")
    gzip_note = zip_report_note(bundle)
    if gzip_note:
        st.caption(gzip_note)

if available_metrics(bundle):
    share.job_button(bundle)
else:  # a queued or cancelled job's report held only its notes (4.8 MB of plotly.js)
    # the pages' words for a job without values: "(status: running)" after "holds no
    # results" read as a job that had failed to record any
    st.caption(esc(no_values_text(REPORT_VALUES, job_status.shown_status(bundle), "its report",
                                   bundle.error)))

problem = timeline_problem(bundle)
if problem is None:
    st.download_button("Download the timeline (Perfetto / Chrome trace JSON)",
                       data=lambda: trace_bytes(bundle), file_name=f"{bundle.job_id}{TRACE_SUFFIX}",
                       mime="application/json", key=state.key(PAGE, "timeline"), on_click="ignore",
                       icon=":material/timeline:",
                       help=f"One track per region with each launch, NVML clocks, temperature and "
                            f"power as counters; opens as is in {PERFETTO_UI}. Head-less: "
                            "`python -m profiling_worker timeline BUNDLE -o trace.json`.")
else:
    st.caption(f"No timeline: {problem}.")

if is_imported(bundle.manifest):  # only an import keeps uploaded originals under nsight/
    st.caption(ORIGINALS_NOTE)

rows = sorted([(item.relpath, item.size) for item in bundle.files]
              + [(relpath, None) for relpath in made], key=lambda row: row[0])
for i, (relpath, size) in enumerate(rows):
    left, mid, right = st.columns([6, 2, 2], vertical_alignment="center")
    left.markdown(code(relpath))
    if size is None:  # no size until made (the route refuses an unreadable table: its 422)
        mid.caption(MADE_ON_DOWNLOAD)
        if made[relpath]:
            right.caption(esc(made[relpath]))
            continue
        downloads.button(right, "Download", kind=DownloadKind.CSV, bundle_dir=bundle.path,
                         relpath=relpath, filename=download_name(bundle, relpath),
                         data=on_click(partial(table_csv_file, bundle.path, relpath), relpath),
                         key=state.key(PAGE, f"download-{i}"), mime="text/csv",
                         icon=":material/download:",
                         help="Made from the table's Parquet file when clicked: the text the "
                              "worker wrote beside it before it stopped writing CSV copies.")
        continue
    original = is_original_upload(bundle, relpath)
    # in the unit that shows it (12.3 MB, 2.9 kB, 654 bytes), as the zip button says its total
    mid.caption(numbers.fmt_bytes(size) + (" · original upload" if original else ""))
    # an empty file (a worker.log of a job that logged nothing) is not offered (issue 37)
    refused = ("empty: nothing to download" if size == 0 else
               too_large(code(relpath), size, code(bundle.path), downloads.cap()))
    if refused:
        right.caption(refused)
    else:
        downloads.button(right, "Download original" if original else "Download",
                         kind=DownloadKind.FILE, bundle_dir=bundle.path, relpath=relpath,
                         filename=download_name(bundle, relpath),
                         data=panels.read_lazily(bundle.path, relpath),
                         key=state.key(PAGE, f"download-{i}"), mime="application/octet-stream",
                         icon=":material/download:")
    report = inside_bundle(bundle.path, relpath) if is_gzipped_report(relpath) else None
    stat = report.stat() if report else None
    problem = (_report_problem(str(report), stat.st_mtime_ns, stat.st_size,
                               downloads.inflate_cap()) if stat else None)
    if problem:  # said here, at once: a refused click would show nothing (issue 26)
        right.caption(f"No .ncu-rep download: {problem}")
    elif report is not None:
        downloads.button(
            right, "Download .ncu-rep", kind=DownloadKind.INFLATED, bundle_dir=bundle.path,
            relpath=relpath, filename=gunzipped_name(relpath),
            data=partial(gunzip_file, report), key=state.key(PAGE, f"gunzip-{i}"),
            mime="application/octet-stream", icon=":material/unarchive:",
            help=f"Decompressed on click (up to {downloads.inflate_cap() // 1024**2:,} MiB); "
                 "opens in Nsight Compute (ncu-ui) or `ncu --import`.")

for gone in left_out_files(bundle):  # where the report would be, and why it is not
    left, mid, right = st.columns([6, 2, 2], vertical_alignment="center")
    left.markdown(f"{code(gone.relpath)}: not in this bundle, {esc(gone.reason)}")
    mid.caption(numbers.fmt_bytes(gone.size) if gone.size is not None else "size not recorded")
    right.caption("no download")

try:
    summary = read_report_summary(bundle)
except (OSError, ValueError) as exc:
    panels.render_error(f"{C.REPORT_SUMMARY_FILE} could not be read: {exc}")
    summary = None
if summary is not None:
    exports = (bundle.manifest.get("provenance") or {}).get("ncu_csv")  # imported ncu text
    st.subheader("Nsight Compute summary" if exports else ".ncu-rep summary")
    st.caption(f"From `{C.REPORT_SUMMARY_FILE}`, " + (
        "written by the importer from the rule rows of "
        + ", ".join(code(name) for name in exports) + " (no .ncu-rep)." if exports else
        "read from the report with ncu_report by the worker."))
    left, right = st.columns([2, 3])
    panels.table(summary.overview, key=state.key(PAGE, "summary"), where=left)
    panels.table(summary.kernels, key=state.key(PAGE, "summary-kernels"), where=right,
                 column_config={C.KERNEL: st.column_config.TextColumn("Kernel name",
                                                                      width="large")})
    if summary.rules.empty:
        st.caption("Rule results: none (Nsight Compute runs its guided-analysis rules only when "
                   "sections are collected, e.g. `--section SpeedOfLight`).")
    else:
        panels.table(summary.rules, key=state.key(PAGE, "summary-rules"))

replication.offer(bundle, PAGE)

log = inside_bundle(bundle.path, "worker.log")  # None for a link that leaves the bundle
if log is not None and log.stat().st_size:
    if (box := panels.fold("worker.log (last 200 lines)", state.key(PAGE, "log-open"))) is not None:
        box.code(tail_lines(log), language="text")

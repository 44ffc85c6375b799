"""The selected job's aggregated table and per-run table, with CSV downloads."""

import streamlit as st

from profiling_worker.bundle.number_text import shown_unit
from profiling_worker.bundle.schema import columns as C, intervals, plausibility as P
from profiling_worker.bundle.schema import interval_words as W

from profiling_worker.bundle.schema.manifest import JobStatus

from app.core import derived, numbers
from app.core.derived import DEFAULT_TIME_UNIT
from app.core.metrics import available_metrics, no_values_text
from app.core.table_text import header
from app.core.views.seed_columns import with_seed_columns
from app.ui import analysis, job_status, notes, panels, run_audit, state
from app.core.markdown import esc

PAGE = "results"  # widget keys of this page: state.key(PAGE, field)

st.header("Results tables")
bundle = analysis.selected_bundle()
notes.show(bundle, "results", available_metrics(bundle), extra_checks=P.CHECKS)
run_audit.badges(bundle, PAGE)

TABLES = (C.TABLE_AGGREGATED, C.TABLE_RUNS, C.TABLE_WORK)
shown_status = job_status.shown_status(bundle)
if shown_status is not JobStatus.DONE and all(bundle.table(n).empty for n in TABLES):
    # one line of when they come (a running job read "No aggregated table in this job" x3)
    st.info(esc(no_values_text("results", shown_status, "each table", bundle.error)),
            icon=":material/info:")
    panels.stop_page()
# only the tables that hold times; each row in the unit the other pages show it in, the CSV
# in the tables' own (ns, Hz) at full precision, its Unit column naming them
TIMES = (f"; times in {DEFAULT_TIME_UNIT} ({esc(bundle.measurement)}), clocks in "
         f"{shown_unit('Hz')[0]}; the CSV in the stored units (ns, Hz) at full precision")
for name, title, what in (
    (C.TABLE_AGGREGATED, "Aggregated", f"one row per annotation × config × metric{TIMES}"),
    (C.TABLE_RUNS, "Per run", f"one row per annotation × config × run × metric{TIMES}"),
    (C.TABLE_WORK, "Analytic work", "the kernel catalog's FLOPs and bytes per annotation × "
                                    "config (no times)"),
):
    st.subheader(title)
    table = bundle.table(name)
    if table.empty:
        st.caption(f"No {name} table in this job.")
        continue
    if name == C.TABLE_AGGREGATED:  # set against nsight-python's output column by column
        table = with_seed_columns(table, bundle)
        what += (f"; GPU, {header('ComputeClock')} and {header('MemoryClock')} (rated clocks "
                 "in kHz, device attributes, missing when the job recorded none) and Kernel are "
                 f"nsight-python's columns (the CSV names them so); {header(C.CI95_LOWER)}/upper: "
                 f"{intervals.CI_METHOD} ({intervals.SEED_CI_NOTE}). "
                 + W.line(W.MEAN, bundle.host_timer).removesuffix("."))
    st.caption(f"{what}.")
    panels.table(derived.rows_in_shown_units(table, columns=numbers.UNIT_VALUE_COLUMNS),
                 key=state.key(PAGE, f"{name}-table"))
    if name == C.TABLE_AGGREGATED and C.METRIC in table:
        panels.cut_bounds_note(bundle, table[C.METRIC].unique())
    panels.download_csv(table, key=state.key(PAGE, f"{name}-csv"),
                        filename=f"{bundle.job_id}-{name}.csv")

if run_audit.any_audit(bundle):  # no heading over nothing (a cancelled job)
    st.subheader("Run audit")
    run_audit.details(bundle, PAGE)

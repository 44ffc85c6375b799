"""The deep-dive action of the sweep pages: pick one point (region x config) of the job and
queue its profile with Nsight Compute's full section set; the deep-dive page shows it when the
job is done."""

from __future__ import annotations

from typing import Any

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

from app.core import frame_columns as F, spec_form
from profiling_worker.bundle.loader import Bundle
from app.core.deep_dive_request import NoDeepDive, deep_dive_spec, job_refusal, sweep_points
from app.core.markdown import esc, esc_spans, visible
from app.ui import cached, navigation, panels, state

SUBMITTED = "deep-dive-submitted"  # session key: id of the deep-dive job submitted last
#: In place of the expander on a job of a backend that runs on no GPU (issue 37: it was offered
#: on cpu jobs, whose host-timed points have no Nsight Compute profile to dive into).
NO_GPU_JOB = ("No deep dive for a {backend} job: a deep dive profiles one point of a GPU job "
              "with Nsight Compute's full section set, and this job timed its kernels on the "
              "host. Run the kernel with the ncu or cupti backend to deep-dive its points.")


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value  # numpy scalar -> JSON-able


def _problems(raw: dict[str, Any]) -> list[str]:
    catalog = cached.kernel_catalog()[0]
    try:
        spec = validate_spec(raw, catalog)
    except SpecInvalid as exc:
        return [f"{e.field}: {e.message}" for e in exc.errors]
    return [f"{e.field}: {e.message} ({e.hint})"
            for e in spec_form.backend_errors(spec, cached.env_report())]


def _submit(raw: dict[str, Any]) -> None:
    spec = validate_spec(raw, cached.kernel_catalog()[0])
    job_id = cached.job_manager().submit(spec)
    state.select_job(job_id)
    state.add_own_job(job_id)
    st.session_state[SUBMITTED] = job_id


def offer(bundle: Bundle, page: str, expanded: bool = False, say_why: bool = False) -> None:
    """The "Deep dive one point" expander (open at first if ``expanded``); ``page`` prefixes its
    widget keys. Its content is drawn only while it is open (opening reruns the page), so a
    page load neither computes the points nor sends their widgets. Right after a submit the new
    job is the selected one (a queued job has no points yet): a link to the deep-dive page
    stands above the expander while it is selected.

    A job none of whose points can be deep-dived (a cpu job, an import) gets no expander; the
    caption saying why is drawn only where ``say_why`` (the deep-dive page): on every sweep page
    it stood above the chart, the same words each time (a fresh user's find)."""
    if not B.on_gpu(bundle.backend):  # nothing of a host-timed job to deep-dive
        why = NO_GPU_JOB.format(backend=esc(bundle.backend))
    elif (refusal := job_refusal(bundle)) is not None:  # no point of it could be profiled
        why = f"No deep dive here: {esc_spans(refusal)}."
    else:
        why = ""
    if why:
        if say_why:
            st.caption(why)
        return
    if st.session_state.get(SUBMITTED) == bundle.job_id:
        navigation.link("deep_dive.py", f"Open the deep dive of {bundle.job_id} (shown when done)")
    box = panels.fold("Deep dive one point: Nsight Compute's full section set",
                      state.key(page, "deep-open"), icon=":material/biotech:", expanded=expanded)
    if box is not None:
        with box:
            _point_picker(bundle, page)


def _point_picker(bundle: Bundle, page: str) -> None:
    points = sweep_points(bundle)
    if points.empty:
        st.caption("This job has no region × config points.")
        return
    widget, kept = state.key(page, "deep-point"), state.key(page, "deep-pick")
    labels = state.keep_if_offered(  # a point of another job is not offered for this one
        widget, [f"{a} · {c}" for a, c in zip(points[C.ANNOTATION], points[F.CONFIG_LABEL])],
        st.session_state.get(kept))  # the widget's own state goes while it is closed
    pick = st.selectbox("Point", labels, key=widget, format_func=visible)
    st.session_state[kept] = pick
    row = points.iloc[labels.index(pick)]
    config = {p: _plain(row[p]) for p in bundle.parameters if p in row.index}
    try:
        raw = deep_dive_spec(bundle, str(row[C.ANNOTATION]), config,
                             cached.kernel_catalog()[0])
    except NoDeepDive as exc:
        st.caption(f"No deep dive here: {esc_spans(exc)}.")
        return
    problems = _problems(raw)
    st.caption(f"Queues a job for this point alone: kernel `{raw['kernels'][0]}`, "
               f"{counted(raw['runs'], 'run')}, ncu `--set {raw['section_set']}` "
               "(each kernel replayed "
               "some 40 times); the deep-dive page opens it when it is done.")
    if problems:
        st.caption("Not on this machine: " + esc("; ".join(problems)))
    st.button("Profile this point", key=state.key(page, "deep-run"), on_click=_submit,
              args=(raw,), disabled=bool(problems), icon=":material/play_arrow:")

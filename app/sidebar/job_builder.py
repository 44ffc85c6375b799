"""The sidebar job form. Draws widgets and returns a plain dict; validation is elsewhere.

Widgets sit inside ``st.form`` so typing never reruns the app. On submit the callback
(:func:`on_submit`) runs before the rerun: it validates the dict with
:func:`app.core.spec_form.to_job_spec` and either queues the job or stores the field errors,
which are shown under the form. Widget values are kept either way.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from profiling_worker.schema import spec as spec_schema

from app.core import spec_form
from app.ui import cached, state

PAGE = "builder"
FIELDS = ("kernels", "annotations", "size_preset", "sizes", "runs", "backend", "metric_preset",
          "extra_metrics", "cache_control", "clock_control", "thermal_mode", "collectors",
          "warmup", "gpu", "label")


def k(field: str) -> str:
    """Widget key of a builder field (``builder-<field>``)."""
    return state.key(PAGE, field)


def form_values() -> dict[str, Any]:
    """The builder's current values from session state, one entry per :data:`FIELDS`."""
    return {f: st.session_state.get(k(f)) for f in FIELDS}


def _defaults(backend: str, catalog: spec_form.Catalog) -> None:
    kernel = "matmul"
    info = catalog[kernel]
    configs = info.cpu_configs if backend == "cpu" else info.default_configs
    for field, value in (("kernels", [kernel]), ("annotations", []), ("size_preset", "typed"),
                         ("sizes", ", ".join(str(c["n"]) for c in configs)), ("runs", 10),
                         ("backend", backend), ("metric_preset", "timing"), ("extra_metrics", ""),
                         ("cache_control", "all"), ("clock_control", "none"),
                         ("thermal_mode", "auto"), ("collectors", []), ("warmup", 1), ("gpu", 0),
                         ("label", "")):
        st.session_state.setdefault(k(field), value)


def on_submit() -> None:
    """Form callback: validate; queue the job and select it, or keep the errors for display."""
    spec, errors = spec_form.to_job_spec(form_values(), cached.kernel_catalog()[0])
    if spec is not None:
        errors = spec_form.backend_errors(spec, cached.env_report())
        spec = None if errors else spec
    st.session_state[state.BUILDER_ERRORS] = errors
    st.session_state.pop(state.BUILDER_NOTICE, None)
    if spec is not None:
        job_id = cached.job_manager().submit(spec)
        state.select_job(job_id)
        st.session_state[state.BUILDER_NOTICE] = f"Queued job {job_id}."


def render_job_builder(best_backend: str) -> dict[str, Any]:
    """Draw the form (defaults: ``best_backend``, matmul, its sizes); returns :func:`form_values`."""
    catalog, load_errors = cached.kernel_catalog()
    _defaults(best_backend, catalog)
    annotations = sorted({a for info in catalog.values() for a in info.annotations})
    with st.form("builder-form", border=False):
        st.multiselect("Kernels", list(catalog), key=k("kernels"),
                       format_func=lambda kid: f"{kid} · {catalog[kid].title}" if kid in catalog
                       else kid)
        st.multiselect("Annotations (empty = all)", annotations, key=k("annotations"))
        st.selectbox("Sizes from", list(spec_form.SIZE_PRESETS), key=k("size_preset"),
                     format_func=spec_form.SIZE_PRESETS.get)
        st.text_input("Sizes (n, comma-separated)", key=k("sizes"), help=spec_form.SIZES_HINT)
        st.number_input("Runs per size", step=1, key=k("runs"))
        st.selectbox("Backend", list(spec_schema.BACKENDS), key=k("backend"),
                     help="ncu: Nsight Compute; cupti: durations only; cpu: host timer, no GPU")
        with st.expander("Metrics and options"):
            _options()
        st.form_submit_button("Run", type="primary", on_click=on_submit, key=k("submit"))
    for err in load_errors:
        st.warning(f"Kernel file **{err['file']}** did not load: {err['error']}",
                   icon=":material/warning:")
    _messages()
    return form_values()


def _options() -> None:
    st.selectbox("Metric preset", list(spec_schema.METRIC_PRESETS), key=k("metric_preset"),
                 help="timing = duration; bound = SM vs DRAM % of peak; memory = DRAM bytes")
    st.text_input("Extra metrics (Nsight Compute names)", key=k("extra_metrics"),
                  placeholder="e.g. l1tex__t_bytes.sum")
    st.selectbox("Cache control", list(spec_schema.CACHE_CONTROLS), key=k("cache_control"))
    st.selectbox("Clock control", list(spec_schema.CLOCK_CONTROLS), key=k("clock_control"))
    st.selectbox("Thermal mode", list(spec_schema.THERMAL_MODES), key=k("thermal_mode"))
    st.multiselect("Info collectors (sampled before each run; nsight-python >= 1.1)",
                   list(spec_schema.COLLECTORS), key=k("collectors"))
    st.number_input("Warm-up calls", step=1, key=k("warmup"))
    st.number_input("GPU index", step=1, key=k("gpu"))
    st.text_input("Label", key=k("label"))


def _messages() -> None:
    for err in st.session_state.get(state.BUILDER_ERRORS) or []:
        st.error(f"**{err.field}**: {err.message}. Fix: {err.hint}.", icon=":material/error:")
    notice = st.session_state.get(state.BUILDER_NOTICE)
    if notice:
        st.success(notice, icon=":material/schedule:")

"""The sidebar's Pre-flight: a quick pass of the job in the form (app/core/preflight.py), queued
by the form's Pre-flight button, its findings in an expander under the form before the user
commits to the long run. Keys ``builder-preflight*``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import backends as B, run_target
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import FieldError, JobSpec, validate_spec

from app.core import job_size, numbers, preflight, spec_form
from app.core.markdown import esc
from app.ui import cached, job_status, state

#: What the button does, in its help.
HELP = (f"Queues a quick pass first: {preflight.CALLS} calls of each config, the first with no "
        "warm-up, on CUPTI (cpu when the job runs on no GPU). It counts launches per annotation "
        "and config, flags first-call autotuning and launch counts that differ between configs, "
        "and estimates the job's time and report size.")


def is_pilot(values: Mapping[str, Any]) -> bool:
    """A Nsight Compute job of runs "auto": its pre-flight is a CUPTI pass of runs "auto" whose
    runs choose the ncu job's (Nsight Compute replays every config in one call per job)."""
    return (values.get("backend") == B.NCU
            and str(values.get("runs") or "").strip().lower() == run_target.AUTO)


def preflight_check(values: Mapping[str, Any], check: Any
                    ) -> tuple[JobSpec | None, JobSpec | None, list[FieldError]]:
    """(the planned spec, its pre-flight pass's spec, []) for form values Pre-flight can pass,
    else (None, None, the field errors): ``check(values)`` -> (spec, errors), Run's check (for
    a pilot, :func:`is_pilot`, on its CUPTI twin, timing only), then whether the pass's
    backend runs here. Queues nothing; also the check that Pre-flight's errors are checked
    again by once the form changes (app/sidebar/job_builder.py)."""
    pilot = is_pilot(values)
    spec, errors = check({**values, "backend": B.CUPTI, "metric_preset": "timing",
                          "extra_metrics": ""} if pilot else values)
    if spec is None:
        return None, None, errors
    quick = preflight.preflight_spec(spec, pilot)
    refused = spec_form.backend_errors(quick, cached.env_report())
    if refused:
        return None, None, [
            FieldError("preflight", f"the pre-flight pass runs on {quick.backend}, which cannot "
                       f"run here: {e.message}", e.hint) for e in refused]
    return spec, quick, []


def on_preflight(values: Mapping[str, Any],
                 check: Any) -> None:
    """Form callback: :func:`preflight_check` the form and queue its pre-flight job on this
    host, or keep the errors for display."""
    spec, quick, errors = preflight_check(values, check)
    st.session_state[state.BUILDER_ERRORS] = errors
    st.session_state[state.BUILDER_CHECKED] = values
    if spec is None or quick is None:
        return
    job_id = cached.job_manager().submit(quick)
    state.add_own_job(job_id)
    st.session_state[state.BUILDER_PREFLIGHT] = {"job": job_id, "planned": spec.to_json(),
                                                 "ncu_form": dict(values) if is_pilot(values)
                                                 else None}


def done_seconds(spec: JobSpec) -> float | None:
    """The time estimate (s) of this session's Pre-flight where it is done and was of ``spec``
    itself (its spec hash), for Run's size check (:func:`app.core.job_size.estimate`); None
    otherwise (none, still running, failed, another spec, or a pilot for Nsight Compute, whose
    estimate is of the ncu job its runs make)."""
    entry = st.session_state.get(state.BUILDER_PREFLIGHT)
    if not entry or entry.get("ncu_form") or (
            validate_spec(entry["planned"]).spec_hash() != spec.spec_hash()):
        return None
    bundle = cached.bundle_for(entry["job"])
    if bundle is None or bundle.status != JobStatus.DONE:
        return None
    found = preflight.read_preflight(bundle.table("launches"), bundle.manifest, spec)
    return float(found.estimate["seconds"])


def render_preflight() -> None:
    """The Pre-flight expander: the pass's state while it waits or runs, as the job panel says
    it (the job manager's, which the manifest lags: :func:`app.ui.job_status.state_of`; it said
    "running" of a queued pass), then its findings."""
    entry = st.session_state.get(state.BUILDER_PREFLIGHT)
    if not entry:
        return
    with st.expander("Pre-flight", expanded=True, key=state.key("builder", "preflight-box")):
        bundle = cached.bundle_for(entry["job"])
        status = job_status.state_of(entry["job"], JobStatus.QUEUED if bundle is None
                                     else bundle.status)
        if bundle is None or not status.finished:
            st.info(f"Pre-flight job {esc(entry['job'])} is {status} ({preflight.CALLS} calls "
                    "per config); its findings appear here when it is done.",
                    icon=":material/hourglass_top:")
            return
        if status != JobStatus.DONE:
            err = bundle.error or {}
            st.error(f"Pre-flight {esc(str(status))}: {esc(err.get('message', ''))}",
                     icon=":material/error:")
            return
        if bundle.status != JobStatus.DONE:  # the manager settled it before its files were read
            st.info(f"Pre-flight job {esc(entry['job'])} is done; its findings appear here once "
                    "its files are read (open this box again if they do not).",
                    icon=":material/hourglass_top:")
            return
        planned = validate_spec(entry["planned"])
        if entry.get("ncu_form"):
            planned = _pilot(bundle, entry["ncu_form"]) or planned
        _findings(bundle, planned)


def _pilot(bundle: Any, form: Mapping[str, Any]) -> Any:
    """The pilot's runs for the Nsight Compute job, and a button that puts them in Runs;
    returns that ncu job's spec (for the estimate), None when the form does not make one."""
    chosen = preflight.ncu_runs(bundle.manifest)
    if chosen is None:
        return None
    runs, taken = chosen
    target = ((bundle.manifest.get("spec") or {}).get("run_target") or {}).get("rel_ci95_pct")
    st.info(f"Runs for Nsight Compute from this CUPTI pass: the configs needed "
            f"{', '.join(map(str, taken))} runs for a CI95 of ± {target} % (CUPTI durations). "
            f"Nsight Compute gives every config the same runs: **{runs}**.",
            icon=":material/info:")
    st.button(f"Use {counted(runs, 'run')}", key=state.key("builder", "preflight-use-runs"),
              on_click=_use_runs, args=(runs,))
    spec, _errors = spec_form.to_job_spec({**form, "runs": str(runs)},
                                          cached.kernel_catalog()[0])
    return spec


def _use_runs(runs: int) -> None:
    st.session_state[state.key("builder", "runs")] = str(runs)


def _findings(bundle: Any, planned: Any) -> None:
    found = preflight.read_preflight(bundle.table("launches"), bundle.manifest, planned)
    st.caption(f"Measured with {esc(bundle.backend)}: {esc(bundle.measurement)}."
               + (" The host timer sees no GPU kernels: one launch per annotation, no kernel "
                  "sets to compare." if bundle.host_timer else ""))
    for flag in found.flags:
        st.warning(esc(flag), icon=":material/warning:")
    if not found.flags:
        st.success("The same launches in the first and second call and in every config.",
                   icon=":material/check:")
    est = found.estimate
    size = (f", report about {est['report_bytes'] / 1e6:.1f} MB" if est["report_bytes"]
            else "")
    # the runs as the job panel and Run's size check count them, then the launches profiled
    # in them (a run times every region of its kernel once, and a region may launch several)
    st.markdown(f"**Planned job ({esc(planned.backend)}):** "
                f"{counted(job_size.job_runs(planned), 'run')} "
                f"({counted(len(planned.configs), 'config')} × "
                f"{counted(planned.runs, 'run')} per config × "
                f"{numbers.counted(len(planned.kernels), 'kernel')}, as the job panel counts "
                f"them), "
                f"{est['launches']:,} profiled launches in them (every kernel launch of every "
                f"region); about {est['seconds']:g} s{size} ({esc(est['note'])}).")
    st.dataframe(found.counts, key=state.key("builder", "preflight-counts"), hide_index=True)

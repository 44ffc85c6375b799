"""The fields a backend does not use (a fresh user's find: the GPU options were enabled and sent
with a cpu job): greyed out with the reason, said at the top of Options, and left out of the job,
by one rule both ways (the torch threads on a GPU backend: test_page_job_builder_threads.py)."""

from __future__ import annotations

from apptest_helpers import texts, unescape
from app.core import spec_form
from app.sidebar import job_builder
from app.ui import cached

#: The GPU-only fields drawn as select boxes (key suffix -> a value other than the default).
SELECTS = {"metric_preset": "bound", "cache_control": "none", "clock_control": "base",
           "replay_mode": "range", "thermal_mode": "manual"}
#: The GPU-only fields typed as text.
TYPED = {"extra_metrics": "l1tex__t_bytes.sum", "thermal_wait": "5", "thermal_cont": "30",
         "thermal_timeout": "60", "gpu": "0"}


def _errors(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [unescape(e.value) for e in at.sidebar.error]


def test_a_cpu_job_carries_no_gpu_only_value_the_user_set(store, app, one_gpu) -> None:
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.text_input(key="builder-sizes").set_value("32")
    at.text_input(key="builder-runs").set_value("2")
    for field, value in SELECTS.items():
        at.selectbox(key=f"builder-{field}").set_value(value)
    for field, value in TYPED.items():
        at.text_input(key=f"builder-{field}").set_value(value)
    at.multiselect(key="builder-collectors").set_value(["sm_clock"])
    at.button(key="builder-submit").click().run()  # an ncu job with all of them
    assert not at.exception and not _errors(at), _errors(at)
    (gpu_job,) = cached.job_manager().snapshot()
    assert (gpu_job.spec.cache_control, gpu_job.spec.thermal_wait) == ("none", 5)
    at.selectbox(key="builder-backend").set_value("cpu").run()  # no Run: greyed at once
    for field in (*SELECTS, *TYPED):
        widget = at.get("selectbox" if field in SELECTS else "text_input")
        (box,) = [w for w in widget if w.key == f"builder-{field}"]
        assert box.disabled and box.help.startswith(
            "Greyed out: not sent with the cpu backend, which runs on no GPU."), field
        assert box.value == {**SELECTS, **TYPED}[field], "kept for the next GPU job"
    assert not at.text_input(key="builder-cpu_threads").disabled
    assert ("The cpu backend runs on no GPU: the greyed-out fields (and Metrics above) are not "
            "sent with its jobs, nor the built-in (NVML) info collectors (your own are).") \
        in texts(at)
    at.button(key="builder-submit").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    (cpu_job,) = [j for j in cached.job_manager().snapshot() if j.job_id != gpu_job.job_id]
    default = {**job_builder.form_defaults("cpu", cached.kernel_catalog()[0]), "sizes": "32",
               "runs": "2"}
    spec, errors = spec_form.to_job_spec(default, cached.kernel_catalog()[0])
    assert errors == [] and cpu_job.spec == spec  # the default form's job: its hash too
    assert cpu_job.spec.collectors == ()

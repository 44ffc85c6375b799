"""The form's Backend box says which backends cannot run here, by the check a link's
``?backend=`` and Run use (a fresh user's find, s20: on a machine without a GPU ncu, cupti and
events were offered unmarked, and a pick of ncu written to the link was refused on reload); and
each backend greys out what it does not use, by one table (backends.unused), cupti and events
too (they were sent clock and replay control)."""

from __future__ import annotations

from apptest_helpers import texts, unescape
from app.core import spec_form
from app.ui import cached

NO_GPU = "no NVIDIA GPU visible to NVML"


def _errors(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [unescape(e.value) for e in at.sidebar.error]


def test_backends_that_cannot_run_here_are_marked_with_the_links_reason(store, app) -> None:
    at = app()  # this machine: no NVIDIA GPU
    assert not at.exception, at.exception
    box = at.selectbox(key="builder-backend")
    assert box.options == ["ncu ✕", "cupti ✕", "events ✕", "cpu"]  # whole in the narrow box
    assert box.value == "cpu" and f"ncu: GPU kernel duration and counters (Nsight Compute) " \
        f"(✕ cannot run here: {NO_GPU})" in box.help
    assert "cannot run here" not in texts(at)  # cpu runs here: no caption
    box.set_value("ncu").run()
    assert not at.exception, at.exception
    (said,) = [unescape(c.value) for c in at.sidebar.caption if "cannot run here" in c.value]
    assert said.endswith(f"ncu cannot run here: {NO_GPU}. Fix: run on a machine with an NVIDIA "
                         "GPU and driver."), said
    refused = spec_form.refusal(cached.env_report(), "ncu")
    assert refused is not None and f"{refused[0]}. Fix: {refused[1]}." in said
    link = app(query={"backend": "ncu"})  # the link's message: the same check, the same words
    assert any(f"ncu in the link cannot run here ({refused[0]})" in e
               and f"Fix: {refused[1]}." in e for e in _errors(link)), _errors(link)


def test_a_backend_that_runs_here_is_not_marked(store, app, one_gpu) -> None:
    at = app()
    assert at.selectbox(key="builder-backend").options[0] == "ncu"
    assert at.selectbox(key="builder-backend").value == "ncu"


def test_cupti_and_events_grey_out_what_they_do_not_apply(store, app, one_gpu) -> None:
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    at.selectbox(key="builder-backend").set_value("cupti").run()
    for field in ("clock_control", "replay_mode", "metric_preset"):
        box = at.selectbox(key=f"builder-{field}")
        assert box.disabled and box.help.startswith(
            "Greyed out: not sent with the cupti backend, which "
            + ("records its duration only." if field == "metric_preset"
               else "does not apply it.")), (field, box.help)
    assert not at.selectbox(key="builder-cache_control").disabled
    assert not at.selectbox(key="builder-thermal_mode").disabled
    assert ("The cupti backend records its duration only (Metrics above, Extra metrics (Nsight "
            "Compute names)), does not apply Clock control or Replay mode and runs on a GPU "
            "(Torch threads (cpu backend)): the greyed-out fields are not sent with its jobs.") \
        in texts(at)
    at.selectbox(key="builder-backend").set_value("events").run()
    assert at.selectbox(key="builder-thermal_mode").disabled
    assert at.text_input(key="builder-thermal_wait").disabled
    assert not at.text_input(key="builder-gpu").disabled
    assert "nor the built-in (NVML) info collectors (your own are)." in texts(at)

"""The form's "Torch threads (cpu backend)" (the spec's ``cpu_threads``): drawn under Options,
sent with the cpu backend and timed with by the worker, named by its label when wrong, and
never sent by a GPU backend's form (they ignore it)."""

from __future__ import annotations

import pytest

from apptest_helpers import texts, unescape, wait_until
from app.sidebar import job_builder
from app.ui import cached
from profiling_worker.bundle.schema.spec import MAX_CPU_THREADS, whole_number_error

LABEL = "Torch threads (cpu backend)"


def _fill(at, backend: str, threads: str) -> None:
    """Open Options (the field is there), choose ``backend`` (its greyed fields follow it at
    once), fill a small matmul job and click Run."""
    at.session_state["builder-options"] = True
    at.run()
    at.selectbox(key="builder-backend").set_value(backend).run()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.text_input(key="builder-sizes").set_value("32")
    at.text_input(key="builder-runs").set_value("2")
    at.text_input(key="builder-cpu_threads").set_value(threads)
    at.button(key="builder-submit").click().run()


def _errors(at) -> list[str]:
    return [unescape(e.value) for e in at.sidebar.error]


def test_the_torch_threads_field_reaches_the_cpu_job_and_its_timing(store, app) -> None:
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    box = at.text_input(key="builder-cpu_threads")
    assert (box.label, box.value, box.placeholder) == (LABEL, "1", "1 (default)")
    assert "cpu backend only" in box.help
    assert f"This host has {job_builder.usable_cpus()} usable CPU" in box.help
    _fill(at, "cpu", "2")
    assert not at.exception and not _errors(at), _errors(at)
    job_id = at.session_state["sidebar-job"]
    assert cached.job_manager().get(job_id).spec.cpu_threads == 2
    wait_until(lambda: not cached.job_manager().get(job_id).active)
    bundle = cached.bundle_for(job_id)
    assert bundle is not None and bundle.status == "done", bundle and bundle.error
    assert bundle.job_spec is not None and bundle.job_spec.cpu_threads == 2  # its spec.json
    assert bundle.cpu_threads == 2  # what the worker timed with (backend.cpu_threads)
    assert bundle.measurement == "host wall-clock, not GPU, 2 torch threads"


def test_a_bad_thread_count_is_named_by_its_label(store, app) -> None:
    at = app()
    _fill(at, "cpu", "0")
    (error,) = _errors(at)
    # one wording with Runs' (issue 37), from the check's own function
    said = whole_number_error(0, 1, MAX_CPU_THREADS)
    assert error.startswith(f"**{LABEL}** (spec `cpu_threads`): {said}"), error
    assert cached.job_manager().snapshot() == []




NOTE = "The ncu backend runs on a GPU: the greyed-out Torch threads (cpu backend) is not sent " \
    "with its jobs."


def test_a_gpu_backend_greys_out_the_threads_and_sends_one(store, app, one_gpu) -> None:
    """The spec's note: GPU backends ignore cpu_threads. A count left in the box from a cpu job
    is kept there, greyed out and not sent (the GPU job keeps 1 and its spec hash); the form
    says why."""
    at = app()
    _fill(at, "cpu", "4")  # a cpu job of 4 threads: the count stays in the box
    at.selectbox(key="builder-backend").set_value("ncu").run()
    box = at.text_input(key="builder-cpu_threads")
    assert (box.value, box.disabled) == ("4", True) and "Greyed out: not sent with the ncu " \
        "backend, which runs on a GPU." in box.help
    at.button(key="builder-submit").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    cpu, ncu = sorted(cached.job_manager().snapshot(), key=lambda j: j.spec.backend)
    assert (cpu.spec.cpu_threads, ncu.spec.backend, ncu.spec.cpu_threads) == (4, "ncu", 1)
    assert NOTE in texts(at)


def test_choosing_a_backend_greys_out_and_says_at_once_what_is_not_sent(store, app,
                                                                         one_gpu) -> None:
    """A fresh user's find: the note came only after Run or Pre-flight, for a count typed once
    a GPU backend was chosen (the field sits inside the form, whose widgets a browser sends on
    submit only). The note and the greyed fields now follow the backend alone, whose box sits
    outside the form: choosing it reruns the app, so both follow at once, and on a GPU backend
    no count can be typed (one rule both ways: the cpu backend greys out the GPU's fields)."""
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    backend = at.selectbox(key="builder-backend")
    assert backend.proto.form_id == "" and at.selectbox(key="builder-metric_preset").proto.form_id == ""
    assert at.text_input(key="builder-cpu_threads").proto.form_id != ""  # still sent with Run
    at.selectbox(key="builder-backend").set_value("cpu").run()  # no Run, no Pre-flight
    assert not at.exception and NOTE not in texts(at)
    assert "The cpu backend runs on no GPU: the greyed-out fields" in texts(at)
    assert not at.text_input(key="builder-cpu_threads").disabled
    assert at.text_input(key="builder-gpu").disabled
    at.selectbox(key="builder-backend").set_value("ncu").run()
    assert not at.exception, at.exception
    assert NOTE in texts(at) and "The cpu backend runs on no GPU" not in texts(at)
    assert at.text_input(key="builder-cpu_threads").disabled
    assert not at.text_input(key="builder-gpu").disabled
    assert cached.job_manager().snapshot() == []  # nothing was sent to say it

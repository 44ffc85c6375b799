"""The form's "Torch threads (cpu backend)" (the spec's ``cpu_threads``): drawn under Options,
sent with the cpu backend and timed with by the worker, named by its label when wrong, and
never sent by a GPU backend's form (they ignore it)."""

from __future__ import annotations

import pytest

from apptest_helpers import texts, unescape, wait_until
from app.sidebar import job_builder
from app.ui import cached

LABEL = "Torch threads (cpu backend)"


def _fill(at, backend: str, threads: str) -> None:
    """Open Options (the field is there), fill a small matmul job and click Run."""
    at.session_state["builder-options"] = True
    at.run()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value(backend)
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
    assert error.startswith(f"**{LABEL}** (spec `cpu_threads`): 0 is not a whole number from 1 "
                            "to 256"), error
    assert cached.job_manager().snapshot() == []




def test_a_gpu_backend_form_sends_one_thread_and_says_so(store, app, one_gpu) -> None:
    """The spec's note: GPU backends ignore cpu_threads. A count left in the box from a cpu job
    is not sent (the GPU job keeps 1 and its spec hash), and the form says why."""
    at = app()
    _fill(at, "ncu", "4")
    assert not at.exception and not _errors(at), _errors(at)
    (job,) = cached.job_manager().snapshot()
    assert (job.spec.backend, job.spec.cpu_threads) == ("ncu", 1)
    assert ("The ncu backend ignores the torch threads (cpu backend only): its jobs are sent "
            "without them.") in texts(at)


NOTE = ("The ncu backend ignores the torch threads (cpu backend only): its jobs are sent "
        "without them.")


def test_choosing_a_gpu_backend_says_at_once_that_the_threads_are_not_sent(store, app,
                                                                          one_gpu) -> None:
    """A fresh user's find: the note came only after Run or Pre-flight, as the backend sat
    inside the form (a browser sends a form's widgets on submit only). The backend (and the
    metric preset beside it) now sits outside the form, so choosing it reruns the app and the
    Options' notes of what is not sent (torch threads, GPU index) follow at once."""
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    backend = at.selectbox(key="builder-backend")
    assert backend.proto.form_id == "" and at.selectbox(key="builder-metric_preset").proto.form_id == ""
    assert at.text_input(key="builder-cpu_threads").proto.form_id != ""  # still sent with Run
    _fill(at, "cpu", "4")  # a cpu job with 4 threads: the count stays in the box
    assert not _errors(at) and NOTE not in texts(at) and "the GPU index is not used" in texts(at)
    at.selectbox(key="builder-backend").set_value("ncu").run()  # no Run, no Pre-flight
    assert not at.exception, at.exception
    assert NOTE in texts(at) and "the GPU index is not used" not in texts(at)
    assert len(cached.job_manager().snapshot()) == 1  # the cpu job alone

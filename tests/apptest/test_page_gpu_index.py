"""The form's GPU index: not silently ignored on the cpu backend, refused when this machine has
no GPU of that index (the worker's own refusal, said before the job is queued)."""

from __future__ import annotations

import pytest

from apptest_helpers import texts, unescape
from app.ui import cached


def _submit(at, backend: str, gpu: str) -> None:
    """Fill the form (the GPU index is under Options) and click Run, as the job-flow tests do."""
    at.session_state["builder-options"] = True  # the Options expander holds the GPU index
    at.run()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value(backend)
    at.text_input(key="builder-sizes").set_value("32")
    at.text_input(key="builder-gpu").set_value(gpu)
    at.button(key="builder-submit").click().run()


def _errors(at) -> list[str]:
    return [unescape(e.value) for e in at.sidebar.error]


def test_gpu_index_on_the_cpu_backend_is_named_not_ignored(store, app) -> None:
    at = app()
    _submit(at, "cpu", "3")
    assert not at.exception
    assert "The cpu backend runs on no GPU: the GPU index is not used" in texts(at)
    (error,) = _errors(at)
    assert "**GPU index**" in error and "the cpu backend runs on no GPU, so GPU index 3" in error
    assert "leave the GPU index at 0" in error
    assert cached.job_manager().snapshot() == []  # nothing was queued
    at.text_input(key="builder-gpu").set_value("0")
    at.button(key="builder-submit").click().run()
    assert not _errors(at)
    (job,) = cached.job_manager().snapshot()
    assert (job.spec.backend, job.spec.gpu) == ("cpu", 0)




def test_gpu_index_the_machine_lacks_is_refused_by_field(store, app, one_gpu) -> None:
    at = app()
    _submit(at, "ncu", "2")
    assert not at.exception
    (error,) = _errors(at)
    assert "**GPU index**" in error and "2 is not a GPU of this machine" in error
    assert "0: NVIDIA H200" in error and "set the GPU index to 0..0" in error
    assert cached.job_manager().snapshot() == []

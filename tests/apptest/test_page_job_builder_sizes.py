"""The sidebar's size fields follow the kernels picked (a fresh user's find: the README's own
kernel, picked in place of matmul, kept matmul's sizes, so the job timed the wrong ones)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apptest_helpers import wait_until
from app.core import spec_form
from app.sidebar.job_builder import error_text, labels
from app.ui import cached
from tests.unit.test_readme import README_KERNELS, readme_file

ROOT = Path(__file__).parents[2]
MATMUL_CPU = "64, 128, 256"  # the bundled kernels' cpu sizes (the backend AppTests get here)
SOFTMAX_CPU = "128, 256, 512"
MY_SCALE = "65536, 1048576"  # the README's my_scale: 1 << 16, 1 << 20


@pytest.fixture
def user_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel folder as a user starts it: the README's scale.py (one parameter, n) and a
    kernel of two parameters (rows, cols: as the bundled softmax_rows)."""
    folder = tmp_path / "my_kernels"
    folder.mkdir()
    (folder / "scale.py").write_text(readme_file(README_KERNELS))
    (folder / "two_params.py").write_text(
        (ROOT / "tests" / "fixtures" / "kernel_files" / "two_params.py").read_text())
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(folder))


def _pick(at, *kernels: str):
    return at.multiselect(key="builder-kernels").set_value(list(kernels)).run()


def _send(at, **fields: str) -> None:
    """Type into the form and press Run, refused for its Runs: the form's text reaches the app
    with Run or Pre-flight only, and no job is queued."""
    for field, text in {**fields, "runs": "none"}.items():
        at.text_input(key=f"builder-{field}").set_value(text)
    at.button(key="builder-submit").click().run()
    assert at.sidebar.error


def _text(at, field: str) -> str:
    return at.text_input(key=f"builder-{field}").value


def test_a_one_parameter_kernel_of_the_user_runs_its_own_sizes(store, app, user_kernels
                                                               ) -> None:
    at = app()
    assert _text(at, "sizes") == MATMUL_CPU
    _pick(at)  # the user's way: Kernels cleared, then their own picked
    _pick(at, "my_scale")
    assert not at.exception
    assert _text(at, "sizes") == MY_SCALE
    assert "my_scale's declared sizes" in at.text_input(key="builder-sizes").help
    at.text_input(key="builder-runs").set_value("2")
    at.button(key="builder-submit").click().run()
    assert not at.sidebar.error
    job = cached.job_manager().get(at.session_state["sidebar-job"])
    assert list(job.spec.configs) == [{"n": 1 << 16}, {"n": 1 << 20}]
    wait_until(lambda: not cached.job_manager().get(job.job_id).active)


def test_typed_sizes_stay_for_the_same_parameter_and_offered_ones_follow(store, app,
                                                                         user_kernels,
                                                                         no_session_state_warning) -> None:
    at = app()
    _pick(at, "softmax")  # the bundled catalog: matmul's sizes had stayed here too
    assert _text(at, "sizes") == SOFTMAX_CPU
    _pick(at, "my_scale", "matmul")  # same parameter, other sizes: the first kernel's
    assert _text(at, "sizes") == MY_SCALE
    assert "my_scale is the first of the kernels picked" in at.text_input(
        key="builder-sizes").help
    _pick(at, "matmul", "my_scale")
    assert _text(at, "sizes") == MATMUL_CPU
    _send(at, sizes="8, 16")
    _pick(at, "my_scale")
    assert _text(at, "sizes") == "8, 16", "sizes the user typed for n are kept"
    at.selectbox(key="builder-backend").set_value("ncu").run()
    assert _text(at, "sizes") == "8, 16"


def test_several_parameters_follow_each_field_on_its_own(store, app, user_kernels,
                                                         no_session_state_warning) -> None:
    at = app()
    _send(at, sizes="8, 16")
    _pick(at, "user_fill2d")  # rows, cols: none typed for them
    assert (_text(at, "param-rows"), _text(at, "param-cols")) == ("8", "32, 64")
    assert at.radio(key="builder-combine").value == "product"
    _pick(at, "softmax_rows")  # the same parameters, the bundled kernel's cpu configs
    assert (_text(at, "param-rows"), _text(at, "param-cols")) == ("64, 512", "512, 64")
    assert at.radio(key="builder-combine").value == "zip"
    _send(at, **{"param-rows": "4, 8"})
    _pick(at, "user_fill2d")
    assert (_text(at, "param-rows"), _text(at, "param-cols")) == ("4, 8", "32, 64")


def test_the_backend_switches_offered_sizes_to_its_own(store, app, user_kernels) -> None:
    at = app()
    _pick(at, "softmax")
    at.selectbox(key="builder-backend").set_value("ncu").run()
    assert _text(at, "sizes") == "1024, 2048, 4096, 8192"  # softmax's GPU sizes


def test_a_link_s_sizes_win_over_the_kernel_s(store, app, user_kernels) -> None:
    at = app(query={"kernels": "my_scale", "sizes": "32, 48"})
    assert _text(at, "sizes") == "32, 48"
    _pick(at, "matmul")
    assert _text(at, "sizes") == "32, 48", "a link's sizes are kept as typed ones"
    at = app(query={"kernels": "my_scale", "sizes": MY_SCALE})  # a reload of the mirrored URL
    _pick(at, "matmul")
    assert _text(at, "sizes") == MATMUL_CPU, "the link held my_scale's own: they follow"


def test_sizes_and_runs_refuse_digits_int_reads_silently(store, app) -> None:
    """Session 21's fresh user: Sizes took ``١٢٨`` and Runs ``1_000`` without a word (Python's
    int() reads both). Run refuses them on their fields, each with the number to type, and
    queues nothing."""
    at = app()
    at.text_input(key="builder-sizes").set_value("١٢٨, 256")
    at.text_input(key="builder-runs").set_value("1_000")
    at.button(key="builder-submit").click().run()
    assert not at.exception
    shown = [e.value for e in at.sidebar.error]
    _, errors = spec_form.to_job_spec({"kernels": ["matmul"], "sizes": "١٢٨, 256",
                                       "runs": "1_000", "backend": "cpu"})
    said = [error_text(err, labels(("n",))) for err in errors]
    assert [err.field for err in errors] == ["runs", "sizes"]
    assert all(line in shown for line in said), (said, shown)
    assert any("type 128" in line for line in said) and any("type 1000" in line for line in said)
    assert not cached.job_manager().snapshot()  # nothing queued

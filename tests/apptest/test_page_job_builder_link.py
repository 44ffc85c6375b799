"""A link's form parameters the form cannot take are said on load, as ``?kernels=nope`` is
(issue 37), never ignored without a word: ``?backend=`` that names no backend or one that cannot
run here (this machine has no GPU: ncu), ``?param-<name>=`` of no parameter of the kernel, any
other parameter the app does not read. A whole-number field of the form says in its help and
its placeholder what leaving it empty means (a fresh user emptied Runs and got 10 runs)."""

from __future__ import annotations

import pytest

from apptest_helpers import texts, unescape
from app.sidebar import job_builder
from profiling_worker.bundle.schema.spec import SPEC_DEFAULTS

LINK_NOTE = "Found in the values the link gave"


def _errors(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [unescape(e.value) for e in at.sidebar.error]


def test_a_backend_the_dashboard_lacks_is_said_and_the_form_keeps_its_own(store, app) -> None:
    at = app(query={"backend": "nonsense"})
    assert not at.exception, at.exception
    shown = _errors(at)
    assert any(e.startswith("**Backend**: 'nonsense' in the link is not one of this "
                            "dashboard's backends (") and "Fix: pick one in the Backend box" in e
               for e in shown), shown
    assert LINK_NOTE in texts(at)
    assert at.selectbox(key="builder-backend").value == "cpu"


def test_a_backend_that_cannot_run_here_is_said_with_its_reason(store, app) -> None:
    at = app(query={"backend": "ncu"})  # this machine: no NVIDIA GPU
    assert not at.exception, at.exception
    shown = _errors(at)
    assert any("ncu in the link cannot run here (no NVIDIA GPU visible to NVML)" in e
               and "Fix: run on a machine with an NVIDIA GPU" in e for e in shown), shown
    assert len([e for e in shown if "Backend" in e]) == 1, shown  # said once
    assert LINK_NOTE in texts(at)
    assert at.selectbox(key="builder-backend").value == "cpu"


def test_a_backend_that_runs_here_fills_the_form_without_a_word(store, app) -> None:
    at = app(query={"backend": "cpu", "runs": "4"})
    assert not at.exception and not at.sidebar.error, _errors(at)
    assert at.selectbox(key="builder-backend").value == "cpu"


def test_a_reload_keeps_the_backend_picked(store, app, one_gpu) -> None:
    """A fresh user's find: the backend picked in the sidebar was not written to the URL (only
    read from it), so a reload put the form back to its own. It travels as ``?backend=`` like
    the sizes and runs: once it differs from the form's own, across a page switch, into the
    reloaded form; the form's own again leaves a clean URL."""
    at = app()
    assert at.selectbox(key="builder-backend").value == "ncu" and "backend" not in at.query_params
    at.selectbox(key="builder-backend").set_value("cpu").run()  # no Run: picked is kept
    assert at.query_params["backend"] == "cpu"
    at.switch_page("app_pages/stability.py").run()
    assert at.query_params.get("backend") == "cpu", "a page switch keeps it"
    again = app(query=dict(at.query_params))  # the reload
    assert not again.exception and not again.sidebar.error, _errors(again)
    assert again.selectbox(key="builder-backend").value == "cpu"
    again.selectbox(key="builder-backend").set_value("ncu").run()
    assert "backend" not in again.query_params


@pytest.mark.parametrize(("query", "said"), [
    ({"color": "red"}, "**URL**: ?color= is not a parameter this dashboard reads: ignored."),
    ({"param-zz": "3"}, "**URL**: ?param-zz= is ignored: the first kernel has one parameter, "
                        "typed in Sizes (?sizes=)."),
    ({"kernels": "batched_matmul", "param-zz": "3"},
     "**URL**: ?param-zz= is ignored: 'zz' is not a parameter of the first kernel's several."),
    ({"kernels": "batched_matmul", "sizes": "64"},
     "**URL**: ?sizes= is ignored: the first kernel has several parameters, each typed in its "
     "own field (?param-batch=, ?param-n=)."),
])
def test_a_parameter_the_form_ignores_is_said(store, app, query, said) -> None:
    at = app(query=query)
    assert not at.exception, at.exception
    shown = _errors(at)
    assert any(e.startswith(said) and f"Fix: {job_builder.LINK_FIX}." in e for e in shown), shown
    assert LINK_NOTE in texts(at)


def test_the_links_own_parameters_say_nothing(store, app) -> None:
    at = app(query={"kernels": "batched_matmul", "param-batch": "2", "param-n": "32",
                    "runs": "3", "backend": "cpu"})
    assert not at.exception and not at.sidebar.error, _errors(at)
    assert at.text_input(key="builder-param-batch").value == "2"


def test_every_whole_number_field_says_what_empty_means(store, app) -> None:
    at = app()
    at.session_state["builder-options"] = True  # the Options box's fields too
    at.run()
    for field in (*job_builder.spec_form.WHOLE_NUMBER_FIELDS,
                  *job_builder.spec_form.RUN_TARGET_FIELDS):
        box = at.text_input(key=f"builder-{field}")
        default = SPEC_DEFAULTS.get(field)
        if field in job_builder.spec_form.RUN_TARGET_FIELDS:
            default = box.placeholder.removesuffix(" (default)")
        said = "nsight-python's default" if default is None else f"{default}, the default"
        assert box.help.endswith(f"Empty: {said}."), (field, box.help)
        assert box.placeholder == ("nsight-python's default" if default is None
                                   else f"{default} (default)"), (field, box.placeholder)


def test_an_empty_sizes_field_is_an_error_naming_it(store, app) -> None:
    at = app()
    at.text_input(key="builder-sizes").set_value("")
    at.button(key="builder-submit").click().run()
    shown = _errors(at)
    assert any(e.startswith("**Sizes (n)**: no sizes given. Fix: ") for e in shown), shown


def test_a_comma_separated_kernels_link_names_each_kernel(store, app) -> None:
    """A fresh user's find (s20): ``?kernels=matmul,softmax`` was read as one kernel named
    "matmul,softmax" and refused; a link lists kernels as the job selector does. An unknown
    one among them is named with the parameter, the known ones kept."""
    at = app(query={"kernels": "softmax,matmul"})
    assert not at.exception and not at.sidebar.error, _errors(at)
    assert at.multiselect(key="builder-kernels").value == ["softmax", "matmul"]
    at = app(query={"kernels": "softmax,nope"})
    shown = _errors(at)
    assert any(e.startswith("**Kernels**: ?kernels= in the link names 'nope': not a kernel of "
                            "this dashboard's catalog. Fix: choose them in the Kernels box; a link "
                            "names them by id, comma-separated (?kernels=matmul,softmax).")
               for e in shown), shown
    assert at.multiselect(key="builder-kernels").value == ["softmax"]


def test_a_parameter_given_twice_is_said_and_the_rest_of_the_link_kept(store, app) -> None:
    """``?runs=3&runs=4`` read the last without a word."""
    at = app(query={"runs": ["3", "4"], "sizes": "48"})
    assert not at.exception, at.exception
    shown = _errors(at)
    assert any(e.startswith("**URL**: ?runs= is given 2 times ('3', '4'): only the last, '4', "
                            "is read. Fix: give ?runs= once.") for e in shown), shown
    assert at.text_input(key="builder-runs").value == "4"
    assert at.text_input(key="builder-sizes").value == "48"


def test_a_size_too_large_for_this_host_names_the_links_parameter(store, app) -> None:
    """``?sizes=99999999999``: the memory check Run makes, on load, naming what the link held."""
    at = app(query={"sizes": "99999999999"})
    assert not at.exception, at.exception
    shown = _errors(at)
    assert any(e.startswith("**Sizes (n)**: kernel matmul at n=99999999999 holds ")
               and "(the link's ?sizes=99999999999). Fix: choose smaller Sizes (n)." in e
               for e in shown), shown

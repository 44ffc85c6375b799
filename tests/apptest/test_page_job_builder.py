"""The sidebar form: a real cpu job end to end, and every bad input named by field."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts, trace_values, wait_until
from app.ui import cached


def _fill(at, **values) -> None:
    for field, value in values.items():
        key = f"builder-{field}"
        if field in ("kernels", "annotations"):
            at.multiselect(key=key).set_value(value)
        elif field in ("runs", "warmup", "gpu"):
            at.number_input(key=key).set_value(value)
        elif field in ("backend", "size_preset", "metric_preset"):
            at.selectbox(key=key).set_value(value)
        else:
            at.text_input(key=key).set_value(value)


def _submit(at) -> None:
    at.button(key="builder-submit").click().run()


def test_submit_real_cpu_job_then_chart(store, app) -> None:
    at = app()
    assert at.selectbox(key="builder-backend").value == "cpu"  # best available here
    _fill(at, kernels=["matmul"], backend="cpu", sizes="32, 64", runs=3)
    _submit(at)
    assert not at.exception
    job_id = at.session_state["sidebar-job"]
    assert at.query_params["job"] == job_id
    assert f"Queued job {job_id}" in texts(at)
    manager = cached.job_manager()
    wait_until(lambda: not manager.get(job_id).active)
    assert manager.get(job_id).status == "done"
    at.run()
    assert not at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["title"]["text"].endswith("(host wall-clock, not GPU)")
    assert [t["name"] for t in spec["data"]] == ["fp32", "fp16", "bf16"]
    assert trace_values(spec["data"][0], "x") == [32.0, 64.0]
    assert f"`{job_id}`" in texts(at)  # the job panel lists it


BAD_INPUTS = [
    ({"sizes": "abc"}, "sizes", "'abc' is not a whole number"),
    ({"sizes": "-4"}, "sizes", "-4 is not greater than 0"),
    ({"sizes": "0"}, "sizes", "0 is not greater than 0"),
    ({"sizes": ""}, "sizes", "no sizes given"),
    ({"kernels": []}, "kernels", "is empty"),
    ({"runs": 0}, "runs", "is not a whole number from 1"),
    ({"extra_metrics": "bogus"}, "metrics", "unknown metric name(s): bogus"),
]


@pytest.mark.parametrize("change, field, message", BAD_INPUTS,
                         ids=[f"{f}-{list(c.values())[0]!s}" for c, f, _ in BAD_INPUTS])
def test_bad_input_names_the_field_and_keeps_results(seeded, app, change, field, message) -> None:
    at = app()
    before = at.session_state["sidebar-job"]
    _fill(at, **{"kernels": ["matmul"], "sizes": "32, 64", "runs": 3, **change})
    _submit(at)
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any(f"**{field}**" in e and message in e for e in errors), errors
    assert cached.job_manager().snapshot() == []  # nothing was queued
    assert at.session_state["sidebar-job"] == before  # earlier results still listed, selected
    assert any(before in label for label in at.selectbox(key="sidebar-job").options)
    assert plotly_specs(at)  # and still drawn
    key = f"builder-{next(iter(change))}"
    assert at.session_state[key] == change[next(iter(change))]  # the input is kept

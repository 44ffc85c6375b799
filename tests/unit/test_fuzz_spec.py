"""Fuzzed job specs: 10,000 generated raw specs through ``validate_spec`` and 10,000 generated
sidebar forms through ``spec_form.to_job_spec``. Each ends as a JobSpec or as field-named
errors (SpecInvalid / FieldError list), never another exception, never a hang (every call is
timed). Valid specs survive a JSON round trip unchanged."""

from __future__ import annotations

import json
import math
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import spec_form
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema import spec as S
from profiling_worker.bundle.schema.spec import FieldError, JobSpec, SpecInvalid, validate_spec

MAX_CALL_S = 10.0  # CPU seconds, far above the ~0.1 ms a call takes: a hang guard, not a speed target
# 10,000 specs per test: 1,000 Hypothesis examples of BATCH specs each (a tenth of the
# per-example overhead; ~1 min per test on two busy cores). KPROF_FUZZ_SPECS changes the count.
BATCH = 10
FUZZ = settings(max_examples=max(1, int(os.environ.get("KPROF_FUZZ_SPECS", "10000")) // BATCH), deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=5)
sizes = st.one_of(st.integers(-5, 1 << 40), st.sampled_from([32, 64, 1024, 4096]))
kernel_ids = st.one_of(st.sampled_from(sorted(CATALOG)), st.text(max_size=12))
metric_names = st.one_of(st.sampled_from(["gpu__time_duration.sum", "dram__bytes_read.sum",
                                          "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                          "host__time_duration.sum", "not a metric",
                                          "../../etc/passwd"]), st.text(max_size=40))
plausible = {
    "kernels": st.lists(kernel_ids, max_size=3),
    "configs": st.lists(st.dictionaries(st.sampled_from(["n", "m", "k", "block_size", "x"]),
                                        st.one_of(sizes, json_values), max_size=3), max_size=4),
    "runs": st.one_of(st.integers(-3, 20_000), json_values),
    "metrics": st.lists(metric_names, max_size=4),
    "backend": st.sampled_from(["ncu", "cupti", "cpu", "NCU", "", "gpu"]),
    "annotations": st.one_of(st.none(), st.lists(st.text(max_size=10), max_size=3)),
    "cache_control": st.sampled_from(["all", "none", "some"]),
    "clock_control": st.sampled_from(["none", "base", "boost"]),
    "replay_mode": st.sampled_from(["kernel", "range", "app"]),
    "thermal_mode": st.sampled_from(["auto", "manual", "off", "on"]),
    "thermal_wait": st.one_of(st.none(), st.integers(-5, 200)),
    "thermal_cont": st.one_of(st.none(), st.integers(-5, 200)),
    "thermal_timeout": st.one_of(st.none(), st.integers(-5, 5000)),
    "collectors": st.lists(st.sampled_from([*S.COLLECTORS, "fan"]), max_size=3),
    "warmup": st.integers(-2, 200),
    "gpu": st.one_of(st.integers(-2, 100), json_values),
    "nvml_interval_ms": st.integers(0, 20_000),
    "label": st.one_of(st.text(max_size=300), json_values),
}
raw_specs = st.one_of(
    st.fixed_dictionaries({}, optional={**plausible, "bogus": json_values}),
    st.fixed_dictionaries({}, optional={k: json_values for k in plausible}),
    json_values,  # not even an object
)


def _timed(fn, *args):
    t0 = time.process_time()  # this process's CPU time: other jobs on a busy machine do not count
    try:
        return fn(*args)
    finally:
        assert time.process_time() - t0 < MAX_CALL_S, "a call took too long (hang?)"


@FUZZ
@given(batch=st.lists(st.tuples(raw_specs, st.booleans()), min_size=BATCH, max_size=BATCH))
def test_validate_spec_never_raises_anything_else(batch) -> None:
    for raw, with_catalog in batch:
        _check_one_spec(raw, CATALOG if with_catalog else None)


def _check_one_spec(raw, known) -> None:
    try:
        spec = _timed(validate_spec, raw, known)
    except SpecInvalid as exc:
        assert exc.errors and all(isinstance(e, FieldError) and e.message and e.hint
                                  for e in exc.errors)
        return
    assert isinstance(spec, JobSpec)
    data = json.loads(json.dumps(spec.to_json()))
    assert validate_spec(data, known) == spec  # what the worker reads back is the same job
    assert len(spec.spec_hash()) == 16
    assert spec.runs >= 1 and spec.configs and spec.kernels


# Values of the types the builder's widgets produce (multiselect: list of str, text_input /
# text_area: str, selectbox: one of its options), anything in them; whole-number fields are
# text typed by the user (or an int, as a test or an older session passes them).
forms = st.fixed_dictionaries({}, optional={
    "kernels": st.lists(kernel_ids, max_size=3),
    "annotations": st.lists(st.text(max_size=8), max_size=2),
    "size_preset": st.sampled_from(list(spec_form.SIZE_PRESETS)),
    "sizes": st.one_of(st.text(max_size=60),
                       st.lists(sizes, max_size=6).map(lambda v: ", ".join(map(str, v))),
                       st.sampled_from(['[{"n": 4096, "block_size": 256}]', "[{}]", "[1,2]",
                                        '{"n": 1}', "1e9999", "-1", "0x10", "1_000", "NaN",
                                        "٣٢", "32,,64", "[" * 50, '[{"n": 1e400}]',
                                        '[{"n": NaN}]', '[{"n": -Infinity}]', '[{"n": [1]}]',
                                        '[{"n": {"a": 1}}]', '[{"n": null}]', '[{"": 1}]'])),
    "runs": st.one_of(st.integers(-3, 20_000), st.integers(-3, 20_000).map(str), st.text(max_size=12),
                      st.sampled_from(["1e6", "2.5", " 12 ", "12345678901234567890123", "٣",
                                       "0x10", "1_000", "+7", "", "NaN"])),
    "backend": st.sampled_from(["ncu", "cupti", "cpu"]),
    "metric_preset": st.sampled_from(list(S.METRIC_PRESETS)),
    "extra_metrics": st.one_of(st.text(max_size=80), st.lists(metric_names).map("\n".join)),
    "cache_control": st.sampled_from(S.CACHE_CONTROLS),
    "clock_control": st.sampled_from(S.CLOCK_CONTROLS),
    "thermal_mode": st.sampled_from(S.THERMAL_MODES),
    "collectors": st.lists(st.sampled_from(S.COLLECTORS), max_size=3),
    "warmup": st.one_of(st.integers(-2, 200), st.text(max_size=6)),
    "gpu": st.one_of(st.integers(-2, 100), st.text(max_size=6)),
    "label": st.text(max_size=300),
})


@FUZZ
@given(batch=st.lists(forms, min_size=BATCH, max_size=BATCH))
def test_to_job_spec_returns_a_spec_or_field_errors(batch) -> None:
    for form in batch:
        _check_one_form(form)


def _check_one_form(form) -> None:
    spec, errors = _timed(spec_form.to_job_spec, form, spec_form.builtin_catalog())
    assert (spec is None) == bool(errors)
    assert all(isinstance(e, FieldError) and e.field and e.message for e in errors)
    if spec is not None:
        assert isinstance(spec, JobSpec)
        assert all(not isinstance(v, float) or math.isfinite(v)
                   for c in spec.configs for v in c.values())


def test_deeply_nested_sizes_text_is_a_field_error() -> None:
    spec, errors = spec_form.to_job_spec({"kernels": ["matmul"], "sizes": "[" * 100_000,
                                          "backend": "cpu"})
    assert spec is None and errors[0].field == "sizes"

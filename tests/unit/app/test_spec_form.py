"""The sidebar dict -> JobSpec: sizes parsing and field-named errors."""

from __future__ import annotations

import re

import pytest

from app.core import spec_form

FORM = {"kernels": ["matmul"], "annotations": [], "size_preset": "typed", "sizes": "32, 64",
        "runs": 3, "backend": "cpu", "metric_preset": "timing", "extra_metrics": "",
        "cache_control": "all", "clock_control": "none", "thermal_mode": "auto", "warmup": 1,
        "gpu": 0, "label": ""}
#: The same form on a GPU backend: the fields only a GPU backend uses are sent with it.
GPU_FORM = {**FORM, "backend": "ncu"}


def test_valid_form() -> None:
    spec, errors = spec_form.to_job_spec(FORM)
    assert errors == []
    assert spec.configs == ({"n": 32}, {"n": 64}) and spec.runs == 3 and spec.backend == "cpu"
    assert spec.metrics == ("host__time_duration.sum",)


@pytest.mark.parametrize("sizes, text", [("abc", "'abc' is not a whole number"),
                                         ("-4", "-4 is not greater than 0"),
                                         ("0", "0 is not greater than 0"),
                                         ("", "no sizes given"), ("32, x", "'x'")])
def test_bad_sizes_name_the_sizes_field(sizes: str, text: str) -> None:
    spec, errors = spec_form.to_job_spec({**FORM, "sizes": sizes})
    assert spec is None
    assert [e.field for e in errors] == ["sizes"]
    assert text in errors[0].message


@pytest.mark.parametrize("change, field", [({"kernels": []}, "kernels"), ({"runs": 0}, "runs"),
                                           ({"extra_metrics": "not a metric"}, "metrics"),
                                           ({"gpu": -1}, "gpu")])
def test_schema_errors_keep_their_field(change: dict, field: str) -> None:
    spec, errors = spec_form.to_job_spec({**GPU_FORM, **change})
    assert spec is None and field in [e.field for e in errors]


@pytest.mark.parametrize("field, typed, text", [
    ("runs", "1e6", "'1e6' is not a whole number from 1 to 10,000"),  # a number input read 1
    ("runs", "2.5", "'2.5' is not a whole number"),  # a number input read 2
    ("runs", "12345678901234567890123", "out of range: give a whole number from 1 to 10,000"),
    ("runs", "0x10", "'0x10' is not a whole number"),
    ("warmup", "three", "'three' is not a whole number from 0 to 100"),
    ("gpu", "1.0", "'1.0' is not a whole number from 0 to 63"),
    ("thermal_wait", "101", "101 is out of range"),
])
def test_whole_number_fields_typed_as_text_name_what_is_wrong(field: str, typed: str,
                                                                text: str) -> None:
    spec, errors = spec_form.to_job_spec({**GPU_FORM, field: typed})
    assert spec is None and [e.field for e in errors] == [field]
    assert text in errors[0].message


def test_whole_number_fields_read_plain_digits_and_empty_as_the_default() -> None:
    from profiling_worker.bundle.schema.spec import SPEC_DEFAULTS

    spec, errors = spec_form.to_job_spec({**GPU_FORM, "runs": " 25 ", "warmup": "+2", "gpu": "0",
                                          "thermal_timeout": ""})
    assert errors == [] and (spec.runs, spec.warmup, spec.gpu) == (25, 2, 0)
    assert spec.thermal_timeout is None  # empty: nsight-python's default
    spec, errors = spec_form.to_job_spec({**FORM, "runs": "", "warmup": " "})
    assert errors == [] and (spec.runs, spec.warmup) == (SPEC_DEFAULTS["runs"],
                                                          SPEC_DEFAULTS["warmup"])  # not 1 / 0
    assert spec_form.whole_number("٣") == "٣"  # digits of other scripts are named, not read


def test_presets() -> None:
    spec, _ = spec_form.to_job_spec({**FORM, "size_preset": "cpu", "sizes": "garbage"})
    assert [c["n"] for c in spec.configs] == [64, 128, 256]
    raw, _ = spec_form.build_raw_spec({**FORM, "backend": "ncu", "metric_preset": "memory",
                                       "extra_metrics": "l1tex__t_bytes.sum"})
    assert raw["metrics"] == ["gpu__time_duration.sum", "dram__bytes_read.sum",
                              "dram__bytes_write.sum", "l1tex__t_bytes.sum"]


def test_a_backend_that_cannot_run_here_is_refused_at_submit():
    from app.core.spec_form import backend_errors, builtin_catalog, to_job_spec

    spec, errors = to_job_spec({"kernels": ["matmul"], "sizes": "64", "runs": 2,
                                "backend": "ncu"}, builtin_catalog())
    assert spec is not None and not errors
    report = {"backends": {"ncu": {"available": False, "reason": "no NVIDIA GPU visible to NVML",
                                   "fix": "run on a machine with an NVIDIA GPU and driver"}}}
    (err,) = backend_errors(spec, report)
    assert err.field == "backend" and "no NVIDIA GPU" in err.message and "driver" in err.hint
    assert backend_errors(spec, {"backends": {"ncu": {"available": True}}}) == []


def test_sizes_larger_than_the_gpu_are_refused_at_submit():
    """Issue 11, case 7: n = 10^12 is refused in the sidebar, on the sizes field, with the
    GPU's memory from the worker's environment report."""
    from app.core.spec_form import backend_errors, builtin_catalog, to_job_spec

    spec, errors = to_job_spec({"kernels": ["matmul"], "sizes": "4096, 1000000000000", "runs": 2,
                                "backend": "ncu"}, builtin_catalog())
    assert spec is not None and not errors  # the form alone cannot know the GPU
    report = {"backends": {"ncu": {"available": True}},
              "environment": {"gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-a",
                                        "memory_mib": 143771}]}}
    (err,) = backend_errors(spec, report)
    assert err.field == "sizes" and "more than the 140.40 GiB of GPU NVIDIA H200" in err.message
    # issue 37: a huge size reads without fractional digits ("111,758,708,951,622.25 GiB")
    assert re.search(r"holds [\d,]+ GiB at once", err.message), err.message
    small, _ = to_job_spec({"kernels": ["matmul"], "sizes": "4096", "runs": 2, "backend": "ncu"},
                           builtin_catalog())
    assert backend_errors(small, report) == []


def test_kernels_to_ignore_one_a_line_and_bad_pattern_named() -> None:
    name = "void at::native::vectorized_elementwise_kernel<(int)4, float>"  # holds a comma
    spec, errors = spec_form.to_job_spec({**FORM, "ignore_kernels": f"{name}\n\n re:fill \n"})
    assert errors == [] and spec.ignore_kernels == (name, "re:fill")
    assert "ignore_kernels" not in spec_form.build_raw_spec(FORM)[0]  # empty: not in the spec
    spec, errors = spec_form.to_job_spec({**FORM, "ignore_kernels": "ok\nre:("})
    assert spec is None and [e.field for e in errors] == ["ignore_kernels[1]"]


def test_a_gpu_index_the_worker_does_not_see_is_refused_at_submit():
    from app.core.spec_form import backend_errors, builtin_catalog, to_job_spec

    report = {"backends": {"ncu": {"available": True}, "cpu": {"available": True}},
              "environment": {"gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-a"},
                                       {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-b"}],
                              "visible_gpus": [{"index": 0, "name": "NVIDIA H200",
                                                "uuid": "GPU-b"}]}}  # CUDA_VISIBLE_DEVICES=1
    form = {"kernels": ["matmul"], "sizes": "64", "runs": 2, "backend": "ncu"}
    spec, _ = to_job_spec({**form, "gpu": "1"}, builtin_catalog())
    (err,) = backend_errors(spec, report)
    assert err.field == "gpu" and "1 is not a GPU of this machine; the worker sees 1" in err.message
    assert "0..0" in err.hint
    spec, _ = to_job_spec({**form, "gpu": "0"}, builtin_catalog())
    assert backend_errors(spec, report) == []
    no_list = {"backends": {"ncu": {"available": True}}}  # the report lists no GPU: the worker says
    spec, _ = to_job_spec({**form, "gpu": "5"}, builtin_catalog())
    assert backend_errors(spec, no_list) == []


@pytest.mark.parametrize("field, text", [("auto_min_runs", "abc"), ("auto_ci95_pct", "-1")])
def test_a_bad_auto_runs_field_is_refused_even_with_whole_number_runs(field: str, text: str
                                                                      ) -> None:
    """A new user's find: with Runs 3, "abc" in Auto min runs or -1 as the CI95 target ran the
    job silently (run_target left out). The field is named; with good values the job runs."""
    spec, errors = spec_form.to_job_spec({**FORM, "runs": 3, field: text})
    assert spec is None and [e.field for e in errors] == [
        f"run_target.{spec_form.RUN_TARGET_FIELDS[field]}"]
    good, none = spec_form.to_job_spec({**FORM, "runs": 3, "auto_min_runs": "5"})
    assert none == [] and good is not None and good.run_target is None and good.runs == 3


@pytest.mark.parametrize("preset", ["gpu", "cpu"])
def test_an_unknown_kernel_is_said_without_a_knock_on_sizes_error(preset: str) -> None:
    """A kernel the catalog lacks (a stale session, a removed user file) has no preset sizes:
    the form said "sizes: no configs (sizes) given" beside "unknown kernel(s)"."""
    spec, errors = spec_form.to_job_spec({**FORM, "kernels": ["nope"], "size_preset": preset})
    assert spec is None
    assert [(e.field, e.message) for e in errors] == [("kernels", "unknown kernel(s): nope")]


def test_cpu_threads_typed_reach_a_cpu_spec_and_its_json_round_trip() -> None:
    """The form's "Torch threads (cpu backend)" (typed as text like the other whole numbers):
    a cpu job times with them, and the spec the job stores (``spec.json``) reads back with
    them; empty is the default, 1."""
    from profiling_worker.bundle.schema.spec import validate_spec

    spec, errors = spec_form.to_job_spec({**FORM, "cpu_threads": " 2 "})
    assert errors == [] and spec.cpu_threads == 2
    assert validate_spec(spec.to_json()).cpu_threads == 2
    assert spec_form.to_job_spec({**FORM, "cpu_threads": ""})[0].cpu_threads == 1
    spec, errors = spec_form.to_job_spec({**FORM, "cpu_threads": "2.5"})
    assert spec is None and [e.field for e in errors] == ["cpu_threads"]
    assert "'2.5' is not a whole number from 1 to 256" in errors[0].message


@pytest.mark.parametrize("backend", ["cupti", "ncu", "events"])
def test_a_gpu_backend_form_sends_no_cpu_threads(backend: str) -> None:
    """GPU backends ignore cpu_threads (the spec's note; the worker would say "ignored"), so the
    form leaves the field out for them: their job is of 1 thread and keeps its spec hash, and
    a value left in the box from a cpu job is no error."""
    raw, errors = spec_form.build_raw_spec({**FORM, "backend": backend, "cpu_threads": "4"})
    assert errors == [] and "cpu_threads" not in raw
    raw, _ = spec_form.build_raw_spec({**FORM, "backend": backend, "cpu_threads": "0"})
    assert "cpu_threads" not in raw
    assert spec_form.build_raw_spec({**FORM, "cpu_threads": "4"})[0]["cpu_threads"] == 4


def test_cpu_threads_help_names_the_usable_cpus_and_the_backend() -> None:
    text = spec_form.cpu_threads_help(2)
    assert "cpu backend only" in text and "2 usable CPUs" in text and "warns" in text
    assert "1 usable CPU:" in spec_form.cpu_threads_help(1)


#: Every GPU-only field of the form set to other than its default, as a user may have left them
#: before choosing the cpu backend.
GPU_ONLY_SET = {"metric_preset": "bound", "extra_metrics": "l1tex__t_bytes.sum",
                "cache_control": "none", "clock_control": "base", "replay_mode": "range",
                "thermal_mode": "manual", "thermal_wait": "5", "thermal_cont": "30",
                "thermal_timeout": "60", "gpu": "3", "collectors": ["sm_clock", "unix_time"]}


def test_a_cpu_form_sends_no_gpu_only_value_and_keeps_its_hash() -> None:
    """A fresh user's find: the GPU options were sent with a cpu job. They are left out (the
    form greys them out: :func:`spec_form.unsent`, the same rule that leaves the torch threads
    out of a GPU job), so the job is the default form's, hash and all (before the rule, the
    GPU index 3 was refused and the cache control changed the hash); the user's own collector
    is sent, the built-in NVML one is not."""
    raw, errors = spec_form.build_raw_spec({**FORM, **GPU_ONLY_SET})
    assert errors == []
    assert not set(raw) & {"cache_control", "clock_control", "replay_mode", "thermal_mode",
                           "thermal_wait", "thermal_cont", "thermal_timeout"}
    assert raw["gpu"] is None and raw["metrics"] == ["gpu__time_duration.sum"]
    assert raw["collectors"] == ["unix_time"]
    spec, errors = spec_form.to_job_spec({**FORM, **GPU_ONLY_SET, "collectors": []})
    assert errors == [] and spec.spec_hash() == spec_form.to_job_spec(FORM)[0].spec_hash()
    gpu, errors = spec_form.to_job_spec({**GPU_FORM, **GPU_ONLY_SET, "gpu": "0"})
    assert errors == [] and (gpu.cache_control, gpu.thermal_wait, gpu.metrics[-1],
                             gpu.collectors) == ("none", 5, "l1tex__t_bytes.sum",
                                                 ("sm_clock", "unix_time"))


def test_the_form_fields_not_sent_are_one_rule_both_ways() -> None:
    """One table of what each backend uses (backends.unused): the form leaves out what the
    worker would say it ignored. s20: cupti and events sent run options they do not apply."""
    from profiling_worker.bundle.schema import backends as B

    assert spec_form.unsent("cpu") == ("metric_preset", "extra_metrics", *B.GPU_ONLY)
    assert B.unused("cpu") == B.GPU_ONLY
    assert spec_form.unsent("ncu") == B.HOST_ONLY == ("cpu_threads",)
    assert spec_form.unsent("cupti") == ("metric_preset", "extra_metrics", "clock_control",
                                         "replay_mode", "section_set", "cpu_threads")
    assert spec_form.unsent("events") == ("metric_preset", "extra_metrics", "clock_control",
                                          "replay_mode", "thermal_mode", *B.THERMAL_LIMITS,
                                          "section_set", "cpu_threads")
    assert B.unused("unknown") == B.HOST_ONLY  # an import: its options were not recorded
    assert [spec_form.unsent_why("cupti", f) for f in ("metric_preset", "clock_control",
                                                       "cpu_threads")] == [
        "records its duration only", "does not apply it", "runs on a GPU"]
    assert spec_form.unsent_why("cpu", "metric_preset") == "runs on no GPU"


#: The run options cupti and events do not apply (nsight-python's CUPTI collector takes no
#: clock or replay control; the events backend times CUDA events itself, without its thermal
#: pauses), set to other than their defaults, as a user may have left them on ncu.
UNAPPLIED_SET = {"clock_control": "base", "replay_mode": "range", "thermal_mode": "manual",
                 "thermal_wait": "5", "thermal_cont": "30", "thermal_timeout": "60",
                 "metric_preset": "bound", "extra_metrics": "l1tex__t_bytes.sum"}


@pytest.mark.parametrize("backend", ["cupti", "events"])
def test_a_gpu_form_sends_no_option_its_backend_does_not_apply(backend: str) -> None:
    """cupti and events jobs were sent clock and replay control (events: the thermal pauses
    too) and refused for the bound metrics; they are left out, so the job is its default
    form's, hash and all, while what the backend applies is still sent."""
    from profiling_worker.bundle.schema import backends as B

    form = {**GPU_FORM, "backend": backend}
    raw, errors = spec_form.build_raw_spec({**form, **UNAPPLIED_SET, "cache_control": "none",
                                            "collectors": ["sm_clock", "unix_time"]})
    assert errors == [] and not set(raw) & set(B.unused(backend))
    assert raw["cache_control"] == "none" and raw["metrics"] == ["gpu__time_duration.sum"]
    assert raw["collectors"] == (["sm_clock", "unix_time"] if backend == "cupti"
                                 else ["unix_time"])  # events takes no NVML collectors
    assert (raw.get("thermal_mode"), raw.get("thermal_wait")) == (
        ("manual", 5) if backend == "cupti" else (None, None))
    spec, errors = spec_form.to_job_spec({**form, **UNAPPLIED_SET, "thermal_mode": "auto",
                                          "thermal_wait": None, "thermal_cont": None,
                                          "thermal_timeout": None})
    assert errors == [] and spec.spec_hash() == spec_form.to_job_spec(form)[0].spec_hash()


@pytest.mark.parametrize("backend, spec_hash", [("cpu", "e44bc834624fa323"),
                                                ("ncu", "7aa56ec385bb049b"),
                                                ("cupti", "b4cb34624dc7999b"),
                                                ("events", "82f3d3646bce2364")])
def test_a_default_form_keeps_the_spec_hash_it_had(backend: str, spec_hash: str) -> None:
    """The hashes of the default forms before the fields a backend does not use were left out
    (a twin or a compare of an older job finds it by them)."""
    from app.sidebar import job_builder

    catalog = spec_form.builtin_catalog()
    spec, errors = spec_form.to_job_spec(job_builder.form_defaults(backend, catalog), catalog)
    assert errors == [] and spec.spec_hash() == spec_hash

"""validate_spec: every bad input gets a field-named error with a fix; good input round-trips."""

import json
from pathlib import Path

import pytest

from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.spec import (CPU_THREADS_FIX, MAX_CPU_THREADS,
                                                 METRIC_PRESETS, METRIC_SEPARATOR, SpecInvalid,
                                                 separator_note, typed_instead, validate_spec,
                                                 whole_number_error)

GOOD = {"kernels": ["matmul"], "configs": [{"n": 256}, {"n": 512}], "runs": 5, "backend": "ncu",
        "metrics": list(METRIC_PRESETS["bound"])}


def _errors(**change):
    with pytest.raises(SpecInvalid) as info:
        validate_spec({**GOOD, **change}, CATALOG)
    return {e.field: e for e in info.value.errors}


def test_good_spec_round_trips():
    spec = validate_spec(GOOD, CATALOG)
    assert spec.runs == 5 and spec.parameter_names == ("n",)
    assert validate_spec(spec.to_json(), CATALOG) == spec
    assert len(spec.spec_hash()) == 16


@pytest.mark.parametrize("bad", [0, -4, "abc", 1.5, True, None])
def test_sizes_must_be_positive_integers(bad):
    errors = _errors(configs=[{"n": 256}, {"n": bad}])
    assert "configs[1].n" in errors
    assert "positive integer" in errors["configs[1].n"].message


def test_empty_lists_name_their_field():
    assert "kernels" in _errors(kernels=[])
    assert "configs" in _errors(configs=[])


@pytest.mark.parametrize("runs", [0, -1, "ten", 10_001])
def test_runs_below_one_is_refused(runs):
    assert "runs" in _errors(runs=runs)


@pytest.mark.parametrize("runs", [0, -1, 10_001, 100_000_000_000])
def test_whole_number_out_of_range_is_called_out_of_range(runs):
    message = _errors(runs=runs)["runs"].message
    assert message == f"{runs} is out of range: give a whole number from 1 to 10,000"
    assert "not a whole number" not in message


@pytest.mark.parametrize("runs", ["ten", 2.5, True, "5"])
def test_not_a_whole_number_says_so(runs):
    assert "is not a whole number from 1 to 10,000" in _errors(runs=runs)["runs"].message


def test_unknown_metric_name_is_refused_with_the_fix():
    err = _errors(metrics=["gpu__time_duration.sum", "not a metric"])["metrics"]
    assert "not a metric" in err.message and "ncu --query-metrics" in err.hint


def test_runs_and_threads_out_of_range_read_alike():
    """Issue 37: Torch threads 0 read "0 is not a whole number from 1 to 256" beside Runs 0's
    "0 is out of range"; both are one function's words now."""
    runs = _errors(runs=0)["runs"].message
    threads = _errors(backend="cpu", cpu_threads=0)["cpu_threads"].message
    assert runs.replace("10,000", "256") == threads == whole_number_error(0, 1, MAX_CPU_THREADS)


def test_a_metric_list_split_by_semicolons_says_commas_separate_names():
    """Issue 37: Extra metrics "a.sum; b" named "a.sum;" unknown, not why."""
    err = _errors(metrics=["dram__bytes.sum;", "gpu__time_duration.sum"])["metrics"]
    assert err.message.endswith(separator_note(["dram__bytes.sum;"]))
    assert METRIC_SEPARATOR in err.message and "';'" in err.message
    assert separator_note(["bogus"]) == ""


def test_cupti_measures_durations_only():
    assert "metrics" in _errors(backend="cupti")


def test_cpu_backend_records_host_time_only():
    spec = validate_spec({**GOOD, "backend": "cpu"}, CATALOG)
    assert spec.metrics == (C.HOST_TIME,)


@pytest.mark.parametrize("bad", [0, -1, 257, "2", 1.5, True])
def test_cpu_threads_is_a_whole_number_of_threads_named_with_its_fix(bad):
    err = _errors(backend="cpu", cpu_threads=bad)["cpu_threads"]
    # one wording with every range check: "0 is out of range" as Runs says (issue 37)
    assert err.message == whole_number_error(bad, 1, MAX_CPU_THREADS)
    if isinstance(bad, int) and not isinstance(bad, bool):
        assert err.message.startswith(f"{bad} is out of range: give a whole number from 1 to")
    # the fix says what the check allows: up to 256, more than the host's CPUs with a warning
    assert err.hint == CPU_THREADS_FIX and "256" in err.hint and "warns" in err.hint


def test_cpu_threads_defaults_to_one_and_counts_in_a_cpu_jobs_hash_only():
    """One torch thread unless asked (absent or null); a cpu job's hash holds its threads (1
    and 2 threads time a matmul apart), a GPU job's hash is the one it had before the field."""
    cpu = validate_spec({**GOOD, "backend": "cpu"}, CATALOG)
    assert cpu.cpu_threads == 1 == validate_spec({**GOOD, "backend": "cpu", "cpu_threads": None},
                                                 CATALOG).cpu_threads
    two = validate_spec({**GOOD, "backend": "cpu", "cpu_threads": 2}, CATALOG)
    assert two.cpu_threads == 2 and validate_spec(two.to_json(), CATALOG) == two
    assert two.spec_hash() != cpu.spec_hash()
    gpu = validate_spec(GOOD, CATALOG)
    assert validate_spec({**GOOD, "cpu_threads": 2}, CATALOG).spec_hash() == gpu.spec_hash()


def test_gpu_index_on_the_cpu_backend_is_refused_by_field():
    err = _errors(backend="cpu", gpu=3)["gpu"]
    assert "cpu backend runs on no GPU, so GPU index 3 would not be used" in err.message
    assert "leave the GPU index at 0" in err.hint and "ncu or cupti" in err.hint
    assert validate_spec({**GOOD, "backend": "cpu", "gpu": 0}, CATALOG).gpu == 0
    assert validate_spec({**GOOD, "gpu": 3}, CATALOG).gpu == 3  # the worker checks it is there


def test_unknown_kernel_and_annotation_and_field():
    assert "kernels" in _errors(kernels=["nope"])
    assert "annotations" in _errors(annotations=["fp64"])
    assert "colour" in _errors(colour="red")


@pytest.mark.parametrize("configs", [None, []])
def test_unknown_or_no_kernels_alone_are_said_not_the_configs_that_follow(configs):
    """The configs of a spec come from its kernels (their declared defaults, the sidebar's
    presets): an unknown kernel without configs said "configs: no configs (sizes) given" too."""
    for kernels, field in ((["nope"], "kernels"), (["matmul", "nope"], "kernels"),
                           ([], "kernels")):
        raw = {k: v for k, v in {**GOOD, "kernels": kernels, "configs": configs}.items()
               if v is not None}
        with pytest.raises(SpecInvalid) as info:
            validate_spec(raw, CATALOG)
        assert [e.field for e in info.value.errors] == [field], info.value.errors
    # known kernels: missing configs are still refused (no catalog: no defaults to take)
    with pytest.raises(SpecInvalid) as info:
        validate_spec({**GOOD, "configs": []}, CATALOG)
    assert [e.field for e in info.value.errors] == ["configs"]
    assert [e.field for e in _no_catalog_errors()] == ["configs"]


def _no_catalog_errors():
    raw = {k: v for k, v in GOOD.items() if k != "configs"}
    with pytest.raises(SpecInvalid) as info:
        validate_spec(raw)
    return info.value.errors


def test_thermal_cont_must_exceed_wait():
    assert "thermal_cont" in _errors(thermal_wait=20, thermal_cont=10)
    # Issue 25: one of the pair left to nsight-python's default (wait 10, cont 20) is checked too
    assert "thermal_cont" in _errors(thermal_cont=5)
    assert "thermal_cont" in _errors(thermal_wait=25)
    assert validate_spec({**GOOD, "thermal_cont": 15}, CATALOG).thermal_cont == 15


def test_reserved_parameter_names_are_refused():
    assert "configs[0]" in _errors(configs=[{"Metric": 3}])


# --- issue 11, case 7: configs checked at submit, each message naming the field and the fix ---

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _kinds_registry():
    from profiling_worker.catalog.registry import load_registry

    return load_registry([str(FIXTURES / "kernel_files")]).kernels


KIND_CFG = {"n": 64, "offset": 0, "scale": 0.5, "mode": "add"}


def _kind_errors(**change):
    raw = {"kernels": ["user_kinds"], "configs": [{**KIND_CFG, **change}], "backend": "cpu"}
    with pytest.raises(SpecInvalid) as info:
        validate_spec(raw, _kinds_registry())
    return {e.field: e for e in info.value.errors}


def test_duplicate_configs_are_refused_naming_the_duplicate():
    raw = json.loads((FIXTURES / "cases" / "07-duplicate-configs" / "spec.json").read_text())
    with pytest.raises(SpecInvalid) as info:
        validate_spec(raw, CATALOG)
    (err,) = info.value.errors
    assert err.field == "configs[2]" and err.message == "repeats configs[0] {'n': 64}"
    assert "remove configs[2]" in err.hint


def test_configs_equal_as_numbers_are_one_config() -> None:
    """1 and 1.0 are one value to the worker's run counter: accepted as two configs (a new
    user's float parameter), their runs were merged into the second's and the first had none."""
    one, one_float = {**KIND_CFG, "scale": 1}, {**KIND_CFG, "scale": 1.0}
    raw = {"kernels": ["user_kinds"], "backend": "cpu",
           "configs": [one, one_float, {**KIND_CFG, "scale": 2.0}]}
    with pytest.raises(SpecInvalid) as info:
        validate_spec(raw, _kinds_registry())
    (err,) = info.value.errors
    assert err.field == "configs[1]"
    assert err.message == f"repeats configs[0] {one} (the same values as {one_float})"


@pytest.mark.parametrize("offset", [0, -3, 7])
def test_int_kind_takes_zero_and_negatives(offset):
    raw = {"kernels": ["user_kinds"], "configs": [{**KIND_CFG, "offset": offset}],
           "backend": "cpu"}
    assert validate_spec(raw, _kinds_registry()).configs[0]["offset"] == offset


def test_size_kind_still_refuses_zero():
    err = _kind_errors(n=0)["configs[0].n"]
    assert err.message == "0 is not a positive integer (parameter kind 'size')"


def test_str_kind_refuses_a_number():
    err = _kind_errors(mode=7)["configs[0].mode"]
    assert err.message == "7 is not a string (parameter kind 'str')" and '"fp16"' in err.hint


def test_int_and_float_kinds_refuse_text():
    errors = _kind_errors(offset="x", scale="half")
    assert errors["configs[0].offset"].message == "'x' is not a whole number (parameter kind 'int')"
    assert errors["configs[0].scale"].message.startswith("'half' is not a finite number")


@pytest.mark.parametrize("value, what", [({"a": 1}, "an object (dict)"), ([64, 128], "a list")])
def test_dict_and_list_values_say_what_they_are(value, what):
    err = _errors(configs=[{"n": value}])["configs[0].n"]
    assert what in err.message and "positive integer" not in err.message
    assert "several configs" in err.hint


def test_sizes_must_fit_in_the_device_memory():
    raw = {**GOOD, "configs": [{"n": 4096}, {"n": 10**12}]}
    with pytest.raises(SpecInvalid) as info:
        validate_spec(raw, CATALOG, memory_bytes=143771 * 2**20, memory_of="GPU NVIDIA H200")
    (err,) = info.value.errors
    assert err.field == "configs[1]" and "more than the 140.40 GiB of GPU NVIDIA H200" in err.message
    assert err.hint == "choose smaller sizes"
    assert validate_spec(raw, CATALOG).configs[1] == {"n": 10**12}  # memory unknown: no check


def test_cpu_sizes_are_checked_against_the_memory_available_now_not_the_total():
    """Issue 41: a 19.2 GB matmul was accepted with 12 GB free (the check used MemTotal)."""
    from profiling_worker.bundle.schema.configs import device_memory

    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    available = float(fields["MemAvailable"].split()[0]) * 1024
    memory, memory_of = device_memory("cpu", [], None)
    assert memory_of == "memory available on the host"
    assert memory == pytest.approx(available, rel=0.1)  # other processes move it a little
    raw = {**GOOD, "backend": "cpu", "configs": [{"n": 10**7}]}
    with pytest.raises(SpecInvalid, match="of memory available on the host"):
        validate_spec(raw, CATALOG, memory_bytes=memory, memory_of=memory_of)


def test_headless_spec_without_configs_takes_the_kernels_defaults():
    spec = validate_spec({"kernels": ["user_kinds"], "backend": "cpu"}, _kinds_registry())
    assert spec.configs == (KIND_CFG,)
    spec = validate_spec({"kernels": ["user_scale3"]}, _kinds_registry())
    assert spec.configs == ({"n": 1024}, {"n": 4096})
    with pytest.raises(SpecInvalid, match="different default configs"):
        validate_spec({"kernels": ["user_scale3", "user_kinds"]}, _kinds_registry())


def test_the_dashboard_catalog_checks_kinds_and_defaults_at_submit():
    """The sidebar validates with the worker's description of the kernels (KernelInfo), not the
    kernel code: the same kind and default rules apply there."""
    from app.core.kernel_catalog import catalog_from_report
    from profiling_worker.catalog.registry import load_registry

    described = load_registry([str(FIXTURES / "kernel_files")]).describe()
    catalog, _ = catalog_from_report({"kernels": described})
    with pytest.raises(SpecInvalid) as info:
        validate_spec({"kernels": ["user_kinds"], "backend": "cpu",
                       "configs": [{**KIND_CFG, "mode": 7, "offset": -1}]}, catalog)
    assert [e.field for e in info.value.errors] == ["configs[0].mode"]
    assert validate_spec({"kernels": ["user_kinds"], "backend": "cpu"}, catalog).configs == (
        KIND_CFG,)


def test_option_fields_are_literals_whose_choices_and_defaults_validate_uses() -> None:
    import typing

    from profiling_worker.bundle.schema import spec as S

    hints = typing.get_type_hints(S.JobSpec)
    for name, choices in (("backend", S.BACKENDS), ("cache_control", S.CACHE_CONTROLS),
                          ("clock_control", S.CLOCK_CONTROLS), ("replay_mode", S.REPLAY_MODES),
                          ("thermal_mode", S.THERMAL_MODES)):
        assert typing.get_args(hints[name]) == choices
        assert S.SPEC_DEFAULTS[name] in choices
        for bad in ("warm", 3):  # a value outside the Literal is an error naming the field
            assert name in _errors(**{name: bad})
    minimal = validate_spec({"kernels": ["matmul"], "configs": [{"n": 256}]}, CATALOG)
    assert {k: getattr(minimal, k) for k in S.SPEC_DEFAULTS} == dict(S.SPEC_DEFAULTS)


@pytest.mark.parametrize("value, said", [("1e3", ": type 1000"), (1000.0, ": type 1000"),
                                         (" 2.0 ", ": type 2"), ("2.5", ""), ("1e9", ""),
                                         ("nan", ""), ("inf", ""), ("ten", ""), (True, "")])
def test_a_whole_number_written_another_way_says_what_to_type(value, said):
    """A fresh user of session 22 read "'1e3' is not a whole number" with no word of what to
    type; only a whole number within the field's range gets one."""
    assert typed_instead(value, 1, 10_000) == said


def test_runs_typed_as_1e3_names_the_number_to_type():
    message = _errors(runs="1e3")["runs"].message
    assert message.startswith("'1e3' is not a whole number from 1 to 10,000")
    assert message.endswith(typed_instead("1e3", 1, 10_000)) and "1000" in message


@pytest.mark.parametrize("backend", B.AUTO_NAMES)
def test_runs_errors_say_auto_where_the_backend_allows_it(backend):
    """Runs may be "auto" on these backends: its errors said only "a whole number"."""
    for runs in ("ten", 0):
        err = _errors(backend=backend, runs=runs, metrics=None)["runs"]
        assert '"auto"' in err.message and '"auto"' in err.hint, err


@pytest.mark.parametrize("backend", sorted(set(B.NAMES) - set(B.AUTO_NAMES)))
def test_runs_errors_never_offer_auto_where_it_is_refused(backend):
    err = _errors(backend=backend, runs="ten", metrics=None)["runs"]
    assert "auto" not in err.message and "auto" not in err.hint, err

"""Sidebar form values (a plain dict) -> a raw job spec, and a validated JobSpec (pure).

The job builder draws widgets and returns :class:`FormValues`-shaped dicts; this module turns
them into the JSON object ``validate_spec`` checks, so every rule lives in one place and is
testable without Streamlit. Sizes are typed by hand (one field, or one per parameter of a
kernel with several: :mod:`app.core.config_grid`), so they are parsed here and any problem is
reported against the field typed in (the worker's schema calls them ``configs``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import backends as B, run_target as rt
from profiling_worker.bundle.schema.configs import device_memory
from profiling_worker.bundle.schema.spec import (COLLECTORS, MAX_CPU_THREADS, METRIC_PRESETS,
                                                 SPEC_DEFAULTS, FieldError, JobSpec, SpecInvalid,
                                                 check_fits, validate_spec)

from app.core import config_grid
from app.core.kernel_catalog import (KernelInfo, builtin_description, builtin_kernels,
                                     catalog_from_report)

SIZE_PRESET_TYPED = "typed"
SIZE_PRESET_GPU = "gpu"
SIZE_PRESET_CPU = "cpu"
SIZE_PRESETS = {SIZE_PRESET_TYPED: "the sizes typed above",
                SIZE_PRESET_GPU: "kernel defaults (GPU)",
                SIZE_PRESET_CPU: "kernel defaults, small (CPU)"}
SIZE_PRESETS_HELP = "the kernel's default sizes replace the typed ones when chosen here"
Catalog = Mapping[str, KernelInfo]
#: nsight-python's thermal limits: headroom to T.Limit (°C) at which a pause starts / ends, and
#: the longest pause (s); the worker's schema checks their ranges.
THERMAL_LIMITS = ("thermal_wait", "thermal_cont", "thermal_timeout")
#: Fields the form passes as chosen; one it leaves empty (None) is left out of the raw spec, so
#: the JobSpec default applies (its one definition, profiling_worker/bundle/schema/spec.py).
OPTION_FIELDS = ("cache_control", "clock_control", "replay_mode", "thermal_mode",
                 *THERMAL_LIMITS)
#: Fields typed as text and read as whole numbers by :func:`whole_number`. Not number inputs:
#: the browser's integer field reads "1e6" as 1 and "2.5" as 2 without a word (Streamlit 1.67).
WHOLE_NUMBER_FIELDS = ("runs", "warmup", "gpu", "cpu_threads", *THERMAL_LIMITS)
_WHOLE = re.compile(r"[+-]?[0-9]+")
#: The builder's fields of runs "auto" -> the spec's ``run_target`` key each fills (empty: the
#: default of profiling_worker/bundle/schema/run_target.py).
RUN_TARGET_FIELDS = {"auto_ci95_pct": "rel_ci95_pct", "auto_min_runs": "min_runs",
                     "auto_max_runs": "max_runs", "auto_budget_s": "budget_s"}
#: Help of the Runs field.
RUNS_HELP = ('A whole number, or "auto": each config runs until the CI95 of its mean is as '
             f"narrow as the target in Options ({B.said(B.AUTO_NAMES)} backends)")


#: The form's label of the spec's ``cpu_threads`` (app/sidebar/job_builder.py's LABELS).
CPU_THREADS_LABEL = "Torch threads (cpu backend)"
#: Where a sidebar user sets it, as a sentence names it.
_THREADS_IN_FORM = f'"{CPU_THREADS_LABEL}" under Options in the sidebar'


def in_form_words(text: str) -> str:
    """A worker's text about a cpu job (its contention advice, its too-many-threads warning)
    with the spec's name of the torch threads written as the form's label, for the pages and
    the job panel: "the spec's cpu_threads" named no control on screen (a fresh user's find).
    The worker and the CLI keep the spec's key (``profiling_worker.bundle.schema.backends``)."""
    return (text.replace(B.THREADS_IN_SPEC, f"{_THREADS_IN_FORM} at")
            .replace(B.SET_THREADS_IN_SPEC, f"set {_THREADS_IN_FORM} to"))


def cpu_threads_help(cpus: int) -> str:
    """Help of the form's torch threads field, naming the ``cpus`` usable CPUs of this host (a
    hint: more are allowed, the worker warns about them)."""
    return (f"cpu backend only: the torch intra-op threads the job is timed with "
            f"({SPEC_DEFAULTS['cpu_threads']} by default, at most {MAX_CPU_THREADS}). This host "
            f"has {counted(cpus, 'usable CPU')}: more threads than that are allowed, but the "
            "worker warns, and on a shared host threads that wait for a CPU inflate the times. "
            "The GPU backends ignore it: the form sends it with the cpu backend only")


#: The form's fields of the spec's metrics: used by a backend that records any Nsight Compute
#: metric (:attr:`~profiling_worker.bundle.schema.backends.Backend.any_metric`); the others
#: record their duration only.
METRIC_FIELDS = ("metric_preset", "extra_metrics")
#: Why a backend on a GPU does not use :data:`METRIC_FIELDS` (said after "which").
DURATIONS_ONLY = "records its duration only"


def unsent(backend: str | None) -> tuple[str, ...]:
    """The form's fields not sent with ``backend``, which the form greys out: the spec's fields
    it never uses (:func:`~profiling_worker.bundle.schema.backends.unused`, one table of what
    each backend uses: the GPU's fields on the host, the torch threads on a GPU, the run
    options a backend does not apply) and the metric fields where it records its duration only
    (:data:`METRIC_FIELDS`). One rule both ways; built-in (NVML) info collectors go only where
    the backend takes them (:func:`sent_collectors`)."""
    metrics = () if B.described(backend).any_metric else METRIC_FIELDS
    return (*metrics, *B.unused(backend))


def unsent_why(backend: str | None, field: str) -> str:
    """Why ``backend`` does not use the form's ``field`` (one of :func:`unsent`), said after
    "which": ``runs on no GPU``, ``does not apply it``... (:func:`B.unused_why
    <profiling_worker.bundle.schema.backends.unused_why>`, :data:`DURATIONS_ONLY`)."""
    if field in METRIC_FIELDS and B.on_gpu(backend):
        return DURATIONS_ONLY
    return B.unused_why(backend, field)


def sent_collectors(collectors: Any, backend: str | None) -> list[str]:
    """The chosen info collectors a job on ``backend`` is sent with: all where the backend
    takes nsight-python's info collectors (:attr:`~profiling_worker.bundle.schema.backends.
    Backend.collectors`), else the user collectors alone (the built-in ones are read by
    nsight-python through NVML; a user's run on every backend)."""
    return [c for c in collectors or ()
            if B.described(backend).collectors or c not in COLLECTORS]


def typed_number(value: Any) -> Any:
    """A number field's text for the raw spec: whole numbers as int, decimals as float, empty as
    None, anything else unchanged (the schema names the field)."""
    value = whole_number(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return value
    return value


def run_target(form: Mapping[str, Any]) -> dict[str, Any]:
    """The raw ``run_target`` from the builder's :data:`RUN_TARGET_FIELDS` (empty ones left
    out)."""
    typed = {key: typed_number(form.get(field)) for field, key in RUN_TARGET_FIELDS.items()}
    return {key: value for key, value in typed.items() if value is not None}


def whole_number(value: Any) -> Any:
    """A whole-number field's value for the raw spec: text of decimal digits (an optional sign,
    spaces around) -> int, empty text -> None (the JobSpec default), anything else unchanged, so
    that ``validate_spec`` names the field: ``runs: '1e6' is not a whole number from 1 to
    10000``."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    return int(text) if _WHOLE.fullmatch(text) else text


def builtin_catalog() -> dict[str, KernelInfo]:
    """The built-in kernels (used when no worker report is at hand, e.g. in tests)."""
    return catalog_from_report({"kernels": builtin_description()})[0]


def preset_configs(kernels: list[str], preset: str, catalog: Catalog) -> list[dict[str, Any]]:
    """The default configs of the first known kernel for the ``gpu`` or ``cpu`` preset."""
    for kid in kernels:
        info = catalog.get(kid)
        if info is not None:
            return [dict(c) for c in (info.default_configs if preset == SIZE_PRESET_GPU
                                      else info.cpu_configs)]
    return []


def typed_configs(form: Mapping[str, Any], info: KernelInfo | None
                  ) -> tuple[list[dict[str, Any]], list[FieldError]]:
    """Configs from the typed fields: ``sizes`` for a kernel with one parameter, else one text
    per parameter (``form["params"]``) combined as ``form["combine"]`` (product or zip)."""
    params = info.parameters if info is not None and info.parameters else ("n",)
    kinds = info.parameter_kinds if info is not None else {}
    if len(params) == 1:
        values, errors = config_grid.parse_values(form.get("sizes", ""), "sizes",
                                                  kinds.get(params[0], "size"))
        errors += config_grid.repeats(values, "sizes")
        return ([{params[0]: v} for v in values], []) if not errors else ([], errors)
    typed = form.get("params") or {}
    per_param, errors = {}, []
    for p in params:
        per_param[p], errs = config_grid.parse_values(typed.get(p, ""), p, kinds.get(p, "size"))
        errors += errs
    if errors:
        return [], errors
    return config_grid.combine(per_param, form.get("combine") or config_grid.PRODUCT)


def split_metrics(text: str) -> list[str]:
    """Free-form metric names separated by commas, spaces or new lines."""
    return [m for m in str(text).replace(",", " ").split() if m]


#: Help of the sidebar's "Kernels to ignore" field.
IGNORE_HELP = ("Launches of these kernels are left out of every value (listed on the Kernels "
               "page). One entry a line: an exact kernel name as the Kernels page shows it, or "
               "re:<regular expression> to match part of a name (CUPTI records mangled C++ "
               "names, so use re: there)")


def split_lines(text: Any) -> list[str]:
    """Non-empty, stripped lines of a text field (kernel names may hold commas)."""
    return [line.strip() for line in str(text or "").splitlines() if line.strip()]


def build_raw_spec(form: Mapping[str, Any], catalog: Catalog | None = None
                   ) -> tuple[dict[str, Any], list[FieldError]]:
    """Turn the builder's dict into a raw spec plus the errors only the form can see.

    Args:
        form: kernels (list), annotations (list, empty = all), size_preset, sizes (text),
            runs, backend, metric_preset, extra_metrics (text), cache_control, clock_control,
            replay_mode, thermal_mode, thermal_wait / thermal_cont (°C of headroom) and
            thermal_timeout (s), each None for nsight-python's default, collectors (list),
            warmup, gpu, cpu_threads, label, ignore_kernels (text, one entry a line); the
            fields the backend does not use are not sent (:func:`unsent`,
            :func:`sent_collectors`); for a kernel with several
            parameters ``params`` (name -> text) and ``combine`` (product or zip) instead of
            ``sizes``.
        catalog: the kernels offered (default: the built-in ones).

    Returns:
        (raw spec for ``validate_spec``, errors of the typed sizes or parameter fields).
    """
    catalog = catalog if catalog is not None else builtin_catalog()
    backend = form.get("backend", B.CPU)
    unread = digit_errors(form, backend)
    # a refused field is said once, here: the spec check would say it again in its own words
    form = {f: whole_number(v) if f in WHOLE_NUMBER_FIELDS else v for f, v in form.items()
            if f not in unsent(backend) and f not in {e.field for e in unread}}
    kernels = list(form.get("kernels") or [])
    preset = form.get("size_preset", SIZE_PRESET_TYPED)
    if preset == SIZE_PRESET_TYPED:
        configs, errors = typed_configs(form, catalog.get(kernels[0]) if kernels else None)
    else:
        configs, errors = preset_configs(kernels, preset, catalog), []
    errors = unread + errors
    metrics = list(METRIC_PRESETS.get(form.get("metric_preset", "timing"), ()))
    metrics += split_metrics(form.get("extra_metrics", ""))
    raw: dict[str, Any] = {
        "kernels": kernels,
        "configs": configs,
        "runs": form.get("runs"),
        "metrics": list(dict.fromkeys(metrics)),
        "backend": backend,
        **{name: form[name] for name in OPTION_FIELDS if form.get(name) is not None},
        "warmup": form.get("warmup"),
        "gpu": form.get("gpu"),
        "label": str(form.get("label") or ""),
    }
    if form.get("cpu_threads") is not None:
        raw["cpu_threads"] = form["cpu_threads"]
    target = run_target(form)
    if isinstance(raw["runs"], str) and raw["runs"].strip().lower() == rt.AUTO:
        raw["runs"] = rt.AUTO
        raw.update({rt.FIELD: target} if target else {})
    elif target:  # not used with whole-number runs, but a bad value is still said
        rt.parse({"runs": rt.AUTO, rt.FIELD: target}, B.CUPTI, errors)
    if form.get("annotations"):
        raw["annotations"] = list(form["annotations"])
    if collectors := sent_collectors(form.get("collectors"), backend):
        raw["collectors"] = collectors
    if split_lines(form.get("ignore_kernels")):
        raw["ignore_kernels"] = split_lines(form.get("ignore_kernels"))
    return raw, errors


def digit_errors(form: Mapping[str, Any], backend: str) -> list[FieldError]:
    """One error per whole-number or run-target field of ``form`` sent to ``backend`` whose
    text Python's int() or float() would read silently although it is no plain number:
    ``١٢٨`` or ``1_000`` (:func:`config_grid.digits_problem`)."""
    fields = [f for f in (*WHOLE_NUMBER_FIELDS, *RUN_TARGET_FIELDS) if f not in unsent(backend)]
    return [FieldError(f, problem, config_grid.DIGITS_FIX) for f in fields
            if isinstance(text := form.get(f), str)
            and (problem := config_grid.digits_problem(text))]


def to_job_spec(form: Mapping[str, Any], catalog: Catalog | None = None
                ) -> tuple[JobSpec | None, list[FieldError]]:
    """Validate the form: (spec, []) when valid, else (None, every FieldError).

    Errors on ``configs`` (the schema's name for sizes) are reported against the field the user
    typed in: ``sizes``, or the parameter's own field for a kernel with several parameters; a
    configs error is dropped when the typed text already produced one.
    """
    catalog = catalog if catalog is not None else builtin_catalog()
    raw, errors = build_raw_spec(form, catalog)
    try:
        spec = validate_spec(raw, catalog)
    except SpecInvalid as exc:
        for err in exc.errors:
            if err.field.startswith("configs"):
                if errors:
                    continue
                err = FieldError(_typed_field(err.field, raw["configs"]), err.message, err.hint)
            errors.append(err)
        return None, errors
    return (None, errors) if errors else (spec, [])


def _typed_field(schema_field: str, configs: list[dict[str, Any]]) -> str:
    """``configs[2].batch`` -> ``batch`` when the configs have several parameters, else
    ``sizes``."""
    param = schema_field.rpartition(".")[2] if "." in schema_field else ""
    several = bool(configs) and len(configs[0]) > 1
    return param if several and param else "sizes"


def backend_errors(spec: JobSpec, report: Mapping[str, Any]) -> list[FieldError]:
    """A FieldError on ``backend`` when the worker's environment report says the chosen backend
    cannot run here (with its reason and fix), so the job is refused before it is queued.
    When the worker could not even be asked (``report["error"]``), the job is let through: it
    fails at once with the precise cause (e.g. the worker interpreter is missing) in the panel."""
    if report.get("error"):
        return []
    refused = refusal(report, spec.backend)
    if refused is None:
        return gpu_errors(spec, report) or memory_errors(spec, report)
    return [FieldError("backend", f"{spec.backend} cannot run here: {refused[0]}", refused[1])]


def refusal(report: Mapping[str, Any], backend: str) -> tuple[str, str] | None:
    """(reason, fix) when the worker's environment ``report`` says ``backend`` cannot run here,
    else None (a backend the report does not name is let through). The one check of Run
    (:func:`backend_errors`), the form's Backend box and a link's ``?backend=``."""
    entry = (report.get("backends") or {}).get(backend) or {}
    if entry.get("available", True):
        return None
    return str(entry.get("reason") or "?"), str(entry.get("fix") or "choose another backend")


def visible_gpu(report: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    """The GPU that a spec's ``gpu`` = ``index`` names in the worker's environment report: its
    ``visible_gpus`` entry (index among the GPUs visible to the worker, so an inherited
    CUDA_VISIBLE_DEVICES counts), or, for reports from before that key, the NVML GPU of that
    index (right when nothing narrows the visible set). None when there is none."""
    return next((g for g in visible_gpus(report) if g.get("index") == index), None)


def visible_gpus(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The report's ``visible_gpus`` (index among the visible ones, name, uuid), or its NVML
    ``gpus`` for reports from before that key; empty when it lists none."""
    env = report.get("environment") or {}
    listed = env.get("visible_gpus")
    if listed is None:
        listed = env.get("gpus")
    return [g for g in listed or () if isinstance(g, dict)]


def gpu_errors(spec: JobSpec, report: Mapping[str, Any]) -> list[FieldError]:
    """A FieldError on ``gpu`` when a GPU backend's index names no GPU the worker sees (the
    report's ``visible_gpus``), as the worker itself would refuse it
    (:func:`profiling_worker.probes.gpu_select.resolve`); nothing when the report lists no GPU."""
    listed = visible_gpus(report)
    if not B.on_gpu(spec.backend) or not listed or visible_gpu(report, spec.gpu) is not None:
        return []
    names = ", ".join(f"{g.get('index')}: {g.get('name') or '?'}" for g in listed)
    return [FieldError("gpu", f"{spec.gpu} is not a GPU of this machine; the worker sees "
                       f"{len(listed)} ({names})",
                       f"set the GPU index to 0..{len(listed) - 1}: it counts the GPUs visible "
                       "to the worker")]


def memory_errors(spec: JobSpec, report: Mapping[str, Any]) -> list[FieldError]:
    """Sizes whose built-in kernels need more than the memory of the job's GPU (of the host for
    cpu) at once (:func:`check_fits`: the inputs of the chosen annotations and a result), named
    on the field the user typed; user kernels' formulas run in the worker,
    which checks them before it profiles."""
    gpus = [g for g in (report.get("environment") or {}).get("gpus") or () if isinstance(g, dict)]
    uuid = (visible_gpu(report, spec.gpu) or {}).get("uuid")
    memory, memory_of = device_memory(spec.backend, gpus, uuid)
    builtins = builtin_kernels()
    if not memory or any(k not in builtins for k in spec.kernels):
        return []
    try:
        check_fits(spec, builtins, memory, memory_of)
    except SpecInvalid as exc:
        configs = [dict(c) for c in spec.configs]
        return [FieldError(_typed_field(e.field, configs), e.message, e.hint) for e in exc.errors]
    return []

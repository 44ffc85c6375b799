"""Sidebar form values (a plain dict) -> a raw job spec, and a validated JobSpec (pure).

The job builder draws widgets and returns :class:`FormValues`-shaped dicts; this module turns
them into the JSON object ``validate_spec`` checks, so every rule lives in one place and is
testable without Streamlit. Sizes are typed by hand, so they are parsed here and any problem is
reported against the ``sizes`` field (the worker's schema calls it ``configs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import json

from profiling_worker.schema.spec import METRIC_PRESETS, FieldError, JobSpec, SpecInvalid, validate_spec

from app.core.kernel_catalog import KernelInfo, builtin_description, catalog_from_report

SIZE_PRESET_TYPED = "typed"
SIZE_PRESET_GPU = "gpu"
SIZE_PRESET_CPU = "cpu"
SIZE_PRESETS = {SIZE_PRESET_TYPED: "as typed below", SIZE_PRESET_GPU: "kernel defaults (GPU)",
                SIZE_PRESET_CPU: "kernel defaults, small (CPU)"}
SIZES_HINT = ("write sizes as whole numbers greater than 0, separated by commas, e.g. 64, 128, 256; "
              'for kernels with several parameters, a JSON list such as [{"n": 4096, "block_size": 256}]')
Catalog = Mapping[str, KernelInfo]


def builtin_catalog() -> dict[str, KernelInfo]:
    """The built-in kernels (used when no worker report is at hand, e.g. in tests)."""
    return catalog_from_report({"kernels": builtin_description()})[0]


def parse_sizes(text: str) -> tuple[list[int], list[FieldError]]:
    """``"64, 128"`` -> ``[64, 128]``; every bad entry gives a FieldError on ``sizes``."""
    items = [t.strip() for t in str(text).replace(";", ",").split(",")]
    items = [t for t in items if t]
    if not items:
        return [], [FieldError("sizes", "no sizes given", SIZES_HINT)]
    sizes, errors = [], []
    for item in items:
        try:
            value = int(item.replace("_", ""))
        except ValueError:
            errors.append(FieldError("sizes", f"{item!r} is not a whole number", SIZES_HINT))
            continue
        if value <= 0:
            errors.append(FieldError("sizes", f"{value} is not greater than 0", SIZES_HINT))
            continue
        sizes.append(value)
    return list(dict.fromkeys(sizes)), errors


def preset_configs(kernels: list[str], preset: str, catalog: Catalog) -> list[dict[str, Any]]:
    """The default configs of the first known kernel for the ``gpu`` or ``cpu`` preset."""
    for kid in kernels:
        info = catalog.get(kid)
        if info is not None:
            return [dict(c) for c in (info.default_configs if preset == SIZE_PRESET_GPU
                                      else info.cpu_configs)]
    return []


def parse_configs(text: str, params: tuple[str, ...]) -> tuple[list[dict[str, Any]], list[FieldError]]:
    """Typed sizes -> configs: a comma list for one-parameter kernels, else a JSON list."""
    text = str(text).strip()
    if text.startswith("["):
        try:
            configs = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly nested text
            return [], [FieldError("sizes", f"not valid JSON ({exc})", SIZES_HINT)]
        if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
            return [], [FieldError("sizes", "the JSON must be a list of objects", SIZES_HINT)]
        return configs, []
    if len(params) > 1:
        return [], [FieldError("sizes", f"this kernel takes {', '.join(params)}", SIZES_HINT)]
    sizes, errors = parse_sizes(text)
    return [{params[0] if params else "n": s} for s in sizes], errors


def split_metrics(text: str) -> list[str]:
    """Free-form metric names separated by commas, spaces or new lines."""
    return [m for m in str(text).replace(",", " ").split() if m]


def build_raw_spec(form: Mapping[str, Any], catalog: Catalog | None = None
                   ) -> tuple[dict[str, Any], list[FieldError]]:
    """Turn the builder's dict into a raw spec plus the errors only the form can see.

    Args:
        form: kernels (list), annotations (list, empty = all), size_preset, sizes (text),
            runs, backend, metric_preset, extra_metrics (text), cache_control, clock_control,
            thermal_mode, collectors (list), warmup, gpu, label.
        catalog: the kernels offered (default: the built-in ones).

    Returns:
        (raw spec for ``validate_spec``, errors of the ``sizes`` field).
    """
    catalog = catalog if catalog is not None else builtin_catalog()
    kernels = list(form.get("kernels") or [])
    preset = form.get("size_preset", SIZE_PRESET_TYPED)
    params = catalog[kernels[0]].parameters if kernels and kernels[0] in catalog else ("n",)
    if preset == SIZE_PRESET_TYPED:
        configs, errors = parse_configs(form.get("sizes", ""), params)
    else:
        configs, errors = preset_configs(kernels, preset, catalog), []
    metrics = list(METRIC_PRESETS.get(form.get("metric_preset", "timing"), ()))
    metrics += split_metrics(form.get("extra_metrics", ""))
    raw: dict[str, Any] = {
        "kernels": kernels,
        "configs": configs,
        "runs": form.get("runs"),
        "metrics": list(dict.fromkeys(metrics)),
        "backend": form.get("backend", "cpu"),
        "cache_control": form.get("cache_control", "all"),
        "clock_control": form.get("clock_control", "none"),
        "thermal_mode": form.get("thermal_mode", "auto"),
        "warmup": form.get("warmup"),
        "gpu": form.get("gpu"),
        "label": str(form.get("label") or ""),
    }
    if form.get("annotations"):
        raw["annotations"] = list(form["annotations"])
    if form.get("collectors"):
        raw["collectors"] = list(form["collectors"])
    return raw, errors


def to_job_spec(form: Mapping[str, Any], catalog: Catalog | None = None
                ) -> tuple[JobSpec | None, list[FieldError]]:
    """Validate the form: (spec, []) when valid, else (None, every FieldError).

    Errors on ``configs`` (the schema's name for sizes) are reported as ``sizes`` so the message
    names the field the user typed in; a configs error is dropped when the sizes text already
    produced one.
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
                err = FieldError("sizes", err.message, err.hint)
            errors.append(err)
        return None, errors
    return (None, errors) if errors else (spec, [])


def backend_errors(spec: JobSpec, report: Mapping[str, Any]) -> list[FieldError]:
    """A FieldError on ``backend`` when the worker's environment report says the chosen backend
    cannot run here (with its reason and fix), so the job is refused before it is queued.
    When the worker could not even be asked (``report["error"]``), the job is let through: it
    fails at once with the precise cause (e.g. the worker interpreter is missing) in the panel."""
    if report.get("error"):
        return []
    entry = (report.get("backends") or {}).get(spec.backend) or {}
    if entry.get("available", True):
        return []
    return [FieldError("backend", f"{spec.backend} cannot run here: {entry.get('reason', '?')}",
                       entry.get("fix") or "choose another backend")]

"""Sidebar form values (a plain dict) -> a raw job spec, and a validated JobSpec (pure).

The job builder draws widgets and returns :class:`FormValues`-shaped dicts; this module turns
them into the JSON object ``validate_spec`` checks, so every rule lives in one place and is
testable without Streamlit. Sizes are typed by hand, so they are parsed here and any problem is
reported against the ``sizes`` field (the worker's schema calls it ``configs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from profiling_worker.catalog.specs import CATALOG, KernelSpec
from profiling_worker.schema.spec import METRIC_PRESETS, FieldError, JobSpec, SpecInvalid, validate_spec

SIZE_PRESET_TYPED = "typed"
SIZE_PRESET_GPU = "gpu"
SIZE_PRESET_CPU = "cpu"
SIZE_PRESETS = {SIZE_PRESET_TYPED: "as typed below", SIZE_PRESET_GPU: "catalog GPU sizes",
                SIZE_PRESET_CPU: "catalog small (CPU) sizes"}
SIZES_HINT = "write sizes as whole numbers greater than 0, separated by commas, e.g. 64, 128, 256"


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


def preset_sizes(kernels: list[str], preset: str) -> list[int]:
    """The catalog sizes of the first known kernel for the ``gpu`` or ``cpu`` preset."""
    for kid in kernels:
        spec: KernelSpec | None = CATALOG.get(kid)
        if spec is not None:
            return list(spec.default_sizes if preset == SIZE_PRESET_GPU else spec.cpu_sizes)
    return []


def split_metrics(text: str) -> list[str]:
    """Free-form metric names separated by commas, spaces or new lines."""
    return [m for m in str(text).replace(",", " ").split() if m]


def build_raw_spec(form: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Turn the builder's dict into a raw spec plus the errors only the form can see.

    Args:
        form: kernels (list), annotations (list, empty = all), size_preset, sizes (text),
            runs, backend, metric_preset, extra_metrics (text), cache_control, clock_control,
            thermal_mode, warmup, gpu, label.

    Returns:
        (raw spec for ``validate_spec``, errors of the ``sizes`` field).
    """
    kernels = list(form.get("kernels") or [])
    preset = form.get("size_preset", SIZE_PRESET_TYPED)
    if preset == SIZE_PRESET_TYPED:
        sizes, errors = parse_sizes(form.get("sizes", ""))
    else:
        sizes, errors = preset_sizes(kernels, preset), []
    param = CATALOG[kernels[0]].parameters[0] if kernels and kernels[0] in CATALOG else "n"
    metrics = list(METRIC_PRESETS.get(form.get("metric_preset", "timing"), ()))
    metrics += split_metrics(form.get("extra_metrics", ""))
    raw: dict[str, Any] = {
        "kernels": kernels,
        "configs": [{param: s} for s in sizes],
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
    return raw, errors


def to_job_spec(form: Mapping[str, Any]) -> tuple[JobSpec | None, list[FieldError]]:
    """Validate the form: (spec, []) when valid, else (None, every FieldError).

    Errors on ``configs`` (the schema's name for sizes) are reported as ``sizes`` so the message
    names the field the user typed in; a configs error is dropped when the sizes text already
    produced one.
    """
    raw, errors = build_raw_spec(form)
    try:
        spec = validate_spec(raw, CATALOG)
    except SpecInvalid as exc:
        for err in exc.errors:
            if err.field.startswith("configs"):
                if errors:
                    continue
                err = FieldError("sizes", err.message, err.hint)
            errors.append(err)
        return None, errors
    return (None, errors) if errors else (spec, [])

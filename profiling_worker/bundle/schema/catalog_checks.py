"""Spec checks that need the kernel catalog: known kernels and annotations, each config value
against its parameter's declared kind, declared default configs, and the byte formula against
the memory of the job's device. Called by :func:`profiling_worker.bundle.schema.spec.validate_spec`;
each appends :class:`FieldError` s to the list it is given. Stdlib only."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from profiling_worker.bundle.schema import configs as cfgs
from profiling_worker.bundle.schema.spec_errors import FieldError


def check_catalog(kernels: tuple[str, ...], configs: tuple[dict[str, Any], ...],
                   annotations: tuple[str, ...] | None, known: Mapping[str, Any],
                   errors: list[FieldError]) -> None:
    """Kernels must be known, take the configs' parameters, and offer the annotations asked."""
    unknown = [k for k in kernels if k not in known]
    if unknown:
        errors.append(FieldError("kernels", f"unknown kernel(s): {', '.join(unknown)}",
                                 f"choose from {', '.join(sorted(known))}"))
        return
    if not kernels or not configs:
        return
    for k in kernels:
        params = tuple(known[k].parameters)
        if tuple(configs[0]) != params:
            errors.append(FieldError("configs", f"kernel {k} takes parameters {list(params)}, "
                                     f"the configs give {list(configs[0])}",
                                     "profile kernels with the same parameters together"))
    all_annotations = {a for k in kernels for a in known[k].annotations}
    if annotations:
        missing = [a for a in annotations if a not in all_annotations]
        if missing:
            errors.append(FieldError("annotations", f"unknown annotation(s): {', '.join(missing)}",
                                     f"choose from {', '.join(sorted(all_annotations))}"))


def check_sizes(kernels: tuple[str, ...], configs: tuple[dict[str, Any], ...],
                 known: Mapping[str, Any], errors: list[FieldError]) -> None:
    """Every value must be of its parameter's declared kind (``configs.KINDS``; sizes, the
    default, are positive integers; so is a parameter no known kernel declares)."""
    kinds = {p: (getattr(known[k], "parameter_kinds", None) or {}).get(p, "size")
             for k in kernels for p in known[k].parameters}
    for i, cfg in enumerate(configs):
        for key in cfg:
            kind, v = kinds.get(key, "size"), cfg[key]
            field = f"configs[{i}].{key}"
            if cfgs.kind_ok(kind, v) or isinstance(v, (Mapping, list, tuple)):
                continue  # a dict or list already has its message
            errors[:] = [e for e in errors if e.field != field]  # the kind says more
            what, fix = cfgs.KINDS.get(kind, cfgs.KINDS["size"])
            errors.append(FieldError(field, f"{v!r} is not {what} (parameter kind {kind!r})",
                                     fix))


def defaults(kernels: tuple[str, ...], known: Mapping[str, Any] | None, backend: str,
              errors: list[FieldError]) -> tuple[dict[str, Any], ...]:
    """The configs the kernels declare (all must declare the same), for a spec without any."""
    if not known or not kernels or any(k not in known for k in kernels):
        return ()
    declared = {k: cfgs.declared_defaults(known[k], backend) for k in kernels}
    if len({json.dumps(d, sort_keys=True) for d in declared.values()}) > 1:
        errors.append(FieldError("configs", "not given, and the kernels declare different "
                                 "default configs", "give configs, or one kernel per job"))
        return ()
    return next(iter(declared.values()))


def check_memory(kernels: Sequence[str], configs: Sequence[Mapping[str, Any]],
                  known: Mapping[str, Any], memory: float, memory_of: str,
                  errors: list[FieldError]) -> None:
    """Refuse configs whose kernel's byte formula (the data it reads and writes at least)
    exceeds ``memory`` bytes, or whose formula fails."""
    for i, cfg in enumerate(configs):
        said = ", ".join(f"{name}={value}" for name, value in cfg.items())  # n=8192, as pages
        for k in kernels:
            try:
                need = cfgs.footprint_bytes(known[k], cfg)
            except Exception as exc:  # the user's formula: any error is theirs to fix
                errors.append(FieldError(f"configs[{i}]", f"kernel {k}'s byte formula fails "
                                         f"for {said}: {type(exc).__name__}: {str(exc)[:200]}",
                                         "fix the bytes= formula of the kernel, or the config"))
                break
            if need is not None and not need <= memory:
                errors.append(FieldError(f"configs[{i}]", f"kernel {k} at {said} moves at least "
                                         f"{cfgs.gib(need)}, more than the "
                                         f"{cfgs.gib(memory)} of {memory_of}",
                                         "choose smaller sizes"))
                break

"""Spec checks that need the kernel catalog: known kernels and annotations, each config value
against its parameter's declared kind, declared default configs, and the memory a config needs
(:mod:`.memory_need`) against the memory of the job's device. Called by
:func:`profiling_worker.bundle.schema.spec.validate_spec`; each appends :class:`FieldError` s to
the list it is given. Stdlib only."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from profiling_worker.bundle.schema import configs as cfgs
from profiling_worker.bundle.schema import memory_need as mn
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
                 errors: list[FieldError], annotations: Sequence[str] | None = None) -> None:
    """Refuse configs whose kernels need more than ``memory`` bytes at once, or whose formula
    fails: the inputs every kernel holds for the chosen ``annotations`` (the spec's; None: all)
    plus the most one call holds on top, by their ``memory`` formulas, else their ``bytes``
    formulas (:mod:`.memory_need` says where the count comes from)."""
    for i, cfg in enumerate(configs):
        said = ", ".join(f"{name}={value}" for name, value in cfg.items())  # n=8192, as pages
        try:
            needs = _needs(kernels, cfg, known, annotations, mn.kernel_need)
        except _FormulaFails as failed:
            exc, which = failed.__cause__, _formula(known[failed.kernel])
            errors.append(FieldError(f"configs[{i}]", f"kernel {failed.kernel}'s {which} formula "
                                     f"fails for {said}: {type(exc).__name__}: {str(exc)[:200]}",
                                     f"fix the {which}= formula of the kernel, or the config"))
            continue
        if needs and not mn.together(needs) <= memory:
            shown = _chosen(needs, known, annotations)
            errors.append(FieldError(f"configs[{i}]", _too_big(needs, said, memory, memory_of,
                                                               shown),
                                     _fix(kernels, cfg, known, annotations, needs, memory)))


def _formula(entry: Any) -> str:
    """The formula the memory check reads of a kernel: ``memory`` where it declares one."""
    return "memory" if callable(getattr(entry, "memory", None)) else "bytes"


class _FormulaFails(Exception):
    """A kernel's memory or byte formula raised (the cause); ``kernel`` names it."""

    def __init__(self, kernel: str):
        super().__init__(kernel)
        self.kernel = kernel


def _needs(kernels: Sequence[str], cfg: Mapping[str, Any], known: Mapping[str, Any],
           annotations: Sequence[str] | None, need: Callable[..., mn.Need | None]
           ) -> list[mn.Need]:
    """``need(kernel, entry, cfg, annotations)`` of each kernel that has a formula.

    Raises:
        _FormulaFails: a kernel's formula raised (the user's: any error is theirs to fix).
    """
    found: list[mn.Need] = []
    for k in kernels:
        try:
            one = need(k, known[k], cfg, annotations)
        except Exception as exc:
            raise _FormulaFails(k) from exc
        found += [one] if one is not None else []
    return found


def _chosen(needs: Sequence[mn.Need], known: Mapping[str, Any],
            annotations: Sequence[str] | None) -> str:
    """The chosen annotations of the one kernel of ``needs`` (``fp32, fp16, bf16``), else ""."""
    if len(needs) != 1:
        return ""
    return ", ".join(mn.chosen_annotations(known[needs[0].kernel].annotations, annotations))


def _too_big(needs: Sequence[mn.Need], said: str, memory: float, memory_of: str,
             annotations: str) -> str:
    """What a config needs, against what ``memory_of`` has; ``annotations``: those whose
    inputs one kernel holds ("" for several kernels)."""
    than = f"more than the {cfgs.gib(memory)} of {memory_of}"
    if not any(n.declared for n in needs):  # byte formulas only: the data one call moves
        top = max(needs, key=lambda n: n.working)
        return f"kernel {top.kernel} at {said} moves at least {cfgs.gib(top.working)}, {than}"
    need = cfgs.gib(mn.together(needs))
    if len(needs) == 1:
        return (f"kernel {needs[0].kernel} at {said} holds {need} at once (the inputs of "
                f"{annotations} and a result), {than}")
    names = ", ".join(n.kernel for n in needs)
    return f"kernels {names} at {said} hold {need} at once (the inputs of each, a result), {than}"


def _fix(kernels: Sequence[str], cfg: Mapping[str, Any], known: Mapping[str, Any],
         annotations: Sequence[str] | None, needs: Sequence[mn.Need], memory: float) -> str:
    """"choose smaller sizes", and what else would fit: fewer annotations (one per kernel:
    each holds its own inputs) or one kernel per job (each keeps its inputs)."""
    fixes = ["choose smaller sizes"]
    try:
        fewest = _needs(kernels, cfg, known, annotations, mn.fewest)
    except _FormulaFails:  # with one annotation a user's formula may fail: no such fix then
        fewest = list(needs)
    if mn.together(fewest) < mn.together(needs) and mn.together(fewest) <= memory:
        fixes.append("fewer annotations")
    if len(needs) > 1 and all(mn.together([n]) <= memory for n in needs):
        fixes.append("one kernel per job")
    return ", or ".join(fixes)

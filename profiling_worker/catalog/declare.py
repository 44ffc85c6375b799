"""The one way to declare a kernel: the :func:`kernel` decorator, used by the built-in catalog
(:mod:`profiling_worker.catalog.builtin`) and by user kernel files alike.

Pure Python (no torch), so the app and spec validation can import the declarations; kernel
bodies import torch (or Triton...) inside the function. Conventions of the formulas: FLOPs and
bytes of one call of an annotation for one config; bytes are the minimum DRAM traffic (every
input read once, every output written once, the "analytic minimum" of the fusion study); a
multiply-add is 2 FLOPs, so an n x n x n matmul is 2n^3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any

Formula = Callable[[str, Mapping[str, Any]], float]
#: ``memory(annotations, config)`` -> (held, working) bytes (see :func:`kernel`).
MemoryFormula = Callable[[Sequence[str], Mapping[str, Any]], tuple[float, float]]
Annotate = Callable[[str], AbstractContextManager[Any]]
BUILTIN_SOURCE = "built-in"
_DECLARED: dict[str, list[Kernel]] = {}  # module name -> kernels declared while it was imported


@dataclass(frozen=True)
class Kernel:
    """One declared kernel: built-in (``source == "built-in"``) or from a user file (``source``
    is the file name). ``run`` is the decorated function; ``setup``, when declared, makes its
    inputs once per config (see :func:`kernel`)."""

    id: str
    parameters: tuple[str, ...]
    annotations: tuple[str, ...]
    default_configs: tuple[Mapping[str, Any], ...]
    run: Callable[..., None]
    flops: Formula | None = None
    bytes: Formula | None = None
    dtype_of: str | Mapping[str, str] = "fp32"
    title: str = ""
    description: str = ""
    parameter_kinds: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    fusion_pairs: tuple[tuple[str, str], ...] = ()
    cpu_configs: tuple[Mapping[str, Any], ...] = ()
    setup: Callable[..., Any] | None = None
    memory: MemoryFormula | None = None

    @property
    def builtin(self) -> bool:
        """True for an entry of the built-in catalog."""
        return self.source == BUILTIN_SOURCE

    def dtype(self, annotation: str) -> str:
        """Data type of an annotation (for the roofline's compute ceiling)."""
        return (self.dtype_of if isinstance(self.dtype_of, str)
                else self.dtype_of.get(annotation, "fp32"))


def kernel(*, id: str, parameters: Sequence[str], annotations: Sequence[str],
           default_configs: Iterable[Mapping[str, Any]], flops: Formula | None = None,
           bytes: Formula | None = None, dtype: str | Mapping[str, str] = "fp32", title: str = "",
           description: str = "", parameter_kinds: Mapping[str, str] | None = None,
           fusion_pairs: Iterable[Sequence[str]] = (),
           cpu_configs: Iterable[Mapping[str, Any]] = (),
           setup: Callable[..., Any] | None = None, memory: MemoryFormula | None = None,
           ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare a kernel (decorator); returns the function unchanged.

    The function is called ``fn(*config_values, annotate=..., device=...)`` once per run and
    runs each region inside ``with annotate("<annotation>"):``.

    Args:
        parameter_kinds: parameter -> "size" (positive int, the default), "int", "float", "str".
        default_configs: the configs a job without ``configs`` takes; ``cpu_configs`` those of
            the cpu backend (default: the first two default configs in the sidebar).
        flops, bytes: ``formula(annotation, config)`` -> FLOPs / minimum DRAM bytes of one call.
        dtype: "fp32"... or annotation -> dtype (the roofline's compute ceiling).
        fusion_pairs: (unfused, fused) annotations that compute the same result (the fusion
            view offers only these).
        setup: ``setup(*config_values, device=..., annotations=...)`` -> inputs, called once
            per config outside any annotation (``annotations``: the ones the job chose) and
            kept until the config changes; the function then also gets ``inputs=``.
        memory: ``memory(annotations, config)`` -> (held, working) bytes for the annotations a
            job chose: what ``setup`` keeps between calls, and the most one call holds on top
            at once (its results). The memory check before a job counts these (see
            :mod:`profiling_worker.bundle.schema.memory_need`); without it, the
            largest ``bytes`` of an annotation, a lower bound.
    """

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        _DECLARED.setdefault(fn.__module__, []).append(Kernel(
            id=id, parameters=tuple(parameters), annotations=tuple(annotations),
            default_configs=tuple(dict(c) for c in default_configs), run=fn, flops=flops,
            bytes=bytes, dtype_of=dtype, title=title or id, description=description,
            parameter_kinds=dict(parameter_kinds or {}),
            fusion_pairs=tuple((str(u), str(f)) for u, f in fusion_pairs),
            cpu_configs=tuple(dict(c) for c in cpu_configs), setup=setup, memory=memory))
        return fn

    return register


def declared(module_name: str, source: str) -> list[Kernel]:
    """The kernels declared by module ``module_name`` (in order), marked with ``source``; each
    is handed out once."""
    return [replace(k, source=source) for k in _DECLARED.pop(module_name, [])]

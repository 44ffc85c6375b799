"""torch bodies of the built-in kernels (worker only: imports torch lazily).

A body takes the config values positionally, allocates its inputs outside any annotation
(cached per config, so runs of a config reuse them), then runs each requested annotation
inside ``annotate(name)``. The same body serves every backend: nsight.annotate on the GPU,
a host timer on the CPU, and a no-op context for warm-up calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

Annotate = Callable[[str], AbstractContextManager[Any]]
_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def _torch() -> Any:
    import torch  # deferred: nsight must be imported first on GPU backends

    return torch


def _matmul_inputs(n: int, device: str, annotations: Sequence[str]) -> dict[str, Any]:
    torch = _torch()
    return {a: (torch.randn(n, n, device=device, dtype=getattr(torch, _DTYPES[a])),
                torch.randn(n, n, device=device, dtype=getattr(torch, _DTYPES[a])))
            for a in annotations}


def _vectors(count: int) -> Callable[[int, str, Sequence[str]], tuple[Any, ...]]:
    def make(n: int, device: str, _: Sequence[str]) -> tuple[Any, ...]:
        torch = _torch()
        return tuple(torch.randn(n, device=device, dtype=torch.float32) for _ in range(count))

    return make


def _softmax_inputs(n: int, device: str, _: Sequence[str]) -> Any:
    return _torch().randn(n, n, device=device, dtype=_torch().float32)


def _run_matmul(inputs: dict[str, Any], annotate: Annotate, annotations: Sequence[str]) -> None:
    for a in annotations:
        x, y = inputs[a]
        with annotate(a):
            x @ y


def _run_scale(inputs: Any, annotate: Annotate, annotations: Sequence[str]) -> None:
    (x,) = inputs
    with annotate(annotations[0]):
        x * 2


def _run_add(inputs: Any, annotate: Annotate, annotations: Sequence[str]) -> None:
    a, b = inputs
    with annotate(annotations[0]):
        a + b


def _run_softmax(inputs: Any, annotate: Annotate, annotations: Sequence[str]) -> None:
    with annotate(annotations[0]):
        _torch().softmax(inputs, dim=-1)


def _run_fusion(inputs: Any, annotate: Annotate, annotations: Sequence[str]) -> None:
    a, b, c = inputs
    for name in annotations:
        with annotate(name):
            if name == "unfused":
                a + b * c  # two kernels: the product makes a round trip through memory
            else:
                _torch().addcmul(a, b, c)


_BODIES: dict[str, tuple[Callable[..., Any], Callable[..., None]]] = {
    "matmul": (_matmul_inputs, _run_matmul),
    "scale": (_vectors(1), _run_scale),
    "vector_add": (_vectors(2), _run_add),
    "softmax": (_softmax_inputs, _run_softmax),
    "fusion": (_vectors(3), _run_fusion),
}


class KernelBody:
    """Callable ``body(*config_values)`` for one kernel and its chosen annotations.

    Inputs are made once per config and kept until the config changes, so only the
    annotated work differs between runs.
    """

    def __init__(self, kernel_id: str, annotations: Sequence[str], device: str,
                 annotate: Annotate):
        self.kernel_id = kernel_id
        self.annotations = tuple(annotations)
        self.device = device
        self.annotate = annotate
        self._make, self._run = _BODIES[kernel_id]
        self._key: tuple[Any, ...] | None = None
        self._inputs: Any = None

    def inputs(self, *config: Any) -> Any:
        """The cached inputs of ``config`` (made on first use, outside any annotation)."""
        if self._key != config:
            self._inputs = None  # free the previous config's tensors before allocating
            self._inputs = self._make(*config, self.device, self.annotations)
            self._key = config
        return self._inputs

    def __call__(self, *config: Any, annotate: Annotate | None = None) -> None:
        self._run(self.inputs(*config), annotate or self.annotate, self.annotations)


def builtin_ids() -> list[str]:
    """Kernel ids that have a torch body here."""
    return list(_BODIES)

"""The built-in kernel catalog, declared with :func:`~profiling_worker.catalog.declare.kernel`
like any user kernel file (formula conventions in :mod:`.declare`).

Importing this module needs no torch (the app validates specs against :data:`CATALOG`); the
bodies import it when they run, on the worker. Each kernel's inputs are declared once, as an
:class:`Operands`: its ``setup`` makes them for the chosen annotations once per config (so runs
of a config reuse them and only the annotated work differs), and its ``memory`` formula, which
the memory check before a job reads, counts the bytes of those very tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from profiling_worker.catalog.declare import BUILTIN_SOURCE, Annotate, Kernel, declared, kernel

ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
_PER_DTYPE = {d: d for d in ELEMENT_BYTES}  # annotation "fp16" computes in fp16
_SQUARE = tuple({"n": s} for s in (1024, 2048, 4096, 8192))


def _torch() -> Any:
    import torch  # deferred: nsight must be imported first on GPU backends

    return torch


@dataclass(frozen=True, eq=False)  # hashed by identity (results is a dict): setup hashes
class Operands:
    """A built-in's inputs, declared once for its ``setup`` and its ``memory`` formula.

    Attributes:
        count: input tensors per set, each of ``shape(*config_values)`` elements (the shape of
            the result too: every built-in's result has its inputs' shape).
        shape: config values (by parameter name or position) -> the tensors' shape.
        per_dtype: one set per chosen annotation, in its dtype (``fp16`` in float16); else one
            fp32 set that every annotation shares.
        results: annotation -> tensors of that shape a call of it holds at once besides the
            inputs (default 1, its result; ``a + b * c`` holds ``b * c`` while it adds: 2).
    """

    count: int
    shape: Callable[..., tuple[int, ...]]
    per_dtype: bool = False
    results: Mapping[str, int] = field(default_factory=dict)

    def _dtype(self, annotation: str) -> str:
        return annotation if self.per_dtype else "fp32"

    def setup(self, *config: Any, device: str, annotations: Sequence[str]
              ) -> dict[str, tuple[Any, ...]]:
        """Annotation -> its ``count`` random input tensors on ``device`` (shared sets are one
        tuple object, so the bytes held are those of :meth:`memory`)."""
        torch = _torch()
        made: dict[str, tuple[Any, ...]] = {}
        for dtype in dict.fromkeys(self._dtype(a) for a in annotations):
            kind = getattr(torch, _DTYPES[dtype])
            made[dtype] = tuple(torch.randn(*self.shape(*config), device=device, dtype=kind)
                                for _ in range(self.count))
        return {a: made[self._dtype(a)] for a in annotations}

    def memory(self, annotations: Sequence[str], config: Mapping[str, Any]
               ) -> tuple[float, float]:
        """(held, working) bytes for ``annotations`` at ``config``: the inputs :meth:`setup`
        makes (kept between calls), and the most one annotation's call holds on top at once
        (``results`` tensors of the shape in its dtype). Library workspaces are not counted."""
        elements = math.prod(self.shape(**config))
        dtypes = dict.fromkeys(self._dtype(a) for a in annotations)
        held = sum(self.count * elements * ELEMENT_BYTES[d] for d in dtypes)
        working = max((self.results.get(a, 1) * elements * ELEMENT_BYTES[self._dtype(a)]
                       for a in annotations), default=0)
        return float(held), float(working)


def _declared(operands: Operands) -> dict[str, Any]:
    """The ``setup`` and ``memory`` arguments of :func:`kernel` from one :class:`Operands`."""
    return {"setup": operands.setup, "memory": operands.memory}


def _vector(n: int) -> tuple[int, ...]:
    return (n,)


def _on_vectors(count: int, **results: int) -> dict[str, Any]:
    """The declaration shared by the kernels over ``count`` vectors of n fp32 elements."""
    return {"parameters": ("n",),
            "default_configs": tuple({"n": s} for s in (1 << 20, 1 << 24, 1 << 26, 1 << 28)),
            "cpu_configs": tuple({"n": s} for s in (1 << 16, 1 << 18, 1 << 20)),
            **_declared(Operands(count, _vector, results=results))}


_SQUARES = Operands(2, lambda n: (n, n), per_dtype=True)
_BATCHES = Operands(2, lambda batch, n: (batch, n, n), per_dtype=True)
_SOFTMAX_INPUT = Operands(1, lambda n: (n, n))
_ROWS_INPUT = Operands(1, lambda rows, cols: (rows, cols))


def _products(inputs: dict[str, Any], annotate: Annotate) -> None:
    for a, (x, y) in inputs.items():
        with annotate(a):
            x @ y


@kernel(id="matmul", title="Matrix multiply a @ b (fp32, fp16, bf16)",
        description="torch.matmul of two n x n matrices, one annotation per data type.",
        parameters=("n",), annotations=("fp32", "fp16", "bf16"), default_configs=_SQUARE,
        cpu_configs=({"n": 64}, {"n": 128}, {"n": 256}), dtype=_PER_DTYPE,
        flops=lambda a, c: 2.0 * c["n"] ** 3,
        bytes=lambda a, c: 3.0 * c["n"] ** 2 * ELEMENT_BYTES[a], **_declared(_SQUARES))
def matmul(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    _products(inputs, annotate)


@kernel(id="scale", title="Scale x * 2 (fp32)",
        description="Multiply a vector of n fp32 elements by 2: reads n, writes n.",
        annotations=("x*2",), flops=lambda a, c: float(c["n"]),
        bytes=lambda a, c: 2.0 * 4 * c["n"], **_on_vectors(1))
def scale(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    for a, (x,) in inputs.items():
        with annotate(a):
            x * 2


@kernel(id="vector_add", title="Vector add a + b (fp32)",
        description="Add two vectors of n fp32 elements: reads 2n, writes n.",
        annotations=("a+b",), flops=lambda a, c: float(c["n"]),
        bytes=lambda a, c: 3.0 * 4 * c["n"], **_on_vectors(2))
def vector_add(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    for a, (x, y) in inputs.items():
        with annotate(a):
            x + y


def _row_softmax(inputs: dict[str, Any], annotate: Annotate) -> None:
    for a, (x,) in inputs.items():
        with annotate(a):
            _torch().softmax(x, dim=-1)


@kernel(id="softmax", title="Softmax over rows of an n x n matrix (fp32)",
        description="torch.softmax(x, dim=-1) on n x n fp32: reads n^2, writes n^2; "
        "about 5 FLOPs per element (max, subtract, exp, sum, divide).",
        parameters=("n",), annotations=("softmax",), default_configs=_SQUARE,
        cpu_configs=({"n": 128}, {"n": 256}, {"n": 512}),
        flops=lambda a, c: 5.0 * c["n"] ** 2, bytes=lambda a, c: 2.0 * 4 * c["n"] ** 2,
        **_declared(_SOFTMAX_INPUT))
def softmax(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    _row_softmax(inputs, annotate)


@kernel(id="fusion", title="Fusion pair: a + b * c (unfused) vs torch.addcmul (fused)",
        description="Both compute a + b*c on n fp32 elements. Unfused launches a multiply "
        "and an add (the product makes a round trip through memory); addcmul is one kernel. "
        "Bytes are the analytic minimum (3 reads, 1 write) for both.",
        annotations=("unfused", "fused"), flops=lambda a, c: 2.0 * c["n"],
        bytes=lambda a, c: 4.0 * 4 * c["n"], fusion_pairs=[("unfused", "fused")],
        **_on_vectors(3, unfused=2))
def fusion(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    for name, (a, b, c) in inputs.items():
        with annotate(name):
            if name == "unfused":
                a + b * c  # two kernels: the product makes a round trip through memory
            else:
                _torch().addcmul(a, b, c)


@kernel(id="batched_matmul", title="Batched matrix multiply a @ b (fp32, fp16, bf16)",
        description="torch.matmul of batch pairs of n x n matrices (torch.bmm), one annotation "
        "per data type: reads 2 batch n^2, writes batch n^2.",
        parameters=("batch", "n"), annotations=("fp32", "fp16", "bf16"),
        default_configs=[{"batch": b, "n": n} for b in (8, 64) for n in (512, 2048)],
        cpu_configs=[{"batch": 4, "n": 64}, {"batch": 8, "n": 128}], dtype=_PER_DTYPE,
        flops=lambda a, c: 2.0 * c["batch"] * c["n"] ** 3,
        bytes=lambda a, c: 3.0 * c["batch"] * c["n"] ** 2 * ELEMENT_BYTES[a],
        **_declared(_BATCHES))
def batched_matmul(batch: int, n: int, *, inputs: dict[str, Any], annotate: Annotate,
                   device: str) -> None:
    _products(inputs, annotate)


@kernel(id="softmax_rows", title="Softmax over rows of a rows x cols matrix (fp32)",
        description="torch.softmax(x, dim=-1) on rows x cols fp32 (attention-like shapes: "
        "many short rows or few long ones): reads rows cols, writes rows cols; about 5 FLOPs "
        "per element (max, subtract, exp, sum, divide).",
        parameters=("rows", "cols"), annotations=("softmax",),
        default_configs=[{"rows": r, "cols": c} for r in (1024, 16384) for c in (1024, 8192)],
        cpu_configs=[{"rows": 64, "cols": 512}, {"rows": 512, "cols": 64}],
        flops=lambda a, c: 5.0 * c["rows"] * c["cols"],
        bytes=lambda a, c: 2.0 * 4 * c["rows"] * c["cols"], **_declared(_ROWS_INPUT))
def softmax_rows(rows: int, cols: int, *, inputs: dict[str, Any], annotate: Annotate,
                 device: str) -> None:
    _row_softmax(inputs, annotate)


CATALOG: dict[str, Kernel] = {k.id: k for k in declared(__name__, BUILTIN_SOURCE)}

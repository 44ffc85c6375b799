"""The built-in kernel catalog, declared with :func:`~profiling_worker.catalog.declare.kernel`
like any user kernel file (formula conventions in :mod:`.declare`).

Importing this module needs no torch (the app validates specs against :data:`CATALOG`); the
bodies import it when they run, on the worker. Each ``setup`` makes the inputs of the chosen
annotations once per config, so runs of a config reuse them and only the annotated work differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from profiling_worker.catalog.declare import BUILTIN_SOURCE, Annotate, Kernel, declared, kernel

ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
_PER_DTYPE = {d: d for d in ELEMENT_BYTES}  # annotation "fp16" computes in fp16
_SQUARE = tuple({"n": s} for s in (1024, 2048, 4096, 8192))
_ON_VECTORS: dict[str, Any] = {  # the declaration shared by the kernels over n fp32 elements
    "parameters": ("n",),
    "default_configs": tuple({"n": s} for s in (1 << 20, 1 << 24, 1 << 26, 1 << 28)),
    "cpu_configs": tuple({"n": s} for s in (1 << 16, 1 << 18, 1 << 20))}


def _torch() -> Any:
    import torch  # deferred: nsight must be imported first on GPU backends

    return torch


def _matrices(*shape: int, device: str, annotations: Sequence[str]) -> dict[str, Any]:
    """Two random ``shape`` operands per annotation, in the annotation's dtype."""
    torch = _torch()
    return {a: tuple(torch.randn(*shape, device=device, dtype=getattr(torch, _DTYPES[a]))
                     for _ in range(2)) for a in annotations}


def _vectors(count: int) -> Any:
    def setup(n: int, *, device: str, annotations: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        torch = _torch()
        shared = tuple(torch.randn(n, device=device, dtype=torch.float32) for _ in range(count))
        return dict.fromkeys(annotations, shared)

    return setup


def _square_matrices(n: int, *, device: str, annotations: Sequence[str]) -> dict[str, Any]:
    return _matrices(n, n, device=device, annotations=annotations)


def _batched_matrices(batch: int, n: int, *, device: str, annotations: Sequence[str]
                      ) -> dict[str, Any]:
    return _matrices(batch, n, n, device=device, annotations=annotations)


def _products(inputs: dict[str, Any], annotate: Annotate) -> None:
    for a, (x, y) in inputs.items():
        with annotate(a):
            x @ y


@kernel(id="matmul", title="Matrix multiply a @ b (fp32, fp16, bf16)",
        description="torch.matmul of two n x n matrices, one annotation per data type.",
        parameters=("n",), annotations=("fp32", "fp16", "bf16"), default_configs=_SQUARE,
        cpu_configs=({"n": 64}, {"n": 128}, {"n": 256}), dtype=_PER_DTYPE,
        flops=lambda a, c: 2.0 * c["n"] ** 3,
        bytes=lambda a, c: 3.0 * c["n"] ** 2 * ELEMENT_BYTES[a], setup=_square_matrices)
def matmul(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    _products(inputs, annotate)


@kernel(id="scale", title="Scale x * 2 (fp32)",
        description="Multiply a vector of n fp32 elements by 2: reads n, writes n.",
        annotations=("x*2",), flops=lambda a, c: float(c["n"]),
        bytes=lambda a, c: 2.0 * 4 * c["n"], setup=_vectors(1), **_ON_VECTORS)
def scale(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    for a, (x,) in inputs.items():
        with annotate(a):
            x * 2


@kernel(id="vector_add", title="Vector add a + b (fp32)",
        description="Add two vectors of n fp32 elements: reads 2n, writes n.",
        annotations=("a+b",), flops=lambda a, c: float(c["n"]),
        bytes=lambda a, c: 3.0 * 4 * c["n"], setup=_vectors(2), **_ON_VECTORS)
def vector_add(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    for a, (x, y) in inputs.items():
        with annotate(a):
            x + y


def _fp32_matrix(rows: int, cols: int, *, device: str, annotations: Sequence[str]
                 ) -> dict[str, Any]:
    return dict.fromkeys(annotations, _torch().randn(rows, cols, device=device,
                                                     dtype=_torch().float32))


def _square(n: int, *, device: str, annotations: Sequence[str]) -> dict[str, Any]:
    return _fp32_matrix(n, n, device=device, annotations=annotations)


def _row_softmax(inputs: dict[str, Any], annotate: Annotate) -> None:
    for a, x in inputs.items():
        with annotate(a):
            _torch().softmax(x, dim=-1)


@kernel(id="softmax", title="Softmax over rows of an n x n matrix (fp32)",
        description="torch.softmax(x, dim=-1) on n x n fp32: reads n^2, writes n^2; "
        "about 5 FLOPs per element (max, subtract, exp, sum, divide).",
        parameters=("n",), annotations=("softmax",), default_configs=_SQUARE,
        cpu_configs=({"n": 128}, {"n": 256}, {"n": 512}),
        flops=lambda a, c: 5.0 * c["n"] ** 2, bytes=lambda a, c: 2.0 * 4 * c["n"] ** 2,
        setup=_square)
def softmax(n: int, *, inputs: dict[str, Any], annotate: Annotate, device: str) -> None:
    _row_softmax(inputs, annotate)


@kernel(id="fusion", title="Fusion pair: a + b * c (unfused) vs torch.addcmul (fused)",
        description="Both compute a + b*c on n fp32 elements. Unfused launches a multiply "
        "and an add (the product makes a round trip through memory); addcmul is one kernel. "
        "Bytes are the analytic minimum (3 reads, 1 write) for both.",
        annotations=("unfused", "fused"), flops=lambda a, c: 2.0 * c["n"],
        bytes=lambda a, c: 4.0 * 4 * c["n"], fusion_pairs=[("unfused", "fused")],
        setup=_vectors(3), **_ON_VECTORS)
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
        setup=_batched_matrices)
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
        bytes=lambda a, c: 2.0 * 4 * c["rows"] * c["cols"], setup=_fp32_matrix)
def softmax_rows(rows: int, cols: int, *, inputs: dict[str, Any], annotate: Annotate,
                 device: str) -> None:
    _row_softmax(inputs, annotate)


CATALOG: dict[str, Kernel] = {k.id: k for k in declared(__name__, BUILTIN_SOURCE)}

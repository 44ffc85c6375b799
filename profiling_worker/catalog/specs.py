"""Declarations of the built-in kernels: parameters, annotations, default sizes and the
analytic FLOP and byte counts per annotation as functions of the config.

Pure Python (no torch), so the app and spec validation can import it. The bodies that run
on the GPU live in :mod:`profiling_worker.catalog.kernels`.

Byte counts are the minimum DRAM traffic of the mathematical operation: every input read
once and every output written once (the "analytic minimum" of the fusion study). FLOP counts
use the usual conventions: a multiply-add is 2 FLOPs, so an n x n x n matmul is 2n^3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Config = Mapping[str, Any]
ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class KernelSpec:
    """One catalog entry.

    ``flops(annotation, config)`` and ``bytes(annotation, config)`` return floats (FLOPs, bytes)
    for one call of the annotation with that config. ``fusion_pairs`` lists (unfused, fused)
    annotations that compute the same result, the only pairs the fusion comparison offers.
    """

    id: str
    title: str
    description: str
    parameters: tuple[str, ...]
    annotations: tuple[str, ...]
    default_sizes: tuple[int, ...]
    cpu_sizes: tuple[int, ...]
    flops: Callable[[str, Config], float]
    bytes: Callable[[str, Config], float]
    dtype: Callable[[str], str]
    fusion_pairs: tuple[tuple[str, str], ...] = ()


def _matmul_dtype(annotation: str) -> str:
    return annotation


def _fp32(_: str) -> str:
    return "fp32"


CATALOG: dict[str, KernelSpec] = {
    spec.id: spec
    for spec in (
        KernelSpec(
            id="matmul",
            title="Matrix multiply a @ b (fp32, fp16, bf16)",
            description="torch.matmul of two n x n matrices, one annotation per data type.",
            parameters=("n",),
            annotations=("fp32", "fp16", "bf16"),
            default_sizes=(1024, 2048, 4096, 8192),
            cpu_sizes=(64, 128, 256),
            flops=lambda a, c: 2.0 * c["n"] ** 3,
            bytes=lambda a, c: 3.0 * c["n"] ** 2 * ELEMENT_BYTES[a],
            dtype=_matmul_dtype,
        ),
        KernelSpec(
            id="scale",
            title="Scale x * 2 (fp32)",
            description="Multiply a vector of n fp32 elements by 2: reads n, writes n.",
            parameters=("n",),
            annotations=("x*2",),
            default_sizes=(1 << 20, 1 << 24, 1 << 26, 1 << 28),
            cpu_sizes=(1 << 16, 1 << 18, 1 << 20),
            flops=lambda a, c: float(c["n"]),
            bytes=lambda a, c: 2.0 * 4 * c["n"],
            dtype=_fp32,
        ),
        KernelSpec(
            id="vector_add",
            title="Vector add a + b (fp32)",
            description="Add two vectors of n fp32 elements: reads 2n, writes n.",
            parameters=("n",),
            annotations=("a+b",),
            default_sizes=(1 << 20, 1 << 24, 1 << 26, 1 << 28),
            cpu_sizes=(1 << 16, 1 << 18, 1 << 20),
            flops=lambda a, c: float(c["n"]),
            bytes=lambda a, c: 3.0 * 4 * c["n"],
            dtype=_fp32,
        ),
        KernelSpec(
            id="softmax",
            title="Softmax over rows of an n x n matrix (fp32)",
            description="torch.softmax(x, dim=-1) on n x n fp32: reads n^2, writes n^2; "
            "about 5 FLOPs per element (max, subtract, exp, sum, divide).",
            parameters=("n",),
            annotations=("softmax",),
            default_sizes=(1024, 2048, 4096, 8192),
            cpu_sizes=(128, 256, 512),
            flops=lambda a, c: 5.0 * c["n"] ** 2,
            bytes=lambda a, c: 2.0 * 4 * c["n"] ** 2,
            dtype=_fp32,
        ),
        KernelSpec(
            id="fusion",
            title="Fusion pair: a + b * c (unfused) vs torch.addcmul (fused)",
            description="Both compute a + b*c on n fp32 elements. Unfused launches a multiply "
            "and an add (the product makes a round trip through memory); addcmul is one kernel. "
            "Bytes are the analytic minimum (3 reads, 1 write) for both.",
            parameters=("n",),
            annotations=("unfused", "fused"),
            default_sizes=(1 << 20, 1 << 24, 1 << 26, 1 << 28),
            cpu_sizes=(1 << 16, 1 << 18, 1 << 20),
            flops=lambda a, c: 2.0 * c["n"],
            bytes=lambda a, c: 4.0 * 4 * c["n"],
            dtype=_fp32,
            fusion_pairs=(("unfused", "fused"),),
        ),
    )
}


def kernel_ids() -> list[str]:
    """Ids of the built-in kernels, in catalog order."""
    return list(CATALOG)

"""The A/A and power study's kernel (benchmarks/gate_aa.py, issue 21): per config ``n`` a GEMM
region (fp16 ``n x n`` matmul, compute-bound) and a stream region (``x * 2`` over ``4 n^2``
fp32 elements, memory-bound), inputs made outside the regions. On the H200, n=1024 gives the
small kernels (fp16 GEMM about 7 µs, x*2 of 16 MiB about 5-8 µs), n=2048 and 4096 the sweeps.
The cpu backend runs fp32 at its own small sizes."""

from profiling_worker.catalog.user import kernel


def _setup(n, *, device, annotations):
    import torch

    dtype = torch.float32 if device == "cpu" else torch.float16
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    return {"a": a, "b": b, "x": torch.randn(4 * n * n, device=device)}


@kernel(id="gate_aa", parameters=("n",), annotations=("gemm", "stream"),
        default_configs=[{"n": 1024}, {"n": 2048}, {"n": 4096}],
        cpu_configs=[{"n": 64}, {"n": 128}, {"n": 256}],
        flops=lambda a, c: 2.0 * c["n"] ** 3 if a == "gemm" else 4.0 * c["n"] ** 2,
        bytes=lambda a, c: 6.0 * c["n"] ** 2 if a == "gemm" else 32.0 * c["n"] ** 2,
        dtype={"gemm": "fp16", "stream": "fp32"}, setup=_setup,
        title="A/A study: a GEMM and a stream per size")
def gate_aa(n, *, annotate, device, inputs):
    with annotate("gemm"):
        inputs["a"] @ inputs["b"]
    with annotate("stream"):
        inputs["x"] * 2

"""A Triton vector add against torch, swept over the block size (speedup per block size).

Regions ``torch`` (a + b) and ``triton`` (the Triton kernel with BLOCK_SIZE = block_size).
Needs a CUDA GPU and Triton; the first call per block size compiles, which the worker's
warm-up runs outside the annotations.
"""

from profiling_worker.catalog.user import kernel

_KERNEL = None


def _triton_kernel():
    global _KERNEL
    if _KERNEL is None:
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask)
                     + tl.load(y_ptr + offsets, mask=mask), mask=mask)

        _KERNEL = add_kernel
    return _KERNEL


@kernel(id="triton_vector_add", parameters=("n", "block_size"), annotations=("torch", "triton"),
        default_configs=[{"n": n, "block_size": bs} for n in (1 << 22, 1 << 26)
                         for bs in (128, 256, 512, 1024)],
        flops=lambda a, c: float(c["n"]), bytes=lambda a, c: 12.0 * c["n"], dtype="fp32",
        title="Triton vector add vs torch (per block size)")
def triton_vector_add(n, block_size, *, annotate, device):
    import torch
    import triton

    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    out = torch.empty_like(x)
    add = _triton_kernel()
    with annotate("torch"):
        x + y
    with annotate("triton"):
        add[(triton.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)

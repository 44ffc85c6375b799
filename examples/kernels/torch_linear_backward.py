"""A torch op with backward: y = x @ W^T + b, then y.sum().backward().

Regions: ``forward`` (the linear layer) and ``backward`` (its gradient kernels). On a GPU the
backward kernels run on autograd's device thread; nsight-python >= 1.1 (start/end NVTX ranges,
the CUPTI backend) sees them, 0.9.x launch mode does not (NVTX push/pop ranges are per thread).
"""

from profiling_worker.catalog.user import kernel


def _flops(annotation, c):
    forward = 2.0 * c["batch"] * c["features"] * c["features"]
    return forward if annotation == "forward" else 2.0 * forward  # dX and dW


def _bytes(annotation, c):
    b, f = c["batch"], c["features"]
    io = 4.0 * (b * f + f * f + b * f)  # x, W, y (fp32)
    return io if annotation == "forward" else 2.0 * io


@kernel(id="linear_backward", parameters=("batch", "features"), annotations=("forward", "backward"),
        default_configs=[{"batch": 4096, "features": f} for f in (1024, 2048, 4096)],
        flops=_flops, bytes=_bytes, dtype="fp32",
        title="torch.nn.functional.linear forward and backward (fp32)",
        description="Forward y = x W^T + b and backward of y.sum(): dX and dW GEMMs.")
def linear_backward(batch, features, *, annotate, device):
    import torch

    x = torch.randn(batch, features, device=device, requires_grad=True)
    w = torch.randn(features, features, device=device, requires_grad=True)
    b = torch.randn(features, device=device, requires_grad=True)
    with annotate("forward"):
        y = torch.nn.functional.linear(x, w, b)
    loss = y.sum()
    with annotate("backward"):
        loss.backward()
    if device == "cuda":
        torch.cuda.synchronize()  # backward kernels are launched from autograd's thread

"""A CUDA C++ SAXPY compiled at run time with cuda.core, against torch's a * x + y.

Regions ``torch`` and ``cuda_cpp``. The kernel is ``extern "C"`` so Nsight Compute and CUPTI
see the same name. Needs a CUDA GPU and cuda-core (>= 0.3).
"""

from profiling_worker.catalog.user import kernel

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
_COMPILED = {}


def _saxpy(device_index):
    if device_index not in _COMPILED:
        from cuda.core import Device, Program, ProgramOptions

        dev = Device(device_index)
        dev.set_current()
        arch = "".join(str(v) for v in dev.compute_capability)
        program = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{arch}"))
        _COMPILED[device_index] = (dev, program.compile("cubin").get_kernel("saxpy"))
    return _COMPILED[device_index]


@kernel(id="cuda_core_saxpy", parameters=("n",), annotations=("torch", "cuda_cpp"),
        default_configs=[{"n": 1 << s} for s in (20, 24, 26)],
        flops=lambda a, c: 2.0 * c["n"], bytes=lambda a, c: 12.0 * c["n"], dtype="fp32",
        title="CUDA C++ SAXPY via cuda.core vs torch")
def cuda_core_saxpy(n, *, annotate, device):
    import numpy as np
    import torch
    from cuda.core import LaunchConfig, launch

    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    out = torch.empty_like(x)
    dev, saxpy = _saxpy(torch.cuda.current_device())
    block = 256
    config = LaunchConfig(grid=(n + block - 1) // block, block=block)
    with annotate("torch"):
        2.0 * x + y
    torch.cuda.synchronize()  # inputs ready before launching on cuda.core's stream
    # cuda.core takes numpy scalars; a device pointer is passed as a 64-bit integer
    args = (np.float32(2.0), *(np.uint64(t.data_ptr()) for t in (x, y, out)), np.uint64(n))
    with annotate("cuda_cpp"):
        launch(dev.default_stream, config, saxpy, *args)
    dev.default_stream.sync()

"""A program of several kernels, no NVTX, whose grids change: each of 6 steps scales two buffers
of 2048 x 512 and 2045 x 512 floats (one elementwise kernel at two grid sizes), then a softmax.

Record: ncu -o grids python3 grids.py (and ncu -i grids.ncu-rep --csv --page raw > grids_raw.csv).
Right reading: the elementwise kernel is two configs (one per grid) of 6 runs of one launch each,
never 6 runs adding both grids' launches; the softmax one config of 6 runs.
"""
import torch

a = torch.randn(2048 * 512, device="cuda")
b = torch.randn(2045 * 512, device="cuda")
x = torch.randn(1024, 1024, device="cuda")
torch.cuda.synchronize()
for _ in range(6):
    a.mul_(1.0001)
    b.mul_(1.0001)
    torch.softmax(x, dim=-1)
torch.cuda.synchronize()

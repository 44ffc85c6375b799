"""A small torch program with no NVTX ranges: what `ncu -o rep python script.py` sees most often.

Launches, per iteration: the two kernels of unfused ``a + b * c`` (mul, add) on 1 Mi fp32
elements, then one fp16 1024^3 matmul. Three iterations; inputs made once.
"""
import torch

n = 1 << 20
a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
x = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
for _ in range(3):
    a + b * c
    x @ x
torch.cuda.synchronize()

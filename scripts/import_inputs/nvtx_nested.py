"""NVTX push/pop ranges nested two deep and a start/end range, 3 passes (issue 20's CSV and text cases).

Per pass: `x * 2` inside push/pop `outer` > `scale`; `x + y` inside push/pop `outer` and start/end
`add_phase`. One `torch.randn` fill before any range.
"""
import torch

x = torch.randn(1 << 22, device="cuda")
torch.cuda.synchronize()
for _ in range(3):
    torch.cuda.nvtx.range_push("outer")
    torch.cuda.nvtx.range_push("scale")
    y = x * 2
    torch.cuda.nvtx.range_pop()
    rid = torch.cuda.nvtx.range_start("add_phase")
    z = x + y
    torch.cuda.nvtx.range_end(rid)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

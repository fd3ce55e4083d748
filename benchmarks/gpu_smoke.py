"""A short program that launches most CUDA kernels once or twice, for compute-sanitizer on the GPU machine.

A CNN and an MLP train for two steps on ``cuda`` (conv, pool, relu, linear, cross-entropy, layer norm,
softmax, Adam and SGD), followed by a few elementwise, reduction, indexing, cast and float16 matmul ops and the
flash-attention kernels.
It prints the loss of each step and the host fallbacks seen; under ``compute-sanitizer --tool memcheck``
an out-of-bounds or misaligned access in any of these kernels is reported with the kernel's name.

    compute-sanitizer --tool memcheck python3 benchmarks/gpu_smoke.py
    python benchmarks/gpu_smoke.py cpu     # the same program on the CPU
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tinygrad_like as tl  # noqa: E402
import tinygrad_like.nn as nn  # noqa: E402
import tinygrad_like.nn.functional as F  # noqa: E402
from tinygrad_like.device import get_device  # noqa: E402


def main(dev: str = "cuda") -> int:
    if dev == "cuda" and not tl.cuda.is_available():
        print(f"CUDA is not available: {tl.cuda.unavailable_reason()}")
        return 2
    tl.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(16 * 7 * 7, 10)).to(dev)
    mlp = nn.Sequential(nn.Linear(33, 65), nn.LayerNorm(65), nn.Tanh(), nn.Linear(65, 7)).to(dev)
    opts = [tl.optim.Adam(cnn.parameters(), lr=1e-3), tl.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)]
    x = tl.randn(5, 1, 28, 28, device=dev)
    y = tl.randint(0, 10, (5,), device=dev)
    xm = tl.randn(13, 33, device=dev)
    ym = tl.randint(0, 7, (13,), device=dev)
    for step in range(2):
        for o in opts:
            o.zero_grad()
        loss = F.cross_entropy(cnn(x), y) + F.cross_entropy(mlp(xm), ym)
        loss = loss + F.softmax(mlp(xm), dim=-1).max(dim=1)[0].mean()
        loss.backward()
        for o in opts:
            o.step()
        print(f"step {step}: loss {loss.item():.6f}")
    a = tl.randn(37, 29, device=dev)
    b = tl.randn(29, 41, device=dev)
    misc = [(a @ b).sum(), a.exp().mean(dim=0).sum(), a[a > 0].sum(), a[tl.tensor([3, 1, 36], device=dev)].sum(),
            a.half().float().sum(), (a.half() @ b.half()).float().sum(), a.argmax(dim=1).float().sum(),
            a.transpose(0, 1).contiguous().sum(), (a.int() & 3).sum().float()]
    # flash attention (float32 and float16, causal and masked, both head-dim templates), forward and backward
    for dtype, (B, H, T, hs) in ((tl.float32, (2, 3, 37, 24)), (tl.float16, (1, 2, 70, 100))):
        q, k, v = (tl.randn(B, H, T, hs, device=dev).to(dtype).requires_grad_() for _ in range(3))
        mask = tl.randn(T, T, device=dev).to(dtype)
        for kw in ({"is_causal": True}, {"attn_mask": mask}):
            F.scaled_dot_product_attention(q, k, v, **kw).float().sum().backward()
        misc.append(q.grad.float().abs().sum() + k.grad.float().abs().sum() + v.grad.float().abs().sum())
    misc.append(tl.randint(-5, 9, (3000,), device=dev).max().float())  # (reduce_minmax_i64, two passes)
    print("misc:", [round(float(t.item()), 4) for t in misc])
    if dev == "cuda":
        print("fallbacks:", dict(get_device(dev).raw_backend.fallbacks))
        tl.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))  # an optional device name: `cpu` checks the program itself

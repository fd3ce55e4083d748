"""einops in a learner's model: a ViT-style patch embedding with einops.layers.torch.Rearrange, attention heads split
with rearrange, pooling with reduce, repeat for a class token; trained a few steps; and einops on the four models.

Written against PyTorch and einops. Prints one JSON line per step ({"step", "loss"}) and summary lines.
"""
import json

import numpy as np
import torch
import torch.nn as nn
from einops import einsum, pack, rearrange, reduce, repeat, unpack
from einops.layers.torch import Rearrange, Reduce
from zoo import all_models, numpy_init


class PatchAttention(nn.Module):
    def __init__(self, patch=4, dim=16, heads=2, classes=3):
        super().__init__()
        self.heads = heads
        self.embed = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
                                   nn.Linear(patch * patch, dim))
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.head = nn.Sequential(Reduce("b n d -> b d", "mean"), nn.LayerNorm(dim), nn.Linear(dim, classes))

    def forward(self, img):
        x = self.embed(img)
        cls = repeat(self.cls, "1 1 d -> b 1 d", b=x.shape[0])
        x, ps = pack([cls, x], "b * d")
        q, k, v = rearrange(self.qkv(x), "b n (three h d) -> three b h n d", three=3, h=self.heads)
        att = einsum(q, k, "b h i d, b h j d -> b h i j").softmax(dim=-1)
        y = rearrange(att @ v, "b h n d -> b n (h d)")
        cls_out, _ = unpack(y, ps, "b * d")
        return self.head(x + y) + reduce(cls_out, "b 1 d -> b 1", "max")


rng = np.random.default_rng(5)
images = torch.from_numpy(rng.standard_normal((24, 1, 8, 8)).astype(np.float32))
labels = torch.from_numpy(rng.integers(0, 3, 24))
model = numpy_init(PatchAttention(), seed=4)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(20):
    loss = nn.functional.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(json.dumps({"step": step, "loss": loss.item()}))

for name, net, x in all_models():
    y = net(x)
    flat = rearrange(y, "b ... -> b (...)")
    print(json.dumps({"model": name, "flat": list(flat.shape), "max": reduce(y, "b ... -> b", "max").tolist(),
                      "tiled": list(repeat(x, "b ... -> (b r) ...", r=2).shape)}))

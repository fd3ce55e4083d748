"""Gradient accumulation over micro-batches with loss scaling, clip_grad_norm_ and clip_grad_value_, a frozen
layer (requires_grad_(False)), parameter groups with their own learning rates, and zero_grad(set_to_none=True).

Written against PyTorch only. Prints one JSON line per optimizer step ({"step", "loss", "norm"}).
"""
import json

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(14)
X = torch.from_numpy(rng.standard_normal((64, 10)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 4, 64))
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
model.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.4).astype(np.float32))
                       for k, v in model.state_dict().items()})
model[0].requires_grad_(False)
optimizer = torch.optim.SGD([{"params": model[2].parameters(), "lr": 0.05},
                             {"params": model[4].parameters()}], lr=0.1, momentum=0.9, nesterov=True,
                            weight_decay=1e-4)
accum = 4
for step in range(20):
    total = 0.0
    for micro in range(accum):
        idx = slice(((step * accum + micro) * 8) % 64, ((step * accum + micro) * 8) % 64 + 8)
        loss = nn.functional.cross_entropy(model(X[idx]), y[idx]) / accum
        loss.backward()
        total += loss.item()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(json.dumps({"step": step, "loss": total, "norm": norm.item(),
                      "frozen_grad_is_none": model[0].weight.grad is None,
                      "grads_cleared": model[2].weight.grad is None}))

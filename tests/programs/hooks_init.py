"""Inspecting a model as course notebooks do: model.apply(init_weights) with nn.init, forward hooks that record
activation statistics per layer, a full backward hook on a module, named_modules/named_buffers/state_dict keys,
parameter counts, and a tensor hook that rescales a gradient.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "act_std"}) and summaries.
"""
import json

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(17)
model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 3))


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.zeros_(m.bias)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(rng.standard_normal(tuple(m.weight.shape)).astype(np.float32)))
            m.weight.mul_(nn.init.calculate_gain("relu") / m.weight.shape[1] ** 0.5)
    elif isinstance(m, nn.BatchNorm1d):
        nn.init.ones_(m.weight)
        nn.init.constant_(m.bias, 0.1)


model.apply(init_weights)
stats = {}


def record(name):
    def hook(module, inputs, output):
        stats[name] = output.detach().std().item()
    return hook


handles = [m.register_forward_hook(record(name)) for name, m in model.named_modules() if isinstance(m, nn.ReLU)]
grad_norms = []
model[5].register_full_backward_hook(lambda m, gin, gout: grad_norms.append(gout[0].norm().item()))
X = torch.from_numpy(rng.standard_normal((32, 8)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 3, 32))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
for step in range(20):
    out = model(X)
    if step == 0:
        out.register_hook(lambda g: g * 2)
    loss = nn.functional.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(json.dumps({"step": step, "loss": loss.item(), "act_std": [stats[k] for k in sorted(stats)],
                      "out_grad_norm": grad_norms[-1]}))
for h in handles:
    h.remove()
stats.clear()
model(X)
print(json.dumps({"hooks_removed": not stats, "modules": [n for n, _ in model.named_modules()],
                  "buffers": [n for n, _ in model.named_buffers()], "state_keys": list(model.state_dict()),
                  "params": sum(p.numel() for p in model.parameters() if p.requires_grad),
                  "bn_tracked": model[1].num_batches_tracked.item()}))

"""Learning-rate schedules as lectures compare them: warmup with LambdaLR chained into cosine annealing with
SequentialLR, OneCycleLR, ReduceLROnPlateau on a validation loss, MultiStepLR, with a real model being trained.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "lrs"}).
"""
import json

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
)

rng = np.random.default_rng(13)
X = torch.from_numpy(rng.standard_normal((48, 5)).astype(np.float32))
y = torch.from_numpy((np.sin(X.numpy().sum(1, keepdims=True))).astype(np.float32))


def make():
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
    init = np.random.default_rng(1)
    model.load_state_dict({k: torch.from_numpy((init.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
                           for k, v in model.state_dict().items()})
    return model


models = [make() for _ in range(4)]
opts = [torch.optim.SGD(models[0].parameters(), lr=0.1, momentum=0.9),
        torch.optim.AdamW(models[1].parameters(), lr=0.01),
        torch.optim.SGD(models[2].parameters(), lr=0.2),
        torch.optim.Adam(models[3].parameters(), lr=0.02)]
warmup = LambdaLR(opts[0], lr_lambda=lambda s: (s + 1) / 5)
cosine = CosineAnnealingLR(opts[0], T_max=20, eta_min=1e-3)
scheds = [SequentialLR(opts[0], schedulers=[warmup, cosine], milestones=[5]),
          OneCycleLR(opts[1], max_lr=0.05, total_steps=25),
          ReduceLROnPlateau(opts[2], mode="min", factor=0.5, patience=1, threshold=0.05),
          MultiStepLR(opts[3], milestones=[8, 16], gamma=0.3)]
for step in range(25):
    losses = []
    for model, opt, sched in zip(models, opts, scheds):
        loss = nn.functional.mse_loss(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if isinstance(sched, ReduceLROnPlateau):
            sched.step(loss.item())
        else:
            sched.step()
        losses.append(loss.item())
    print(json.dumps({"step": step, "loss": losses[0], "losses": losses,
                      "lrs": [opt.param_groups[0]["lr"] for opt in opts]}))

"""Checkpointing the way the PyTorch tutorials teach it: save model, optimizer, scheduler, epoch and the run's
arguments in one dict, stop, rebuild everything, load, and resume; the resumed run must continue exactly where an
uninterrupted one goes. Also ``torch.save`` of a NumPy array and of a whole model, loaded with
``weights_only=False`` as torch 2.6+ requires for non-tensor objects.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "lr"}) and a summary line.
"""
import argparse
import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--steps", type=int, default=24)
args = parser.parse_args([])

rng = np.random.default_rng(7)
X = torch.from_numpy(rng.standard_normal((64, 6)).astype(np.float32))
y = torch.from_numpy((X.numpy() @ rng.standard_normal((6, 1)) + 0.1).astype(np.float32))


def build():
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    init = np.random.default_rng(0)
    model.load_state_dict({k: torch.from_numpy(init.uniform(-0.4, 0.4, size=tuple(v.shape)).astype(np.float32))
                           for k, v in model.state_dict().items()})
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.7)
    return model, opt, sched


def train_step(model, opt, sched):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    sched.step()
    return loss.item()


# the uninterrupted run
model, opt, sched = build()
straight = [train_step(model, opt, sched) for _ in range(args.steps)]

# the same run, stopped half way and resumed from a checkpoint file
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "ckpt.pt")
model, opt, sched = build()
half = args.steps // 2
for step in range(half):
    loss = train_step(model, opt, sched)
    print(json.dumps({"step": step, "loss": loss, "lr": sched.get_last_lr()[0]}))
torch.save({"epoch": half, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
            "scheduler": sched.state_dict(), "loss": loss, "args": args}, path)
del model, opt, sched

model, opt, sched = build()
checkpoint = torch.load(path, weights_only=False)  # (an argparse.Namespace inside: not a weights-only file)
model.load_state_dict(checkpoint["model_state_dict"])
opt.load_state_dict(checkpoint["optimizer_state_dict"])
sched.load_state_dict(checkpoint["scheduler"])
start = checkpoint["epoch"]
model.train()
resumed = []
for step in range(start, args.steps):
    loss = train_step(model, opt, sched)
    resumed.append(loss)
    print(json.dumps({"step": step, "loss": loss, "lr": sched.get_last_lr()[0]}))

# weights only: the default load of a state_dict
torch.save(model.state_dict(), os.path.join(tmp, "weights.pt"))
weights = torch.load(os.path.join(tmp, "weights.pt"))
# a NumPy array and a whole model need weights_only=False
torch.save(np.arange(5.0), os.path.join(tmp, "array.pt"))
array = torch.load(os.path.join(tmp, "array.pt"), weights_only=False)
torch.save(model, os.path.join(tmp, "model.pt"))
whole = torch.load(os.path.join(tmp, "model.pt"), weights_only=False)
print(json.dumps({
    "resumed_equal": resumed == straight[half:],
    "checkpoint_keys": sorted(checkpoint),
    "args_lr": checkpoint["args"].lr,
    "weights_keys": list(weights),
    "array": array.tolist(), "array_type": type(array).__name__,
    "whole_model_same": bool(torch.equal(whole(X), model(X))),
}))

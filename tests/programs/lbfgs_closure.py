"""Curve fitting with L-BFGS and a closure, as in PyTorch's optim docs and physics-informed-network lectures:
fit a small network to sin(x), first with plain L-BFGS, then with the strong-Wolfe line search.

Written against PyTorch only. Prints one JSON line per outer step ({"step", "loss", "evals"}) and a summary.
"""
import json

import numpy as np
import torch
import torch.nn as nn

x = torch.linspace(-3, 3, 64, dtype=torch.float64).unsqueeze(1)
target = torch.sin(x)


def fresh_model():
    model = nn.Sequential(nn.Linear(1, 12), nn.Tanh(), nn.Linear(12, 1)).double()
    rng = np.random.default_rng(3)
    model.load_state_dict({k: torch.from_numpy(rng.uniform(-1.0, 1.0, size=tuple(v.shape)))
                           for k, v in model.state_dict().items()})
    return model


def fit(line_search, first_step):
    model = fresh_model()
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=5, history_size=10, line_search_fn=line_search)
    evals = 0

    def closure():
        nonlocal evals
        evals += 1
        opt.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        return loss

    for step in range(first_step, first_step + 10):
        loss = opt.step(closure)
        print(json.dumps({"step": step, "loss": loss.item(), "evals": evals, "line_search": str(line_search)}))
    state = opt.state[opt.param_groups[0]["params"][0]]
    print(json.dumps({"line_search": str(line_search), "final": closure().item(), "n_iter": state["n_iter"],
                      "func_evals": state["func_evals"]}))


fit(None, 0)
fit("strong_wolfe", 10)

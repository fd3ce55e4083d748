"""Context-style custom autograd Functions inside a small model: a learnable swish and a straight-through
quantizer, checked with gradcheck, then trained with Adam on a synthetic regression.

Written against PyTorch only. Prints {"gradcheck": ...}, then one JSON line per step ({"step", "loss", "beta"}).
"""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

NEEDS = []  # ctx.needs_input_grad as each Swish backward saw it


class Swish(torch.autograd.Function):
    """y = x * sigmoid(beta * x), with beta a learnable tensor of one value per feature."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, beta, s = ctx.saved_tensors
        NEEDS.append(list(ctx.needs_input_grad))
        grad_x = grad_beta = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output * (s + x * beta * s * (1 - s))
        if ctx.needs_input_grad[1]:
            grad_beta = (grad_output * x * x * s * (1 - s)).sum(dim=0)
        return grad_x, grad_beta


class RoundSTE(torch.autograd.Function):
    """Rounds to a grid of `step` in the forward pass; passes the gradient straight through (clipped to |x|<=1)."""

    @staticmethod
    def forward(ctx, x, step):
        ctx.save_for_backward(x)
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() <= 1).to(grad_output.dtype), None


class QuantLinear(nn.Linear):
    """A linear layer whose weights are quantized to multiples of 1/32 in the forward pass."""

    def forward(self, x):
        return F.linear(x, RoundSTE.apply(self.weight, 1 / 32), self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = QuantLinear(6, 16)
        self.beta = nn.Parameter(torch.ones(16))
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(Swish.apply(self.fc1(x), self.beta))


rng = np.random.default_rng(7)
x64 = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
b64 = torch.tensor(rng.uniform(0.5, 1.5, size=3), requires_grad=True)
ok = torch.autograd.gradcheck(Swish.apply, (x64, b64), eps=1e-6, atol=1e-4)
# needs_input_grad: beta without requires_grad gets no gradient computed
x_only = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
NEEDS.clear()
Swish.apply(x_only, b64.detach()).sum().backward()
print(json.dumps({"gradcheck": bool(ok), "x_grad_shape": list(x_only.grad.shape), "needs_input_grad": NEEDS[0]}),
      flush=True)

X = torch.tensor(rng.standard_normal((64, 6)).astype(np.float32))
Y = (torch.sin(X[:, :1] * 2) + X[:, 1:2] * X[:, 2:3]).detach()

model = Net()
sd = model.state_dict()
for name in sd:
    w = rng.standard_normal(tuple(sd[name].shape)) * 0.4 + (name == "beta")
    sd[name] = torch.from_numpy(w.astype(np.float32))
model.load_state_dict(sd)

opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(40):
    opt.zero_grad()
    loss = F.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
    print(json.dumps({"step": step, "loss": loss.item(), "beta": model.beta.mean().item()}), flush=True)

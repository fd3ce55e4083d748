"""What a learner prints while following a book: shapes, sizes, dtypes, tensors with their grad_fn, a model.

Written against PyTorch only. Prints plain text (compared line by line with PyTorch's output) and one JSON line.
"""
import json

import torch
import torch.nn as nn

x = torch.tensor([1.0, 2.0, 3.0])
print(x)
print(x.shape)
print(x.size())
print(x.size(0), x.dim(), x.numel())
print(x.dtype, x.device)
m = torch.arange(12).reshape(3, 4)
print(m.shape, m.dtype)
print(m.T.shape)
print(m.unsqueeze(0).shape[1:])
print(torch.zeros(2, 3, dtype=torch.float64))
print(torch.ones(2, 2, dtype=torch.int32))
print(torch.tensor([True, False]))

w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
print(w)
z = w * 2 + 1
print(z)
print(z.requires_grad, z.is_leaf, w.is_leaf)
s = z.sum()
print(s)
print(s.grad_fn.name())
print(type(z.grad_fn).__name__)
m2 = (w @ w).mean()
print(m2)
print(torch.relu(w))
print(w.t())
s.backward()
print(w.grad)
with torch.no_grad():
    print(w * 3)
print(w.detach())

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
print(model)
print(nn.Conv2d(3, 16, kernel_size=3, stride=2, padding=1))
print(nn.LSTM(10, 20, num_layers=2, batch_first=True))
for name, p in model.named_parameters():
    print(name, p.shape)
print(json.dumps({"n_params": sum(p.numel() for p in model.parameters())}))

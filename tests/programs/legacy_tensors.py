"""A 2017-style PyTorch program, as older books and course notes still show it: Variable, the legacy typed
constructors (FloatTensor, LongTensor(n)), .type('torch.LongTensor'), .data updates by hand.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss"}) and summary lines.
"""
import json

import numpy as np
import torch
from torch.autograd import Variable

rng = np.random.default_rng(1)
N, D_in, H, D_out = 32, 10, 20, 3
dtype = torch.FloatTensor
x = Variable(torch.from_numpy(rng.standard_normal((N, D_in)).astype(np.float32)).type(dtype), requires_grad=False)
labels = torch.LongTensor(N)
labels.copy_(torch.from_numpy(rng.integers(0, D_out, N)))
w1 = Variable(torch.from_numpy(rng.standard_normal((D_in, H)).astype(np.float32) * 0.3).type(dtype),
              requires_grad=True)
w2 = Variable(torch.from_numpy(rng.standard_normal((H, D_out)).astype(np.float32) * 0.3).type(dtype),
              requires_grad=True)

learning_rate = 0.5
for t in range(25):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = torch.nn.functional.cross_entropy(y_pred, Variable(labels))
    print(json.dumps({"step": t, "loss": loss.data.item()}))
    loss.backward()
    w1.data -= learning_rate * w1.grad.data
    w2.data -= learning_rate * w2.grad.data
    w1.grad.data.zero_()
    w2.grad.data.zero_()

ones = torch.FloatTensor([[1, 2], [3, 4]])
idx = torch.LongTensor([2, 0, 1])
mask = torch.BoolTensor([True, False, True])
as_long = ones.type("torch.LongTensor")
as_double = ones.type(torch.DoubleTensor)
print(json.dumps({
    "type_name": ones.type(), "long_type": as_long.type(), "double_type": as_double.type(),
    "idx": idx.tolist(), "mask": mask.tolist(), "empty_long_shape": list(torch.LongTensor(4).shape),
    "is_tensor": torch.is_tensor(ones), "is_float_tensor": isinstance(ones, torch.FloatTensor),
    "variable_is_tensor": isinstance(w1, torch.Tensor), "zeros_like_type": torch.zeros_like(idx).type(),
    "int_tensor": torch.IntTensor([1, 2]).dtype == torch.int32, "byte": torch.ByteTensor([1, 0]).tolist(),
}))

"""PyTorch's autograd tutorial: walk a graph through grad_fn, next_functions, AccumulateGrad.variable and the
saved tensors, hook a node, and check what backward computes.

Written against PyTorch only. Prints plain text (compared line by line) and JSON lines.
"""
import json

import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {type(z.grad_fn).__name__}")
print(f"Gradient function for loss = {type(loss.grad_fn).__name__}")


def walk(fn, depth=0, seen=None):
    """The graph as (depth, node name, input index) lines, depth first, as the tutorials draw it."""
    seen = set() if seen is None else seen
    lines = []
    for nxt, index in fn.next_functions:
        if nxt is None:
            lines.append((depth, None, index))
            continue
        lines.append((depth, type(nxt).__name__, index))
        if id(nxt) not in seen:
            seen.add(id(nxt))
            lines += walk(nxt, depth + 1, seen)
    return lines


for depth, name, index in walk(loss.grad_fn):
    print("  " * depth + f"{name} [{index}]")

acc = z.grad_fn.next_functions[1][0]
print(type(acc).__name__, acc.variable is b)

a = torch.tensor([2.0, 3.0], requires_grad=True)
c = a * a
print(type(c.grad_fn).__name__, torch.equal(c.grad_fn._saved_self, a), torch.equal(c.grad_fn._saved_other, a))
e = a.exp()
print(type(e.grad_fn).__name__, torch.equal(e.grad_fn._saved_result, e))

seen_grads = []
c.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen_grads.append(
    ([g.tolist() for g in grad_inputs if g is not None], [g.tolist() for g in grad_outputs])))
c.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
c.sum().backward()
print(json.dumps({"a_grad": a.grad.tolist(), "hook_saw": seen_grads}))

try:
    _ = c.grad_fn._saved_self
    print("saved tensors still there")
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

loss.backward()
print(json.dumps({"w_grad_shape": list(w.grad.shape), "b_grad_close": bool(torch.allclose(
    b.grad, (torch.sigmoid(z) - y).detach() / 3))}))

h = torch.tensor(1.0, requires_grad=True)
q = h * 2
q.retain_grad()
r = q ** 2
r.backward()
print(json.dumps({"q_grad": q.grad.item(), "h_grad": h.grad.item(), "r_is_leaf": r.is_leaf}))

"""Backprop by hand: a character MLP (embedding table, tanh hidden layer, cross-entropy written out op by op),
its gradients derived manually and checked against autograd, then updated with those manual gradients.

Written against PyTorch only. Prints one JSON line per step: {"step", "loss", "allclose", "maxdiff"}.
"""
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

text = (Path(__file__).resolve().with_name("corpus.txt")).read_text(encoding="utf-8").lower()[:8000]
chars = sorted(set(text))
stoi = {s: i for i, s in enumerate(chars)}
vocab_size = len(chars)

block_size = 3  # characters of context to predict the next one
X, Y = [], []
context = [0] * block_size
for ch in text:
    ix = stoi[ch]
    X.append(context)
    Y.append(ix)
    context = context[1:] + [ix]
X, Y = torch.tensor(X), torch.tensor(Y)

n_embd, n_hidden, batch_size = 10, 64, 32
rng = np.random.default_rng(2147483647)
randn = lambda *shape: torch.tensor(rng.standard_normal(shape).astype(np.float32))
C = randn(vocab_size, n_embd)
W1 = randn(n_embd * block_size, n_hidden) * (5 / 3) / (n_embd * block_size) ** 0.5
b1 = randn(n_hidden) * 0.1
W2 = randn(n_hidden, vocab_size) * 0.1
b2 = randn(vocab_size) * 0.1
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True


def cmp(s, dt, t):
    ex = torch.all(dt == t.grad).item()
    app = torch.allclose(dt, t.grad, rtol=1e-4, atol=1e-6)
    maxdiff = (dt - t.grad).abs().max().item()
    return {"name": s, "exact": bool(ex), "approximate": bool(app), "maxdiff": maxdiff}


lr = 0.1
for step in range(25):
    ix = torch.from_numpy(rng.integers(0, X.shape[0], size=batch_size))
    Xb, Yb = X[ix], Y[ix]
    n = batch_size

    # forward pass, chunked into small steps that are possible to backward one at a time
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1 + b1
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes  # subtract max for numerical stability
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()

    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hpreact,
              embcat, emb]:
        t.retain_grad()
    loss.backward()

    # the same gradients, by hand
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    # ... and the fused cross-entropy backward, which must agree with the long way
    dlogits_fast = F.softmax(logits, 1)
    dlogits_fast[range(n), Yb] -= 1
    dlogits_fast /= n
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h**2) * dh
    dembcat = dhpreact @ W1.T
    dW1 = embcat.T @ dhpreact
    db1 = dhpreact.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            dC[Xb[k, j]] += demb[k, j]

    checks = [cmp("logprobs", dlogprobs, logprobs), cmp("probs", dprobs, probs),
              cmp("counts_sum_inv", dcounts_sum_inv, counts_sum_inv), cmp("counts_sum", dcounts_sum, counts_sum),
              cmp("counts", dcounts, counts), cmp("logit_maxes", dlogit_maxes, logit_maxes),
              cmp("logits", dlogits, logits), cmp("logits_fast", dlogits_fast, logits), cmp("h", dh, h),
              cmp("W2", dW2, W2), cmp("b2", db2, b2), cmp("hpreact", dhpreact, hpreact), cmp("W1", dW1, W1),
              cmp("b1", db1, b1), cmp("emb", demb, emb), cmp("C", dC, C)]

    # update with the manual gradients (two ways learners write it)
    grads = [dC, dW1, db1, dW2, db2]
    for p, grad in zip(parameters[:3], grads[:3]):
        p.data += -lr * grad
    with torch.no_grad():
        for p, grad in zip(parameters[3:], grads[3:]):
            p -= lr * grad

    print(json.dumps({"step": step, "loss": loss.item(), "allclose": all(c["approximate"] for c in checks),
                      "maxdiff": max(c["maxdiff"] for c in checks),
                      "failed": [c["name"] for c in checks if not c["approximate"]]}), flush=True)

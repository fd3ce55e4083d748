"""A character-level GPT (weight-tied, hand-written causal attention) trained on a copy of this project's README,
sampled. (``corpus.txt``: frozen, so an edit of the README does not move the test.)

Written against PyTorch only. Prints one JSON line per step ({"step", "loss"}), a few {"eval_step", ...} lines,
and a last line {"sample": [...indices...], "vocab_size": n, "text": "..."}.
"""
import json
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1337)
rng = np.random.default_rng(1337)

text = (Path(__file__).resolve().with_name("corpus.txt")).read_text(encoding="utf-8")[:20000]
chars = sorted(set(text))
vocab_size = len(chars)
stoi, itos = {ch: i for i, ch in enumerate(chars)}, dict(enumerate(chars))
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block_size, batch_size, n_embd, n_head, n_layer, dropout = 16, 8, 32, 4, 2, 0.0
max_iters, eval_interval, eval_iters = 30, 10, 4


def get_batch(split="train"):
    data = train_data if split == "train" else val_data
    ix = rng.integers(0, len(data) - block_size - 1, size=batch_size)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    return x, y


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = [t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in self.c_attn(x).split(n_embd, dim=2)]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.token_embedding_table.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T))
        logits = self.lm_head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -block_size:])
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            idx_next = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            losses[k] = model(*get_batch(split))[1].item()
        out[split] = losses.mean()
    model.train()
    return out


model = GPT()
# the same starting weights under any library: drawn with NumPy, loaded through the state_dict
state = model.state_dict()
for name, p in model.named_parameters():
    shape = tuple(p.shape)
    w = np.zeros(shape) if name.endswith("bias") else np.ones(shape) if p.dim() == 1 else rng.normal(0, 0.02, shape)
    state[name] = torch.from_numpy(w.astype(np.float32))
model.load_state_dict(state)  # (the tied lm_head.weight entry is the same tensor: it follows along)
assert model.lm_head.weight is model.token_embedding_table.weight

# weight decay on the matrices only, as nanoGPT's configure_optimizers does
params = [p for p in model.parameters() if p.requires_grad]
optim_groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
                {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
optimizer = torch.optim.AdamW(optim_groups, lr=3e-3, betas=(0.9, 0.95))
for step in range(max_iters):
    if step % eval_interval == 0 or step == max_iters - 1:
        losses = estimate_loss()
        print(json.dumps({"eval_step": step, "train": losses["train"].item(), "val": losses["val"].item(),
                          "message": f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}"}))
    xb, yb = get_batch("train")
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(json.dumps({"step": step, "loss": loss.item()}), flush=True)

model.eval()
out = model.generate(torch.zeros((1, 1), dtype=torch.long), max_new_tokens=20, top_k=10)[0].tolist()
print(json.dumps({"sample": out, "vocab_size": vocab_size, "text": "".join(itos[i] for i in out)}))

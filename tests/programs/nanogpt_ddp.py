"""nanoGPT's train.py, cut down to one CPU process: it imports DistributedDataParallel and init_process_group,
checks the RANK environment variable, picks a nullcontext on CPU, a disabled GradScaler, AdamW with decay and
no-decay groups (checking `fused` in AdamW's signature), a cosine learning-rate schedule with warmup, gradient
clipping, and an estimate_loss under torch.no_grad.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "lr"}) and eval lines.
"""
import inspect
import json
import math
import os
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="gloo")
master_process, seed_offset, ddp_world_size = True, 0, 1
device, device_type, dtype = "cpu", "cpu", "float32"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
torch.manual_seed(1337 + seed_offset)

text = (Path(__file__).resolve().with_name("corpus.txt")).read_text(encoding="utf-8")[:12000]
chars = sorted(set(text))
vocab_size = len(chars)
stoi = {c: i for i, c in enumerate(chars)}
data = np.array([stoi[c] for c in text], dtype=np.uint16)
train_data, val_data = data[: int(0.9 * len(data))], data[int(0.9 * len(data)):]
block_size, batch_size, n_embd, n_head, n_layer = 16, 8, 32, 2, 2
batch_rng = np.random.default_rng(1337)


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = batch_rng.integers(0, len(d) - block_size, batch_size)
    x = torch.stack([torch.from_numpy(d[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(d[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block() for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                        {"params": nodecay_params, "weight_decay": 0.0}]
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)


model = GPT()
init = np.random.default_rng(0)
model.load_state_dict({k: torch.from_numpy((init.standard_normal(tuple(v.shape)) * 0.05).astype(np.float32))
                       if v.dim() > 1 else torch.zeros_like(v) if k.endswith("bias") else torch.ones_like(v)
                       for k, v in model.state_dict().items()})
scaler = torch.amp.GradScaler("cpu", enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device_type)
if ddp:
    model = DDP(model, device_ids=[0])
raw_model = model.module if ddp else model
warmup_iters, lr_decay_iters, max_iters, min_lr, learning_rate = 5, 30, 24, 1e-3, 1e-2


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(3)
        for k in range(3):
            X, Y = get_batch(split)
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


X, Y = get_batch("train")
for it in range(max_iters):
    lr = get_lr(it)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if it % 8 == 0 and master_process:
        losses = estimate_loss()
        print(json.dumps({"eval_step": it, "train": losses["train"], "val": losses["val"]}))
    with ctx:
        logits, loss = model(X, Y)
    X, Y = get_batch("train")
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(json.dumps({"step": it, "loss": loss.item(), "lr": lr, "grad_norm": norm.item()}))
print(json.dumps({"distributed": torch.distributed.is_available(), "initialized": torch.distributed.is_initialized(),
                  "params": sum(p.numel() for p in raw_model.parameters())}))
if ddp:
    destroy_process_group()

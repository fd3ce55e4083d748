"""makemore's and minGPT's infinite data loader: a RandomSampler with replacement and num_samples=int(1e10), wrapped
in a DataLoader that is never exhausted, feeding a character MLP. (The sampled batches depend on each library's
random stream, so the losses are checked for sense, not compared; the first loss comes from a fixed batch.)

Written against PyTorch only. Prints one JSON line per step ({"step", "sampled_loss", ...}) and a summary line.
"""
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.sampler import RandomSampler


class CharDataset(Dataset):
    def __init__(self, text, block_size=4):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        self.data = [self.stoi[c] for c in text]
        self.block_size = block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block_size + 1]
        return torch.tensor(chunk[:-1], dtype=torch.long), torch.tensor(chunk[-1], dtype=torch.long)


class InfiniteDataLoader:
    """makemore.py's loader: sample with replacement, forever."""

    def __init__(self, dataset, **kwargs):
        train_sampler = RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=train_sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


text = (Path(__file__).resolve().with_name("corpus.txt")).read_text(encoding="utf-8").lower()[:6000]
ds = CharDataset(text)
vocab = len(ds.chars)
model = nn.Sequential(nn.Embedding(vocab, 12), nn.Flatten(), nn.Linear(48, 64), nn.Tanh(), nn.Linear(64, vocab))
rng = np.random.default_rng(11)
model.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.1).astype(np.float32))
                       for k, v in model.state_dict().items()})
opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
fixed_x = torch.stack([ds[i][0] for i in range(32)])
fixed_y = torch.stack([ds[i][1] for i in range(32)])
first = nn.functional.cross_entropy(model(fixed_x), fixed_y).item()
loader = InfiniteDataLoader(ds, batch_size=32, pin_memory=True, num_workers=0)
sampler = loader.train_loader.sampler
for step in range(40):
    xb, yb = loader.next()
    loss = nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(json.dumps({"step": step, "sampled_loss": loss.item(),
                      "batch_shape": list(xb.shape), "in_range": bool(((xb >= 0) & (xb < vocab)).all())}))
after = nn.functional.cross_entropy(model(fixed_x), fixed_y).item()
print(json.dumps({"first_fixed_loss": first, "fixed_loss_fell": after < first, "num_samples": sampler.num_samples,
                  "loader_len": len(loader.train_loader)}))

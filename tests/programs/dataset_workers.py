"""Data loading as torch's docs describe it: a map-style Dataset with a custom collate_fn padding variable-length
sequences (pad_sequence), an IterableDataset split across two workers with get_worker_info, worker_init_fn, len()
of loaders, drop_last, and a second epoch over the same loader.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss"}) and lines describing the loading.
"""
import json
import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Sequences(Dataset):
    def __init__(self, n=40):
        rng = np.random.default_rng(15)
        self.items = [(torch.from_numpy(rng.standard_normal((int(rng.integers(2, 7)), 3)).astype(np.float32)),
                       int(rng.integers(0, 2))) for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(list(seqs), batch_first=True), lengths, torch.tensor(labels)


class RangeStream(IterableDataset):
    """torch's documented example: each worker yields its own slice of [start, end)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per_worker = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per_worker
            hi = min(lo + per_worker, self.end)
        return iter(range(lo, hi))


seen_ids = []
stream = RangeStream(3, 7)
print(json.dumps({"single_process": list(DataLoader(stream, batch_size=None))}))
two = DataLoader(stream, batch_size=None, num_workers=2, worker_init_fn=lambda wid: seen_ids.append(wid))
print(json.dumps({"two_workers": [int(v) for v in two]}))
batched = DataLoader(RangeStream(0, 10), batch_size=2, num_workers=2)
print(json.dumps({"two_workers_batched": [b.tolist() for b in batched]}))

gru = nn.GRU(3, 8, batch_first=True)
head = nn.Linear(8, 2)
rng = np.random.default_rng(16)
for m in (gru, head):
    m.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
                       for k, v in m.state_dict().items()})
opt = torch.optim.Adam(list(gru.parameters()) + list(head.parameters()), lr=0.02)
loader = DataLoader(Sequences(), batch_size=6, shuffle=False, collate_fn=collate, drop_last=True)
print(json.dumps({"len_loader": len(loader), "len_iter": len(iter(loader))}))
step = 0
for _epoch in range(4):
    for padded, lengths, labels in loader:
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, h = gru(packed)
        loss = nn.functional.cross_entropy(head(h[-1]), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(json.dumps({"step": step, "loss": loss.item(), "padded": list(padded.shape)}))
        step += 1

"""A word-level LSTM language model (2 layers, batch_first) on a copy of this project's README, truncated BPTT.
(``corpus.txt``: frozen, so an edit of the README does not move the test.)

Written against PyTorch only. Prints one JSON line per step: {"step", "loss", "grad_norm"}.
"""
import json
import re
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)

text = (Path(__file__).resolve().with_name("corpus.txt")).read_text(encoding="utf-8")
words = re.findall(r"[a-z]+", text.lower())[:6000]
vocab = sorted(set(words))
word2idx = {w: i for i, w in enumerate(vocab)}
ntokens = len(vocab)

batch_size, bptt, emsize, nhid, nlayers, clip, lr = 8, 12, 24, 32, 2, 0.5, 5e-3


def batchify(ids, bsz):
    nbatch = ids.size(0) // bsz
    ids = ids[:nbatch * bsz]
    return ids.view(bsz, -1)  # (bsz, L): batch_first


corpus = torch.tensor([word2idx[w] for w in words], dtype=torch.long)
train_data = batchify(corpus, batch_size)


def get_batch(source, i):
    seq_len = min(bptt, source.size(1) - 1 - i)
    data = source[:, i:i + seq_len]
    target = source[:, i + 1:i + 1 + seq_len]
    return data, target


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, num_layers=nlayers, batch_first=True, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


model = RNNModel(ntokens, emsize, nhid, nlayers)
# identical starting weights in every run: uniform(-1/sqrt(nhid), 1/sqrt(nhid)) from NumPy, via load_state_dict
k = 1.0 / np.sqrt(nhid)
model.load_state_dict({name: torch.from_numpy(rng.uniform(-k, k, size=tuple(t.shape)).astype(np.float32))
                       for name, t in model.state_dict().items()})

optimizer = torch.optim.Adam(model.parameters(), lr=lr)
model.train()
hidden = model.init_hidden(batch_size)
step = 0
for epoch in range(2):
    for i in range(0, 15 * bptt, bptt):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = F.cross_entropy(output.reshape(-1, ntokens), targets.reshape(-1))
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        print(json.dumps({"epoch": epoch, "step": step, "loss": loss.item(), "grad_norm": float(grad_norm)}),
              flush=True)
        step += 1

model.eval()
with torch.no_grad():
    data, targets = get_batch(train_data, 0)
    output, _ = model(data, model.init_hidden(batch_size))
    print(json.dumps({"eval_loss": F.cross_entropy(output.view(-1, ntokens), targets.reshape(-1)).item()}))

"""Models written the way learners write them, for the views' tests and benchmarks.

Each is plain PyTorch-style code on ``tinygrad_like`` (the names ``nn``/``F`` as a learner imports them):

* :class:`GPT`: Karpathy's nanoGPT ``model.py`` (pre-norm blocks, ``c_attn``/``c_proj``, a ``ModuleDict``
  ``transformer`` holding ``wte``/``wpe``/``drop``/``h``/``ln_f``, ``lm_head`` tied to ``wte``, dropout);
* :class:`ResNet`: torchvision's ``BasicBlock`` ResNet-18 for 32×32 images (one ``self.relu`` called twice per
  block, ``downsample`` as a ``Sequential`` of conv and batch norm);
* :class:`LSTMLanguageModel`: PyTorch's word-language-model example (one ``self.drop`` called twice,
  ``nn.LSTM`` with three layers);
* :class:`ResMLP`: a residual MLP of many identical blocks (``benchmarks/_resmlp.py``'s shape, 200 blocks).

:func:`make` builds one with fixed NumPy-drawn data and returns ``(model, loss)`` after one forward pass.
"""

from __future__ import annotations

import math

import numpy as np

import tinygrad_like as tl

nn, F = tl.nn, tl.nn.functional


# ---- nanoGPT ----------------------------------------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", tl.tril(tl.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, n_embd: int, dropout: float):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size: int = 65, block_size: int = 32, n_layer: int = 6, n_head: int = 6,
                 n_embd: int = 192, dropout: float = 0.1):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = tl.arange(0, t, dtype=tl.long)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


# ---- ResNet-18 (torchvision's BasicBlock, CIFAR stem) -------------------------------------------------------
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes: int = 10, width: int = 64):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(width * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = tl.flatten(self.avgpool(x), 1)
        return self.fc(x)


# ---- word language model (PyTorch's examples/word_language_model) -------------------------------------------
class LSTMLanguageModel(nn.Module):
    def __init__(self, ntoken: int = 100, ninp: int = 64, nhid: int = 128, nlayers: int = 3, dropout: float = 0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.ntoken = ntoken

    def forward(self, input, hidden=None):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden


# ---- residual MLP ---------------------------------------------------------------------------------------------
class ResBlock(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class ResMLP(nn.Module):
    def __init__(self, n_blocks: int = 200, d: int = 8):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.blocks = nn.Sequential(*[ResBlock(d) for _ in range(n_blocks)])
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))


# ---- building one -----------------------------------------------------------------------------------------------
NAMES = ("gpt", "resnet", "lstm", "resmlp")


def make(name: str, seed: int = 0):
    """``(model, loss)``: the model ``name`` (one of :data:`NAMES`) after one forward pass on fixed data."""
    tl.manual_seed(seed)
    rng = np.random.default_rng(seed)
    if name == "gpt":
        model = GPT()
        idx = tl.tensor(rng.integers(0, 65, (2, 32)), dtype=tl.long)
        targets = tl.tensor(rng.integers(0, 65, (2, 32)), dtype=tl.long)
        _, loss = model(idx, targets)
    elif name == "resnet":
        model = ResNet()
        x = tl.tensor(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
        y = tl.tensor(rng.integers(0, 10, (2,)), dtype=tl.long)
        loss = F.cross_entropy(model(x), y)
    elif name == "lstm":
        model = LSTMLanguageModel()
        data = tl.tensor(rng.integers(0, 100, (16, 4)), dtype=tl.long)  # (time, batch), as the example feeds it
        targets = tl.tensor(rng.integers(0, 100, (64,)), dtype=tl.long)
        out, _ = model(data)
        loss = F.nll_loss(out, targets)
    elif name == "resmlp":
        model = ResMLP()
        x = tl.tensor(rng.standard_normal((4, 8)).astype(np.float32))
        loss = (model(x) ** 2).mean()
    else:
        raise ValueError(f"unknown model {name!r}: expected one of {NAMES}")
    return model, loss

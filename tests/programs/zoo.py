"""Four small models a learner writes (an MLP, a CNN, an LSTM language model, a pre-norm transformer), shared by
the lib_*.py programs, with their starting weights drawn from NumPy so every run begins from the same point."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv1(x))))
        return self.fc(torch.flatten(x, 1))


class LSTMLM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        out, _ = self.lstm(self.emb(idx))
        return self.head(out)


class Block(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab=20, dim=16, T=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, T, dim))
        self.blocks = nn.Sequential(Block(dim), Block(dim))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        return self.head(self.ln(self.blocks(x)))


def numpy_init(model: nn.Module, seed: int = 0) -> nn.Module:
    """Identical starting weights under any library: matrices from a NumPy normal, biases 0, norm scales 1."""
    import numpy as np

    rng = np.random.default_rng(seed)
    state = {}
    for k, v in model.state_dict().items():
        if not v.is_floating_point():
            state[k] = v
        elif v.dim() > 1:
            state[k] = torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.2).astype(np.float32))
        elif k.endswith("bias") or "running_mean" in k:
            state[k] = torch.zeros_like(v)
        else:
            state[k] = torch.ones_like(v)
    model.load_state_dict(state)
    return model


def all_models():
    """(name, model, example input) for the four models."""
    import numpy as np

    rng = np.random.default_rng(1)
    image = torch.from_numpy(rng.standard_normal((2, 1, 8, 8)).astype(np.float32))
    tokens = torch.from_numpy(rng.integers(0, 20, (2, 8)))
    return [("mlp", numpy_init(MLP()), image), ("cnn", numpy_init(CNN()), image),
            ("lstm", numpy_init(LSTMLM()), tokens), ("transformer", numpy_init(TinyTransformer()), tokens)]

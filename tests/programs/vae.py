"""A variational autoencoder as in the PyTorch examples repository: encoder to mu and logvar, the
reparameterization trick, a Bernoulli decoder with binary_cross_entropy(reduction='sum') plus the KL term.
The noise eps is drawn with NumPy so both runs see the same; torch.distributions.Normal gives the KL as a check.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "kl"}).
"""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 64))
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD, KLD


rng = np.random.default_rng(8)
data = torch.from_numpy((rng.random((40, 1, 8, 8)) > 0.6).astype(np.float32))
model = VAE()
model.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.2).astype(np.float32))
                       for k, v in model.state_dict().items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(25):
    eps = torch.from_numpy(rng.standard_normal((40, 4)).astype(np.float32))
    recon, mu, logvar = model(data, eps)
    loss, kld = loss_function(recon, data, mu, logvar)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    q = Normal(mu, torch.exp(0.5 * logvar))
    kl_check = kl_divergence(q, Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum()
    print(json.dumps({"step": step, "loss": loss.item() / len(data), "kl": kld.item(),
                      "kl_matches": bool(torch.allclose(kl_check, kld, rtol=1e-4, atol=1e-3))}))

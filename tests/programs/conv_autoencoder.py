"""A convolutional autoencoder as in course notebooks: Conv2d with stride 2 down, ConvTranspose2d up, Sigmoid output,
MSELoss, Adam with weight decay, a model.eval()/model.train() toggle for evaluation.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss"}) and the evaluation line.
"""
import json

import numpy as np
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
                                     nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


rng = np.random.default_rng(12)
yy, xx = np.mgrid[0:12, 0:12]
images = np.stack([((xx - cx) ** 2 + (yy - cy) ** 2 < r * r).astype(np.float32)
                   for cx, cy, r in rng.uniform([3, 3, 2], [9, 9, 4], size=(32, 3))])[:, None]
data = torch.from_numpy(images)
model = AutoEncoder()
model.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.2).astype(np.float32))
                       for k, v in model.state_dict().items()})
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-5)
for step in range(25):
    batch = data[(step * 8) % 32:(step * 8) % 32 + 8]
    loss = criterion(model(batch), batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(json.dumps({"step": step, "loss": loss.item()}))
model.eval()
with torch.no_grad():
    code = model.encoder(data)
    err = criterion(model(data), data).item()
model.train()
print(json.dumps({"eval_mse": err, "code_shape": list(code.shape), "training": model.training}))

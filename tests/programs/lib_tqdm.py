"""A training loop dressed with tqdm as tutorials write it: trange over epochs, tqdm over the DataLoader with a
description and set_postfix(loss=...), tqdm.auto in evaluation. (tqdm draws on stderr; the losses are compared.)

Written against PyTorch and tqdm. Prints one JSON line per step ({"step", "loss"}) and the accuracy.
"""
import json

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm, trange
from tqdm.auto import tqdm as auto_tqdm
from zoo import MLP, numpy_init

rng = np.random.default_rng(2)
images = torch.from_numpy(rng.standard_normal((96, 1, 8, 8)).astype(np.float32))
labels = (images.mean(dim=(1, 2, 3)) > 0).long() + (images[:, 0, 0, 0] > 0).long()
loader = DataLoader(TensorDataset(images, labels), batch_size=16)
model = numpy_init(MLP(), seed=9)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
step = 0
for epoch in trange(4, desc="epochs"):
    bar = tqdm(loader, desc=f"epoch {epoch}", leave=False)
    for xb, yb in bar:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        bar.set_postfix(loss=f"{loss.item():.3f}")
        print(json.dumps({"step": step, "loss": loss.item()}))
        step += 1
correct = 0
with torch.no_grad():
    for xb, yb in auto_tqdm(loader, total=len(loader)):
        correct += (model(xb).argmax(1) == yb).sum().item()
print(json.dumps({"accuracy": correct / len(images), "batches": len(loader)}))

"""A small CNN on scikit-learn's 8x8 digits: Conv2d, BatchNorm2d, MaxPool2d, Dropout, a DataLoader and OneCycleLR.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "lr"}) and a last line with the
held-out accuracy. Falls back to synthetic blobs when scikit-learn is not installed.
"""
import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)
rng = np.random.default_rng(42)

try:
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = digits.images.astype(np.float32) / 16.0, digits.target.astype(np.int64)
except ImportError:  # synthetic stand-in: ten noisy 8x8 templates
    templates = rng.random((10, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, size=1797).astype(np.int64)
    X = templates[y] + 0.3 * rng.standard_normal((1797, 8, 8)).astype(np.float32)

X_train, y_train = torch.tensor(X[:384]).unsqueeze(1), torch.tensor(y[:384])
X_test, y_test = torch.tensor(X[1500:]).unsqueeze(1), torch.tensor(y[1500:])
train_loader = DataLoader(TensorDataset(X_train, y_train), batch_size=48, shuffle=False)
test_loader = DataLoader(TensorDataset(X_test, y_test), batch_size=100)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.dropout = nn.Dropout(p=0.25)  # only active in train mode: the compared steps run it at p=0 (below)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
model.dropout.p = 0.0  # dropout draws from the RNG, which differs between libraries
# identical starting weights: NumPy draws, written into the parameters in place
with torch.no_grad():
    for name, p in model.named_parameters():
        if "bn" in name:
            p.copy_(torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p))
        else:
            fan_in = p[0].numel() if p.dim() > 1 else p.numel()
            p.copy_(torch.from_numpy(rng.uniform(-1, 1, size=tuple(p.shape)).astype(np.float32)) / fan_in ** 0.5)

epochs = 3
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, epochs=epochs,
                                                steps_per_epoch=len(train_loader))
criterion = nn.CrossEntropyLoss()

step = 0
for epoch in range(epochs):
    model.train()
    for data, target in train_loader:
        data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(json.dumps({"epoch": epoch, "step": step, "loss": loss.item(), "lr": scheduler.get_last_lr()[0]}),
              flush=True)
        step += 1

model.eval()
correct, test_loss = 0, 0.0
with torch.no_grad():
    for data, target in test_loader:
        output = model(data)
        test_loss += F.cross_entropy(output, target, reduction="sum").item()
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
# save, then load into a fresh model: the same predictions
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "digits_cnn.pt")
    torch.save(model.state_dict(), path)
    reloaded = Net()
    reloaded.load_state_dict(torch.load(path))
reloaded.eval()
with torch.no_grad():
    same = torch.equal(reloaded(X_test), model(X_test))
print(json.dumps({"reloaded_same": same, "test_loss": test_loss / len(test_loader.dataset),
                  "accuracy": correct / len(test_loader.dataset), "running_mean": model.bn1.running_mean.tolist()}))

"""A small ResNet for 8x8 images, written as the torchvision-style tutorials write it: BasicBlock with a 1x1
downsample shortcut, a shared ReLU module, AdaptiveAvgPool2d, kaiming init replaced by NumPy weights, SGD with
nesterov momentum and weight decay, a CosineAnnealingLR, and an evaluation pass in eval mode.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss", "lr"}) and the accuracy.
"""
import json

import numpy as np
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2), BasicBlock(16, 16))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16 * BasicBlock.expansion, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


rng = np.random.default_rng(18)
model = ResNet()
state = {}
for k, v in model.state_dict().items():
    if v.dim() > 1:
        state[k] = torch.from_numpy((rng.standard_normal(tuple(v.shape)) * (2.0 / np.prod(v.shape[1:])) ** 0.5)
                                    .astype(np.float32))
    else:  # (BatchNorm's ones, zeros and counters as they start; the classifier's bias 0)
        state[k] = torch.zeros_like(v) if k == "fc.bias" else v
model.load_state_dict(state)
images = torch.from_numpy(rng.standard_normal((64, 1, 8, 8)).astype(np.float32))
labels = torch.from_numpy((images[:, 0, :4].mean((1, 2)) > 0).numpy().astype(np.int64)
                          + 2 * (images[:, 0, :, :4].mean((1, 2)) > 0).numpy().astype(np.int64))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)
for step in range(20):
    batch = slice((step * 16) % 64, (step * 16) % 64 + 16)
    loss = nn.functional.cross_entropy(model(images[batch]), labels[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(json.dumps({"step": step, "loss": loss.item(), "lr": scheduler.get_last_lr()[0]}))
model.eval()
with torch.no_grad():
    logits = model(images)
print(json.dumps({"accuracy": (logits.argmax(1) == labels).float().mean().item(),
                  "running_mean": model.bn1.running_mean[:3].tolist()}))

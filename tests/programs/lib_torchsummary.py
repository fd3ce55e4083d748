"""torchsummary's Keras-style summary, as older tutorials call it right after defining a model (on the CPU:
``device="cpu"``), on the MLP, the CNN and the transformer's feed-forward block.

Written against PyTorch and torchsummary. Prints torchsummary's tables (compared line by line) and a JSON line.
"""
import json

import torch.nn as nn
from torchsummary import summary
from zoo import CNN, MLP, numpy_init

summary(numpy_init(MLP()), (1, 8, 8), batch_size=4, device="cpu")
summary(numpy_init(CNN()), (1, 8, 8), device="cpu")
summary(nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)), (8, 16), device="cpu")
print(json.dumps({"done": True}))

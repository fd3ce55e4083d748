"""torchinfo's summary of four models (MLP, CNN, LSTM language model, transformer), as a learner calls it right after
writing a model: by input size, by input data, with depth and columns chosen.

Written against PyTorch and torchinfo. Prints torchinfo's tables (compared line by line) and JSON lines of totals.
"""
import json

import torch
from torchinfo import summary
from zoo import all_models

for name, model, x in all_models():
    if x.is_floating_point():
        stats = summary(model, input_size=tuple(x.shape), verbose=0)
    else:
        stats = summary(model, input_data=x, verbose=0, depth=4,
                        col_names=("input_size", "output_size", "num_params", "trainable"))
    print(stats)
    print(json.dumps({"model": name, "total_params": stats.total_params,
                      "trainable_params": stats.trainable_params, "total_mult_adds": stats.total_mult_adds}))
with torch.no_grad():
    stats = summary(all_models()[0][1], input_data=[torch.zeros(4, 1, 8, 8)], verbose=0, device="cpu")
print(json.dumps({"no_grad_total": stats.total_params}))

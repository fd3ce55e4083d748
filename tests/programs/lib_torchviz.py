"""torchviz's make_dot on four models (MLP, CNN, LSTM language model, transformer): the Graphviz source of each
backward graph, with parameter names, attributes and saved tensors shown, as blog posts draw them. (Only the source
is built: rendering needs Graphviz's `dot` program.)

Written against PyTorch and torchviz. Prints JSON lines: each graph's parameter nodes (compared), and its counts.
"""
import json
import re

from torchviz import make_dot
from zoo import all_models

for name, model, x in all_models():
    out = model(x)
    dot = make_dot(out.sum(), params=dict(model.named_parameters()), show_attrs=True, show_saved=True)
    source = dot.source
    labels = re.findall(r'label="?([^"\]]*)"?', source)
    heads = {lab.split("\n")[0] for lab in labels}
    param_labels = sorted(lab for lab in labels if lab.split(chr(10))[0] in dict(model.named_parameters()))
    print(json.dumps({"model": name, "param_nodes": param_labels,
                      "accumulate_grad": sum(lab == "AccumulateGrad" for lab in labels),
                      "has_edges": "->" in source, "starts": source.split("\n")[0],
                      "ops": sorted(h for h in heads if h.endswith("Backward0"))}))

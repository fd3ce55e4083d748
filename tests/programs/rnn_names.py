"""PyTorch's "classifying names with a character-level RNN" tutorial, on made-up names: a hand-written RNN cell
(i2h, h2o, LogSoftmax), one-hot letters built with torch.zeros and indexing, NLLLoss, and manual SGD on p.data.

Written against PyTorch only. Prints one JSON line per step ({"step", "loss"}) and the predictions.
"""
import json
import string

import numpy as np
import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
categories = ["short", "vowelly", "consonant"]
names = {"short": ["Al", "Bo", "Cy", "Di", "Ed"], "vowelly": ["Aiea", "Ouie", "Eaua", "Iouo", "Uaie"],
         "consonant": ["Brynd", "Skrt", "Phyllst", "Drystn", "Crwth"]}


def line_to_tensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = torch.tanh(self.i2h(combined))
        return self.softmax(self.h2o(hidden)), hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


rnn = RNN(n_letters, 32, len(categories))
rng = np.random.default_rng(4)
rnn.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.1).astype(np.float32))
                     for k, v in rnn.state_dict().items()})
criterion = nn.NLLLoss()
learning_rate = 0.3
order = [(c, n) for i in range(5) for c in categories for n in [names[c][i]]]
for step in range(45):
    category, name = order[step % len(order)]
    category_tensor = torch.tensor([categories.index(category)], dtype=torch.long)
    hidden = rnn.initHidden()
    rnn.zero_grad()
    line_tensor = line_to_tensor(name)
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    print(json.dumps({"step": step, "loss": loss.item()}))

with torch.no_grad():
    guesses = {}
    for name in ["Ai", "Strndl", "Oua"]:
        hidden = rnn.initHidden()
        for letter in line_to_tensor(name):
            output, hidden = rnn(letter, hidden)
        topv, topi = output.topk(1, 1, True)
        guesses[name] = [categories[topi[0][0].item()], topv[0][0].item()]
print(json.dumps({"guesses": guesses}))

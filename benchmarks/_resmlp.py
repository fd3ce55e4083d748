"""The residual MLP the graph benchmarks draw: 4 ops a block (fc1, relu, fc2, the residual add) plus 5 around
them (inp, head, cross-entropy, sum, div), so ``make(500)`` gives 2,005 ops. ``graph_browser.py`` pastes this
file's source into its notebook; ``graph_layout.py`` and ``tests/test_widgets_graph.py`` import it."""

import tinygrad_like as tl

nn, F = tl.nn, tl.nn.functional


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class ResMLP(nn.Module):
    def __init__(self, n_blocks, d=8):
        super().__init__()
        self.inp = nn.Linear(4, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(n_blocks)])
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)))


def make(n_blocks, seed=0):
    tl.manual_seed(seed)
    m = ResMLP(n_blocks)
    return m, F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))

"""Bringing a PyTorch program in: ``import tinygrad_like as torch`` (attribute access) and the ``torch`` alias
(``python -m tinygrad_like.run prog.py`` / ``tinygrad_like.install_as_torch()``), each run in a subprocess with
the real PyTorch importable and with it blocked (as on a machine without it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = ("import sys; sys.path.insert(0, {tests!r}); from run_without_torch import NoTorch; "
         "sys.meta_path.insert(0, NoTorch())\n").format(tests=os.path.join(ROOT, "tests"))

# a training loop written for PyTorch; its weights come from NumPy so every run starts from the same ones
BODY = """
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((24, 5)).astype(np.float32)
Y = (X.sum(1) > 0).astype(np.int64)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 2)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
sched = StepLR(opt, step_size=2, gamma=0.5)
loader = DataLoader(TensorDataset(torch.tensor(X), torch.tensor(Y)), batch_size=8)
torch.backends.cudnn.benchmark = True
torch.cuda.manual_seed_all(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
losses = []
for epoch in range(3):
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(f"{loss.item():.5f}")
    sched.step()
print("NAME", torch.__name__)
print("LOSSES", " ".join(losses))
"""

ATTR_FORM = """
import tinygrad_like as torch
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
StepLR = torch.optim.lr_scheduler.StepLR
assert torch.utils.data.dataloader.DataLoader is DataLoader and torch.autograd.functional.jacobian
assert torch.amp.GradScaler and torch.cuda.amp.autocast and torch.backends.cuda.matmul is not None
""" + BODY

IMPORT_FORM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.nn import functional as F2
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import DataLoader as DL2
import torch.utils.data.sampler
import torch.autograd.functional
from torch.autograd import Function
import torch.cuda.amp
from torch.cuda.amp import GradScaler
from torch.amp import autocast
assert F is F2 and DL2 is DataLoader
""" + BODY


def _run(code: str | None, args: list[str], tmp_path, block: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT}
    if code is not None:
        prog = tmp_path / "prog.py"
        prog.write_text(textwrap.dedent(code))
        args = [str(prog) if a == "PROG" else a for a in args]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=str(tmp_path), env=env,
                          timeout=120)


def _losses(out: str) -> list[float]:
    line = next(x for x in out.splitlines() if x.startswith("LOSSES"))
    return [float(v) for v in line.split()[1:]]


@pytest.mark.parametrize("block", [False, True], ids=["torch-installed", "torch-absent"])
def test_attribute_form(tmp_path, block):
    r = _run((BLOCK if block else "") + ATTR_FORM, ["PROG"], tmp_path, block)
    assert r.returncode == 0, r.stderr
    assert "NAME tinygrad_like" in r.stdout and len(_losses(r.stdout)) == 9


@pytest.mark.parametrize("block", [False, True], ids=["torch-installed", "torch-absent"])
def test_run_module_form_matches_pytorch(tmp_path, block):
    prog = tmp_path / "prog.py"
    prog.write_text(IMPORT_FORM)
    if block:
        launcher = BLOCK + f"from tinygrad_like.run import main; main([{str(prog)!r}, 'x'])"
        r = _run(None, ["-c", launcher], tmp_path, block)
    else:
        r = _run(None, ["-m", "tinygrad_like.run", str(prog), "x"], tmp_path, block)
    assert r.returncode == 0, r.stderr
    assert "NAME tinygrad_like" in r.stdout
    ours = _losses(r.stdout)
    pytest.importorskip("torch")
    ref = _run(None, [str(prog)], tmp_path, False)  # the same file under the real PyTorch
    assert ref.returncode == 0, ref.stderr
    assert "NAME torch" in ref.stdout
    assert ours == pytest.approx(_losses(ref.stdout), abs=2e-5)


@pytest.mark.parametrize("block", [False, True], ids=["torch-installed", "torch-absent"])
def test_install_as_torch_in_the_program(tmp_path, block):
    code = (BLOCK if block else "") + "import tinygrad_like\ntinygrad_like.install_as_torch()\n" + IMPORT_FORM + """
import tinygrad_like.dropin as d
assert d.is_installed()
try:
    import torch.no_such_module
except ModuleNotFoundError as e:
    print("MISSING", e)
d.uninstall_torch_alias()
assert "torch.nn" not in sys.modules if "sys" in dir() else True
"""
    r = _run(code, ["PROG"], tmp_path, block)
    assert r.returncode == 0, r.stderr
    assert "NAME tinygrad_like" in r.stdout
    assert "MISSING No module named 'torch.no_such_module'" in r.stdout


def test_install_refuses_after_real_torch(tmp_path):
    pytest.importorskip("torch")
    code = """
import torch
import tinygrad_like
try:
    tinygrad_like.install_as_torch()
except RuntimeError as e:
    print("REFUSED", e)
"""
    r = _run(code, ["PROG"], tmp_path, False)
    assert r.returncode == 0, r.stderr
    assert "REFUSED install_as_torch(): the real PyTorch is already imported" in r.stdout


@pytest.mark.parametrize("block", [False, True], ids=["torch-installed", "torch-absent"])
def test_import_statement_without_the_alias_is_not_tinygrad_like(tmp_path, block):
    """The documented limit of form 1: an import statement naming torch asks for the real package."""
    code = (BLOCK if block else "") + """
import tinygrad_like as torch
try:
    import torch.nn as nn
    print("GOT", nn.__name__, nn.Linear.__module__.split(".")[0])
except ModuleNotFoundError as e:
    print("MISSING", e.name)
"""
    r = _run(code, ["PROG"], tmp_path, block)
    assert r.returncode == 0, r.stderr
    if block:
        assert "MISSING torch" in r.stdout
    else:
        assert "GOT torch.nn torch" in r.stdout


def test_run_usage_and_missing_file(tmp_path):
    r = _run(None, ["-m", "tinygrad_like.run"], tmp_path, False)
    assert r.returncode == 2 and "usage" in r.stdout
    r = _run(None, ["-m", "tinygrad_like.run", "nope.py"], tmp_path, False)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_star_import_brings_every_public_name_and_the_return_types():
    import tinygrad_like as tl

    names: dict = {}
    exec("from tinygrad_like import *", names)
    assert len(tl.__all__) == len(set(tl.__all__)), "a name is listed twice"
    for name in ("topk", "sort", "multinomial", "einsum", "atan2", "isclose", "hstack", "meshgrid", "cdist",
                 "searchsorted", "return_types", "inference_mode", "linalg"):
        assert name in names, name
    values, indices = tl.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)
    assert isinstance(tl.tensor([3.0, 1.0]).topk(1), tl.return_types.topk)
    assert isinstance(tl.tensor([[1.0, 5.0]]).max(1), tl.return_types.max) and indices.tolist() == [1, 0]


def test_size_compile_and_pad_sequence_as_torch():
    import numpy as np

    import tinygrad_like as tl
    from tinygrad_like.nn.utils.rnn import pad_sequence

    torch = pytest.importorskip("torch")
    assert tl.ones(2, 3).shape == tl.Size([2, 3]) == torch.Size([2, 3])
    assert tl.Size([2, 3, 4]).numel() == torch.Size([2, 3, 4]).numel() == 24 and isinstance(tl.Size([1]), tuple)
    with pytest.raises(TypeError):
        tl.Size([2.5])
    model = tl.nn.Linear(3, 2)
    assert tl.compile(model) is model and tl.compile()(model) is model
    with pytest.raises(RuntimeError, match="expected a callable"):
        tl.compile(3)
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 2)).astype(np.float32) for n in (3, 1, 2)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            ours = [tl.tensor(s, requires_grad=True) for s in seqs]
            theirs = [torch.tensor(s, requires_grad=True) for s in seqs]
            a = pad_sequence(ours, batch_first=batch_first, padding_value=-1.0, padding_side=side)
            b = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first, padding_value=-1.0,
                                                padding_side=side)
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
            g = rng.standard_normal(tuple(b.shape)).astype(np.float32)
            a.backward(tl.tensor(g))
            b.backward(torch.tensor(g))
            for x, y in zip(ours, theirs):
                np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
    with pytest.raises(RuntimeError, match="same trailing dims"):
        pad_sequence([tl.ones(2, 3), tl.ones(2, 4)])


def test_shape_and_size_are_a_size_as_torch():
    """``x.shape``/``x.size()`` are ``tl.Size`` (issue 17: "shape that behaves like torch.Size"): slices, sums and
    repeats stay a Size, indexing gives ints, and it goes wherever a tuple of ints goes."""
    import copy
    import pickle

    import numpy as np

    import tinygrad_like as tl

    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.zeros(2, 3, 4)
        s = x.shape
        assert isinstance(s, lib.Size) and isinstance(s, tuple) and isinstance(x.size(), lib.Size)
        assert s == (2, 3, 4) and s != [2, 3, 4] and s.numel() == 24 and x.size(-1) == 4 and type(s[0]) is int
        for part in (s[1:], s[::-1], s + (5,), (1,) + s, s * 2, x[0].shape, x.sum(0).size()):
            assert isinstance(part, lib.Size), (lib.__name__, part)
        assert s[1:] == (3, 4) and (1,) + s == (1, 2, 3, 4) and s * 2 == (2, 3, 4) * 2
        assert pickle.loads(pickle.dumps(s)) == s and isinstance(copy.deepcopy(s), lib.Size)
        assert lib.ones(s).shape == s and x.reshape(s[::-1]).shape == (4, 3, 2) and x.new_zeros(s).shape == s
        assert np.zeros(s).shape == (2, 3, 4) and hash(s) == hash((2, 3, 4))
    assert repr(tl.zeros(2, 3).shape) == "tl.Size([2, 3])" and f"{tl.zeros(2, 3).shape}" == "(2, 3)"


def test_size_takes_anything_with_index_as_torch():
    import numpy as np

    import tinygrad_like as tl

    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        assert lib.Size([np.int64(3), lib.tensor(4), True]) == (3, 4, 1)
        with pytest.raises(TypeError, match=r"item 1 is 'float'"):
            lib.Size([2, 2.5])

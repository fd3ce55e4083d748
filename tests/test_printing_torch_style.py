"""Printing under the torch alias is PyTorch's (torch.Size([3]), torch.float32, grad_fn=<AddBackward0>); a plain
``import tinygrad_like`` keeps the project's own style for shapes and dtypes. Compared with real torch."""

import subprocess
import sys
import textwrap

import pytest

import tinygrad_like as tl
from tinygrad_like import _format

torch = pytest.importorskip("torch")

PROGRAM = textwrap.dedent("""
    import torch
    import torch.nn as nn
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    print(x.shape)
    print(str(x.shape), repr(x.size()), x.shape[1:], x.size(1), x.shape.numel())
    print(f"{x.shape}", [x.shape], (x.shape,))
    print(x.dtype, torch.float64, torch.ones(2, dtype=torch.float64))
    y = x * 2 + 1
    z = (y @ x.t()).sum()
    print(y)
    print(z)
    print(type(z.grad_fn).__name__, z.grad_fn.name())
    print([type(n).__name__ if n is not None else None for n, _ in z.grad_fn.next_functions])
    print(x.t().grad_fn.next_functions[0][0].variable is x)
    lin = nn.Linear(3, 2)
    out = lin(torch.ones(4, 3))
    print(out.shape, type(out.grad_fn).__name__)
    print(torch.zeros(0, 3, dtype=torch.float64))
    print(x.exp().mean(0))
    print(torch.Size([2, 3]) == (2, 3), isinstance(x.shape, tuple))
""")


def _run(args, path):
    r = subprocess.run([sys.executable, *args, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_printing_under_the_alias_is_torchs(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    theirs = _run([], path)
    ours = _run(["-m", "tinygrad_like.run"], path)
    assert ours == theirs
    assert "torch.Size([2, 3])" in ours and "grad_fn=<AddBackward0>" in ours


def test_plain_style_keeps_the_projects_shapes_and_dtypes():
    assert not _format.STYLE.torch
    s = tl.ones(2, 3).shape
    assert isinstance(s, tuple) and isinstance(s, tl.Size) and s == torch.Size([2, 3])
    assert str(s) == "(2, 3)" and repr(s) == "tl.Size([2, 3])" and type(s[1:]) is tl.Size
    assert repr(tl.float32) == "tinygrad_like.float32"
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2 + 1) == repr(tx * 2 + 1)  # grad_fn=<AddBackward0>: the node's name in both styles
    assert repr((x * 2).grad_fn).startswith("<MulBackward0 object at 0x")


def test_switching_styles_in_process():
    try:
        _format.use_torch_style(True)
        for shape in ((3,), (2, 3), ()):
            ours, theirs = tl.Size(shape), torch.Size(shape)
            assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
        assert repr(tl.ones(2, dtype=tl.float64)) == repr(torch.ones(2, dtype=torch.float64))
        assert repr(tl.zeros(0, 3, dtype=tl.int32)) == repr(torch.zeros(0, 3, dtype=torch.int32))
    finally:
        _format.use_torch_style(False)
    assert str(tl.Size([3])) == "(3,)"

"""Copies, pickles and crashes (issue 15): one device object per device, and no litter after a crashed save."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import numpy as np

import tinygrad_like as tl


def test_deep_copies_and_pickles_land_on_the_same_device_object():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    for y in (copy.deepcopy(x), copy.copy(x), pickle.loads(pickle.dumps(x))):
        assert y.device is x.device
        assert (x + y).tolist() == [2.0, 4.0]
    assert copy.deepcopy(tl.device("cpu")) is tl.device("cpu")


def test_an_optimizer_steps_over_a_deep_copied_model():
    m = tl.nn.Linear(3, 2)
    m2 = copy.deepcopy(m)
    opt = tl.optim.SGD(m2.parameters(), lr=0.1)
    m2(tl.ones(4, 3)).sum().backward()
    opt.step()  # failed with "expected all tensors to be on the same device, but found ... cpu and cpu"
    assert not np.array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())


def test_a_crashed_save_leaves_no_temporary_behind_after_the_next_save(tmp_path):
    path = tmp_path / "model.safetensors"
    crash = ("import os, tinygrad_like as tl\n"
             "def write(f):\n"
             "    f.write(b'x' * 100000)\n"
             "    f.flush()\n"
             "    os._exit(3)  # killed in the middle of writing\n"
             f"tl.io._atomic_write({str(path)!r}, write)\n")
    r = subprocess.run([sys.executable, "-c", crash], capture_output=True)
    assert r.returncode == 3
    left = [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert len(left) == 1 and not path.exists()  # what the crash left
    busy = tmp_path / f".model.safetensors.{os.getpid()}.abcdef.tmp"  # a save running now (this process)
    busy.write_bytes(b"partial")
    tl.save({"w": tl.ones(2)}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(["model.safetensors", busy.name])
    assert tl.load(path)["w"].tolist() == [1.0, 1.0]


def test_integer_bitwise_ops_go_through_the_backend_protocol(dev):
    """& | ^ on integers bypassed the backend (AttributeError on every non-NumPy one); now they are primitives,
    timed like the others."""
    a, b = tl.tensor([12, 10, 7]), tl.tensor([10, 6, 1])
    for on in (a, a.to("testdev")):
        other = b.to(on.device)
        assert (on & other).tolist() == [8, 2, 1]
        assert (on | other).tolist() == [14, 14, 7]
        assert (on ^ other).tolist() == [6, 12, 6]
        assert (on & 3).device == on.device
    with tl.profile() as prof:
        a & b
    assert [k.name for k in prof.kernels] == ["bitwise_and"]


def _module_level_patches(path) -> list[str]:
    """``module.name = ...`` (or ``Class.name = ...``) at the top level of a file, where ``module``/``Class`` was
    imported there: one module writing into another at import time."""
    import ast

    tree = ast.parse(path.read_text())
    imported = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    found = []
    for node in ast.walk(ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Assign, ast.AugAssign))],
                                    type_ignores=[])):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in imported:
                found.append(f"{path.name}:{node.lineno}: {t.value.id}.{t.attr} = ...")
    return found


def test_no_core_module_patches_another_at_import(tmp_path):
    """The op modules and the autograd engine import the tensor base normally (tensor_base), instead of the
    tensor module binding ``function.wrap``, ``engine._wrap`` and ``_util.Tensor`` into them after the fact."""
    from pathlib import Path

    root = Path(tl.__file__).parent
    found = [p for f in sorted(root.rglob("*.py")) for p in _module_level_patches(f)]
    assert found == []
    # the check itself sees such a line
    probe = tmp_path / "probe_patch.py"
    probe.write_text("from tinygrad_like.autograd import function\nfunction.wrap = print\n")
    assert _module_level_patches(probe) == ["probe_patch.py:2: function.wrap = ..."]


def test_ops_recognize_tensors_by_the_base_class_and_results_keep_the_concrete_one():
    from tinygrad_like.tensor_base import TensorBase

    p = tl.nn.Parameter(tl.ones(2))
    for out in (p * 2, p.detach(), p[0:1], p.T, p.to(tl.float64)):
        assert type(out) is tl.Tensor and isinstance(out, TensorBase)  # a parameter's results are plain tensors
    assert hash(p) == object.__hash__(p)  # identity, though __eq__ is elementwise

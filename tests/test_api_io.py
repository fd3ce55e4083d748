"""tl.save / tl.load as torch.save / torch.load, and copy/pickle of tensors and modules."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

import tinygrad_like as tl


def _eq(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tl.Tensor):
        assert a.dtype is b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        # (a flat name -> Tensor dict comes back in the file's order, safetensors' sorted one; nested dicts keep theirs)
        flat = all(isinstance(v, tl.Tensor) for v in a.values())
        assert (sorted(a) == sorted(b)) if flat else list(a) == list(b)
        for k in a:
            _eq(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _eq(x, y)
    else:
        assert a == b or (a != a and b != b)


OBJECTS = [
    {"w": tl.randn(2, 3), "b": tl.zeros(3)},
    {"model": {"w": tl.ones(2)}, "epoch": 3, "lr": 0.1, "name": "run", "none": None, "hist": [1.0, 2.0],
     "pair": (1, "a"), "nan": float("nan")},
    tl.arange(6).reshape(2, 3),
    [tl.ones(1), 2, "x"],
    (tl.zeros(2), None),
]


@pytest.mark.parametrize("obj", OBJECTS, ids=["state_dict", "nested", "tensor", "list", "tuple"])
@pytest.mark.parametrize("where", ["pt", "pth", "noext", "npz", "bytesio"])
def test_round_trips(tmp_path, obj, where):
    if where == "bytesio":
        f = io.BytesIO()
        tl.save(obj, f)
        f.seek(0)
        back = tl.load(f)
    else:
        p = tmp_path / ("ckpt" if where == "noext" else f"ckpt.{where}")
        tl.save(obj, p)
        back = tl.load(str(p), map_location="cpu", weights_only=True)
    _eq(obj, back)


def test_model_and_optimizer_checkpoint_like_torch(tmp_path):
    m = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 1))
    opt = tl.optim.Adam(m.parameters(), lr=1e-3)
    m(tl.randn(5, 3)).sum().backward()
    opt.step()
    p = tmp_path / "ckpt.pt"
    tl.save({"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 7}, p)
    ck = tl.load(p, map_location=lambda storage, loc: storage)
    m2 = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 1))
    m2.load_state_dict(ck["model"])
    opt2 = tl.optim.Adam(m2.parameters(), lr=1e-3)
    opt2.load_state_dict(ck["optim"])
    x = tl.randn(2, 3)
    np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())
    assert ck["epoch"] == 7
    assert tl.load(p, map_location={"cuda:0": "cpu"})["epoch"] == 7


def test_whole_module_and_optimizer_are_pickled_as_torch_and_load_only_unsafely(tmp_path):
    m = tl.nn.Linear(2, 2)
    opt = tl.optim.SGD(m.parameters(), lr=0.1)
    tl.save({"model": m, "opt": opt}, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tl.load(tmp_path / "m.pt")  # (weights_only=True by default, as torch)
    ck = tl.load(tmp_path / "m.pt", weights_only=False)
    assert isinstance(ck["model"], tl.nn.Linear)
    np.testing.assert_array_equal(ck["model"].weight.detach().numpy(), m.weight.detach().numpy())
    assert ck["opt"].param_groups[0]["params"][0] is ck["model"].weight  # (one tensor, shared as saved)


def test_torch_pickle_checkpoint_loads_under_the_weights_only_policy(tmp_path):
    torch = pytest.importorskip("torch")
    p = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, p)
    assert tl.load(p)["w"].tolist() == [1.0, 1.0]
    b = io.BytesIO()
    torch.save({"w": torch.ones(2)}, b)
    b.seek(0)
    assert tl.load(b)["w"].tolist() == [1.0, 1.0]


def test_load_save_keyword_names_match_torch():
    torch = pytest.importorskip("torch")
    import inspect
    ours, theirs = inspect.signature(tl.load).parameters, inspect.signature(torch.load).parameters
    for name in ("f", "map_location", "pickle_module", "weights_only", "mmap"):
        assert name in theirs
    assert list(ours)[1:3] == list(theirs)[1:3] and "weights_only" in ours and "mmap" in ours
    assert list(inspect.signature(tl.save).parameters)[2:4] == list(inspect.signature(torch.save).parameters)[2:4]


# ---- copy and pickle ------------------------------------------------------------------------------------------
def test_deepcopy_and_pickle_of_tensors():
    x = tl.randn(3, requires_grad=True)
    (x * 2).sum().backward()
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.device == x.device
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    np.testing.assert_array_equal(y.grad.numpy(), x.grad.numpy())
    y.detach().numpy()[0] = 123.0
    assert x[0].item() != 123.0
    z = pickle.loads(pickle.dumps(x))
    assert z.requires_grad and z.device == x.device
    np.testing.assert_array_equal(z.detach().numpy(), x.detach().numpy())
    i = pickle.loads(pickle.dumps(tl.arange(4)))
    assert i.dtype is tl.int64 and i.tolist() == [0, 1, 2, 3]
    v = copy.deepcopy(tl.arange(6.0).reshape(2, 3).T)
    assert v.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_pickle_of_a_view():
    """A storage keeps weak references to its views, which pickle cannot save: the copy leaves them out, and is a
    storage of its own (a new id) whose views share its version counter."""
    base = tl.arange(6.0)
    view = base.reshape(2, 3).T
    v = pickle.loads(pickle.dumps(view))
    assert v.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert v.storage.id != view.storage.id and v.stride() == view.stride()
    w = v[0]
    w.add_(1.0)
    assert v.storage.version == w.storage.version == 1 and view.storage.version == 0
    assert view.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    d = copy.deepcopy(view)
    assert d.storage.id not in (view.storage.id, v.storage.id)


def test_deepcopy_and_pickle_of_modules():
    m = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    m(tl.randn(2, 3)).sum().backward()
    for m2 in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(m2[0].weight) is type(m[0].weight) and m2[0].weight.requires_grad
        assert m2[0].weight is not m[0].weight
        x = tl.randn(5, 3)
        np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())
        assert [n for n, _ in m2.named_parameters()] == [n for n, _ in m.named_parameters()]
        m2[0].weight.data.fill_(0.0) if hasattr(m2[0].weight, "data") else None
    c = copy.deepcopy(m)
    np.testing.assert_array_equal(c[0].weight.grad.numpy(), m[0].weight.grad.numpy())
    with tl.no_grad():
        c[0].weight.mul_(0)
    assert m[0].weight.abs().sum().item() > 0

"""torch.save / torch.load's policy, case by case against PyTorch itself: what each saves, what load accepts by
default (weights_only=True), with an allowlist, and with weights_only=False."""

from __future__ import annotations

import argparse
import collections
import io
import pickle

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import serialization

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _empty_allowlists():
    serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()


def _np_array_globals():
    return [np._core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.int64))]


CASES = {
    "numpy array": lambda: np.arange(3),
    "numpy scalar": lambda: np.float64(1.5),
    "namespace": lambda: argparse.Namespace(lr=0.1, epochs=3),
    "set": lambda: {1, 2},
    "frozenset": lambda: frozenset({1}),
    "counter": lambda: collections.Counter("abca"),
    "ordered dict": lambda: collections.OrderedDict(a=1, b=[2, 3]),
    "complex": lambda: 3 + 4j,
    "bytes": lambda: b"xy",
    "bytearray": lambda: bytearray(b"x"),
    "slice": lambda: slice(1, 2),
    "range": lambda: range(3),
    "defaultdict": lambda: collections.defaultdict(list, a=[1]),
    "tuple keys": lambda: {(1, 2): "x", 3.5: None, True: -1},
    "nested": lambda: {"epoch": 3, "loss": float("nan"), "hist": [1.0, (2, "a")], "none": None},
}


def _outcome(lib, obj, **kw):
    """('ok', value) or (exception type name, the global it names) for save + load through ``lib``."""
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    try:
        return "ok", lib.load(buf, **kw)
    except pickle.UnpicklingError as e:
        msg = str(e)
        return "UnpicklingError", msg.split("GLOBAL ")[1].split(" was not")[0] if "GLOBAL " in msg else msg


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and np.array_equal(a, b)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("name", list(CASES))
def test_default_load_accepts_and_refuses_what_torch_does(name):
    t_kind, t_val = _outcome(torch, CASES[name]())
    o_kind, o_val = _outcome(tl, CASES[name]())
    assert o_kind == t_kind
    if t_kind == "ok":
        assert _same(o_val, t_val)
    else:
        assert o_val == t_val  # (the same global named)


@pytest.mark.parametrize("name", list(CASES))
def test_weights_only_false_loads_everything_as_torch(name):
    t_kind, t_val = _outcome(torch, CASES[name](), weights_only=False)
    o_kind, o_val = _outcome(tl, CASES[name](), weights_only=False)
    assert t_kind == o_kind == "ok"
    assert _same(o_val, t_val) or (isinstance(t_val, argparse.Namespace) and vars(o_val) == vars(t_val))


def test_numpy_array_error_is_torchs_and_allowlisting_loads_it(tmp_path):
    for lib in (torch, tl):
        lib.save(np.arange(3), tmp_path / "a.pt")
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(tmp_path / "a.pt")
    tl.save(np.arange(3), tmp_path / "b.pt")
    with pytest.raises(pickle.UnpicklingError) as ours:
        tl.load(tmp_path / "b.pt")
    for e in (theirs, ours):
        assert "Weights only load failed" in str(e.value)
        assert "add_safe_globals([numpy._core.multiarray._reconstruct])" in str(e.value)
    with torch.serialization.safe_globals(_np_array_globals()):
        want = torch.load(tmp_path / "a.pt")
    with serialization.safe_globals(_np_array_globals()):
        got = tl.load(tmp_path / "b.pt")
    np.testing.assert_array_equal(got, want)
    assert serialization.get_safe_globals() == []  # (the context manager restored the empty allowlist)
    serialization.add_safe_globals(_np_array_globals())
    torch.serialization.add_safe_globals(_np_array_globals())
    np.testing.assert_array_equal(tl.load(tmp_path / "b.pt"), torch.load(tmp_path / "a.pt"))
    assert len(serialization.get_safe_globals()) == len(torch.serialization.get_safe_globals()) == 4


def test_allowlist_by_name_and_unsafe_globals_listed_as_torch(tmp_path):
    obj = {"args": argparse.Namespace(lr=0.1), "w": np.zeros(2)}
    torch.save(obj, tmp_path / "t.pt")
    tl.save(obj, tmp_path / "o.pt")
    theirs = torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "t.pt")
    ours = serialization.get_unsafe_globals_in_checkpoint(tmp_path / "o.pt")
    assert sorted(ours) == sorted(theirs)
    assert serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_saved({"w": tl.ones(1)}))) == []
    with serialization.safe_globals([(argparse.Namespace, "argparse.Namespace")]):
        with pytest.raises(pickle.UnpicklingError, match="numpy"):  # (the array is still not allowed)
            tl.load(tmp_path / "o.pt")


def _saved(obj) -> bytes:
    b = io.BytesIO()
    tl.save(obj, b)
    return b.getvalue()


def test_whole_module_saves_and_loads_only_with_weights_only_false(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    om = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.ReLU())
    om.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    torch.save(tm, tmp_path / "t.pt")
    tl.save(om, tmp_path / "o.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        torch.load(tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        tl.load(tmp_path / "o.pt")
    tm2, om2 = torch.load(tmp_path / "t.pt", weights_only=False), tl.load(tmp_path / "o.pt", weights_only=False)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(om2(tl.tensor(x)).detach().numpy(), tm2(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert isinstance(om2[0].weight, tl.nn.Parameter) and om2[0].weight.requires_grad


def test_optimizer_state_dict_round_trips_and_tensors_keep_requires_grad():
    w = tl.tensor([1.0, -1.0], requires_grad=True)
    opt = tl.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    back = tl.load(io.BytesIO(_saved({"opt": opt.state_dict(), "w": w, "extra": {1, 2}})))
    assert back["extra"] == {1, 2} and back["w"].requires_grad  # (pickled: a set is beyond the JSON structure)
    np.testing.assert_array_equal(back["opt"]["state"][0]["exp_avg"].numpy(), opt.state[w]["exp_avg"].numpy())
    tw = torch.tensor([1.0, -1.0], requires_grad=True)
    b = io.BytesIO()
    torch.save({"w": tw, "extra": {1, 2}}, b)
    b.seek(0)
    assert torch.load(b)["w"].requires_grad  # (torch keeps it too)


def test_pickle_module_and_weights_only_rules_as_torch(tmp_path, monkeypatch):
    tl.save({"a": np.zeros(1)}, tmp_path / "o.pt")
    torch.save({"a": np.zeros(1)}, tmp_path / "t.pt")
    # a pickle_module with weights_only unset means weights_only=False, in both
    assert tl.load(tmp_path / "o.pt", pickle_module=pickle)["a"].tolist() == [0.0]
    assert torch.load(tmp_path / "t.pt", pickle_module=pickle)["a"].tolist() == [0.0]
    for lib, p in ((torch, "t.pt"), (tl, "o.pt")):
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
            lib.load(tmp_path / p, pickle_module=pickle, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert tl.load(tmp_path / "o.pt")["a"].tolist() == [0.0]
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert torch.load(tmp_path / "t.pt")["a"].tolist() == [0.0]


def test_nothing_in_a_refused_pickle_runs(tmp_path):
    ran = []

    class Payload:
        def __reduce__(self):
            return (ran.append, ("ran",))

    tl.save({"x": Payload()}, tmp_path / "e.pt")
    with pytest.raises(pickle.UnpicklingError):
        tl.load(tmp_path / "e.pt")
    assert ran == []


def test_old_formats_still_load_and_flat_dicts_stay_safetensors(tmp_path):
    from safetensors.numpy import load_file
    tl.save({"w": tl.ones(2, 3)}, tmp_path / "m.pt")
    assert set(load_file(tmp_path / "m.pt")) == {"w"}
    tl.save({"model": {"w": tl.ones(2)}, "epoch": 3}, tmp_path / "c.pt")
    assert (tmp_path / "c.pt").read_bytes()[:2] != b"PK"  # (nested plain values: still safetensors, no pickle)
    assert tl.load(tmp_path / "c.pt")["epoch"] == 3


def test_pickled_save_is_atomic_and_a_failure_leaves_the_old_file(tmp_path):
    tl.save({"w": np.ones(2)}, tmp_path / "c.pt")
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        tl.save({"f": lambda: 0}, tmp_path / "c.pt")  # (pickle cannot save a lambda: nothing is written)
    assert tl.load(tmp_path / "c.pt", weights_only=False)["w"].tolist() == [1.0, 1.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pt"]


def test_metadata_and_map_location_with_pickled_objects(tmp_path):
    tl.save({"w": tl.ones(2), "s": {3}}, tmp_path / "c.pt", metadata={"run": "a"})
    assert tl.io.load_metadata(tmp_path / "c.pt") == {"run": "a"}
    assert tl.load(tmp_path / "c.pt", map_location="cpu")["w"].device.type == "cpu"


def test_serialization_module_under_the_alias():
    import inspect
    for name in ("add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
                 "get_unsafe_globals_in_checkpoint"):
        assert list(inspect.signature(getattr(serialization, name)).parameters) == list(
            inspect.signature(getattr(torch.serialization, name)).parameters), name
    assert tl.serialization.save is tl.save and tl.serialization.load is tl.load
    with pytest.raises(NotImplementedError, match="FakeTensor"):
        serialization.skip_data()
    for fn in (tl.save, tl.load):
        assert list(inspect.signature(fn).parameters)[:2] == list(inspect.signature(getattr(torch, fn.__name__))
                                                                  .parameters)[:2]


def test_killing_a_process_mid_save_never_loses_the_pickled_checkpoint(tmp_path):
    """SIGKILL at random moments of a loop of pickled saves: the file is always a whole checkpoint."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    if not hasattr(signal, "SIGKILL"):
        pytest.skip("no SIGKILL on this platform")
    path = tmp_path / "ckpt.pt"
    script = ("import sys, numpy as np, tinygrad_like as tl\n"
              "i = 0\n"
              "while True:\n"
              "    tl.save({'i': i, 'a': np.full(300_000, i), 'args': {1, 2}}, sys.argv[1])\n"
              "    if i == 0:\n"
              "        print('saved', flush=True)\n"
              "    i += 1\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    rng = random.Random(0)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, env=env)
        assert proc.stdout.readline().strip() == b"saved"
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        ck = tl.load(path, weights_only=False)
        assert ck["args"] == {1, 2} and ck["a"].shape == (300_000,) and (ck["a"] == ck["i"]).all()


def test_checkpoints_written_by_pytorch_load_as_torch_loads_them(tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    sd = {"w": torch.arange(6.0).reshape(2, 3).t(), "p": torch.nn.Parameter(torch.ones(2)),
          "i": torch.tensor([1, -2]), "b": torch.tensor([True, False]),
          "h": torch.tensor([1.5, -2], dtype=torch.bfloat16), "view": torch.arange(10.0)[2:8:2],
          "empty": torch.zeros(0, 3), "dtype": torch.float16, "size": torch.Size([2]),
          "od": collections.OrderedDict(a=1), "model": m.state_dict(), "shared": None}
    sd["shared"] = sd["w"]
    torch.save(sd, tmp_path / "t.pt")
    theirs, ours = torch.load(tmp_path / "t.pt"), tl.load(tmp_path / "t.pt")
    assert list(ours) == list(theirs)
    for k in ("w", "p", "i", "b", "view", "empty"):
        np.testing.assert_array_equal(ours[k].detach().numpy(), theirs[k].detach().numpy(), err_msg=k)
        assert tuple(ours[k].shape) == tuple(theirs[k].shape) and ours[k].requires_grad == theirs[k].requires_grad
    assert ours["h"].dtype is tl.bfloat16 and ours["h"].float().tolist() == theirs["h"].float().tolist()
    assert isinstance(ours["p"], tl.nn.Parameter) and ours["dtype"] is tl.float16 and ours["size"] == (2,)
    assert ours["shared"] is ours["w"] and ours["od"] == theirs["od"]
    lin = tl.nn.Linear(3, 2)
    lin.load_state_dict(ours["model"])
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(lin(tl.tensor(x)).detach().numpy(), m(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    # torch's policy for its own files: a whole module or a NumPy array is refused by default, named as torch names it
    torch.save({"m": m, "a": np.zeros(1)}, tmp_path / "u.pt")
    assert sorted(serialization.get_unsafe_globals_in_checkpoint(tmp_path / "u.pt")) == sorted(
        torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "u.pt"))
    for lib in (torch, tl):
        with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
            lib.load(tmp_path / "u.pt")

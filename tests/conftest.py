"""Shared test helpers: build the same tensor in tinygrad_like and in PyTorch, and compare them.

``pair(arr)`` gives ``(tl_tensor, torch_tensor)`` holding copies of one NumPy array;
``assert_close(tl_t, torch_t, atol, rtol)`` checks values, shape and dtype name together.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

try:  # the oracle; tests that do not compare with it run without it (each oracle test module skips itself)
    import torch
except ImportError:
    torch = None

DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool", "uint8", "int8", "int16", "bfloat16")
TL_DTYPES = {name: getattr(tl, name) for name in DTYPES}
TORCH_DTYPES = {name: getattr(torch, name) for name in DTYPES} if torch is not None else {}

# tolerances for comparing against the oracle, per dtype
TOL = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "float64": (1e-10, 1e-9), "bfloat16": (1e-2, 1e-2)}


def torch_dtype_name(t) -> str:
    """``torch.float32`` -> ``'float32'`` (and ``torch.bool`` -> ``'bool'``)."""
    return str(t.dtype).replace("torch.", "")


def pair(arr, requires_grad: bool = False, dtype: str | None = None):
    """A tinygrad_like tensor and a torch tensor made from the same NumPy data (each its own copy)."""
    if torch is None:
        pytest.skip("PyTorch (the test oracle) is not installed")
    arr = np.asarray(arr)
    if dtype is not None:
        arr = arr.astype(TL_DTYPES[dtype].np)
    a = tl.tensor(arr.copy(), requires_grad=requires_grad)
    if dtype == "bfloat16":  # (torch reads no ml_dtypes array: through float32, which holds bfloat16 exactly)
        b = torch.tensor(arr.astype(np.float32)).bfloat16().requires_grad_(requires_grad)
    else:
        b = torch.tensor(arr.copy(), requires_grad=requires_grad)
    return a, b


def both(fn, *arrays, **kw):
    """Run ``fn(lib, *tensors)`` with tl and torch on copies of the same arrays (``kw``: ``pair``'s options)."""
    ins = [pair(np.asarray(a), **kw) for a in arrays]
    return fn(tl, *[a for a, _ in ins]), fn(torch, *[b for _, b in ins])


def close_all(ours, theirs, **kw) -> None:
    """``assert_close`` over one output or a tuple of them (``kw``: its tolerances)."""
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_close(a, b, **kw)


def raises_like(fn, *arrays, match: str | None = None) -> None:
    """Both libraries raise, the same exception type; ours matches ``match`` (the words that matter)."""
    ins = [pair(np.asarray(a)) for a in arrays]
    with pytest.raises(Exception) as theirs:
        fn(torch, *[b for _, b in ins])
    with pytest.raises(type(theirs.value), match=match):
        fn(tl, *[a for a, _ in ins])


def to_numpy(t) -> np.ndarray:
    """The values of a tl tensor, a torch tensor, or anything array-like, as NumPy."""
    if isinstance(t, tl.Tensor):
        return np.asarray(t.detach().numpy())
    if isinstance(t, torch.Tensor):
        t = t.detach().cpu()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()  # (torch's numpy() refuses bfloat16)
    return np.asarray(t)


def assert_close(a, b, atol: float | None = None, rtol: float | None = None, check_dtype: bool = True,
                 msg: str = "") -> None:
    """``a`` (tinygrad_like) matches ``b`` (torch): same shape, same dtype name, values within tolerance.

    NaN matches NaN and infinities must match exactly. With no tolerance given, it is picked from
    the dtype (integers and bools must be equal).
    """
    assert isinstance(a, tl.Tensor), f"{msg}expected a tinygrad_like Tensor, got {type(a).__name__}"
    assert isinstance(b, torch.Tensor), f"{msg}expected a torch Tensor, got {type(b).__name__}"
    assert tuple(a.shape) == tuple(b.shape), f"{msg}shape {tuple(a.shape)} != torch's {tuple(b.shape)}"
    if check_dtype:
        want = torch_dtype_name(b)
        assert a.dtype.name == want, f"{msg}dtype {a.dtype.name} != torch's {want}"
    x, y = to_numpy(a), to_numpy(b)
    if x.dtype.kind in "biu" and y.dtype.kind in "biu":
        np.testing.assert_array_equal(x, y, err_msg=msg)
        return
    dt = a.dtype.name if a.dtype.is_floating_point else "float64"
    d_atol, d_rtol = TOL.get(dt, TOL["float64"])
    np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64),
                               atol=d_atol if atol is None else atol, rtol=d_rtol if rtol is None else rtol,
                               equal_nan=True, err_msg=msg)


def make_array(shape, kind: str, rng: np.random.Generator, dtype: str = "float64") -> np.ndarray:
    """Random test data of a given ``kind``, chosen to keep ops away from their kinks and poles.

    'n' standard normal; 'pos' in [0.5, 2]; 'away' |x| in [0.3, 1.5] (away from 0, for relu/abs);
    'unit' in (-0.9, 0.9); 'tie' values in {-1, 0, 1} (ties on purpose); 'int' small integers;
    'bool' random booleans.
    """
    shape = tuple(shape)
    if kind == "n":
        a = rng.standard_normal(shape)
    elif kind == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    elif kind == "away":
        a = rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    elif kind == "unit":
        a = rng.uniform(-0.9, 0.9, shape)
    elif kind == "tie":
        a = rng.integers(-1, 2, shape).astype(np.float64)
    elif kind == "int":
        a = rng.integers(1, 4, shape)
    elif kind == "bool":
        a = rng.random(shape) > 0.5
    else:
        raise ValueError(f"unknown data kind {kind!r}")
    return np.asarray(a).astype(TL_DTYPES[dtype].np)


@pytest.fixture(params=["plain", "create_graph"])
def backward_mode(request, monkeypatch):
    """Run a test with plain backward passes and with every backward pass recording its graph
    (``create_graph=True``: ``Tensor.backward``, ``tl.autograd.grad``, ``gradcheck``, all go through the engine's
    ``backward_steps``), which records the same formulas (and recomputes what a fused node reuses from forward,
    e.g. layer norm's statistics), so both are held to the oracle."""
    if request.param == "create_graph":
        from tinygrad_like.autograd import engine

        plain = engine.backward_steps

        def recording(roots, grads, retain_graph=False, create_graph=False, capture=None, steps=True):
            return plain(roots, grads, retain_graph, True, capture, steps)

        monkeypatch.setattr(engine, "backward_steps", recording)
        # the gradients are then part of a graph; let the comparisons read them as torch's .numpy() would not
        to_numpy = tl.Tensor.numpy
        monkeypatch.setattr(tl.Tensor, "numpy", lambda self, *, force=True: to_numpy(self, force=force))
    yield request.param


@pytest.fixture
def dev():
    """The ``testdev`` device: the simulated device's memory space under its own name, with fresh counters
    (``dev.raw_backend`` counts the copies and allocations); unregistered afterwards."""
    from devbackend import DevBackend

    from tinygrad_like.device import register_device, unregister_device

    d = register_device("testdev", DevBackend())
    try:
        yield d
    finally:
        unregister_device("testdev")


@pytest.fixture
def recorded():
    """Every event emitted during the test."""
    from tinygrad_like import events

    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        yield seen
    finally:
        unsubscribe()

# a script with a helper module for test_fuzz_torch.py, not a test module (its doctest collection would import
# torch even where the oracle is absent)
# (tests/programs/: PyTorch programs tests/test_programs.py runs as subprocesses; importing one runs it)
collect_ignore = ["fuzz_torch.py", "run_without_torch.py", "programs"]


def pytest_collection_modifyitems(config, items) -> None:
    """Without PyTorch, tests that use the oracle skip (with the reason) and every other test still runs: a
    test uses it when its source names ``torch`` (modules made only of oracle tests skip themselves)."""
    if torch is not None:
        return
    import inspect

    skip = pytest.mark.skip(reason="needs PyTorch (the test oracle), which is not installed")
    for item in items:
        fn = getattr(item, "function", None)
        try:
            src = inspect.getsource(fn) if fn is not None else ""
        except (OSError, TypeError):
            src = ""
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "torch" in src or any("torch" in repr(v) for v in params.values()):
            item.add_marker(skip)

"""Shared test helpers: build the same tensor in tinygrad_like and in PyTorch, and compare them.

``pair(arr)`` gives ``(tl_tensor, torch_tensor)`` holding copies of one NumPy array;
``assert_close(tl_t, torch_t, atol, rtol)`` checks values, shape and dtype name together;
``assert_ulp_close(ours, theirs)`` does the same within ``ULP_BOUND`` units in the last place of the result's dtype.
"""

from __future__ import annotations

import os
import sys

from run_without_torch import HIDE_TORCH, hide_torch

if os.environ.get(HIDE_TORCH) == "1":  # tests/run_without_torch.py's run: in a pytest-xdist worker too
    hide_torch()

import numpy as np
import pytest

import tinygrad_like as tl

# a skip because a tool is missing: counted and summarised, and a failure under CI (tests/skip_policy.py)
pytest_plugins = ["skip_policy"]

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
    if torch is not None and isinstance(t, torch.Tensor):
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


#: How far (in units in the last place of the result's dtype) a transcendental may be from the oracle's.
ULP_BOUND = 4

_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}
_MIN_EXPONENT = {"float16": -14, "bfloat16": -126, "float32": -126, "float64": -1022}  # of the smallest normal


def _dtype_name(t) -> str:
    if isinstance(t, tl.Tensor):
        return t.dtype.name
    if torch is not None and isinstance(t, torch.Tensor):
        return torch_dtype_name(t)
    return np.asarray(t).dtype.name


def ulp_distance(a, b, dtype: str) -> np.ndarray:
    """``|a - b|`` in units in the last place of ``dtype`` at ``max(|a|, |b|)`` (subnormal spacing below the normals),
    as float64; both are values of ``dtype`` (exact in float64)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    _, e = np.frexp(np.maximum(np.abs(a), np.abs(b)))  # m * 2**e, m in [0.5, 1): the leading bit is 2**(e - 1)
    spacing = np.ldexp(1.0, np.maximum(e - 1, _MIN_EXPONENT[dtype]) - _MANTISSA_BITS[dtype])
    with np.errstate(invalid="ignore"):  # (inf - inf: the caller compares infinities itself)
        return np.abs(a - b) / spacing


def assert_ulp_close(ours, theirs, ulp: int = ULP_BOUND, msg: str = "") -> None:
    """``ours`` and ``theirs`` (tl or torch tensors, or arrays) have the same shape and dtype name, and values within
    ``ulp`` units in the last place of that dtype (float16/bfloat16/float32/float64; other dtypes must be equal).
    NaN matches NaN; infinities must match exactly.

    Why 4 ulp: a transcendental (exp, log, tanh, erf, pow, ...) from two libraries differs by a few ulp, and not the
    same from one CPU to the next: NumPy picks its SIMD loops (AVX2, AVX-512, SVML), torch its kernels (Sleef
    under AVX2 or AVX-512) and glibc its libm variants (FMA or not) by CPU. float64 logit agreed bit for bit on
    Intel machines and not on an AMD AVX-512 one (1 ulp). A wrong dtype or rounding path is still caught: it is
    off by many ulps (up to 128 for a bfloat16 logit rounded once instead of per step).
    """
    dtype, want_dtype = _dtype_name(ours), _dtype_name(theirs)
    x, y = to_numpy(ours), to_numpy(theirs)
    assert x.shape == y.shape, f"{msg}shape {x.shape} != {y.shape}"
    assert dtype == want_dtype, f"{msg}dtype {dtype} != {want_dtype}"
    if dtype not in _MANTISSA_BITS:
        np.testing.assert_array_equal(x, y, err_msg=msg)
        return
    x, y = x.astype(np.float64), y.astype(np.float64)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    assert np.array_equal(nan_x, nan_y), f"{msg}NaN on one side only at {np.argwhere(nan_x != nan_y)[:5].tolist()}"
    inf = np.isinf(x) | np.isinf(y)
    assert np.array_equal(x[inf], y[inf]), f"{msg}infinities differ at {np.argwhere(inf & (x != y))[:5].tolist()}"
    d = np.zeros(x.shape)
    finite = ~(nan_x | inf)
    d[finite] = ulp_distance(x[finite], y[finite], dtype)
    if (d > ulp).any():
        bad = [tuple(i) for i in np.argwhere(d > ulp)]
        first = "\n  ".join(f"{i}: {x[i]!r} vs {y[i]!r} ({d[i]:g} ulp)" for i in bad[:5])
        raise AssertionError(f"{msg}{len(bad)} of {d.size} elements differ by more than {ulp} ulp of {dtype} "
                             f"(at most {d.max():g}):\n  {first}")


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


def emu_kernel_file(tmp_path_factory, name: str, source: str):
    """``source`` written as ``name`` in a fresh folder, for ``tl.cuda.Kernel`` on ``cuda-emu`` (the body of a module
    fixture); skipped where the emulated device cannot start, as without a C++ compiler (a skip CI counts as a fail)."""
    try:
        tl.device("cuda-emu")
    except RuntimeError as e:
        pytest.skip(str(e))
    path = tmp_path_factory.mktemp("kernels") / name
    path.write_text(source)
    return path


@pytest.fixture(autouse=True)
def _views_let_go_of_handed_out_widgets():
    """A test that read ``view.widget`` handed the widget out: the widget then keeps its view (and the view's event
    subscriptions) alive until closed, as a notebook user's widget does. Afterwards the test holds nothing any more,
    so the views it left open go back to closing their widgets when dropped (views a fixture still holds live on)."""
    yield
    base = sys.modules.get("tinygrad_like.widgets._base")
    if base is not None:
        for view in list(base._OPEN):
            base.take_back(view)


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
    test uses it when its source names ``torch`` (modules made only of oracle tests skip themselves). The run that
    hides PyTorch (tests/run_without_torch.py) leaves out the tests marked ``other_process``: their work runs where
    PyTorch is not hidden, so they would only repeat the main run."""
    from skip_policy import torch_hidden_on_purpose  # (here: imported at the top, pytest could not rewrite the plugin)

    if torch_hidden_on_purpose():
        elsewhere = [item for item in items if item.get_closest_marker("other_process")]
        if elsewhere:
            config.hook.pytest_deselected(items=elsewhere)
            items[:] = [item for item in items if not item.get_closest_marker("other_process")]
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


class WrongSquare(tl.autograd.Function):
    """``x * x`` with a backward 1.5 times its derivative: what a gradient check is there to catch (the tests of
    ``gradcheck`` and of the conformance table's finite-difference witness both use it)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x._x * x._x

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x * 3,)  # should be 2 * x

"""``tinygrad_like._format.format_tensor`` vs the real thing: ``repr`` of a torch tensor of the same data.

Torch's repr is taken with ``torch.`` replaced by ``tinygrad_like.``; the two strings must be identical. The
renaming is done before torch decides where suffixes wrap (see ``rename_dtypes_in_torch``): the longer name
can push ``dtype=...`` onto its own line, and the port is meant to wrap what it actually prints.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from tinygrad_like import _format
from tinygrad_like._format import format_tensor

torch = pytest.importorskip("torch")

DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool")
FLOATS = ("float16", "float32", "float64")


@pytest.fixture(autouse=True)
def rename_dtypes_in_torch(monkeypatch):
    """Make torch lay out its suffixes with ``tinygrad_like.`` dtype names, as the port prints them."""
    original = torch._tensor_str._add_suffixes

    def add_suffixes(tensor_str, suffixes, indent, force_newline):
        suffixes = [s.replace("dtype=torch.", "dtype=tinygrad_like.") for s in suffixes]
        return original(tensor_str, suffixes, indent, force_newline)

    monkeypatch.setattr(torch._tensor_str, "_add_suffixes", add_suffixes)


def torch_repr(arr: np.ndarray, grad: str | None = None) -> tuple[str, list[str]]:
    """torch's repr of ``arr`` (as tinygrad_like spells dtypes) and the suffixes it shows for ``grad``.

    ``grad``: None, 'leaf' (requires_grad=True) or 'fn' (the result of an op, so it has a grad_fn).
    """
    t = torch.from_numpy(np.array(arr, copy=True))
    suffixes: list[str] = []
    if grad is not None:
        t.requires_grad_()
        suffixes = ["requires_grad=True"]
        if grad == "fn":
            t = t * 1
            suffixes = [f"grad_fn=<{type(t.grad_fn).__name__}>"]
    return repr(t).replace("torch.", "tinygrad_like."), suffixes


def check(arr, dtype: str | None = None, grad: str | None = None, **kwargs) -> str:
    arr = np.asarray(arr)
    if dtype is not None:
        arr = arr.astype(dtype)
    expected, suffixes = torch_repr(arr, grad)
    got = format_tensor(arr, str(arr.dtype), suffixes, **kwargs)
    assert got == expected, f"\n--- ours ---\n{got}\n--- torch ---\n{expected}"
    return got


@contextlib.contextmanager
def both_printoptions(**kwargs):
    """Set the same print options in torch and in ``_format`` for the duration."""
    old_t, old_f = torch._tensor_str.get_printoptions(), _format.get_printoptions()
    torch.set_printoptions(**kwargs)
    _format.set_printoptions(**kwargs)
    try:
        yield
    finally:
        torch.set_printoptions(**old_t)
        _format.set_printoptions(**old_f)


def test_defaults_mirror_torch():
    assert _format.get_printoptions() == torch._tensor_str.get_printoptions()


def test_docstring_examples():
    assert format_tensor(np.array(3.0, np.float32), "float32", []) == "tensor(3.)"
    assert format_tensor(np.zeros((0, 3), np.float32), "float32", []) == "tensor([], size=(0, 3))"
    assert format_tensor(np.array([1.0, 2.0]), "float64", []) == \
        "tensor([1., 2.], dtype=tinygrad_like.float64)"
    assert format_tensor(np.array([1.5], np.float32), "tinygrad_like.float32", ["requires_grad=True"]) == \
        "tensor([1.5000], requires_grad=True)"


SHAPES = [(), (0,), (0, 3), (3, 0, 2), (1,), (5,), (3, 4), (2, 3, 4), (1, 1, 1, 1), (2, 1, 2, 1, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_shapes_and_dtypes(shape, dtype):
    rng = np.random.default_rng(sum(shape) + len(shape))
    if dtype == "bool":
        arr = rng.random(shape) > 0.5
    elif dtype.startswith("int"):
        arr = rng.integers(-50, 200, shape)
    else:
        arr = rng.standard_normal(shape) * 3
    check(arr, dtype)


@pytest.mark.parametrize("grad", ["leaf", "fn"])
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (4,), (3, 4), (2, 3, 4), (30,), (8, 12)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_grad_suffixes(shape, dtype, grad):
    check(np.random.default_rng(7).standard_normal(shape), dtype, grad)


VALUES = {
    "int_valued": [1.0, -2.0, 3.0, 100.0, 0.0],
    "int_valued_big": [1.0, 2e5, -7.0],
    "int_valued_huge": [1e9, 3.0],
    "mixed_magnitudes": [1e-5, 1.0, 1e5, -3.25],
    "ratio_just_over_1000": [1.0, 1000.5],
    "ratio_exactly_1000": [0.5, 500.0],
    "tiny": [1e-5, 2e-5, -3e-5],
    "just_below_1e-4": [9.9e-5, 0.5e-4],
    "above_1e8": [1.5e8, 2.5e8],
    "negatives": [-1.5, -0.25, -100.125, 3.0],
    "neg_zero": [-0.0, 1.0, 2.0],
    "neg_zero_frac": [-0.0, 1.5],
    "zeros": [0.0, 0.0, 0.0],
    "nan_inf": [np.nan, np.inf, -np.inf, 1.5, -2.0],
    "nan_inf_int": [np.nan, np.inf, -np.inf, 1.0, 20.0],
    "nan_inf_sci": [np.nan, -np.inf, 1e-7, 1e3],
    "only_nonfinite": [np.nan, np.inf, -np.inf],
    "only_nonfinite_and_zero": [np.nan, 0.0, -np.inf],
    "rounding": [0.99995, 1.00005, 2.5, 0.12345],
    "rounding_sci": [9.99995e-5, 1.23456e7],
    "wide_fixed": [12345.678, -0.5],
}


@pytest.mark.parametrize("name", list(VALUES))
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_values(name, dtype):
    with np.errstate(over="ignore"):
        arr = np.array(VALUES[name], dtype=dtype)
    check(arr)
    check(arr.reshape(1, -1), grad="leaf")
    for v in arr[:3]:
        check(np.array(v))  # 0-d


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_values(dtype):
    check(np.array([0, -1, 123456, -(2**31)], dtype))
    check(np.array([[7]], dtype))
    check(np.array(-5, dtype))
    check(np.arange(-40, 40, dtype=dtype))


def test_bool_values():
    check(np.array([True, False, True]))
    check(np.array(False))
    check(np.ones((40, 7), bool))


@pytest.mark.parametrize("shape", [(2000,), (40, 40), (1001,), (10, 10, 11), (2, 1000), (1000, 2),
                                   (7, 7, 7, 7), (3, 400), (1001, 1)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_summarized(shape, dtype):
    rng = np.random.default_rng(3)
    arr = rng.standard_normal(shape) * 10 if dtype != "bool" else rng.random(shape) > 0.5
    arr[(0,) * len(shape)] = 1e6 if dtype != "bool" else True  # large value at the edge: sets the width
    arr[(shape[0] // 2,) * 1] = 1e9 if dtype != "bool" else False  # hidden in the middle: must not count
    check(arr, dtype)
    if dtype.startswith("float"):
        check(arr, dtype, grad="fn")


def test_threshold_boundary():
    check(np.arange(1000, dtype=np.float32))
    check(np.arange(1001, dtype=np.float32))
    check(np.arange(1000, dtype=np.int64).reshape(10, 100))


@pytest.mark.parametrize("n", [10, 12, 13, 16, 20, 27, 50])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
def test_wrapping(n, dtype):
    rng = np.random.default_rng(n)
    arr = rng.standard_normal(n) * 1000 if dtype.startswith("float") else rng.integers(-10**6, 10**6, n)
    check(arr, dtype)
    check(arr.reshape(1, 1, n), dtype)
    if dtype.startswith("float"):
        for grad in ("leaf", "fn"):
            check(arr, dtype, grad)
            check(arr[: n // 2].reshape(1, -1), dtype, grad)


def test_suffix_wraps_onto_its_own_line():
    # a one-line repr close to the width: the suffix moves to the next line
    for n in range(1, 12):
        arr = np.full(n, 1.2345, dtype=np.float64)
        check(arr, grad="leaf")
        check(arr, grad="fn")


def test_device_suffix(monkeypatch):
    """With the default device patched to cuda, torch shows ``device='cpu'`` first, before dtype."""
    monkeypatch.setattr(torch._C, "_get_default_device", lambda: "cuda")
    for arr in (np.array([1.0, 2.0]), np.array([1.0, 2.0], np.float32), np.zeros((0, 2), np.int32)):
        t = torch.from_numpy(arr).requires_grad_(arr.dtype.kind == "f")
        expected = repr(t * 1).replace("torch.", "tinygrad_like.")
        got = format_tensor(arr, str(arr.dtype), ["device='cpu'"]
                            + (["grad_fn=<MulBackward0>"] if arr.dtype.kind == "f" else []))
        assert got == expected


PRINT_OPTIONS = [
    {"precision": 2}, {"precision": 8}, {"precision": 0}, {"threshold": 5}, {"edgeitems": 1, "threshold": 10},
    {"edgeitems": 0, "threshold": 10}, {"linewidth": 40}, {"linewidth": 200}, {"linewidth": 5},
    {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
]


@pytest.mark.parametrize("opts", PRINT_OPTIONS, ids=str)
def test_printoptions(opts):
    rng = np.random.default_rng(11)
    cases = [rng.standard_normal((4, 6)), np.arange(30.0), rng.standard_normal(2000) * 1e4,
             np.array([1e-5, 1.0, 1e5]), np.array(2.5), rng.integers(0, 100, (5, 30)), np.zeros((0, 3)),
             np.array([np.nan, 0.0]), rng.standard_normal((12, 12, 12)).astype(np.float32)]
    with both_printoptions(**opts):
        for arr in cases:
            check(arr)
            if arr.dtype.kind == "f":
                check(arr, grad="fn")


def test_set_printoptions_resets_sci_mode_like_torch():
    with both_printoptions(sci_mode=True):
        _format.set_printoptions(precision=4)
        assert _format.PRINT_OPTS.sci_mode is None
    assert _format.get_printoptions() == torch._tensor_str.get_printoptions()


def test_default_dtype_float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for arr in (np.array([1.5, 2.0]), np.array([1.5, 2.0], np.float32), np.zeros((0,)),
                    np.zeros(0, np.float32), np.array([1, 2]), np.zeros(0, np.int64)):
            check(arr, default_dtype="float64")
    finally:
        torch.set_default_dtype(old)


def test_random_float_sweep():
    rng = np.random.default_rng(2024)
    for _ in range(200):
        ndim = int(rng.integers(0, 4))
        shape = tuple(int(s) for s in rng.integers(1, 7, ndim))
        dtype = str(rng.choice(FLOATS))
        scale = 10.0 ** rng.uniform(-6, 9 if dtype != "float16" else 4)
        arr = rng.standard_normal(shape) * scale
        if rng.random() < 0.3:
            arr = np.round(arr)
        if rng.random() < 0.2 and arr.size:
            arr.reshape(-1)[rng.integers(0, arr.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
        grad = rng.choice([None, "leaf", "fn"])
        with np.errstate(over="ignore"):
            check(arr, dtype, grad)


def test_random_int_sweep():
    rng = np.random.default_rng(99)
    for _ in range(100):
        shape = tuple(int(s) for s in rng.integers(1, 9, int(rng.integers(0, 4))))
        dtype = str(rng.choice(["int32", "int64", "bool"]))
        arr = rng.integers(-(10 ** int(rng.integers(1, 9))), 10 ** int(rng.integers(1, 9)), shape)
        check(arr > 0 if dtype == "bool" else arr, dtype)


def test_longer_dtype_name_wraps_by_its_own_length(monkeypatch):
    """``dtype=tinygrad_like.float16`` is longer than torch's name: wrapping follows what is printed."""
    arr = np.array([3.16, 5.33, -7.66, -0.4138, 3.041], np.float16)
    assert format_tensor(arr, "float16", []) == ("tensor([ 3.1602,  5.3281, -7.6602, -0.4138,  3.0410],\n"
                                                 "       dtype=tinygrad_like.float16)")
    monkeypatch.undo()  # torch's own layout, with its shorter name, fits on one line
    assert repr(torch.from_numpy(arr)).endswith("3.0410], dtype=torch.float16)")

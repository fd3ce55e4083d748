"""torch's names that cannot do their job in tinygrad_like exist, and using one raises NotImplementedError saying
why (tinygrad_like/unsupported_names.py); the dtypes it only names refuse to make tensors."""

from __future__ import annotations

import pytest

import tinygrad_like as tl
from tinygrad_like import unsupported_names
from tinygrad_like.unsupported import is_unsupported

FUNCTIONS = [n for n in unsupported_names.__all__ if not isinstance(getattr(tl, n), type)]
CLASSES = [n for n in unsupported_names.__all__ if isinstance(getattr(tl, n), type)]
METHODS = [n for names in unsupported_names.TENSOR_METHODS.values() for n in names.split()]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_raises_with_reason(name):
    f = getattr(tl, name)
    assert is_unsupported(f)
    with pytest.raises(NotImplementedError, match=f"torch.{name}\\(\\): .+"):
        f(tl.zeros(2))


@pytest.mark.parametrize("name", CLASSES)
def test_class_can_be_named_not_made(name):
    cls = getattr(tl, name)
    assert not isinstance(tl.zeros(1), cls)
    with pytest.raises(NotImplementedError, match=f"torch.{name}\\(\\): .+"):
        cls()


@pytest.mark.parametrize("name", sorted(set(METHODS)))
def test_tensor_method_raises(name):
    with pytest.raises(NotImplementedError, match=".+"):
        getattr(tl.zeros(2), name)()


@pytest.mark.parametrize("name", ["complex64", "cfloat", "qint8", "quint4x2", "float8_e4m3fn", "uint16", "uint64",
                                  "int4", "bits8", "float4_e2m1fn_x2"])
def test_named_dtype_refuses_tensors(name):
    dt = getattr(tl, name)
    assert isinstance(dt, tl.dtype)
    with pytest.raises(NotImplementedError, match=dt.name):
        tl.zeros(2, dtype=dt)


def test_named_dtype_attributes_match_torch():
    torch = pytest.importorskip("torch")
    for name in ["complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "float8_e5m2", "uint32",
                 "int3", "bits16", "float8_e8m0fnu"]:
        ours, theirs = getattr(tl, name), getattr(torch, name)
        assert ours.itemsize == theirs.itemsize, name
        assert ours.is_floating_point == theirs.is_floating_point, name
        assert ours.is_complex == theirs.is_complex, name
    with pytest.raises(TypeError):
        tl.dtype()

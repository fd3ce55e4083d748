"""Names that cannot do their job here exist and raise a clear error (tinygrad_like/unsupported.py)."""

from __future__ import annotations

import pytest

from tinygrad_like.unsupported import MARK, is_unsupported, unsupported_class, unsupported_function


def test_a_function_raises_a_runtime_error_that_names_it_and_says_why():
    f = unsupported_function("torch.quantize_per_tensor", "quantized tensors are not supported")
    assert f.__name__ == "quantize_per_tensor" and f.__module__ == "tinygrad_like"
    with pytest.raises(NotImplementedError, match=r"^torch\.quantize_per_tensor\(\): quantized tensors are not"):
        f(1.0, scale=0.1)
    with pytest.raises(RuntimeError):  # (torch raises RuntimeError for what a build does not support)
        f()
    assert is_unsupported(f) and getattr(f, MARK) == "quantized tensors are not supported"


def test_a_class_can_be_named_but_not_made():
    Storage = unsupported_class("torch.cuda.Stream", "no streams")
    assert Storage.__name__ == "Stream" and Storage.__module__ == "tinygrad_like.cuda"
    assert not isinstance(object(), Storage)
    with pytest.raises(NotImplementedError, match=r"torch\.cuda\.Stream\(\): no streams"):
        Storage(priority=0)
    assert is_unsupported(Storage)


def test_ordinary_objects_are_not_marked():
    assert not is_unsupported(len) and not is_unsupported(object())

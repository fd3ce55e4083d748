"""conftest's ``assert_ulp_close``: the bound is exactly ``ulp`` units in the last place of the result's dtype."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TL_DTYPES, ULP_BOUND, assert_ulp_close

import tinygrad_like as tl

FLOATS = ["float16", "bfloat16", "float32", "float64"]
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _steps(x: np.ndarray, k: int) -> np.ndarray:
    """``x`` moved ``k`` representable values away from zero (bit pattern + k: no exponent is crossed here)."""
    bits = x.view(_UINT[x.dtype.itemsize])
    return (bits + bits.dtype.type(k)).view(x.dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_four_ulp_pass_and_five_fail_in_every_float_dtype(dtype):
    tiny = float(np.finfo(np.float16).smallest_normal if dtype == "float16" else np.finfo(np.float32).smallest_normal)
    # normals of both signs, a large one, and subnormals (spacing fixed at the smallest subnormal)
    x = np.array([1.25, -3.5, 1000.0, 0.1, tiny * 0.25, -tiny * 0.375], dtype=np.float64).astype(TL_DTYPES[dtype].np)
    if dtype == "float64":
        x[4:] = [2.0 ** -1024, -(2.0 ** -1023) * 0.75]  # (float64's own subnormals)
    assert ULP_BOUND == 4
    for k in range(ULP_BOUND + 1):
        assert_ulp_close(tl.tensor(_steps(x, k)), x)
        assert_ulp_close(x, tl.tensor(_steps(x, k)))
    for i in range(x.size):  # 5 ulp on any one element fails
        y = x.copy()
        y[i] = _steps(x[i:i + 1], 5)[0]
        with pytest.raises(AssertionError, match=f"1 of 6 elements differ by more than 4 ulp of {dtype}"):
            assert_ulp_close(tl.tensor(y), x)
    assert_ulp_close(tl.tensor(_steps(x, 5)), x, ulp=5)  # (a test that needs another bound names it)


def test_nan_inf_shape_and_dtype_rules():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert_ulp_close(tl.tensor(x), x)
    for bad in ([1.0, np.inf, -np.inf, 1.0], [np.nan, -np.inf, -np.inf, 1.0], [np.nan, 3e38, -np.inf, 1.0]):
        with pytest.raises(AssertionError):
            assert_ulp_close(tl.tensor(np.array(bad, np.float32)), x)
    with pytest.raises(AssertionError, match="dtype float64 != float32"):
        assert_ulp_close(tl.tensor(x.astype(np.float64)), x)
    with pytest.raises(AssertionError, match="shape"):
        assert_ulp_close(tl.tensor(x[:3]), x)
    assert_ulp_close(tl.tensor([1, 2]), np.array([1, 2]))  # integers: equal
    with pytest.raises(AssertionError):
        assert_ulp_close(tl.tensor([1, 2]), np.array([1, 3]))

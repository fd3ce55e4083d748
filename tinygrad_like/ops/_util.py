"""Small helpers shared by the op modules: operand promotion, the dtype rules torch applies before an op (what it
refuses, what it computes in), bfloat16 rounding, and the free functions generated from Tensor methods."""

from __future__ import annotations

import inspect
import sys

import numpy as np

from .. import dtypes
from ..dtypes import result_type, scalar_category
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase

_BF16 = dtypes.bfloat16


def check_same_device(a, b, op: str) -> None:
    raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found tensors on "
                       f"{a._dev} and {b._dev}; move one with .to(device) first")


def check_index_device(x, index, op: str, what: str = "index") -> None:
    """An index (or target, or repeats) tensor must live on the input's device, as in torch: say so by name."""
    if index._dev is not x._dev:
        raise RuntimeError(f"{op}(): expected {what} on {x._dev}, the device of the tensor it indexes, but got it "
                           f"on {index._dev}; move it with .to('{x._dev}')")


def operands(a, b, op: str):
    """Native operands of a binary op after PyTorch's type promotion, and the result dtype."""
    if isinstance(b, TensorBase):
        if a._dev is not b._dev:
            check_same_device(a, b, op)
        if a.dtype is b.dtype:
            return a._x, b._x, a.dtype
        dt = result_type(a, b)
        xa = a._x if a.dtype is dt else a._dev.backend.cast(a._x, dt)
        xb = b._x if b.dtype is dt else b._dev.backend.cast(b._x, dt)
        return xa, xb, dt
    if isinstance(b, np.generic):  # (before the Python numbers: np.float64 is a float subclass, and NumPy would
        # promote with its own dtype, where torch treats a NumPy number as a Python number)
        if b.ndim == 0 and (b.dtype.kind in "biuf" or b.dtype == _BF16.np):  # (ml_dtypes' bfloat16 is kind 'V')
            return operands(a, b.item(), op)
    elif isinstance(b, (int, float)):
        cat = scalar_category(b)
        if cat <= a.dtype.pycat:
            return a._x, b, a.dtype
        if cat <= a.dtype.category:  # a number of a's category that NumPy would not take as it is (DType.pycat)
            return a._x, native_number(b, a.dtype, op), a.dtype
        dt = result_type(a, b)  # (with tl.set_default_dtype(tl.bfloat16), an int tensor + 1.5 is bfloat16)
        return a._dev.backend.cast(a._x, dt), b if cat <= dt.pycat else native_number(b, dt, op), dt
    raise TypeError(f"{op}: unsupported operand type {type(b).__name__}; expected a Tensor or a Python number")


def native_number(b, dt, op: str):
    """The Python number ``b`` as a binary op computing in ``dt`` uses it, torch's way: an int beyond an integer
    dtype's range wraps into it (``uint8 + 300`` adds 44, where NumPy would raise; ``float_operands`` takes the
    number itself back for true division, which computes in float); for bfloat16 the number is rounded to bfloat16
    first (NumPy would compute in float32), except in mul and div, which torch computes in float32 with the number
    as it is and rounds the result (their ops do that: ``elementwise._Binary._scaling_forward``). ``pow`` and
    ``where`` take a value, not an operand of modular arithmetic: out of range, it is an error (as in torch)."""
    if dt.is_floating_point:  # (bfloat16: the one float dtype sent here)
        return b if op == "mul" or op == "div" else dt.np.type(b)
    lo, hi = dtypes._RANGE[dt]
    if lo <= b <= hi:
        return b
    if op == "pow" or op == "where":  # (a value, not an operand of modular arithmetic: torch checks it)
        return dtypes.checked_int(b, dt)
    return (b - lo) % (hi - lo + 1) + lo


def float_operands(a, b, op: str):
    """Like :func:`operands` but integer results become the default float (true division)."""
    xa, xb, dt = operands(a, b, op)
    if not dt.is_floating_point:
        dt = dtypes.default_float
        be = a._dev.backend
        xa = be.cast(xa, dt)
        if isinstance(b, TensorBase):
            xb = be.cast(xb, dt)
        elif xb is not b:  # the number itself, not wrapped into the integer dtype's range (uint8 / 300)
            xb = b.item() if isinstance(b, np.generic) else b
    return xa, xb, dt


def in_float32(x):
    """``x``'s native operand, in float32 when it is bfloat16: an op that rounds its result back once (see
    :func:`rounded`) then matches torch's CPU kernels, which compute bfloat16 in float32 (NumPy's bfloat16 ufuncs
    round after each step, and mixed with a Python float they give float32)."""
    return x._dev.backend.cast(x._x, dtypes.float32) if x.dtype is _BF16 else x._x


def rounded(x, r):
    """The result ``r`` of an op on ``x`` rounded back to bfloat16 when ``x`` is bfloat16 (see :func:`in_float32`)."""
    return x._dev.backend.cast(r, _BF16) if x.dtype is _BF16 else r



# ---- the dtype rules of elementwise ops ---------------------------------------------------------
def is_number(x) -> bool:
    """A Python or NumPy scalar (not a Tensor)."""
    c = x.__class__
    if c is float or c is int or c is bool:
        return True
    return isinstance(x, (np.generic, int, float))


def broadcast_error(a, b, op: str) -> RuntimeError:
    """The backend rejected the operands' shapes: say which dims and which rule."""
    try:
        broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        return RuntimeError(f"{op}: {e}")
    return RuntimeError(f"{op}: operands of shapes {a.shape} and {b.shape} were rejected by the backend")


def is_bool(x) -> bool:
    """A bool tensor or a Python bool (torch refuses ``x - True`` too; a NumPy bool is a number there)."""
    return x is True or x is False or (isinstance(x, TensorBase) and x.dtype.name == "bool")


def need_float(x, op: str) -> None:
    """Refuse what torch refuses: activations with no integer or bool kernel (gelu, silu, softmax, ...)."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"{op}: not implemented for {x.dtype.name} tensors (as in torch): expected a "
                                  f"floating point input; convert with .float() first")


def no_bool(x, op: str, exc=RuntimeError) -> None:
    if x.dtype.name == "bool":
        raise exc(f"{op}: boolean inputs are not supported (as in torch); convert with .int() or .float() first")


def integer_pow(a, b, xa, xb, dt):
    """Integer ``a ** b`` with torch's rules: a negative Python exponent is refused; in a tensor exponent a
    negative power gives 1 for a base of 1, +-1 for -1 and 0 otherwise (NumPy refuses the whole array)."""
    if is_number(b):
        if b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return a._dev.backend.pow(xa, xb)
    be = a._dev.backend
    na = np.asarray(a.numpy() if not a._dev.is_host else xa)
    nb = np.asarray(b.numpy() if not b._dev.is_host else xb)
    try:
        na, nb = np.broadcast_arrays(na, nb)
    except ValueError:
        raise broadcast_error(a, b, "pow") from None
    neg = nb < 0
    out = np.power(na, np.where(neg, 0, nb))
    if neg.any():
        odd = (nb & 1).astype(bool)
        out = np.where(neg, np.where(na == 1, 1, np.where(na == -1, np.where(odd, -1, 1), 0)), out)
    out = out.astype(dt.np, copy=False)
    return out if a._dev.is_host else be.from_numpy(out)


def as_wide(x):
    """As :func:`as_float`, with bfloat16 in float32: for the ops composed of several primitives (or with Python
    float constants), which round their result back once with ``rounded``, as torch's fused kernels do."""
    return as_float(x) if x.dtype is not _BF16 else in_float32(x)


def as_float(x):
    """The native operand as the default float when ``x`` is integral (exp, log, ... of ints)."""
    if x.dtype.is_floating_point:
        return x._x
    return x._dev.backend.cast(x._x, dtypes.default_float)


def free_functions(mixin: type, *names: str) -> tuple:
    """The free functions ``tl.<name>(input, ...)`` of Tensor methods whose signature they share, generated
    rather than written out: each checks that ``input`` is a tensor (torch's TypeError otherwise) and calls
    ``input.<name>(...)``; its signature (``input`` for ``self``) and docstring are the method's, so ``help()``
    and IDEs show the real arguments. A free function whose signature differs from its method is written by
    hand beside it."""
    module = sys._getframe(1).f_globals["__name__"]  # (the module that binds the names: where pickle looks them up)
    return tuple(_free_function(getattr(mixin, name), name, module) for name in names)


def _free_function(method, name: str, module: str):
    def fn(input, *args, **kwargs):
        if not isinstance(input, TensorBase):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = method.__doc__
    fn.__module__ = module
    try:
        sig = inspect.signature(method)
        params = list(sig.parameters.values())
        fn.__signature__ = sig.replace(parameters=[params[0].replace(name="input"), *params[1:]])
    except (TypeError, ValueError, IndexError):  # (a builtin without a signature: help() shows *args)
        pass
    return fn

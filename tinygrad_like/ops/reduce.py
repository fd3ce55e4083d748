"""Reductions (sum, mean, var/std, max/min, amax/amin, argmax/argmin, logsumexp, aminmax, any/all), the scan
cumsum, matmul and softmax: their graph nodes, the Tensor methods (``ReduceMixin``), the named tuples that
``max(dim)``, ``min(dim)`` and ``aminmax`` return, and the free functions ``tl.sum``, ``tl.max``, ...

>>> import tinygrad_like as tl
>>> x = tl.tensor([[1.0, 5.0], [7.0, 2.0]])
>>> x.sum().item(), x.mean(0).tolist(), x.max(1).indices.tolist(), tl.amax(x, 1).tolist(), tl.sum(x, 1).tolist()
(15.0, [4.0, 3.5], [1, 0], [5.0, 7.0], [6.0, 9.0])
"""

from __future__ import annotations

import builtins  # (this module's sum, max, min, any and all are tl's free functions: the builtins by full name)
import warnings
from collections import namedtuple

from .. import dtypes
from ..autograd import grad_mode, torch_nodes
from ..autograd.function import Function
from ..layout import broadcast_shapes, normalize_dim, normalize_dims
from ..tensor_base import TensorBase
from ._util import free_functions, in_float32, operands, rounded
from .elementwise import where
from .movement import Squeeze

# tl.sum, tl.max, ... are imported by name in tinygrad_like/__init__.py: ``from tinygrad_like import *`` leaves them
# out, as it did when functions.py made them
__all__: list[str] = []

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


def _expand_back(g, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced ``dims`` of ``in_shape``: the reduced dims put back as
    size 1 (one reshape; none for a full reduction to a 0-d tensor, which expands as it is), then expanded."""
    if not keepdim and g.ndim:
        g = g.reshape(tuple([1 if i in dims else n for i, n in enumerate(in_shape)]))
    return g.expand(in_shape)


_ALL = {n: tuple(range(n)) for n in range(8)}
_BF16, _F32 = dtypes.bfloat16, dtypes.float32


def _bf16_sum(be, xx, axis, keepdim):
    """A bfloat16 sum as torch's CPU kernel makes it: accumulated in float32, rounded once."""
    return be.cast(be.sum(xx, axis, keepdim, _F32), _BF16)


def _axis(dims, ndim):
    return None if len(dims) == ndim else dims


class Sum(Function):
    __slots__ = ("dims", "keepdim", "in_shape")

    def forward(self, x, dim, keepdim, dtype):
        shape = self.in_shape = x._x.shape
        if dim is None:
            self.dims, axis = _ALL.get(len(shape)) or tuple(range(len(shape))), None
        else:
            self.dims = dims = normalize_dims(dim, len(shape))
            axis = _axis(dims, len(shape))
        self.keepdim = keepdim
        if dtype is None:
            dtype = x.dtype.acc  # int64 for bool and the integers, float32 for bfloat16 (DType.acc), else None
            if dtype is _F32:
                return _bf16_sum(x._dev.backend, x._x, axis, keepdim)
        elif dtype is _BF16:
            return _bf16_sum(x._dev.backend, x._x, axis, keepdim)
        return x._dev.backend.sum(x._x, axis, keepdim, dtype)

    def backward(self, g):
        return _expand_back(g, self.in_shape, self.dims, self.keepdim), None, None, None


class Mean(Function):
    __slots__ = ("dims", "keepdim", "in_shape", "count")

    def forward(self, x, dim, keepdim):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be a floating "
                               f"point dtype, but got {x.dtype.name}; call .float() first")
        self.dims = dims = normalize_dims(dim, x.ndim)
        self.keepdim, self.in_shape = keepdim, x._x.shape
        n = 1
        for d in dims:
            n *= x.shape[d]
        self.count = n
        be = x._dev.backend
        bf16 = x.dtype is _BF16  # (accumulated in float32, rounded once: see in_float32)
        s = be.sum(be.cast(x._x, _F32) if bf16 else x._x, _axis(dims, x.ndim), keepdim)
        m = be.div(s, n) if n else be.mul(s, float("nan"))
        return be.cast(m, _BF16) if bf16 else m

    def backward(self, g):
        return _expand_back(g / builtins.max(self.count, 1), self.in_shape, self.dims, self.keepdim), None, None


class Var(Function):
    """Variance with ``correction`` (1 = unbiased, Bessel's correction; 0 = population)."""

    __slots__ = ("dims", "keepdim", "correction", "count")

    def forward(self, x, dim, correction, keepdim, op="var"):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"{op}(): expected a floating point input, got {x.dtype.name}")
        self.dims = dims = normalize_dims(dim, x.ndim)
        self.keepdim, self.correction = keepdim, correction
        n = 1
        for d in dims:
            n *= x.shape[d]
        self.count = n
        self.save_for_backward(x)
        be, ax = x._dev.backend, _axis(dims, x.ndim)
        xx = in_float32(x)
        mean = be.div(be.sum(xx, ax, True), builtins.max(n, 1))
        d = be.sub(xx, mean)
        ss = be.sum(be.mul(d, d), ax, keepdim)
        denom = n - correction
        if denom <= 0:  # nan, with PyTorch's warning (not an error)
            warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                          f"reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
            return rounded(x, be.mul(ss, float("nan")))
        return rounded(x, be.div(ss, denom))

    def backward(self, g):
        (x,) = self.saved_tensors
        mean = x.mean(self.dims, keepdim=True)
        scale = 2.0 / (self.count - self.correction) if self.count - self.correction > 0 else float("nan")
        gk = g if self.keepdim else _expand_back(g, x.shape, self.dims, False)
        return gk * (x - mean) * scale, None, None, None, None


class MaxMin(Function):
    """``max``/``min`` over all elements: ties share the gradient evenly (as PyTorch's amax)."""

    __slots__ = ("dims", "keepdim", "is_max")
    save_output = True

    def forward(self, x, dim, keepdim, is_max):
        self.dims = dims = normalize_dims(dim, x.ndim)
        if x.numel() == 0 and builtins.any(x.shape[d] == 0 for d in dims):  # no identity over an empty dim
            raise RuntimeError(f"{'max' if is_max else 'min'}(): expected a non-empty tensor, got shape "
                               f"{x.shape}; use the dim argument or check the input")
        self.keepdim, self.is_max = keepdim, is_max
        self.save_for_backward(x)
        be = x._dev.backend
        return (be.max if is_max else be.min)(x._x, _axis(dims, x.ndim), keepdim)

    def backward(self, g):
        x, y = self.saved_tensors
        yk = y if self.keepdim else _expand_back(y, x.shape, self.dims, False)
        gk = g if self.keepdim else _expand_back(g, x.shape, self.dims, False)
        mask = (x == yk).to(g.dtype)
        count = mask.sum(self.dims, keepdim=True)
        return gk * mask / count, None, None, None  # (an infinite gradient gives nan off the max, as in torch)


class MaxMinAll(MaxMin):
    """``max()``/``min()`` without a dim: as :class:`MaxMin`, but (as in PyTorch) an infinite gradient gives 0
    off the maximum, not nan (``amax`` keeps torch's nan there)."""

    __slots__ = ()

    def backward(self, g):
        x, y = self.saved_tensors
        hit = x == y
        return where(hit, g / hit.to(g.dtype).sum(), 0.0), None, None, None


class StdFromVar(Function):
    """``sqrt(var)`` for ``std``: where the spread is zero the gradient is 0 (PyTorch's), not 0/0 = nan."""

    __slots__ = ()
    save_output = True

    def forward(self, v):
        return v._dev.backend.sqrt(v._x)

    def backward(self, g):
        (y,) = self.saved_tensors
        return (where(y == 0, 0.0, g / (2 * y)),)


class MaxMinDim(Function):
    """``max(dim)``/``min(dim)`` values; the gradient goes to the selected index.

    The indices tensor (also returned to the user) is saved with its version: writing into it before
    backward is refused, as in PyTorch, instead of sending the gradient to the wrong elements.
    """

    __slots__ = ("dim", "keepdim", "in_shape")

    def forward(self, x, dim, keepdim, is_max, indices):
        self.dim, self.keepdim, self.in_shape = dim, keepdim, x._x.shape
        self.save_for_backward(indices)
        be = x._dev.backend
        return (be.max if is_max else be.min)(x._x, dim, keepdim)

    def backward(self, g):
        (indices,) = self.saved_tensors
        d = self.dim
        idx = indices if self.keepdim else indices.unsqueeze(d)
        gk = g if self.keepdim else g.unsqueeze(d)
        n = self.in_shape[d]
        shape = [1] * len(self.in_shape)
        shape[d] = n
        from ..creation import arange  # (creation sits above the ops: a module-level import would be a cycle)
        pos = arange(n, device=g.device).reshape(tuple(shape))
        # where, not a product with the mask: an infinite gradient stays inf there and 0 elsewhere (not nan)
        return where(pos == idx, gk, 0.0), None, None, None, None


class LogSumExp(Function):
    __slots__ = ("dims", "keepdim")
    save_output = True

    def forward(self, x, dim, keepdim):
        self.dims = dims = normalize_dims(dim, x.ndim)
        self.keepdim = keepdim
        self.save_for_backward(x)
        be, ax = x._dev.backend, _axis(dims, x.ndim)
        xx = in_float32(x) if x.dtype.is_floating_point else be.cast(x._x, dtypes.default_float)
        return rounded(x, be.logsumexp(xx, ax, keepdim))

    def backward(self, g):
        x, y = self.saved_tensors
        yk = y if self.keepdim else _expand_back(y, x.shape, self.dims, False)
        gk = g if self.keepdim else _expand_back(g, x.shape, self.dims, False)
        return gk * (x - yk).exp(), None, None


# The dtype torch's CPU scans (cumsum, cumprod, logcumsumexp) run a float dtype's running value in (its
# ``acc_type``), each output rounded back: float32 for float16/bfloat16, float64 for float32 (NumPy would round
# every partial result to the dtype itself).
SCAN_ACC = {dtypes.float16: _F32, _BF16: _F32, _F32: dtypes.float64}


def scan(be, fn, xx, dt, dim, *more):
    """``fn(xx, dim, *more)`` (a scan primitive) for the float dtype ``dt`` as torch's CPU kernels run it: in
    ``SCAN_ACC[dt]``, each output rounded back to ``dt``."""
    acc = SCAN_ACC.get(dt)
    if acc is None:
        return fn(xx, dim, *more)
    return be.cast(fn(be.cast(xx, acc), dim, *more), dt)


class Cumsum(Function):
    __slots__ = ("dim",)

    def forward(self, x, dim):
        self.dim = dim = normalize_dim(dim, builtins.max(x.ndim, 1))
        be = x._dev.backend
        if x.ndim == 0:
            return be.copy(x._x) if x.dtype.is_floating_point else be.cast(x._x, dtypes.int64)
        if x.dtype.is_floating_point:
            return scan(be, be.cumsum, x._x, x.dtype, dim)
        return be.cumsum(be.cast(x._x, dtypes.int64), dim)

    def backward(self, g):
        if g.ndim == 0:
            return g, None
        return g.flip(self.dim).cumsum(self.dim).flip(self.dim), None


def _explain_matmul(a, b) -> None:
    """Raise a readable error for operands the backend's matmul rejected."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
                           f"{b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        rule = "a.shape[-1] must equal b.shape[-2]" if b.ndim > 1 else "a.shape[-1] must equal len(b)"
        raise RuntimeError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                           f"({k_a} != {k_b}; rule: {rule})")
    try:
        broadcast_shapes(a.shape[:-2], b.shape[:-2] if b.ndim > 1 else ())
    except ValueError as e:
        raise RuntimeError(f"matmul: batch dims of {a.shape} and {b.shape} do not broadcast: {e}") from None


class Matmul(Function):
    """``a @ b`` with NumPy's rules: 1-D operands gain a dim that the result drops, batch dims broadcast."""

    __slots__ = ("a_ndim", "b_ndim")

    def forward(self, a, b):
        if isinstance(b, TensorBase) and a.dtype is not b.dtype:
            raise RuntimeError(f"matmul: expected both operands to have the same dtype, but got {a.dtype.name} != "
                               f"{b.dtype.name} (torch does not promote here; convert one with .to())")
        xa, xb, _ = operands(a, b, "matmul")
        try:
            out = a._dev.backend.matmul(xa, xb)
        except ValueError:
            _explain_matmul(a, b)
            raise
        if a.dtype is _BF16:  # (NumPy multiplies bfloat16 in float32, accumulating there as torch does: round once)
            out = a._dev.backend.cast(out, _BF16)
        self.a_ndim, self.b_ndim = a.ndim, b.ndim
        if (self.a_ndim != 2 or self.b_ndim != 2) and type(self) is Matmul:  # torch's class: Dot, Mv, Bmm...
            self.__class__ = Matmul._variant(torch_nodes.matmul_name(self.a_ndim, self.b_ndim))
        if _grad_mode.enabled:  # the gradient of a reads b and the gradient of b reads a: keep only those
            ra, rb = a._requires_grad, b._requires_grad  # perf: the slot, 9 ns (the property: 43)
            if ra or rb:
                self.save_for_backward(a if rb else None, b if ra else None)
        return out

    def backward(self, g):
        """``g @ b^T`` and ``a^T @ g``, each read only when that input's gradient is wanted. A 1-D operand is
        a matrix with one row (``a``) or one column (``b``) here; the engine sums the batch dims that
        broadcasting added and drops the dim the 1-D operand gained."""
        a, b = self.saved_tensors
        a_vec, b_vec = self.a_ndim == 1, self.b_ndim == 1
        if b_vec:
            g = g.unsqueeze(-1)
        if a_vec:
            g = g.unsqueeze(-2)
        ga = gb = None
        if b is not None:
            ga = g @ (b.unsqueeze(-1) if b_vec else b).mT
            if a_vec:
                ga = ga.squeeze(-2)
        if a is not None:
            gb = (a.unsqueeze(0) if a_vec else a).mT @ g
            if b_vec:
                gb = gb.squeeze(-1)
        return ga, gb


def _vector_matrix(a, b):
    """``a @ b`` for a 1-D ``a`` and a 2-D ``b``, recorded as torch records it: the vector unsqueezed to one row, a
    matrix product, and the row squeezed away (``SqueezeBackward4`` over ``MmBackward0``), so that the graph of
    PyTorch's autograd tutorial (``torch.matmul(x, w)``) is the same node for node."""
    out = Matmul.apply(a.unsqueeze(0), b).squeeze(0)
    out.grad_fn.__class__ = Squeeze._variant("SqueezeBackward4")
    return out


# perf: the node's torch class (DotBackward0, MvBackward0, BmmBackward0) is set in forward, and only when it is not
# the default MmBackward0, instead of by the _pick call Function.apply makes for ops with variants: a 4x4 a @ b with
# grad took 3.8 us with the pick and the ndim property, 3.2 us as before this class had torch's names (timeit, this
# machine, 2026-11-29)
Matmul._pick = None


class _SoftmaxFamily(Function):
    """Softmax and log-softmax: a fused forward primitive; the gradient is a fused node of its own."""

    __slots__ = ("dim",)
    save_output = True
    forward_primitive = ""

    def forward(self, x, dim):
        if not x.dtype.is_floating_point:
            raise NotImplementedError(f"{type(self).__name__.lower()}: not implemented for {x.dtype.name} tensors (as "
                                      f"in torch): expected a floating point input; convert with .float() first")
        self.dim = dim = normalize_dim(dim, builtins.max(x.ndim, 1))
        be = x._dev.backend
        if x.dtype is _BF16:  # (in float32, rounded once: see in_float32)
            return be.cast(getattr(be, self.forward_primitive)(be.cast(x._x, _F32), dim if x.ndim else None), _BF16)
        return getattr(be, self.forward_primitive)(x._x, dim if x.ndim else None)


class Softmax(_SoftmaxFamily):
    __slots__ = ()
    forward_primitive = "softmax"

    def backward(self, g):
        (y,) = self.saved_tensors
        return SoftmaxBackward.apply(g, y, self.dim), None


class LogSoftmax(_SoftmaxFamily):
    __slots__ = ()
    forward_primitive = "log_softmax"

    def backward(self, g):
        (y,) = self.saved_tensors
        return LogSoftmaxBackward.apply(g, y, self.dim), None


class SoftmaxBackward(Function):
    """``y * (g - sum(g * y, dim))`` (``y`` = softmax's output) as one fused kernel, a node of its own so that
    ``create_graph=True`` differentiates the formula the plain backward ran."""

    __slots__ = ("dim",)

    def forward(self, g, y, dim):
        self.dim = dim
        if _grad_mode.enabled:
            self.save_for_backward(g, y)
        return rounded(g, g._dev.backend.softmax_backward(in_float32(g), in_float32(y), dim if y.ndim else None))

    def backward(self, gg):
        g, y = self.saved_tensors
        d = self.dim
        s = (g * y).sum(d, keepdim=True) if y.ndim else g * y
        sgy = (gg * y).sum(d, keepdim=True) if y.ndim else gg * y
        # the Jacobian diag(y) - y y^T is symmetric: the gradient of g is this same node applied to gg
        return SoftmaxBackward.apply(gg, y, d), gg * (g - s) - g * sgy, None


class LogSoftmaxBackward(Function):
    """``g - exp(y) * sum(g, dim)`` (``y`` = log-softmax's output) as one fused kernel, a node of its own."""

    __slots__ = ("dim",)

    def forward(self, g, y, dim):
        self.dim = dim
        if _grad_mode.enabled:
            self.save_for_backward(g, y)
        return rounded(g, g._dev.backend.log_softmax_backward(in_float32(g), in_float32(y), dim if y.ndim else None))

    def backward(self, gg):
        g, y = self.saved_tensors
        d = self.dim
        p = y.exp()
        sg = g.sum(d, keepdim=True) if y.ndim else g
        sgp = (gg * p).sum(d, keepdim=True) if y.ndim else gg * p
        return gg - sgp, -gg * p * sg, None


ReturnTypes = namedtuple("ReturnTypes", ["values", "indices"])
# max(dim)/min(dim)'s results, named as torch.return_types.max/min
_MAX_RESULT, _MIN_RESULT = namedtuple("max", ["values", "indices"]), namedtuple("min", ["values", "indices"])
_AMINMAX_RESULT = namedtuple("aminmax", ["min", "max"])


def _uint8_stays(x, r):
    """``any``/``all``'s bool result, as uint8 for a uint8 input (torch's rule for that dtype alone)."""
    if x.dtype is dtypes.uint8:
        r = x._dev.backend.cast(r, dtypes.uint8)
    return x._wrap(r, x._dev)


def _aliases(dim, keepdim, axis, keepdims):
    """``dim``/``keepdim`` from their NumPy spellings ``axis``/``keepdims`` (PyTorch accepts both; not both of
    one pair)."""
    if axis is not None:
        if dim is not None:
            raise TypeError("got both 'dim' and its alias 'axis'; give one")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError("got both 'keepdim' and its alias 'keepdims'; give one")
        keepdim = keepdims
    return dim, keepdim


def _correction(unbiased, correction) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _axes(dim, ndim):
    if dim is None:
        return None
    if dim == ():  # torch's any/all(dim=()) reduce nothing (unlike sum/amax/...)
        return ()
    return normalize_dims(dim, ndim)


class ReduceMixin:
    """Tensor methods for reductions: sum, mean, var/std, max/min, amax/amin, arg-max/min, logsumexp, aminmax,
    any/all, and the scan cumsum."""

    __slots__ = ()

    # ---- the matrix product (``@``; the products built on it are in ops/products.py) ------------------
    def __matmul__(self, other):
        if self._x.ndim == 1 and isinstance(other, TensorBase) and other._x.ndim == 2 and _grad_mode.enabled and (
                self._requires_grad or other._requires_grad):  # perf: _x.ndim, not the ndim property (see Matmul)
            return _vector_matrix(self, other)
        return Matmul.apply(self, other)

    def __rmatmul__(self, other):
        return Matmul.apply(self._from_value(other), self)

    matmul = __matmul__

    # ---- reductions ----------------------------------------------------------------------------
    # (``keepdims=`` and ``axis=``: the NumPy spellings PyTorch also accepts for ``keepdim=`` and ``dim=``)
    def sum(self, dim=None, keepdim: bool = False, dtype=None, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return Sum.apply(self, dim, keepdim, None if dtype is None else dtypes.to_dtype(dtype))

    def mean(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return Mean.apply(self, dim, keepdim)

    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None, keepdims=None,
            axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return Var.apply(self, dim, _correction(unbiased, correction), keepdim, "var")

    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None, keepdims=None,
            axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return StdFromVar.apply(Var.apply(self, dim, _correction(unbiased, correction), keepdim, "std"))

    def _maxmin(self, dim, keepdim, is_max):
        if isinstance(dim, TensorBase):
            return self.maximum(dim) if is_max else self.minimum(dim)
        if dim is None:
            return MaxMinAll.apply(self, None, keepdim, is_max)
        d = normalize_dim(dim, builtins.max(self.ndim, 1)) if self.ndim else normalize_dim(dim, 0)
        if self.ndim == 0:
            return (_MAX_RESULT if is_max else _MIN_RESULT)(self.clone(), self._full_like(0, dtypes.int64))
        if self.shape[d] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have non-zero size "
                             f"(shape {self.shape})")
        be = self._dev.backend
        idx = self._wrap((be.argmax if is_max else be.argmin)(self._x, d, keepdim), self._dev)
        return (_MAX_RESULT if is_max else _MIN_RESULT)(MaxMinDim.apply(self, d, keepdim, is_max, idx), idx)

    def max(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, True)

    def min(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, False)

    def amax(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return MaxMin.apply(self, dim, keepdim, True)

    def amin(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return MaxMin.apply(self, dim, keepdim, False)

    def _arg(self, dim, keepdim, is_max):
        if self.numel() == 0 and (dim is None or self.shape[normalize_dim(dim, self.ndim)] == 0):
            raise RuntimeError(f"{'argmax' if is_max else 'argmin'}(): Expected reduction dim to be specified "
                               f"for input.numel() == 0 (shape {self.shape})")
        be = self._dev.backend
        fn = be.argmax if is_max else be.argmin
        if dim is None:
            r = fn(self._x.reshape(-1) if self._dev.is_host else self.reshape(-1)._x, 0, False)
            out = self._wrap(r, self._dev)
            return out.reshape((1,) * self.ndim) if keepdim else out
        d = normalize_dim(dim, builtins.max(self.ndim, 1))
        if self.ndim == 0:
            return self._full_like(0, dtypes.int64)
        return self._wrap(fn(self._x, d, keepdim), self._dev)

    def argmax(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._arg(dim, keepdim, True)

    def argmin(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._arg(dim, keepdim, False)

    def logsumexp(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        if dim is None:
            raise TypeError("logsumexp() missing required argument 'dim' (an int or a tuple of ints)")
        return LogSumExp.apply(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype=None):
        """Running sums along ``dim``; with ``dtype`` the input is cast first, as torch's."""
        return Cumsum.apply(self if dtype is None else self.to(dtype), dim)

    def aminmax(self, *, dim=None, keepdim: bool = False):
        """``(min, max)`` over ``dim`` (every element when None), as ``torch.aminmax``; each gradient goes to the
        extreme elements (split evenly among ties), as ``amin``'s and ``amax``'s."""
        if self.numel() == 0:
            if dim is None:
                raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                                   "no identity.")
            d = normalize_dim(dim, builtins.max(self.ndim, 1))
            if self.ndim and self.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        return _AMINMAX_RESULT(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def any(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return _uint8_stays(self, self._dev.backend.any(self._x, _axes(dim, self.ndim), keepdim))

    def all(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return _uint8_stays(self, self._dev.backend.all(self._x, _axes(dim, self.ndim), keepdim))


(matmul, sum, mean, var, std, max, min, amax, amin, argmax, argmin, logsumexp, cumsum, aminmax, any,
 all) = free_functions(ReduceMixin, "matmul", "sum", "mean", "var", "std", "max", "min", "amax", "amin", "argmax",
                      "argmin", "logsumexp", "cumsum",
    "aminmax", "any", "all")

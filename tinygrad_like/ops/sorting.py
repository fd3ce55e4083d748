"""Sorts and order statistics (sort, topk, kthvalue, median, mode, cummax/cummin), products (prod, cumprod) and
logcumsumexp.

An op that picks values (a sort, an order statistic, a running maximum) returns them as its output and the indices
it picked them at through a :class:`Picked` box the caller passes in: the indices are computed by the same primitive,
once. Its gradient goes back to the picked positions (a scatter-add of the incoming gradient), as in PyTorch.
"""

from __future__ import annotations

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from .elementwise import where
from .reduce import scan

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class Picked:
    """Where a value-picking op leaves its second output, the indices (an int64 tensor)."""

    __slots__ = ("indices",)


class _PickAlong(Function):
    """Values picked along ``dim`` at ``indices``; the gradient is scattered back to those positions (summed where
    one position was picked several times, as by a running maximum). ``keepdim``: the indices keep the picked dim
    (a sort's, a scan's); else it was reduced away."""

    __slots__ = ("dim", "keepdim", "in_shape")

    def _picked(self, x, dim: int, keepdim: bool, native_indices, box: Picked) -> None:
        box.indices = idx = x._wrap(native_indices, x._dev)
        self.dim, self.keepdim, self.in_shape = dim, keepdim, x._x.shape
        if _grad_mode.enabled and x.requires_grad:  # the indices are all backward reads (a write into them is refused)
            self.save_for_backward(idx)

    def _scatter(self, g):
        (idx,) = self.saved_tensors
        d = self.dim
        if not self.keepdim:
            idx, g = idx.unsqueeze(d), g.unsqueeze(d)
        return g.new_zeros(self.in_shape).scatter_add(d, idx, g)


class Sort(_PickAlong):
    __slots__ = ()

    def forward(self, x, dim, descending, stable, box):
        v, i = x._dev.backend.sort(x._x, dim, descending, stable)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Topk(_PickAlong):
    __slots__ = ()

    def forward(self, x, k, dim, largest, sorted, box):
        v, i = x._dev.backend.topk(x._x, k, dim, largest, sorted)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None, None


class Kthvalue(_PickAlong):
    __slots__ = ()

    def forward(self, x, k, dim, keepdim, box):
        v, i = x._dev.backend.kthvalue(x._x, k, dim, keepdim)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Median(_PickAlong):
    """``median(dim)`` (the lower median) and ``nanmedian(dim)`` (``ignore_nan``)."""

    __slots__ = ()

    def forward(self, x, dim, keepdim, ignore_nan, box):
        v, i = x._dev.backend.median(x._x, dim, keepdim, ignore_nan)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Mode(_PickAlong):
    __slots__ = ()

    def forward(self, x, dim, keepdim, box):
        v, i = x._dev.backend.mode(x._x, dim, keepdim)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None


class Cummax(_PickAlong):
    """``cummax``: the running maximum and where it was (last) reached."""

    __slots__ = ()
    is_max = True

    def forward(self, x, dim, box):
        v, i = x._dev.backend.cummax(x._x, dim, self.is_max)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None


class Cummin(Cummax):
    """``cummin``: the running minimum and where it was (last) reached."""

    __slots__ = ()
    is_max = False


class MedianAll(Function):
    """``median()``/``nanmedian()`` of all elements. As in PyTorch the gradient is shared evenly by every element
    equal to the median (every NaN, when the median is NaN)."""

    __slots__ = ()
    save_output = True

    def forward(self, x, ignore_nan):
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        v, _ = x._dev.backend.median(x._x, None, False, ignore_nan)
        return v

    def backward(self, g):
        x, y = self.saved_tensors
        hit = (x == y) | (x.isnan() & y.isnan())
        return where(hit, g / hit.sum().to(g.dtype), 0.0), None


# ---- products ------------------------------------------------------------------------------------
def _exclusive_products(x, d: int):
    """Per element, the product of the others along ``d`` (no division: exact with zeros), as PyTorch's
    ``prod_safe_zeros_backward``: the products of the elements before it times those of the elements after it."""
    n = x.shape[d]
    if n == 1:
        return x.new_ones(x.shape)
    shape = list(x.shape)
    shape[d] = 1
    one = x.new_ones(tuple(shape))
    from .movement import Cat
    before = Cat.apply(one, x.narrow(d, 0, n - 1), d).cumprod(d)
    after = Cat.apply(one, x.flip(d).narrow(d, 0, n - 1), d).cumprod(d).flip(d)
    return before * after


class Prod(Function):
    """``prod()`` of all elements (``dim`` None) or along one dim. The gradient is ``g * out / x`` where no input is
    zero, else the products of the other elements (PyTorch's two formulas: exact with one zero or several)."""

    __slots__ = ("dim", "keepdim")
    save_output = True

    def forward(self, x, dim, keepdim, dtype):
        if x.ndim == 0:  # (a 0-d tensor has its dim 0 and -1 to reduce: nothing)
            dim = None
        self.dim, self.keepdim = dim, keepdim
        if dtype is None and not x.dtype.is_floating_point:
            dtype = dtypes.int64
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        return x._dev.backend.prod(x._x, dim, keepdim, dtype)

    def backward(self, g):
        x, y = self.saved_tensors
        if x.numel() == 0:
            return g.new_zeros(x.shape), None, None, None
        d = self.dim
        if d is not None and not self.keepdim:
            g, y = g.unsqueeze(d), y.unsqueeze(d)
        if not bool((x == 0).any()):
            return g * (y / x), None, None, None
        if d is None:
            return (g * _exclusive_products(x.reshape(-1), 0).reshape(x.shape)), None, None, None
        return g * _exclusive_products(x, d), None, None, None


class Cumprod(Function):
    """Running products. Without zeros the gradient is ``reverse_cumsum(g * out) / x``; with zeros (PyTorch's
    formula, exact): before a lane's first zero, the same sum over the outputs before it; at the first zero, the
    product of the elements before it times ``sum_j g_j * prod(x after the zero, up to j)``; after it, 0."""

    __slots__ = ("dim",)
    save_output = True

    def forward(self, x, dim, dtype):
        self.dim = dim
        if dtype is None and not x.dtype.is_floating_point:
            dtype = dtypes.int64
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        be = x._dev.backend
        if x.ndim == 0:
            return be.cast(x._x, dtype or x.dtype)
        dt = dtype or x.dtype
        if not dt.is_floating_point:
            return be.cumprod(x._x, dim, dt)
        xx = x._x if dt is x.dtype else be.cast(x._x, dt)  # (torch casts the input to ``dtype`` first)
        return scan(be, be.cumprod, xx, dt, dim, None)  # (in torch's acc_type: see SCAN_ACC)

    def backward(self, g):
        x, y = self.saved_tensors
        if x.ndim == 0 or x.numel() == 0:
            return g, None, None
        d = self.dim
        zero = x == 0
        if not bool(zero.any()):
            return (g * y).flip(d).cumsum(d).flip(d) / x, None, None
        seen = zero.long().cumsum(d)
        before, first = seen == 0, zero & (seen == 1)
        safe = where(before, x, 1.0)
        lead = where(before, g * y, 0.0).flip(d).cumsum(d).flip(d) / safe
        rest = where(before | first, 1.0, x).cumprod(d)  # prod(x after the first zero, up to j)
        at_zero = safe.prod(d, keepdim=True) * where(before, 0.0, g * rest).sum(d, keepdim=True)
        return where(before, lead, where(first, at_zero, 0.0)), None, None


class LogCumSumExp(Function):
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow. The gradient is PyTorch's stable formula: the
    positive and negative parts of ``g`` each summed in log space by a reverse logcumsumexp."""

    __slots__ = ("dim",)
    save_output = True

    def forward(self, x, dim):
        if not x.dtype.is_floating_point:
            raise NotImplementedError(f"logcumsumexp: not implemented for {x.dtype.name} tensors (as in torch): "
                                      f"expected a floating point input; convert with .float() first")
        self.dim = dim
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        be = x._dev.backend
        if x.ndim == 0:
            return be.copy(x._x)
        return scan(be, be.logcumsumexp, x._x, x.dtype, dim)  # (in torch's acc_type: see SCAN_ACC)

    def backward(self, g):
        x, y = self.saved_tensors
        if g.ndim == 0 or g.numel() == 0:
            return g, None
        d = self.dim
        lowest = float(dtypes.finfo(g.dtype).min)
        log_abs = g.abs().log()
        pos = where(g > 0, log_abs, lowest) - y
        neg = where(g < 0, log_abs, lowest) - y
        pos = pos.flip(d).logcumsumexp(d).flip(d)
        neg = neg.flip(d).logcumsumexp(d).flip(d)
        return (pos + x).exp() - (neg + x).exp(), None


# ---- counting: outputs without a derivative ------------------------------------------------------
class NoDerivative(Function):
    """An output PyTorch marks as requiring grad but whose derivative it does not implement: ``bincount`` with
    weights that require grad, ``histogram``'s two outputs. The node carries the result (computed by the caller,
    ``native``) so the graph shows where it came from; its backward raises, naming the op, as torch's does.
    ``others``: further tensor inputs (``histogram``'s weight), so the node has an edge to each."""

    __slots__ = ("op",)

    def forward(self, x, native, op, *others):
        self.op = op
        return native

    def backward(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented (as in torch): detach its inputs "
                           f"(`.detach()`) before calling {self.op}, or compute what you need with differentiable "
                           f"ops (e.g. a one_hot(...).sum(0) for counts)")

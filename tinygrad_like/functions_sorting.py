"""Free functions (``tl.<name>``) of the Tensor API's sorting family (see ``mixin/sorting.py``): sorting, order
statistics, distinct values, binary search, products and scans, nan-aware reductions, ``std_mean``/``var_mean``, and
sampling (``multinomial``, ``bernoulli``, ``normal``).

Each is spelled as PyTorch's (argument names, orders, defaults); most are the Tensor method of the same name.
"""

from __future__ import annotations

from . import dtypes
from .autograd import grad_mode
from .device import CPU, factory_device
from .dtypes import result_type
from .tensor import Tensor, _shape_args, wrap_native

__all__ = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique", "unique_consecutive",
    "searchsorted", "bucketize", "prod", "cumprod", "cummax", "cummin", "logcumsumexp", "nansum", "nanmean",
    "count_nonzero", "std_mean", "var_mean", "multinomial", "bernoulli", "normal", "bincount", "histc", "histogram",
]

def _input(input, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input


# ---- sorting and order statistics -------------------------------------------------------------------
def sort(input, dim: int = -1, descending: bool = False, stable: bool | None = False):
    return _input(input, "sort").sort(dim, descending, stable)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    return _input(input, "argsort").argsort(dim, descending, stable)


def msort(input):
    return _input(input, "msort").msort()


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    return _input(input, "topk").topk(k, dim, largest, sorted)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False, *, keepdims=None):
    return _input(input, "kthvalue").kthvalue(k, dim, keepdim, keepdims=keepdims)


def median(input, dim: int | None = None, keepdim: bool = False, *, keepdims=None):
    return _input(input, "median").median(dim, keepdim, keepdims=keepdims)


def nanmedian(input, dim: int | None = None, keepdim: bool = False, *, keepdims=None):
    return _input(input, "nanmedian").nanmedian(dim, keepdim, keepdims=keepdims)


def mode(input, dim: int = -1, keepdim: bool = False, *, keepdims=None):
    return _input(input, "mode").mode(dim, keepdim, keepdims=keepdims)


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):
    return _input(input, "unique").unique(sorted, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False, dim=None):
    return _input(input, "unique_consecutive").unique_consecutive(return_inverse, return_counts, dim)


# ---- binary search -------------------------------------------------------------------------------------
def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False, side: str | None = None,
                 sorter=None) -> Tensor:
    """For each element of ``input`` (a tensor or a number), the index where it would be inserted into
    ``sorted_sequence`` to keep it sorted: the first position whose element is >= it (> with ``right=True`` or
    ``side="right"``). ``sorted_sequence`` is 1-D, or its leading dims match ``input``'s (one sorted row per
    row of values); ``sorter`` sorts an unsorted sequence (the indices ``argsort`` gives). int64, or int32 with
    ``out_int32``."""
    seq = _input(sorted_sequence, "searchsorted") if isinstance(sorted_sequence, Tensor) else None
    if seq is None:
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        if seq.ndim != 1:
            raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                               f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
                               f"dim(0) numel(1)")
        from .creation import tensor
        input = tensor(input, device=seq.device)
    if seq.ndim == 0 or (seq.ndim > 1 and (input.ndim != seq.ndim or input.shape[:-1] != seq.shape[:-1])):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(input.shape)}")
    if input._dev is not seq._dev:
        raise RuntimeError(f"searchsorted: expected all tensors to be on the same device, but found tensors on "
                           f"{seq.device} and {input.device}")
    srt = None
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.dtype not in (dtypes.int64, dtypes.int32):
            raise TypeError("torch.searchsorted(): sorter must be an int64 tensor (the indices that sort the "
                            "sequence, as argsort gives)")
        if sorter.shape != seq.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)} and got sorter tensor {list(sorter.shape)}")
        if sorter.numel() and (int(sorter.min()) < 0 or int(sorter.max()) >= seq.shape[-1]):
            raise RuntimeError(f"torch.searchsorted(): sorter index out of range: expected values in "
                               f"[0, {seq.shape[-1] - 1}]")
        srt = sorter._x
    be = seq._dev.backend
    dt = result_type(seq, input)
    xs = seq._x if seq.dtype is dt else be.cast(seq._x, dt)
    xv = input._x if input.dtype is dt else be.cast(input._x, dt)
    r = be.searchsorted(xs, xv, bool(right), srt)
    if out_int32:
        r = be.cast(r, dtypes.int32)
    return wrap_native(r, seq._dev)


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``: ``searchsorted(boundaries,
    input)`` (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``; ``right=True``: ``boundaries[i-1] <= x <
    boundaries[i]``)."""
    if not isinstance(boundaries, Tensor):
        raise TypeError(f"bucketize(): argument 'boundaries' must be Tensor, not {type(boundaries).__name__}")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---- counting ---------------------------------------------------------------------------------------
def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    return _input(input, "bincount").bincount(weights, minlength)


def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002 - torch's names
    return _input(input, "histc").histc(bins, min, max)


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False, out=None):  # noqa: A002
    if out is not None:
        raise NotImplementedError("histogram: out= is not supported; assign the result instead")
    return _input(input, "histogram").histogram(bins, range=range, weight=weight, density=density)


# ---- products, scans, nan-aware reductions ----------------------------------------------------------
def prod(input, dim: int | None = None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None):
    return _input(input, "prod").prod(dim, keepdim, dtype=dtype, keepdims=keepdims, axis=axis)


def cumprod(input, dim: int, *, dtype=None):
    return _input(input, "cumprod").cumprod(dim, dtype=dtype)


def cummax(input, dim: int):
    return _input(input, "cummax").cummax(dim)


def cummin(input, dim: int):
    return _input(input, "cummin").cummin(dim)


def logcumsumexp(input, dim: int):
    return _input(input, "logcumsumexp").logcumsumexp(dim)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None):
    return _input(input, "nansum").nansum(dim, keepdim, dtype=dtype, keepdims=keepdims, axis=axis)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None):
    return _input(input, "nanmean").nanmean(dim, keepdim, dtype=dtype, keepdims=keepdims, axis=axis)


def count_nonzero(input, dim=None):
    return _input(input, "count_nonzero").count_nonzero(dim)


def _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, op: str, std: bool):
    x = _input(input, op)
    if isinstance(dim, bool):  # the (input, unbiased) overload
        dim, unbiased = None, dim
    kd = keepdim if keepdims is None else keepdims
    spread = (x.std if std else x.var)(dim, unbiased, kd, correction=correction)
    return spread, x.mean(dim, kd)


def std_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
             keepdims=None) -> tuple:
    """``(std, mean)`` over ``dim`` (all dims by default), with ``correction`` (or ``unbiased``) as ``std``."""
    return _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, "std_mean", True)


def var_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
             keepdims=None) -> tuple:
    """``(var, mean)`` over ``dim`` (all dims by default), with ``correction`` (or ``unbiased``) as ``var``."""
    return _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, "var_mean", False)


# ---- sampling -----------------------------------------------------------------------------------------
def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    return _input(input, "multinomial").multinomial(num_samples, replacement, generator=generator)


def bernoulli(input, p: float | None = None, *, generator=None) -> Tensor:
    return _input(input, "bernoulli").bernoulli(p, generator=generator)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Samples of N(mean, std**2): ``mean`` and ``std`` tensors (broadcast together) or numbers; with two numbers,
    ``size`` gives the shape. Drawn from the seedable generator; the result carries no history (PyTorch's gradient
    with respect to ``mean`` and ``std`` is zero)."""
    from .random import default_generator
    gen = generator or default_generator
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (tm or ts):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with a number mean and a number "
                            "std, give size (e.g. normal(0.0, 1.0, (2, 3)))")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.default_float
        if not dt.is_floating_point:
            raise RuntimeError(f"normal: expected a floating point dtype, got {dt.name}")
        dev = factory_device(device)
        host = CPU.backend.normal(gen, _shape_args((size,)), float(mean), float(std), dt)
        out = wrap_native(host if dev is CPU else dev.backend.from_numpy(host), dev)
        return out.requires_grad_(True) if requires_grad else out
    if size is not None:
        raise TypeError("normal(): size is only accepted with a number mean and a number std (the tensors' "
                        "broadcast shape is the result's)")
    ref = mean if tm else std
    for t in (mean, std):
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise RuntimeError(f"normal: expected floating point mean and std tensors, got {t.dtype.name}")
    if ts:
        if std.numel() and not bool((std.detach() >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    from .layout import broadcast_shapes
    shape = broadcast_shapes(mean.shape if tm else (), std.shape if ts else ())
    dt = result_type(mean, std)
    dev = ref._dev
    with grad_mode.no_grad():
        host = CPU.backend.normal(gen, shape, 0.0, 1.0, dt)
        z = wrap_native(host if dev is CPU else dev.backend.from_numpy(host), dev)
        m = mean.detach() if tm else mean
        s = std.detach() if ts else std
        return (z * s + m).to(dt)

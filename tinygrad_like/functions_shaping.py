"""Free functions (``tl.<name>``) of the Tensor API's shaping family (see ``mixin/shaping.py``).

Each takes the tensor first, as ``input`` (torch's keyword), and calls the method of the same name; the stacking
functions (``hstack``, ``vstack``, ``dstack``, ``column_stack``), ``atleast_*d`` and ``meshgrid`` exist only as
functions, as in torch. ``logspace`` lives with the other factories in ``creation.py``.
"""

from __future__ import annotations

import warnings

from .creation import arange, logspace
from .functions import cat
from .tensor import Tensor

__all__ = [
    "roll", "rot90", "fliplr", "flipud", "tile", "repeat_interleave", "diff", "swapaxes", "swapdims", "moveaxis",
    "movedim", "t", "take", "take_along_dim", "select", "tensor_split", "masked_select", "argwhere", "scatter",
    "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put", "masked_scatter", "hstack", "vstack",
    "dstack", "row_stack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid", "logspace",
    "index_reduce",
]


def _input(input, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    return _input(input, "roll").roll(shifts, dims)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    return _input(input, "rot90").rot90(k, dims)


def fliplr(input: Tensor) -> Tensor:
    return _input(input, "fliplr").fliplr()


def flipud(input: Tensor) -> Tensor:
    return _input(input, "flipud").flipud()


def tile(input: Tensor, dims) -> Tensor:
    return _input(input, "tile").tile(dims)


def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """``input.repeat_interleave(repeats, dim)``; with ``input`` alone (an integer tensor of counts), the positions
    ``0..len-1`` each repeated its count of times."""
    if repeats is None:
        counts = _input(input, "repeat_interleave")
        if counts.ndim > 1:
            raise RuntimeError(f"repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape "
                               f"{list(counts.shape)}")
        return arange(counts.numel(), device=counts.device).repeat_interleave(counts.reshape(-1),
                                                                              output_size=output_size)
    return _input(input, "repeat_interleave").repeat_interleave(repeats, dim, output_size=output_size)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    return _input(input, "diff").diff(n, dim, prepend, append)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return _input(input, "swapaxes").transpose(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _input(input, "swapdims").transpose(dim0, dim1)


def moveaxis(input: Tensor, source, destination) -> Tensor:
    return _input(input, "moveaxis").movedim(source, destination)


def movedim(input: Tensor, source, destination) -> Tensor:
    return _input(input, "movedim").movedim(source, destination)


def t(input: Tensor) -> Tensor:
    return _input(input, "t").t()


def take(input: Tensor, index: Tensor) -> Tensor:
    return _input(input, "take").take(index)


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    return _input(input, "take_along_dim").take_along_dim(indices, dim)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    return _input(input, "select").select(dim, index)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    return _input(input, "tensor_split").tensor_split(indices_or_sections, dim)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    return _input(input, "masked_select").masked_select(mask)


def argwhere(input: Tensor) -> Tensor:
    return _input(input, "argwhere").argwhere()


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *, reduce=None) -> Tensor:
    return _input(input, "scatter").scatter(dim, index, src, value, reduce=reduce)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    return _input(input, "scatter_reduce").scatter_reduce(dim, index, src, reduce, include_self=include_self)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return _input(input, "index_add").index_add(dim, index, source, alpha=alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return _input(input, "index_copy").index_copy(dim, index, source)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    return _input(input, "index_fill").index_fill(dim, index, value)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True,
                 out=None) -> Tensor:
    if out is not None:
        raise NotImplementedError("index_reduce: out= is not supported; assign the result instead")
    return _input(input, "index_reduce").index_reduce(dim, index, source, reduce, include_self=include_self)


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    return _input(input, "index_put").index_put(indices, values, accumulate)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return _input(input, "masked_scatter").masked_scatter(mask, source)


# ---- stacking ------------------------------------------------------------------------------------
def _sequence(tensors, op: str) -> tuple:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): expected a sequence of Tensors, but element {i} is {type(x).__name__}")
    return tuple(tensors)


def _atleast(tensors: tuple, op: str, fix):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and not single:
        tensors = _sequence(tensors[0], op)
    else:
        for i, x in enumerate(tensors):
            if not isinstance(x, Tensor):
                raise TypeError(f"{op}(): expected Tensors, but argument {i} is {type(x).__name__}")
    out = tuple(fix(x) for x in tensors)
    return out[0] if single else out


def _at1(x: Tensor) -> Tensor:
    return x.reshape(1) if x.ndim == 0 else x


def _at2(x: Tensor) -> Tensor:
    return x.reshape(1, 1) if x.ndim == 0 else x.unsqueeze(0) if x.ndim == 1 else x


def _at3(x: Tensor) -> Tensor:
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, -1, 1)
    return x.unsqueeze(-1) if x.ndim == 2 else x


def atleast_1d(*tensors):
    """Each tensor with at least one dim (0-d -> shape (1,)); one tensor in, one out, else a tuple."""
    return _atleast(tensors, "atleast_1d", _at1)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (0-d -> (1, 1), (n,) -> (1, n))."""
    return _atleast(tensors, "atleast_2d", _at2)


def atleast_3d(*tensors):
    """Each tensor with at least three dims (0-d -> (1, 1, 1), (n,) -> (1, n, 1), (a, b) -> (a, b, 1))."""
    return _atleast(tensors, "atleast_3d", _at3)


def hstack(tensors) -> Tensor:
    """Join horizontally: along dim 0 for 1-d tensors, else along dim 1."""
    ts = tuple(_at1(x) for x in _sequence(tensors, "hstack"))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join vertically: rows, after making each tensor at least 2-d."""
    return cat([_at2(x) for x in _sequence(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """Join in depth: along dim 2, after making each tensor at least 3-d."""
    return cat([_at3(x) for x in _sequence(tensors, "dstack")], 2)


def column_stack(tensors) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become columns (n, 1), then ``hstack``."""
    ts = _sequence(tensors, "column_stack")
    return hstack([x.reshape(x.numel(), 1) if x.ndim <= 1 else x for x in ts])


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-d (or 0-d) tensors: with ``indexing='ij'`` output ``i`` varies along dim ``i``; with
    ``'xy'`` the first two dims are swapped (NumPy's and MATLAB's convention). The outputs are expanded views.
    Without ``indexing`` torch warns and uses 'ij'; so does this."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"meshgrid(): expected Tensors, but argument {i} is {type(x).__name__}")
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {list(x.shape)}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype (got {tensors[0].dtype.name} "
                               f"and {x.dtype.name})")
        if x.device is not tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    n = len(tensors)
    shape = [x.numel() for x in tensors]
    swap = indexing == "xy" and n >= 2
    if swap:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(tensors):
        pos = (1 - i) if swap and i < 2 else i
        view = [1] * n
        view[pos] = -1
        out.append(x.reshape(view).expand(shape))
    return tuple(out)

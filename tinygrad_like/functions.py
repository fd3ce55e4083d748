"""Free functions of the Tensor API (``tl.cat``, ``tl.where``, ``tl.one_hot``, ...)."""

from __future__ import annotations

from . import dtypes
from .layout import normalize_dim
from .ops import elementwise as E
from .ops import movement as M
from .tensor import Tensor


def _tensors(tensors, op: str) -> tuple:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError(f"{op}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a sequence of Tensors, but element {i} is {type(t).__name__}")
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    tensors = _tensors(tensors, "cat")
    return M.Cat.apply(*tensors, dim)


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    tensors = _tensors(tensors, "stack")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {shape} at entry 0 and "
                               f"{t.shape} at entry {i}")
    d = normalize_dim(dim, len(shape) + 1)
    return cat([t.unsqueeze(d) for t in tensors], d)


def where(condition: Tensor, input=None, other=None):
    """``condition ? input : other`` elementwise; with the condition alone, ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes the condition alone, or the condition, input and other")
    return E.Where.apply(condition, input, other)


def pad(input: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got {mode!r}")
    return M.Pad.apply(input, tuple(pad), value)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Integer class indices -> int64 one-hot vectors (last dim of size ``num_classes``)."""
    if tensor.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"one_hot is only applicable to index tensor of dtype int64, got {tensor.dtype.name}")
    from .creation import arange
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= num_classes):
        raise RuntimeError(f"one_hot: class values must be in [0, {num_classes}), got "
                           f"[{int(tensor.min().item())}, {int(tensor.max().item())}]")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.long().unsqueeze(-1) == classes).long()


def maximum(a: Tensor, b: Tensor) -> Tensor:
    return a.maximum(b)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    return a.minimum(b)


def softmax(x: Tensor, dim: int) -> Tensor:
    return x.softmax(dim)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    return x.log_softmax(dim)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a @ b


def broadcast_tensors(*tensors) -> tuple:
    from .layout import broadcast_shapes
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.nonzero(as_tuple=as_tuple)


# ---- thin wrappers so the functional spelling works for every method -----------------------------
def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"``tl.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


_METHODS = ("add sub mul pow neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu leaky_relu gelu silu "
            "softplus elu clamp clip erf "
            "reshape permute transpose squeeze unsqueeze flatten unflatten expand broadcast_to gather "
            "scatter_add index_select masked_fill flip repeat tril triu split chunk narrow unbind "
            "sign isnan logical_not logical_and logical_or logical_xor eq ne lt le gt ge "
            "numel clone detach").split()
for _n in _METHODS:
    globals()[_n] = _method(_n)
del _n

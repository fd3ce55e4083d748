"""``Tensor`` = storage + layout + autograd metadata, with a PyTorch-shaped API.

>>> import tinygrad_like as tl
>>> x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x @ x.T).relu().sum()
>>> y.backward()
>>> x.grad
tensor([[ 8., 12.],
        [ 8., 12.]])
>>> v = x.detach()[0]          # a view: same storage, same version counter
>>> v.storage is x.storage, v.stride(), x._version
(True, (1,), 0)
"""

from __future__ import annotations

import weakref
from collections import namedtuple
from typing import Any

import numpy as np

from . import dtypes, events
from .autograd import engine, function, grad_mode, view_history
from .autograd.function import Function
from .device import CPU, Device, get_device
from .dtypes import DType, result_type, scalar_category
from .layout import Layout, contiguous_strides, infer_shape, normalize_dim, normalize_dims
from .ops import _util
from .ops import elementwise as E
from .ops import indexing as I
from .ops import movement as M
from .ops import reduce as R
from .storage import Storage

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_weakref = weakref.ref

_BY_NP = dtypes._BY_NP
ReturnTypes = namedtuple("ReturnTypes", ["values", "indices"])


def _refuse_shared_elements(lay, op: str) -> None:
    """An in-place write into a layout where two elements are one memory location (a stride 0 over a dim of size
    > 1, as after ``expand``) would overwrite itself: refuse it, as PyTorch does. ``None``: contiguous."""
    if lay is None or 0 not in lay.strides or 0 in lay.shape:
        return
    if any(s == 0 and n > 1 for n, s in zip(lay.shape, lay.strides)):
        raise RuntimeError(f"{op}: more than one element of the written-to tensor (shape {list(lay.shape)}, "
                           f"strides {list(lay.strides)}) refers to a single memory location, as after "
                           f"expand(); the writes would overwrite each other. clone() the tensor first.")


def _refuse_partial_overlap(out: Tensor, other, op: str) -> None:
    """An in-place op whose input shares some, not all, of the written memory would read what it has already
    overwritten: refuse it, as PyTorch does (its rule: both contiguous, ranges overlapping, and not the same
    range with the same strides; non-contiguous pairs are not checked there either)."""
    if not isinstance(other, Tensor) or other._storage is not out._storage or other is out:
        return
    la, lb = out._layout, other._layout
    if not (la.is_contiguous() and lb.is_contiguous()):
        return
    (a0, a1), (b0, b1) = la.span(), lb.span()
    if a0 >= b1 or b0 >= a1:
        return
    if (a0, a1) == (b0, b1) and la.strides == lb.strides:
        return
    raise RuntimeError(f"{op}: unsupported operation: some elements of the input tensor and the written-to tensor "
                       f"refer to a single memory location (shapes {list(lb.shape)} and {list(la.shape)} over one "
                       f"storage). Please clone() the tensor before performing the operation.")


def _fresh_output(r: Tensor) -> Tensor:
    """A Tensor returned by a Function's forward becomes the op's output; one that already belongs to a graph
    (an input that requires grad, or a recorded result) would tie two histories to one storage."""
    if r.requires_grad or r.grad_fn is not None:
        raise RuntimeError("a Function's forward returned a tensor that is already part of the autograd graph (an "
                           "input that requires grad, or the result of recorded ops): return a new tensor, e.g. "
                           "one made with tl.empty(...) or computed under tl.no_grad(), or a native array")
    return r.detach()


def wrap_native(r, dev: Device) -> Tensor:
    """A new tensor owning the native result ``r`` of a primitive (the hot path of every op)."""
    if dev is CPU:
        if type(r) is not np.ndarray:
            if type(r) is Tensor:  # a Function's forward may return a tensor it made (see Function.forward)
                return _fresh_output(r)
            r = np.asarray(r)
        elif not r.flags.c_contiguous:
            r = np.ascontiguousarray(r)
        dt = _BY_NP.get(r.dtype)
        if dt is None:
            dt = dtypes.from_numpy(r.dtype)
        t = _new(Tensor)
        t._storage = Storage(dev, dt, r.size, r)
        t._lay = None  # contiguous from offset 0: built on first use (see Tensor._layout)
        t._x = r
    else:
        if type(r) is Tensor:
            return _fresh_output(r)
        buf, r = dev.backend.adopt(r)
        dt = dtypes.from_numpy(r.dtype)
        t = _new(Tensor)
        t._storage = Storage(dev, dt, _numel(r.shape), None, buf)
        t._lay = None
        t._x = r
    t._dev = dev
    t.dtype = dt
    t.requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._hooks = None
    t._base = None
    return t


_new = object.__new__


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _shape_args(size, allow_negative: bool = False, what: str = "size") -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` as PyTorch does. Sizes of new tensors must not be
    negative; a reshape or expand target may hold -1 (``allow_negative``), checked by the op itself."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"{what} must be a sequence of ints, got {size!r}")
        if n < 0 and not allow_negative:
            raise RuntimeError(f"negative dimension {n} in size {tuple(size)}")
    return tuple(int(n) for n in size)


class Tensor:
    """An n-dimensional array with autograd. Create one with ``tl.tensor``, ``tl.zeros``, ..."""

    __slots__ = ("_storage", "_lay", "_x", "_dev", "dtype", "requires_grad", "_grad", "grad_fn", "_hooks",
                 "_base", "__weakref__")
    __array_priority__ = 1000  # numpy scalars/arrays defer to our reflected operators

    def __init__(self, data, dtype=None, device=None, requires_grad: bool = False):
        from .creation import tensor
        t = tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        for s in Tensor.__slots__[:-1]:
            setattr(self, s, getattr(t, s))

    # ---- metadata ----------------------------------------------------------------------------
    @property
    def _layout(self) -> Layout:
        """Shape, strides and offset in the storage. Fresh op results are contiguous from offset 0,
        so their Layout is only built when something asks (views, strides, widgets)."""
        lay = self._lay
        if lay is None:
            shape = self._x.shape
            lay = self._lay = Layout(shape, contiguous_strides(shape), 0)
        return lay

    @property
    def shape(self) -> tuple:
        return self._x.shape

    def size(self, dim: int | None = None):
        if dim is None:
            return self._layout.shape
        return self._layout.shape[normalize_dim(dim, self.ndim)]

    @property
    def ndim(self) -> int:
        return self._x.ndim

    def dim(self) -> int:
        return self._x.ndim

    def numel(self) -> int:
        return _numel(self._x.shape)

    def stride(self, dim: int | None = None):
        st = self._layout.strides
        return st if dim is None else st[normalize_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._layout.offset

    def is_contiguous(self) -> bool:
        return self._layout.is_contiguous()

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def device(self) -> Device:
        return self._dev

    @property
    def is_cuda(self) -> bool:
        return self._dev.type == "cuda"

    @property
    def storage(self) -> Storage:
        """The :class:`Storage` shared by this tensor and all its views."""
        return self._storage

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def _version(self) -> int:
        return self._storage.version

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return bool(node is not None and node.retained and any(r() is self for r in node.retained))

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, other: Tensor) -> None:
        for s in ("_storage", "_lay", "_x", "_dev", "dtype"):
            setattr(self, s, getattr(other, s))

    @property
    def T(self) -> Tensor:
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    __hash__ = object.__hash__  # identity, in C: tensors are dict keys in the backward engine

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # ---- host access -------------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        """A NumPy view of this tensor's elements on the host (downloading a device copy if needed)."""
        if self._dev.is_host:
            return self._x
        host = self._storage.host_array()
        v = CPU.backend.view(host, self._layout, self.dtype)
        v.flags.writeable = False
        return v

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The elements as NumPy; a CPU tensor shares memory (as in PyTorch)."""
        if self.requires_grad and _grad.enabled and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._host()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar "
                               f"(shape {self.shape}); use .tolist() or index first")
        return self._host().reshape(()).item()

    def tolist(self):
        return self._host().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous (shape "
                               f"{self.shape}); use .any() or .all()")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        a = self._host()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        from ._format import format_tensor
        suffixes = []
        if self._dev is not CPU:
            suffixes.append(f"device='{self._dev}'")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name}Backward0>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(self._host(), self.dtype.name, suffixes, default_dtype=dtypes.default_float.name)

    # ---- autograd ----------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (None until a backward reaches this leaf, or after ``zero_grad``)."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        # as torch: a gradient of another shape, dtype or device is refused when assigned, not deep inside an
        # optimizer step later
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   f"the same size")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype.name}' to a tensor "
                                   f"with dtype '{self.dtype.name}'. The gradient must have the tensor's dtype")
            if value._dev is not self._dev and str(value._dev) != str(self._dev):
                raise RuntimeError(f"assigned grad has data located on a different device: the tensor is on "
                                   f"{self._dev}, the gradient on {value._dev}")
        self._grad = value

    def detach(self) -> Tensor:
        """Same storage and layout, cut from the graph (shares the version counter)."""
        t = _new(Tensor)
        t._storage, t._lay, t._x, t._dev, t.dtype = self._storage, self._lay, self._x, self._dev, self.dtype
        t.requires_grad = False
        t._grad = t.grad_fn = t._hooks = None
        t._base = None  # shares storage (and version counter) but starts a history of its own
        return t

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                               "a computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {self.dtype.name})")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is None:
            return
        if node.retained is None:
            node.retained = []
        if not any(r() is self for r in node.retained):
            node.retained.append(weakref.ref(self))

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            self.grad_fn.register_hook(hook)
            hooks = self.grad_fn.hooks
        else:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            hooks = self._hooks
        return _RemovableHandle(hooks, hook)

    def _root_grad(self, gradient):
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if self.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; this tensor has "
                                   f"shape {self.shape}: pass backward(gradient=...) of that shape, or reduce "
                                   f"first (e.g. .sum())")
            return Tensor._full_like(self, 1.0)
        if not isinstance(gradient, Tensor):
            gradient = Tensor._from_value(gradient, self)
        if gradient.shape != self.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and "
                               f"output[0] has a shape of {self.shape}.")
        if gradient._dev is not self._dev:
            raise RuntimeError(f"backward: gradient is on {gradient._dev} but the tensor is on {self._dev}")
        return gradient

    def backward_steps(self, gradient=None, retain_graph: bool = False, create_graph: bool = False):
        """A generator running backward one node at a time; yields :class:`~engine.Step` records."""
        return engine.backward_steps((self,), (self._root_grad(gradient),), retain_graph or create_graph,
                                     create_graph)

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (drains :meth:`backward_steps`)."""
        if retain_graph is None:
            retain_graph = create_graph
        for _ in engine.backward_steps((self,), (self._root_grad(gradient),), retain_graph, create_graph):
            pass

    # ---- views -------------------------------------------------------------------------------
    def _view(self, layout: Layout) -> Tensor:
        t = _new(Tensor)
        st = self._storage
        t._storage, t._lay, t._dev, t.dtype = st, layout, self._dev, self.dtype
        t._x = self._dev.backend.view(st.host if st.dev is None else st.dev, layout, self.dtype)
        t.requires_grad = False
        t._grad = t.grad_fn = t._hooks = None
        t._base = base = self._base if self._base is not None else self
        # The storage remembers its views, so an in-place write to the base can give them its new history. A
        # leaf that requires grad (a parameter) never gets one (writing it with autograd is refused): skipped.
        if base.requires_grad and base.grad_fn is None:
            return t
        views = st.views
        if views is None:
            st.views = [_weakref(t)]
        else:
            views.append(_weakref(t))
            if len(views) >= 64 and not len(views) & (len(views) - 1):  # at 64, 128, 256...: drop dead ones
                st.views = [r for r in views if r() is not None]
        return t

    def view(self, *shape) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], DType):
            raise NotImplementedError("view(dtype) reinterpretation is not supported; use .to(dtype)")
        return M.Reshape.apply(self, _shape_args_neg(shape))

    def reshape(self, *shape) -> Tensor:
        shape = infer_shape(_shape_args_neg(shape), self.numel())
        if shape == self.shape:
            return self if self.grad_fn is None and not self.requires_grad else M.Reshape.apply(self, shape)
        lay = self._layout.view(shape)
        if lay is None:
            return M.Reshape.apply(self.contiguous(), shape)
        return M.Reshape.apply(self, shape) if self._records() else self._view(lay)

    def permute(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if self._records():
            return M.Permute.apply(self, dims)
        lay = self._layout
        return self._view(lay.permuted(lay.permutation(dims)))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        nd = self.ndim
        if nd == 0:
            normalize_dim(dim0, 0), normalize_dim(dim1, 0)
            return M.Permute.apply(self, ())
        d0, d1 = normalize_dim(dim0, nd), normalize_dim(dim1, nd)
        order = list(range(nd))
        order[d0], order[d1] = order[d1], order[d0]
        if self._records():
            return M.Permute.apply(self, tuple(order))
        return self._view(self._layout.permuted(tuple(order)))

    swapaxes = transpose

    def movedim(self, source, destination) -> Tensor:
        """Move dims ``source`` to positions ``destination`` (ints or sequences), keeping the others' order."""
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                               f"contain the same number of dims as destination ({list(dst)} dims)")
        nd = self.ndim
        src, dst = tuple(normalize_dim(d, nd) for d in src), tuple(normalize_dim(d, nd) for d in dst)
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise RuntimeError(f"movedim: repeated dim in source {list(src)} or destination {list(dst)}")
        order = [None] * nd
        for s_, d_ in zip(src, dst):
            order[d_] = s_
        rest = iter(d for d in range(nd) if d not in src)
        return self.permute(tuple(o if o is not None else next(rest) for o in order))

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.T

    def expand(self, *shape) -> Tensor:
        shape = _shape_args_neg(shape)
        return M.Expand.apply(self, shape) if self._records() else self._view(self._layout.expand(shape))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape) -> Tensor:
        return self.expand(tuple(shape))

    def squeeze(self, dim=None) -> Tensor:
        return M.Squeeze.apply(self, dim) if self._records() else self._view(self._layout.squeeze(dim))

    def unsqueeze(self, dim: int) -> Tensor:
        return M.Unsqueeze.apply(self, dim) if self._records() else self._view(self._layout.unsqueeze(dim))

    def _records(self) -> bool:
        """Whether an op on this tensor records a graph node. A view op that records none is just the view (its
        node would only carry the layout), which keeps views cheap inside a plain backward's formulas."""
        return self.requires_grad and _grad.enabled

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shp = self.shape
        return self.reshape(shp[:s] + (_numel(shp[s:e + 1]),) + shp[e + 1:])

    def unflatten(self, dim: int, sizes) -> Tensor:
        d = normalize_dim(dim, self.ndim)
        from .layout import infer_shape
        sizes = infer_shape(tuple(sizes), self.shape[d])
        return self.reshape(self.shape[:d] + sizes + self.shape[d + 1:])

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        d = normalize_dim(dim, self.ndim)
        if start < 0:
            start += self.shape[d]
        if not (0 <= start and start + length <= self.shape[d]):
            raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                             f"({self.shape[d]}) of dim {d}")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def contiguous(self) -> Tensor:
        if self._layout.is_contiguous():
            return self
        return M.Contiguous.apply(self)

    def clone(self) -> Tensor:
        return M.Clone.apply(self)

    def split(self, split_size_or_sections, dim: int = 0) -> tuple:
        d = normalize_dim(dim, self.ndim)
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0 and n:
                raise RuntimeError(f"split_size must be positive, got {step}")
            sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                                   f"size at dimension {d}), but got split_sizes={sizes}")
        out, start = [], 0
        for s in sizes:
            out.append(self.narrow(d, start, s))
            start += s
        return tuple(out)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self.shape[normalize_dim(dim, self.ndim)]
        return self.split(max(-(-n // chunks), 1), dim)

    def unbind(self, dim: int = 0) -> tuple:
        d = normalize_dim(dim, self.ndim)
        return tuple(self[(slice(None),) * d + (i,)] for i in range(self.shape[d]))

    # ---- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index) -> Tensor:
        idx, advanced = _normalize_index(index, self)
        if not advanced:
            return M.Slice.apply(self, idx)
        return I.Index.apply(self, idx)

    def __setitem__(self, index, value) -> None:
        idx, advanced = _normalize_index(index, self)
        if isinstance(value, (list, tuple, np.ndarray)):
            value = Tensor._from_value(value, self)
        if isinstance(value, Tensor) and value._dev is not self._dev:
            _util.check_same_device(self, value, "setitem")
        self._check_inplace("__setitem__", overlap_ok=True)
        if self._lay is not None and 0 in self._lay.strides:  # only the written region must not share elements
            with grad_mode.no_grad():
                region = self._lay if advanced else self[index]._lay
            _refuse_shared_elements(region, "__setitem__")
        needs_graph = _grad.enabled and (self.requires_grad or
                                              (isinstance(value, Tensor) and value.requires_grad))
        overlapping = self._lay is not None and any(s == 0 and n > 1 for n, s in zip(self._lay.shape,
                                                                                     self._lay.strides))
        if needs_graph and not overlapping:
            if isinstance(value, Tensor) and value.dtype is not self.dtype:
                value = value.to(self.dtype)
            self._rebase(I.IndexPut.apply(self._graph_input(), idx, value), "__setitem__")
            return
        v = value
        if isinstance(value, Tensor):
            v = value._x if value.dtype is self.dtype else self._dev.backend.cast(value._x, self.dtype)
        elif not isinstance(value, (int, float, bool)):
            raise TypeError(f"can't assign a {type(value).__name__} to a tensor; expected a Tensor or a number")
        try:
            self._dev.backend.setitem(self._x, I.native_index(idx), v)
        except (ValueError, IndexError) as e:
            vs = value.shape if isinstance(value, Tensor) else "a number"
            raise RuntimeError(f"cannot assign a value of shape {vs} to tensor of shape {self.shape} at index "
                               f"{index!r}: {e}") from None
        self._wrote("__setitem__")
        if needs_graph:  # a tensor whose elements share memory (expand): the values are written, as in torch,
            view_history.unusable_history(self, value, "__setitem__")  # and a backward through it is refused

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return I.Gather.apply(self, dim, index)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return I.ScatterAdd.apply(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return I.IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask: Tensor, value) -> Tensor:
        return E.MaskedFill.apply(self, mask, value)

    def flip(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return M.Flip.apply(self, dims)

    def repeat(self, *reps) -> Tensor:
        return M.Repeat.apply(self, _shape_args(reps))

    def tril(self, diagonal: int = 0) -> Tensor:
        return M.Tri.apply(self, diagonal, False)

    def triu(self, diagonal: int = 0) -> Tensor:
        return M.Tri.apply(self, diagonal, True)

    # ---- arithmetic --------------------------------------------------------------------------
    def __add__(self, other):
        return E.Add.apply(self, other)

    def __radd__(self, other):
        return E.Add.apply(self, other)

    def __sub__(self, other):
        return E.Sub.apply(self, other)

    def _left_number(self, value):
        """``value`` from the left of an operator (``2 - x``) as a 0-d tensor of the op's result dtype, so the
        op itself runs (Sub, Div, Pow: one node type per op) with the number as its first operand.
        None when ``value`` is not a number (the operator then returns NotImplemented, as Python expects)."""
        if not E._num(value):
            return None
        if isinstance(value, np.generic):
            value = value.item()
        return wrap_native(self._dev.backend.full((), value, result_type(self, value)), self._dev)

    def __rsub__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else E.Sub.apply(left, self)

    def __mul__(self, other):
        return E.Mul.apply(self, other)

    def __rmul__(self, other):
        return E.Mul.apply(self, other)

    def __truediv__(self, other):
        return E.Div.apply(self, other)

    def __rtruediv__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else E.Div.apply(left, self)

    def __pow__(self, other):
        return E.Pow.apply(self, other)

    def __rpow__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else E.Pow.apply(left, self)

    def __matmul__(self, other):
        return R.Matmul.apply(self, other)

    def __rmatmul__(self, other):
        return R.Matmul.apply(Tensor._from_value(other, self), self)

    def __neg__(self):
        return E.Neg.apply(self)

    def __abs__(self):
        return E.Abs.apply(self)

    def __pos__(self):
        return self

    add = __add__
    sub = __sub__
    mul = __mul__
    div = __truediv__
    pow = __pow__
    matmul = __matmul__
    neg = __neg__
    abs = __abs__

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # comparisons and logic: not differentiable, return bool tensors
    def _cmp(self, other, prim: str) -> Tensor:
        xa, xb, _ = _util.operands(self, other, prim)
        try:
            return wrap_native(getattr(self._dev.backend, prim)(xa, xb), self._dev)
        except ValueError:
            raise E._broadcast_error(self, other, prim) from None

    def __eq__(self, other):  # type: ignore[override]
        if not isinstance(other, (Tensor, int, float)):
            return NotImplemented
        return self._cmp(other, "eq")

    def __ne__(self, other):  # type: ignore[override]
        if not isinstance(other, (Tensor, int, float)):
            return NotImplemented
        return self._cmp(other, "ne")

    def __lt__(self, other):
        return self._cmp(other, "lt")

    def __le__(self, other):
        return self._cmp(other, "le")

    def __gt__(self, other):
        return self._cmp(other, "gt")

    def __ge__(self, other):
        return self._cmp(other, "ge")

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def _logical(self, other, prim: str) -> Tensor:
        if self.dtype is dtypes.bool_ and (not isinstance(other, Tensor) or other.dtype is dtypes.bool_):
            return self._cmp(other, "logical_" + prim)
        if self.dtype.is_floating_point or (isinstance(other, Tensor) and other.dtype.is_floating_point):
            raise TypeError(f"bitwise {prim} is only supported for integer and bool tensors, got {self.dtype.name}")
        xa, xb, _ = _util.operands(self, other, prim)
        # through the backend protocol like every primitive (timed, and a host fallback on CUDA)
        return wrap_native(getattr(self._dev.backend, "bitwise_" + prim)(xa, xb), self._dev)

    def __and__(self, other):
        return self._logical(other, "and")

    def __or__(self, other):
        return self._logical(other, "or")

    def __xor__(self, other):
        return self._logical(other, "xor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> Tensor:
        if self.dtype is not dtypes.bool_:
            raise TypeError(f"~ (logical not) is only supported on bool tensors here, got {self.dtype.name}")
        return wrap_native(self._dev.backend.logical_not(self._x), self._dev)

    def logical_not(self) -> Tensor:
        return wrap_native(self._dev.backend.logical_not(self._x), self._dev)

    def logical_and(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, Tensor) else bool(other), "logical_and")

    def logical_or(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, Tensor) else bool(other), "logical_or")

    def logical_xor(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, Tensor) else bool(other), "logical_xor")

    def sign(self) -> Tensor:
        return E.Sign.apply(self)

    def isnan(self) -> Tensor:
        return wrap_native(self._dev.backend.isnan(self._x), self._dev)

    # ---- unary math and activations --------------------------------------------------------
    def exp(self):
        return E.Exp.apply(self)

    def log(self):
        return E.Log.apply(self)

    def sqrt(self):
        return E.Sqrt.apply(self)

    def rsqrt(self):
        return E.Rsqrt.apply(self)

    def sin(self):
        return E.Sin.apply(self)

    def cos(self):
        return E.Cos.apply(self)

    def tanh(self):
        return E.Tanh.apply(self)

    def sigmoid(self):
        return E.Sigmoid.apply(self)

    def erf(self):
        return E.Erf.apply(self)

    def relu(self):
        return E.Relu.apply(self)

    def leaky_relu(self, negative_slope: float = 0.01):
        return E.LeakyRelu.apply(self, negative_slope)

    def gelu(self, approximate: str = "none"):
        return E.Gelu.apply(self, approximate)

    def silu(self):
        return E.Silu.apply(self)

    def softplus(self, beta: float = 1.0, threshold: float = 20.0):
        return E.Softplus.apply(self, beta, threshold)

    def elu(self, alpha: float = 1.0):
        return E.Elu.apply(self, alpha)

    def clamp(self, min=None, max=None):
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            out = self
            if min is not None:
                out = out.maximum(min if isinstance(min, Tensor) else Tensor._from_value(min, self))
            if max is not None:
                out = out.minimum(max if isinstance(max, Tensor) else Tensor._from_value(max, self))
            return out
        return E.Clamp.apply(self, min, max)

    clip = clamp

    def maximum(self, other: Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"maximum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return E.Maximum.apply(self, other)

    def minimum(self, other: Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"minimum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return E.Minimum.apply(self, other)

    def softmax(self, dim: int):
        return R.Softmax.apply(self, dim)

    def log_softmax(self, dim: int):
        return R.LogSoftmax.apply(self, dim)

    # ---- reductions ----------------------------------------------------------------------------
    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        return R.Sum.apply(self, dim, keepdim, None if dtype is None else dtypes.to_dtype(dtype))

    def mean(self, dim=None, keepdim: bool = False):
        return R.Mean.apply(self, dim, keepdim)

    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
        return R.Var.apply(self, dim, _correction(unbiased, correction), keepdim)

    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
        return R.StdFromVar.apply(R.Var.apply(self, dim, _correction(unbiased, correction), keepdim))

    def _maxmin(self, dim, keepdim, is_max):
        if isinstance(dim, Tensor):
            return self.maximum(dim) if is_max else self.minimum(dim)
        if dim is None:
            return R.MaxMinAll.apply(self, None, keepdim, is_max)
        d = normalize_dim(dim, max(self.ndim, 1)) if self.ndim else normalize_dim(dim, 0)
        if self.ndim == 0:
            return ReturnTypes(self.clone(), Tensor._full_like(self, 0, dtypes.int64))
        if self.shape[d] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have non-zero size "
                             f"(shape {self.shape})")
        be = self._dev.backend
        idx = wrap_native((be.argmax if is_max else be.argmin)(self._x, d, keepdim), self._dev)
        return ReturnTypes(R.MaxMinDim.apply(self, d, keepdim, is_max, idx), idx)

    def max(self, dim=None, keepdim: bool = False):
        return self._maxmin(dim, keepdim, True)

    def min(self, dim=None, keepdim: bool = False):
        return self._maxmin(dim, keepdim, False)

    def amax(self, dim=None, keepdim: bool = False):
        return R.MaxMin.apply(self, dim, keepdim, True)

    def amin(self, dim=None, keepdim: bool = False):
        return R.MaxMin.apply(self, dim, keepdim, False)

    def _arg(self, dim, keepdim, is_max):
        if self.numel() == 0 and (dim is None or self.shape[normalize_dim(dim, self.ndim)] == 0):
            raise RuntimeError(f"{'argmax' if is_max else 'argmin'}(): Expected reduction dim to be specified "
                               f"for input.numel() == 0 (shape {self.shape})")
        be = self._dev.backend
        fn = be.argmax if is_max else be.argmin
        if dim is None:
            r = fn(self._x.reshape(-1) if self._dev.is_host else self.reshape(-1)._x, 0, False)
            out = wrap_native(r, self._dev)
            return out.reshape((1,) * self.ndim) if keepdim else out
        d = normalize_dim(dim, max(self.ndim, 1))
        if self.ndim == 0:
            return Tensor._full_like(self, 0, dtypes.int64)
        return wrap_native(fn(self._x, d, keepdim), self._dev)

    def argmax(self, dim=None, keepdim: bool = False):
        return self._arg(dim, keepdim, True)

    def argmin(self, dim=None, keepdim: bool = False):
        return self._arg(dim, keepdim, False)

    def logsumexp(self, dim, keepdim: bool = False):
        return R.LogSumExp.apply(self, dim, keepdim)

    def cumsum(self, dim: int):
        return R.Cumsum.apply(self, dim)

    def any(self, dim=None, keepdim: bool = False):
        return wrap_native(self._dev.backend.any(self._x, _axes(dim, self.ndim), keepdim), self._dev)

    def all(self, dim=None, keepdim: bool = False):
        return wrap_native(self._dev.backend.all(self._x, _axes(dim, self.ndim), keepdim), self._dev)

    # ---- dtype and device conversion ---------------------------------------------------------
    def to(self, *args, dtype=None, device=None, copy: bool = False) -> Tensor:
        """``.to(dtype)``, ``.to(device)``, ``.to(device, dtype)`` or ``.to(other_tensor)``."""
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a._dev
            elif isinstance(a, DType) or a in (float, int, bool) or (isinstance(a, str) and a in dtypes._BY_NAME):
                dtype = a
            else:
                device = a
        out = self
        if device is not None:
            dev = get_device(device)
            if dev is not self._dev:
                out = ToDevice.apply(out, dev)
        if dtype is not None:
            dt = dtypes.to_dtype(dtype)
            if dt is not out.dtype:
                out = E.Cast.apply(out, dt)
        if copy and out is self:
            out = self.clone()
        return out

    def type(self, dtype=None):
        return self.dtype.name if dtype is None else self.to(dtype)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def long(self):
        return self.to(dtypes.int64)

    def int(self):
        return self.to(dtypes.int32)

    def bool(self):
        return self.to(dtypes.bool_)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    # ---- in-place ----------------------------------------------------------------------------
    def _check_inplace(self, op: str, overlap_ok: bool = False) -> None:
        if self.requires_grad and self.grad_fn is None and _grad.enabled:
            raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place operation "
                               f"({op}). Wrap it in `with tl.no_grad():` if you mean to change the parameter "
                               f"itself, or use the out-of-place op.")
        base = self._base
        if base is not None and base.requires_grad and base.grad_fn is None and _grad.enabled:
            raise RuntimeError(f"a view of a leaf Variable that requires grad is being used in an in-place "
                               f"operation ({op}). Wrap it in `with tl.no_grad():` if you mean to change the "
                               f"parameter itself, or use the out-of-place op.")
        if not overlap_ok and self._lay is not None:  # None: contiguous from offset 0 (the common case)
            _refuse_shared_elements(self._lay, op)

    def _graph_input(self, other=None) -> Tensor:
        """``self`` as an input to an op whose result will be written back into ``self``.

        A clone when grad flows (through ``self`` or ``other``), so that what the op saves of ``self``'s old
        value (``a.mul_(b)`` keeps ``a`` for ``b``'s gradient) does not see the write.
        """
        if self.requires_grad or (isinstance(other, Tensor) and other.requires_grad):
            return self.clone()
        return self

    def _wrote(self, op: str) -> None:
        st = self._storage
        if st.dev is not None:
            st.mark_device_write()
        st.bump(op)

    def _rebase(self, result: Tensor, op: str) -> None:
        """Write ``result`` into ``self`` and make its node ``self``'s history (autograd in-place).

        The views of ``self`` follow it to the new history; a write through a view gives the view's base a
        new history first (see ``autograd.view_history``).
        """
        self._dev.backend.assign(self._x, result._x)
        self._wrote(op)
        if result.grad_fn is None:
            return
        if self._base is not None:
            view_history.write_through_view(self, result)
            return
        kept = self.grad_fn is not None and self.retains_grad
        self.grad_fn = result.grad_fn
        self.requires_grad = True
        if kept:  # retain_grad() follows the tensor to its new history, as in PyTorch
            self.retain_grad()
        view_history.refresh_views(self)

    def _inplace(self, op: str, fn, other) -> Tensor:
        self._check_inplace(op)
        if isinstance(other, Tensor) and other._storage is self._storage:
            _refuse_partial_overlap(self, other, op)
        if isinstance(other, Tensor) and other._dev is not self._dev:
            _util.check_same_device(self, other, op)
        if _grad.enabled and (self.requires_grad or (isinstance(other, Tensor) and other.requires_grad)):
            result = fn(self._graph_input(other), other)
            _check_castable(result.dtype, self.dtype, op)
            if result.shape != self.shape:
                raise RuntimeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                                   f"{result.shape}")
            self._rebase(result, op)
            return self
        with grad_mode.no_grad():
            result = fn(self, other)
        _check_castable(result.dtype, self.dtype, op)
        if result.shape != self.shape:
            raise RuntimeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                               f"{result.shape}")
        self._dev.backend.assign(self._x, result._x)
        self._wrote(op)
        return self

    def add_(self, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha
        return self._inplace("add_", E.Add.apply, other)

    def sub_(self, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha
        return self._inplace("sub_", E.Sub.apply, other)

    def mul_(self, other):
        return self._inplace("mul_", E.Mul.apply, other)

    def div_(self, other):
        return self._inplace("div_", E.Div.apply, other)

    def clamp_(self, min=None, max=None):
        return self._inplace("clamp_", lambda x, _: x.clamp(min, max), None)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from U(a, b) drawn from the seedable generator (used by ``tl.nn.init``)."""
        return self._fill_random("uniform_", "uniform", generator, a, b)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from N(mean, std**2) drawn from the seedable generator."""
        return self._fill_random("normal_", "normal", generator, mean, std)

    def _fill_random(self, op: str, kind: str, generator, *args) -> Tensor:
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{op}: expected a floating point tensor, got {self.dtype.name}")
        from .random import default_generator
        host = getattr(CPU.backend, kind)(generator or default_generator, self.shape, *args, self.dtype)
        return self.copy_(wrap_native(host, CPU))

    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                   f"{value.ndim} dimensions.")
            value = value.item()
        self._check_inplace("fill_", overlap_ok=True)  # one value everywhere: shared elements agree (as torch)
        if _grad.enabled and self.requires_grad:
            self._rebase(self._overwritten(self._graph_input(), value), "fill_")
            return self
        self._dev.backend.assign(self._x, value)
        self._wrote("fill_")
        return self

    def copy_(self, src: Tensor):
        """Copy ``src``'s values (broadcast, cast, across devices) into this tensor."""
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
        from .layout import broadcast_shapes
        try:
            ok = broadcast_shapes(self.shape, src.shape) == self.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"copy_: the source of shape {src.shape} cannot be broadcast to the "
                               f"destination shape {self.shape}")
        st = self._storage
        if (src._dev is CPU and st.dev is not None and st.host is not None and st.dirty != "gpu"
                and not (_grad.enabled and (self.requires_grad or src.requires_grad))):
            # a host value into a device tensor whose host mirror is current: write the mirror, upload lazily
            # (at the device's next op), as Storage's state machine says; load_state_dict takes this path
            self._check_inplace("copy_")
            np.copyto(CPU.backend.view(st.host, self._layout, self.dtype), src._x, casting="unsafe")
            st.mark_host_write()
            st.bump("copy_")
            return self
        if src is self:  # copying a tensor onto itself changes nothing (and is no self-overlap)
            self._check_inplace("copy_", overlap_ok=True)
            self._wrote("copy_")
            return self
        if src._dev is not self._dev:
            src = src.to(self._dev)
        # broadcast to our shape on both paths; with grad, the old history gets a zero gradient
        return self._inplace("copy_", lambda x, s: self._overwritten(x, s.to(x.dtype)) if _grad.enabled
                             else s.to(x.dtype).expand(x.shape), src)

    def _overwritten(self, x: Tensor, value) -> Tensor:
        """``value`` (broadcast to ``x``) as a graph node over ``x``: where(False, x, value). The old
        history gets a zero gradient and stays finite (``x * 0 + value`` would turn inf into nan)."""
        keep = wrap_native(self._dev.backend.full((), False, dtypes.bool_), self._dev)
        return E.Where.apply(keep, x, value)

    # ---- factories on an existing tensor ----------------------------------------------------------
    @staticmethod
    def _full_like(t: Tensor, value, dtype: DType | None = None) -> Tensor:
        dt = dtype or t.dtype
        return wrap_native(t._dev.backend.full(t.shape, value, dt), t._dev)

    @staticmethod
    def _from_value(value, like: Tensor) -> Tensor:
        from .creation import tensor
        dt = like.dtype if isinstance(value, (int, float)) or (
            isinstance(value, np.ndarray) and like.dtype.is_floating_point) else None
        return tensor(value, dtype=dt, device=like._dev)

    def new_zeros(self, *size, dtype=None) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return wrap_native(self._dev.backend.full(_shape_args(size), 0, dt), self._dev)

    def new_ones(self, *size, dtype=None) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return wrap_native(self._dev.backend.full(_shape_args(size), 1, dt), self._dev)

    def new_full(self, size, fill_value, dtype=None) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return wrap_native(self._dev.backend.full(_shape_args((size,)), fill_value, dt), self._dev)

    def new_tensor(self, data, dtype=None) -> Tensor:
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=self._dev)


def _check_castable(src: DType, dst: DType, op: str) -> None:
    if src.category > dst.category:
        raise RuntimeError(f"{op}: result type {src.name} can't be cast to the desired output type {dst.name} "
                           f"(in-place ops keep the tensor's dtype; use the out-of-place op)")


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


def _shape_args_neg(shape) -> tuple:
    """A reshape/view/expand target: as :func:`_shape_args`, -1 allowed."""
    return _shape_args(shape, allow_negative=True, what="shape")


def _normalize_index(index, t: Tensor) -> tuple[Any, bool]:
    """Return (index tuple, is_advanced). Lists and arrays become int64/bool tensors."""
    if not isinstance(index, tuple):
        index = (index,)
    out, advanced = [], False
    for i in index:
        if isinstance(i, (bool, np.bool_)):
            raise IndexError("indexing with a Python bool is not supported; use a bool tensor mask")
        if isinstance(i, (int, np.integer)):
            out.append(int(i))
        elif i is None or i is Ellipsis or isinstance(i, slice):
            if isinstance(i, slice):
                for v in (i.start, i.stop, i.step):
                    if v is not None and not isinstance(v, (int, np.integer)):
                        if isinstance(v, Tensor) and v.numel() == 1 and not v.dtype.is_floating_point:
                            continue
                        raise TypeError(f"slice indices must be integers or None, got {type(v).__name__}")
                i = slice(*(int(v) if v is not None else None for v in (i.start, i.stop, i.step)))
            out.append(i)
        elif isinstance(i, Tensor):
            if i.dtype.is_floating_point:
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, got {i.dtype.name}")
            if i._dev is not t._dev:
                raise IndexError(f"indices should be on the same device as the indexed tensor ({t._dev}), "
                                 f"got {i._dev}")
            out.append(i)
            advanced = True
        elif isinstance(i, (list, np.ndarray)):
            from .creation import tensor
            arr = np.asarray(i)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int or bool tensors, got floats")
            out.append(tensor(arr if arr.dtype == np.bool_ else arr.astype(np.int64), device=t._dev))
            advanced = True
        else:
            raise IndexError(f"unsupported index type {type(i).__name__}; expected int, slice, None, ..., "
                             f"or an integer/bool tensor")
    if advanced:
        _check_masks(out, t.shape)
    return tuple(out), advanced


def _check_masks(index: list, shape: tuple) -> None:
    """A bool mask must have the shape of the dims it selects (torch's message, not NumPy's)."""
    def width(i) -> int:
        if i is None or i is Ellipsis:
            return 0
        return i.ndim if isinstance(i, Tensor) and i.dtype.name == "bool" else 1
    used = sum(width(i) for i in index)
    dim = 0
    for i in index:
        if i is Ellipsis:
            dim += max(0, len(shape) - used)
            continue
        if isinstance(i, Tensor) and i.dtype.name == "bool":
            for k, n in enumerate(i.shape):
                if dim + k >= len(shape) or shape[dim + k] != n:
                    have = shape[dim + k] if dim + k < len(shape) else None
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {k} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + k}"
                                     + ("" if have is not None else " (the tensor has fewer dims)"))
        dim += width(i)


class ToDevice(Function):
    """Copy to another device; gradient copies back."""

    __slots__ = ("src",)

    def forward(self, x, dev):
        self.src = x._dev
        host = np.asarray(x._host(), order="C")  # keeps 0-d (ascontiguousarray would not)
        return wrap_native(host.copy() if dev is CPU else dev.backend.from_numpy(host), dev)

    def backward(self, g):
        return g.to(self.src), None


class _RemovableHandle:
    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


# Bind the late references (modules that need Tensor but cannot import it at load time).
function.Tensor = Tensor
function.wrap = wrap_native
engine._wrap = wrap_native
_util.Tensor = Tensor
_util.wrap = wrap_native
_ = (result_type, scalar_category, events, Storage)

"""Tensor methods that write in place: ``add_``, ``copy_``, ``fill_``, random fills; version bumps and history."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode, view_history
from ..autograd.function import _alias
from ..device import CPU
from ..dtypes import DType
from ..layout import Layout, broadcast_shapes, contiguous_strides
from ..random import default_generator
from ..tensor_base import TensorBase, _shape_args
from . import _util, elementwise

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class InplaceMixin:
    """Tensor methods that write in place: ``add_``, ``copy_``, ``fill_``, random fills; version bumps and history."""

    __slots__ = ()

    # ---- in-place ----------------------------------------------------------------------------
    def _check_inplace(self, op: str, overlap_ok: bool = False) -> None:
        if self.requires_grad and self.grad_fn is None and _grad_mode.enabled:
            raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place operation "
                               f"({op}). Wrap it in `with tl.no_grad():` if you mean to change the parameter "
                               f"itself, or use the out-of-place op.")
        base = self._base
        if base is not None and base.requires_grad and base.grad_fn is None and _grad_mode.enabled:
            raise RuntimeError(f"a view of a leaf Variable that requires grad is being used in an in-place "
                               f"operation ({op}). Wrap it in `with tl.no_grad():` if you mean to change the "
                               f"parameter itself, or use the out-of-place op.")
        if not overlap_ok and self._lay is not None:  # None: contiguous from offset 0 (the common case)
            _refuse_shared_elements(self._lay, op)

    def _graph_input(self, other=None) -> Tensor:
        """``self`` as an input to an op whose result will be written back into ``self``.

        When grad flows (through ``self`` or ``other``), a copy of ``self``'s values, so that what the op saves of
        the old value (``a.mul_(b)`` keeps ``a`` for ``b``'s gradient) does not see the write. The copy carries
        ``self``'s history and adds no node of its own: ``x += y`` records one ``AddBackward0``, as in torch (whose
        in-place ops copy what they save internally), not an ``AddBackward0`` over a ``CloneBackward0``.
        """
        if self.requires_grad or (isinstance(other, TensorBase) and other.requires_grad):
            with grad_mode.no_grad():
                copy = self.clone()
            if self.grad_fn is not None:  # (a leaf that requires grad was refused by _check_inplace)
                copy.grad_fn, copy._requires_grad = self.grad_fn, True
            return copy
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
        node = result.grad_fn
        if node is None:
            return
        if type(node).save_output:
            _keep_self_as_output(node, self)
        if self._base is not None:
            view_history.write_through_view(self, result)
            return
        kept = self.grad_fn is not None and self.retains_grad
        self.grad_fn = result.grad_fn
        self._requires_grad = True
        if kept:  # retain_grad() follows the tensor to its new history, as in PyTorch
            self.retain_grad()
        view_history.refresh_views(self)

    def _inplace(self, op: str, fn, other) -> Tensor:
        self._check_inplace(op)
        if isinstance(other, TensorBase) and other._storage is self._storage:
            _refuse_partial_overlap(self, other, op)
        if isinstance(other, TensorBase) and other._dev is not self._dev:
            _util.check_same_device(self, other, op)
        if _grad_mode.enabled and (self.requires_grad or (isinstance(other, TensorBase) and other.requires_grad)):
            result = fn(self._graph_input(other), other)
            _check_castable(result.dtype, self.dtype, op)
            if result._x.shape != self._x.shape:
                raise RuntimeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                                   f"{result.shape}")
            self._rebase(result, op)
            return self
        with grad_mode.no_grad():
            result = fn(self, other)
        _check_castable(result.dtype, self.dtype, op)
        if result._x.shape != self._x.shape:
            raise RuntimeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                               f"{result.shape}")
        self._dev.backend.assign(self._x, result._x)
        self._wrote(op)
        return self

    def add_(self, other, *, alpha=1):
        if self._axpy("add_", other, alpha):
            return self
        if alpha != 1:
            other = other * alpha
        return self._inplace("add_", elementwise.Add.apply, other)

    def sub_(self, other, *, alpha=1):
        if self._axpy("sub_", other, -alpha):
            return self
        if alpha != 1:
            other = other * alpha
        return self._inplace("sub_", elementwise.Sub.apply, other)

    def _axpy(self, op: str, other, alpha) -> bool:
        """``add_``/``sub_`` with nothing to record (no autograd), a float tensor of this one's dtype and shape: one
        in-place primitive, ``axpy``, instead of a product, a sum and a copy back (an SGD step's update). False:
        the general path (numbers, broadcasting, promotion, autograd, and its errors)."""
        if (not isinstance(other, TensorBase) or other.dtype is not self.dtype or not self.dtype.is_floating_point
                or other._x.shape != self._x.shape or other._dev is not self._dev
                or (_grad_mode.enabled and (self.requires_grad or other.requires_grad))):
            return False
        self._check_inplace(op)
        if other._storage is self._storage:
            _refuse_partial_overlap(self, other, op)
        self._dev.backend.axpy(self._x, other._x, alpha)
        self._wrote(op)
        return True

    def mul_(self, other):
        recording = _grad_mode.enabled and self.requires_grad
        if type(other) in (int, float) and self.dtype.is_floating_point and not recording:
            # a number, nothing to record: one in-place primitive (SGD's momentum), after the usual checks
            self._check_inplace("mul_")
            self._dev.backend.scale(self._x, other)
            self._wrote("mul_")
            return self
        return self._inplace("mul_", elementwise.Mul.apply, other)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is not None:  # (trunc or floor: see DivisionMixin.div, ops/division.py)
            return self._inplace("div_", lambda x, o: x.div(o, rounding_mode=rounding_mode), other)
        return self._inplace("div_", elementwise.Div.apply, other)

    def clamp_(self, min=None, max=None):
        return self._inplace("clamp_", lambda x, _: x.clamp(min, max), None)

    def clip_(self, min=None, max=None):
        """``clamp_`` under NumPy's name."""
        return self._inplace("clip_", lambda x, _: x.clamp(min, max), None)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from U(a, b) drawn from the seedable generator (used by ``tl.nn.init``)."""
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
        return self._fill_random("uniform_", "uniform", generator, a, b)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from N(mean, std**2) drawn from the seedable generator."""
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        return self._fill_random("normal_", "normal", generator, mean, std)

    def _fill_random(self, op: str, kind: str, generator, *args) -> Tensor:
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{op}: expected a floating point tensor, got {self.dtype.name}")
        host = getattr(CPU.backend, kind)(generator or default_generator, self.shape, *args, self.dtype)
        return self.copy_(self._wrap(host, CPU))

    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        if isinstance(value, TensorBase):
            if value.ndim:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                   f"{value.ndim} dimensions.")
            value = value.item()
        value = dtypes.fill_value(value, self.dtype)
        self._check_inplace("fill_", overlap_ok=True)  # one value everywhere: shared elements agree (as torch)
        if _grad_mode.enabled and self.requires_grad:
            self._rebase(self._overwritten(self._graph_input(), value), "fill_")
            return self
        self._dev.backend.assign(self._x, value)
        self._wrote("fill_")
        return self

    def copy_(self, src: Tensor):
        """Copy ``src``'s values (broadcast, cast, across devices) into this tensor."""
        if not isinstance(src, TensorBase):
            raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
        try:
            ok = broadcast_shapes(self._x.shape, src._x.shape) == self._x.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"copy_: the source of shape {src.shape} cannot be broadcast to the "
                               f"destination shape {self.shape}")
        st = self._storage
        if (src._dev is CPU and st.dev is not None and st.host is not None and st.dirty != "gpu"
                and not (_grad_mode.enabled and (self.requires_grad or src.requires_grad))):
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
        return self._inplace("copy_", lambda x, s: self._overwritten(x, s.to(x.dtype)) if _grad_mode.enabled
                             else s.to(x.dtype).expand(x.shape), src)

    # ---- changing the tensor's shape or storage in place ----------------------------------------------------
    def resize_(self, *sizes, memory_format=None) -> Tensor:
        """Give this tensor the shape ``sizes`` (contiguous). It keeps its storage when that is large enough (the
        elements read in storage order); a larger size gets a new storage with the old elements first and zeros
        after (torch leaves those uninitialized)."""
        shape = _shape_args(sizes)
        if self.requires_grad and _grad_mode.enabled:
            raise RuntimeError("cannot resize variables that require grad")
        n = 1
        for s in shape:
            n *= s
        st = self._storage
        offset = self._layout.offset
        if offset + n <= st.numel:
            self._lay = Layout.contiguous(shape, offset)
            self._x = self._dev.backend.view(st.host if st.dev is None else st.dev, self._lay, self.dtype)
            return self
        flat = self.contiguous().reshape(-1).detach()
        from ..creation import zeros  # (creation sits above the ops)
        new = zeros(n, dtype=self.dtype, device=self._dev)
        keep = min(flat.numel(), n) if flat.numel() else 0
        if keep:
            new[:keep] = flat[:keep]
        self.data = new.reshape(shape)
        return self

    def resize_as_(self, the_template: Tensor, *, memory_format=None) -> Tensor:
        return self.resize_(*the_template.shape)

    def resize(self, *sizes) -> Tensor:
        """Deprecated in torch: a tensor of the new shape with the same elements (their number must match)."""
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        return self.reshape(*sizes)

    def resize_as(self, tensor: Tensor) -> Tensor:
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        return self.reshape(tensor.shape)

    def set_(self, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
        """Make this tensor share ``source``'s storage and layout (a tensor), or become empty (no argument)."""
        if source is None:
            from ..creation import empty  # (creation sits above the ops)
            self.data = empty(0, dtype=self.dtype, device=self._dev)
            return self
        if not isinstance(source, TensorBase):
            raise TypeError(f"set_(): expected a Tensor source (tinygrad_like's storages are not set_() sources), "
                            f"got {type(source).__name__}")
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {self.dtype.name} to a tensor of type "
                               f"{source.dtype.name}")
        self.data = source if size is None else source.as_strided(
            size, stride if stride is not None else contiguous_strides(tuple(size)), storage_offset)
        return self

    def _overwritten(self, x: Tensor, value) -> Tensor:
        """``value`` (broadcast to ``x``) as a graph node over ``x``: where(False, x, value). The old
        history gets a zero gradient and stays finite (``x * 0 + value`` would turn inf into nan)."""
        keep = self._wrap(self._dev.backend.full((), False, dtypes.bool_), self._dev)
        return elementwise.Where.apply(keep, x, value)


def _keep_self_as_output(node, t: Tensor) -> None:
    """A node that keeps its output (exp, relu, sigmoid...) written into ``t``: keep ``t`` itself, which now holds
    that output, at its version after the write. As in torch, where the output of ``x.exp_()`` *is* ``x``, a later
    write to ``t`` then fails the backward that reads it; and the separate result is not held any longer."""
    alias = _alias(t)  # detached, same storage and version counter (no cycle t -> node -> t)
    assert node.saved and node.saved[-1] is not None, f"{node.name} keeps its output but saved none"
    node.saved = (*node.saved[:-1], alias)  # (apply appended the output last)
    node.saved_versions = (*node.saved_versions[:-1], t._storage.version)


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
    if not isinstance(other, TensorBase) or other._storage is not out._storage or other is out:
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



def _check_castable(src: DType, dst: DType, op: str) -> None:
    if src.category > dst.category:
        raise RuntimeError(f"{op}: result type {src.name} can't be cast to the desired output type {dst.name} "
                           f"(in-place ops keep the tensor's dtype; use the out-of-place op)")


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:  # noqa: A002
    """``input.resize_as_(the_template)``."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"resize_as_(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.resize_as_(the_template)


def clamp_(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    if not isinstance(input, TensorBase):
        raise TypeError(f"clamp_(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.clamp_(min, max)


def clip_(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    if not isinstance(input, TensorBase):
        raise TypeError(f"clip_(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.clip_(min, max)


def detach_(input: Tensor) -> Tensor:  # noqa: A002
    if not isinstance(input, TensorBase):
        raise TypeError(f"detach_(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.detach_()

"""Forward-mode AD (``torch.autograd.forward_ad``), computed with reverse mode twice.

torch carries a tangent beside every primal through each op. Here a dual tensor made by :func:`make_dual` is a
tracked copy of its primal, and the level remembers its tangent; :func:`unpack_dual` of any tensor computed from
dual tensors gives the Jacobian-vector product ``J t`` by the double-backward trick (as
``autograd.functional.jvp`` does): with ``u`` a dummy output gradient, ``g(u) = J^T u`` is linear in ``u``, and
the gradient of ``<g(u), t>`` with respect to ``u`` is ``J t``. Every op whose backward is differentiable (the
ops here are written with Tensor ops, so nearly all) works; the cost is two backward passes per unpack instead
of one forward pass.

Where it differs from torch: the dual tensor records the graph (``requires_grad`` is True; torch's forward AD
leaves it False); ops run inside ``no_grad`` record nothing, so no tangent comes out of them (torch's forward AD
ignores ``no_grad``); and a tensor's repr does not show its tangent.

>>> import tinygrad_like as tl
>>> import tinygrad_like.autograd.forward_ad as fwAD
>>> x = tl.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     d = fwAD.make_dual(x, tl.tensor([1.0, 0.0]))
...     fwAD.unpack_dual(d * d).tangent
tensor([2., 0.])
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from ..creation import zeros_like
from ..tensor import Tensor
from . import grad_mode
from .api import grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class _Level:
    """One dual level: its dual tensors and their tangents."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.duals: dict[int, tuple[weakref.ref, Tensor, Tensor]] = {}  # id(dual) -> (dual, tangent, primal)

    def live(self) -> list[tuple[Tensor, Tensor]]:
        out = []
        for key, (ref, tangent, _) in list(self.duals.items()):
            d = ref()
            if d is None:
                del self.duals[key]
            else:
                out.append((d, tangent))
        return out


_current: _Level | None = None


def enter_dual_level() -> int:
    """Open the dual level (only one at a time, as in torch) and return its index."""
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current = _Level(0)
    return _current.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: its tangents are forgotten."""
    global _current
    if _current is None or (level is not None and level != _current.index):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This "
                           "is not supported.")
    _current = None


def _level(level: int | None, what: str) -> _Level | None:
    if _current is None or (level is not None and level != _current.index):
        return None
    return _current


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with ``tensor``'s values that carries ``tangent`` as its forward gradient at this level."""
    lvl = _level(level, "make_dual")
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual expects two Tensors (the primal and its tangent)")
    if not (tensor.dtype.is_floating_point and tangent.dtype.is_floating_point):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
                         if not tensor.dtype.is_floating_point else
                         f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    with grad_mode.enable_grad():
        dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    lvl.duals[id(dual)] = (weakref.ref(dual), tangent.detach(), tensor)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (None where there is none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at this level: the tangent of a dual tensor, or ``J t`` of a tensor
    computed from dual tensors (None if it depends on none, or outside the level)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual expects a Tensor, got {type(tensor).__name__}")
    lvl = _level(level, "unpack_dual")
    if lvl is None or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    entry = lvl.duals.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        primal = entry[2]
        return UnpackedDualTensor(primal.view_as(primal) if primal.requires_grad else primal.detach(), entry[1])
    return UnpackedDualTensor(_primal(tensor, lvl), _jvp(tensor, lvl))


def _primal(tensor: Tensor, lvl: _Level) -> Tensor:
    """The values, still differentiable only where the user's own tensors asked for it."""
    user_grad = any(entry[2].requires_grad for entry in lvl.duals.values())
    return tensor if user_grad else tensor.detach()


def _jvp(y: Tensor, lvl: _Level) -> Tensor | None:
    duals = lvl.live()
    if not duals:
        return None
    with grad_mode.enable_grad():
        u = zeros_like(y).requires_grad_(True)
        gs = grad(y, [d for d, _ in duals], u, retain_graph=True, create_graph=True, allow_unused=True)
        used = [(g, t) for g, (_, t) in zip(gs, duals) if g is not None]
        if not used:
            return None
        linear = [g for g, _ in used if g.requires_grad]
        if not linear:  # J^T u does not depend on u: y does not depend on the duals after all
            return zeros_like(y)
        (jv,) = grad(linear, [u], [t for g, t in used if g.requires_grad], allow_unused=True)
    return zeros_like(y) if jv is None else jv.detach()


class dual_level:
    """``with dual_level():``: a forward-AD level for the block (``make_dual`` works only inside one)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

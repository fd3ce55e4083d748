"""The conformance table's machinery: one row (:class:`Case`) per op and input layout, run against PyTorch.

A row is a function ``fn(m, *inputs)`` written once and run with ``m = tinygrad_like`` and with ``m = TH`` (torch,
with ``torch.nn.functional`` under the names tinygrad_like uses), on inputs built from the same NumPy arrays.
:func:`run_case` compares the outputs (values, shape, dtype) and, after ``.backward(g)`` with the same random
upstream gradient on both sides, the ``.grad`` of every leaf.

``tests/test_ops_vs_torch.py`` runs every row, the ``CASES`` of each module in this package (one module per part of
the API, ``rows_core`` for arithmetic, math, reductions and views), so the table stays one table however many files
write it; ``tests/test_ops_gradcheck.py`` holds the same rows to float64 finite differences. Torch is imported only
when a row runs, so that the rows can be listed (and gradchecked) without it.
"""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from conftest import TOL, assert_close, make_array

import tinygrad_like as tl


class _TorchNS:
    """``torch`` plus the functional activations under the names tinygrad_like uses (``m.gelu(x)``)."""

    _FUNCTIONAL = frozenset({"gelu", "silu", "softplus", "elu", "leaky_relu", "pad", "one_hot"})

    def __getattr__(self, name):
        if name.startswith("__"):  # (pytest's doctest collection asks for __wrapped__ and friends)
            raise AttributeError(name)
        import torch

        return getattr(torch.nn.functional if name in self._FUNCTIONAL else torch, name)


TH = _TorchNS()


# ---- the table ------------------------------------------------------------------------------------
class S(NamedTuple):
    """One input: its shape as the op sees it, the data kind (see conftest.make_array), and a view.

    view None: the leaf itself; "T": the leaf is stored transposed and the op sees ``leaf.mT``;
    "step": the leaf has twice the last dim and the op sees ``leaf[..., ::2]``.
    """

    shape: tuple
    kind: str = "n"
    view: str | None = None

    @property
    def label(self) -> str:
        s = "x".join(map(str, self.shape)) if self.shape else "0d"
        return s + {"T": "T", "step": "s2", None: ""}[self.view]

    def leaf_shape(self) -> tuple:
        if self.view == "T":
            return self.shape[:-2] + (self.shape[-1], self.shape[-2])
        if self.view == "step":
            return self.shape[:-1] + (2 * self.shape[-1],)
        return self.shape

    def apply_view(self, t):
        if self.view == "T":
            return t.transpose(-2, -1)
        if self.view == "step":
            return t[..., ::2]
        return t


class Case(NamedTuple):
    id: str
    fn: Callable
    specs: tuple
    grad: bool = True
    tol: float = 1.0  # multiplies the dtype's tolerance


def C(id: str, fn: Callable, *specs: S, grad: bool = True, tol: float = 1.0) -> Case:
    return Case(id, fn, specs, grad, tol)


def k(shape_or_spec, kind: str) -> S:
    s = shape_or_spec if isinstance(shape_or_spec, S) else S(tuple(shape_or_spec))
    return s._replace(kind=kind)


U_SHAPES = (S((3, 4)), S(()), S((0, 3)), S((2, 3, 4)), S((3, 4), view="T"), S((3, 5), view="step"))
B_SHAPES = ((S((3, 4)), S((3, 4))), (S((3, 1, 4)), S((2, 4))), (S(()), S((3,))), (S((2, 3)), S(())),
            (S((0, 3)), S((3,))), (S((4,)), S((3, 1))), (S((3, 4), view="T"), S((3, 4), view="step")))


def unary(name: str, fn: Callable, kind: str = "n", shapes=U_SHAPES, **kw) -> list[Case]:
    return [C(f"{name}-{s.label}", fn, k(s, kind), **kw) for s in shapes]


def binary(name: str, fn: Callable, kinds=("n", "n"), shapes=B_SHAPES, **kw) -> list[Case]:
    return [C(f"{name}-{a.label}-{b.label}", fn, k(a, kinds[0]), k(b, kinds[1]), **kw) for a, b in shapes]


# ---- the runner -------------------------------------------------------------------------------------
def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _arrays(case: Case, dtype: str):
    """The row's random generator (seeded by its id and dtype) and its leaves' data, drawn from it."""
    rng = np.random.default_rng(zlib.crc32(f"{case.id}/{dtype}".encode()))
    return rng, [make_array(s.leaf_shape(), s.kind, rng, dtype) for s in case.specs]


def _leaves(case: Case, dtype: str, device: str = "cpu"):
    import torch

    rng, arrays = _arrays(case, dtype)
    tl_leaves = [tl.tensor(a, requires_grad=True, device=device) for a in arrays]
    th_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    return rng, tl_leaves, th_leaves


def _backward(outs: list, gs: list, scalar_zero) -> None:
    """``outs[0].backward(gs[0])``; for several outputs (split, chunk), one scalar that weights each with its own
    upstream grad (``scalar_zero``: the 0 that sum starts from; None for Python's 0)."""
    if len(outs) == 1:
        outs[0].backward(gs[0])
    else:
        sum(((o * g).sum() for o, g in zip(outs, gs)), 0 if scalar_zero is None else scalar_zero).backward()


def run_case(case: Case, dtype: str, device: str = "cpu") -> None:
    """Run one row in ``dtype``; with ``device`` (e.g. "cuda") our side's leaves and upstream grads live there."""
    import torch

    rng, tl_leaves, th_leaves = _leaves(case, dtype, device)
    tl_in = [s.apply_view(t) for s, t in zip(case.specs, tl_leaves)]
    th_in = [s.apply_view(t) for s, t in zip(case.specs, th_leaves)]
    atol, rtol = (t * case.tol for t in TOL[dtype])
    outs_tl, outs_th = _flat(case.fn(tl, *tl_in)), _flat(case.fn(TH, *th_in))
    assert len(outs_tl) == len(outs_th), f"{len(outs_tl)} outputs, torch has {len(outs_th)}"
    for i, (a, b) in enumerate(zip(outs_tl, outs_th)):
        assert_close(a, b, atol, rtol, msg=f"output {i}: ")
        assert a.requires_grad == b.requires_grad, f"output {i}: requires_grad {a.requires_grad}"
    if not case.grad:
        return
    diff = [(a, b) for a, b in zip(outs_tl, outs_th) if b.requires_grad]
    assert diff, "no differentiable output"
    gs = [make_array(b.shape, "n", rng, dtype) for _, b in diff]
    _backward([a for a, _ in diff], [tl.tensor(g, device=device) for g in gs],
              tl.tensor(0.0, dtype=dtype, device=device))
    _backward([b for _, b in diff], [torch.tensor(g) for g in gs], None)
    for i, (a, b) in enumerate(zip(tl_leaves, th_leaves)):
        if b.grad is None:
            assert a.grad is None or not np.any(a.grad.numpy()), f"input {i}: torch has no grad, we have one"
            continue
        assert a.grad is not None, f"input {i}: no .grad (torch has one of shape {tuple(b.grad.shape)})"
        assert_close(a.grad, b.grad, atol, rtol, msg=f"grad of input {i}: ")


def run_ours(case: Case, dtype: str, device: str = "cpu") -> None:
    """Run one row on our side only (forward, and backward from random upstream grads where it is differentiable):
    what a census of the primitives a row uses needs, with no oracle (so no dependence on torch's version)."""
    rng, arrays = _arrays(case, dtype)
    leaves = [tl.tensor(a, requires_grad=True, device=device) for a in arrays]
    outs = [o for o in _flat(case.fn(tl, *(s.apply_view(t) for s, t in zip(case.specs, leaves))))
            if isinstance(o, tl.Tensor) and o.requires_grad]
    if case.grad and outs:
        gs = [tl.tensor(make_array(o.shape, "n", rng, dtype), device=device) for o in outs]
        try:  # (as run_case does it, so that the same primitives run)
            _backward(outs, gs, tl.tensor(0.0, dtype=dtype, device=device))
        except RuntimeError as e:  # (an op torch also refuses to differentiate: its forward was still counted)
            if "not implemented" not in str(e):
                raise


def collect() -> list[Case]:
    """The ``CASES`` of every module in this package, in module-name order."""
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        cases += importlib.import_module(f"{__name__}.{info.name}").CASES
    return cases

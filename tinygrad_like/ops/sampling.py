"""Random sampling: ``multinomial``, ``bernoulli``, ``normal``, and the in-place fills ``bernoulli_``,
``exponential_`` and ``random_``.

Random draws come from the seedable generator (``tl.manual_seed``, or the ``generator=`` given) on the host, as every
random op here does, and the result moves to the tensor's (or the factory's) device. The draws carry no history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..device import CPU, factory_device
from ..dtypes import result_type
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase, _shape_args
from ._util import free_functions
from .statistics import _TORCH_NAMES

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["multinomial", "bernoulli", "normal", "poisson", "binomial"]


def _probability(p, op: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}(): argument 'p' must be a number in [0, 1] or a Tensor, not {type(p).__name__}")
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{op} expects p to be in [0, 1], but got p={p}")
    return p


def _check_probabilities(p, op: str) -> None:
    """Every probability in [0, 1] (NaN is not), as PyTorch checks; one host read."""
    if p.numel() and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError(f"{op}: expected every probability in [0, 1] (p_in >= 0 && p_in <= 1), but some are "
                           f"not (min {float(p.detach().min())}, max {float(p.detach().max())}, or NaN)")


def _random_top(dt) -> int:
    """The largest value ``random_()`` draws for a dtype: the largest integer it holds exactly (floats) or its
    maximum (integers)."""
    if dt.is_floating_point:
        return 2 ** (dtypes.finfo(dt).nmant + 1)
    if dt is dtypes.bool_:
        return 1
    return int(np.iinfo(dt.np).max)


class SamplingMixin:
    """Tensor methods: random sampling and the random in-place fills."""

    __slots__ = ()

    def _on_device(self, host) -> Tensor:
        """A host array drawn from the generator, as a tensor on this tensor's device."""
        dev = self._dev
        return self._wrap(host if dev is CPU else dev.backend.from_numpy(host), dev)

    def _uniform01(self, generator) -> Tensor:
        from ..random import default_generator  # (the ops import random in a function only: the layer rule)
        return self._on_device(CPU.backend.uniform(generator or default_generator, self.shape, 0.0, 1.0,
                                                   dtypes.float64))

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
        """``num_samples`` category indices drawn per row of this 1-D or 2-D tensor of non-negative weights (they
        need not sum to 1); int64, shape ``(num_samples,)`` or ``(rows, num_samples)``. Without ``replacement``
        each category is drawn at most once (categories of weight 0 only once the others are used up)."""
        if self.ndim not in (1, 2):
            raise RuntimeError(f"prob_dist must be 1 or 2 dim (multinomial got a {self.ndim}-D tensor of shape "
                               f"{self.shape})")
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                               f"{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")
        if not isinstance(num_samples, (int, np.integer)) or isinstance(num_samples, bool):
            raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
        n, k = int(num_samples), self.shape[-1]
        if n <= 0:
            raise RuntimeError(f"cannot sample n_sample <= 0 samples (num_samples={n})")
        if not replacement and n > k:
            raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                               f"({n} > {k})")
        p = np.asarray(self._host(), dtype=np.float64).reshape(-1, k)
        if p.shape[0]:
            if not np.isfinite(p).all() or (p < 0).any():
                raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
            if (p.sum(axis=1) <= 0).any():
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        from ..random import default_generator  # (the ops import random in a function only: the layer rule)
        host = CPU.backend.multinomial(generator or default_generator, p if self.ndim == 2 else p.reshape(-1), n,
                                       bool(replacement))
        return self._on_device(host)

    def bernoulli(self, p: float | None = None, *, generator=None) -> Tensor:
        """0s and 1s (in this tensor's dtype) drawn with probability ``p``, or, without ``p``, with the
        probabilities this tensor holds (each in [0, 1])."""
        if p is None:
            if not self.dtype.is_floating_point:
                raise NotImplementedError(f"bernoulli(): expected a floating point tensor of probabilities, got "
                                          f"{self.dtype.name}")
            _check_probabilities(self, "bernoulli")
            with grad_mode.no_grad():
                return (self._uniform01(generator) < self.detach()).to(self.dtype)
        p = _probability(p, "bernoulli")
        with grad_mode.no_grad():
            return (self._uniform01(generator) < p).to(self.dtype)

    def _fill_from(self, op: str, values: Tensor) -> Tensor:
        """Write ``values`` (this tensor's shape and dtype, same device) into this tensor: an in-place op named
        ``op`` (checked, versioned; a history that requires grad gets a zero gradient for what was overwritten)."""
        self._check_inplace(op)
        if _grad_mode.enabled and self.requires_grad:
            self._rebase(self._overwritten(self._graph_input(), values), op)
            return self
        self._dev.backend.assign(self._x, values._x)
        self._wrote(op)
        return self

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        """Fill in place with 0s and 1s drawn with probability ``p`` (a number, or a tensor broadcast to this one's
        shape)."""
        if isinstance(p, TensorBase):
            if not p.dtype.is_floating_point:
                p = p.to(dtypes.default_float)
            _check_probabilities(p, "bernoulli_")
            if p._dev is not self._dev:
                p = p.to(self._dev)
            try:
                p = p.detach().expand(self.shape)
            except RuntimeError as e:
                raise RuntimeError(f"bernoulli_: the probabilities of shape {p.shape} cannot be broadcast to the "
                                   f"tensor's shape {self.shape}: {e}") from None
        else:
            p = _probability(p, "bernoulli_")
        with grad_mode.no_grad():
            values = (self._uniform01(generator) < p).to(self.dtype)
        return self._fill_from("bernoulli_", values)

    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from the exponential distribution of rate ``lambd`` (mean ``1/lambd``)."""
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                               f"floating point but you specified {_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        from ..random import default_generator  # (the ops import random in a function only: the layer rule)
        host = CPU.backend.exponential(generator or default_generator, self.shape, float(lambd), self.dtype)
        return self._fill_from("exponential_", self._on_device(host))

    def _continuous(self, op: str) -> None:
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{op} expects a floating point tensor (a continuous distribution), got "
                               f"{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")

    def cauchy_(self, median: float = 0, sigma: float = 1, *, generator=None) -> Tensor:
        """Fill in place from the Cauchy distribution: ``median + sigma * tan(pi * (u - 1/2))``."""
        self._continuous("cauchy_")
        if not sigma > 0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
        u = np.asarray(self._uniform01(generator)._host())
        host = (median + sigma * np.tan(np.pi * (u - 0.5))).astype(self.dtype.np)
        return self._fill_from("cauchy_", self._on_device(host))

    def log_normal_(self, mean: float = 1, std: float = 2, *, generator=None) -> Tensor:
        """Fill in place with ``exp(N(mean, std**2))``."""
        self._continuous("log_normal_")
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        from ..random import default_generator  # (the ops import random in a function only: the layer rule)
        z = CPU.backend.normal(generator or default_generator, self.shape, float(mean), float(std), dtypes.float64)
        return self._fill_from("log_normal_", self._on_device(np.exp(np.asarray(z)).astype(self.dtype.np)))

    def geometric_(self, p: float, *, generator=None) -> Tensor:
        """Fill in place with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        u = np.asarray(self._uniform01(generator)._host())
        k = np.maximum(np.ceil(np.log1p(-u) / np.log1p(-p)), 1.0)
        return self._fill_from("geometric_", self._on_device(k.astype(self.dtype.np)))

    def random_(self, *args, generator=None, **kwargs) -> Tensor:
        """Fill in place with integers drawn uniformly from ``[from, to - 1]``: ``random_(from, to)``,
        ``random_(to)`` (from 0), or ``random_()`` (from 0 to the largest integer the dtype holds exactly:
        ``2**24`` for float32, ``2**53`` for float64, the maximum for integer dtypes, 1 for bool)."""
        unknown = set(kwargs) - {"from", "to"}
        if unknown or len(args) > 2:
            raise TypeError(f"random_() takes (from, to), (to) or no arguments, got {len(args)} positional and "
                            f"keywords {sorted(kwargs)}")
        if len(args) == 2:
            lo, hi = args
        elif len(args) == 1:
            lo, hi = (args[0], kwargs["to"]) if "to" in kwargs else (kwargs.get("from", 0), args[0])
        else:
            lo, hi = kwargs.get("from", 0), kwargs.get("to")
        top = _random_top(self.dtype)
        if hi is None:
            hi = top + 1
        lo, hi = int(lo), int(hi)
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        if not self.dtype.is_floating_point:
            info = (0, 1) if self.dtype is dtypes.bool_ else (int(np.iinfo(self.dtype.np).min), top)
            if lo < info[0] or hi - 1 > info[1]:
                raise RuntimeError(f"random_: the range [from, to - 1] = [{lo}, {hi - 1}] is out of bounds for "
                                   f"{self.dtype.name} (which holds [{info[0]}, {info[1]}])")
        from ..random import default_generator  # (the ops import random in a function only: the layer rule)
        host = CPU.backend.randint(generator or default_generator, self.shape, lo, hi, self.dtype)
        return self._fill_from("random_", self._on_device(host))


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
multinomial, bernoulli = free_functions(SamplingMixin, "multinomial", "bernoulli")


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Samples of N(mean, std**2): ``mean`` and ``std`` tensors (broadcast together) or numbers; with two numbers,
    ``size`` gives the shape. Drawn from the seedable generator; the result carries no history (PyTorch's gradient
    with respect to ``mean`` and ``std`` is zero)."""
    from ..random import default_generator  # (the ops import random in a function only: the layer rule)
    gen = generator or default_generator
    tm, ts = isinstance(mean, TensorBase), isinstance(std, TensorBase)
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
        from ..tensor import wrap_native  # (tensor sits above the ops, and no input tensor is here to wrap with)
        out = wrap_native(host if dev is CPU else dev.backend.from_numpy(host), dev)
        return out.requires_grad_(True) if requires_grad else out
    if size is not None:
        raise TypeError("normal(): size is only accepted with a number mean and a number std (the tensors' "
                        "broadcast shape is the result's)")
    ref = mean if tm else std
    for t in (mean, std):
        if isinstance(t, TensorBase) and not t.dtype.is_floating_point:
            raise RuntimeError(f"normal: expected floating point mean and std tensors, got {t.dtype.name}")
    if ts:
        if std.numel() and not bool((std.detach() >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = broadcast_shapes(mean.shape if tm else (), std.shape if ts else ())
    dt = result_type(mean, std)
    dev = ref._dev
    with grad_mode.no_grad():
        host = CPU.backend.normal(gen, shape, 0.0, 1.0, dt)
        z = ref._wrap(host if dev is CPU else dev.backend.from_numpy(host), dev)
        m = mean.detach() if tm else mean
        s = std.detach() if ts else std
        return (z * s + m).to(dt)


def poisson(input, generator=None) -> Tensor:  # noqa: A002
    """Samples of Poisson(rate) for each rate in ``input`` (floating point, non-negative), in its dtype."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"poisson(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"poisson: expected a floating point tensor of rates, got {input.dtype.name}")
    rates = np.asarray(input._host(), dtype=np.float64)
    if (rates < 0).any() or np.isnan(rates).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    from ..random import default_generator  # (the ops import random in a function only: the layer rule)
    draws = (generator or default_generator).np_generator().poisson(rates)
    return input.detach()._on_device(np.asarray(draws, dtype=input.dtype.np))


def binomial(count, prob, generator=None) -> Tensor:
    """Samples of Binomial(count, prob), elementwise (both floating point tensors, broadcast together)."""
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, TensorBase):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_TORCH_NAMES.get(t.dtype.name, t.dtype.name)}")
    n = np.asarray(count._host(), dtype=np.float64)
    p = np.asarray(prob._host(), dtype=np.float64)
    if (p < 0).any() or (p > 1).any() or (n < 0).any():
        raise RuntimeError("binomial: expected count >= 0 and 0 <= prob <= 1")
    from ..random import default_generator  # (the ops import random in a function only: the layer rule)
    draws = (generator or default_generator).np_generator().binomial(n.astype(np.int64), p)
    return count.detach()._on_device(np.asarray(draws, dtype=count.dtype.np))

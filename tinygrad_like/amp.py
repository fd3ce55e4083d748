"""``tl.amp``: PyTorch's mixed-precision API, accepted so programs run unchanged, computing in full precision.

``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`` is a context manager and decorator
that changes nothing about how ops compute: everything runs in the dtypes of its inputs (float32 usually).
In PyTorch, autocast on CPU runs matmuls and convolutions in bfloat16 (and on CUDA in float16), so losses
under autocast differ from PyTorch's by that rounding; outside autocast they agree. ``device_type='cuda'``
where CUDA is not available warns and disables itself, as PyTorch does; ``is_autocast_enabled()`` reports
the context as PyTorch would.

``GradScaler`` is PyTorch's loss scaler, exactly: ``scale(loss)`` multiplies by the scale (2**16 to start),
``unscale_(optimizer)`` divides the gradients back and looks for inf/nan, ``step(optimizer)`` skips the
update when it found one, ``update()`` backs the scale off after an overflow and grows it every
``growth_interval`` clean steps. Scaling by a power of two is exact in float32, so the parameters follow the
same path as without the scaler. Disabled (``enabled=False``, or ``device='cuda'`` where CUDA is not
available, which warns as PyTorch does), it is a pass-through: ``scale`` returns its argument, ``step``
calls ``optimizer.step()``, ``get_scale()`` is 1.0.

>>> import tinygrad_like as tl
>>> with tl.autocast("cpu", dtype=tl.bfloat16) if hasattr(tl, "bfloat16") else tl.autocast("cpu"):
...     y = tl.ones(2) @ tl.ones(2)
>>> y.dtype
tinygrad_like.float32
>>> scaler = tl.amp.GradScaler("cpu")
>>> scaler.get_scale()
65536.0
"""

from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from . import cuda, dtypes
from .autograd.grad_mode import no_grad
from .tensor import Tensor

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "xla", "hpu", "ipu", "mtia", "meta", "maia", "xla")


class _State(threading.local):
    def __init__(self):
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, object] = {}


_state = _State()


def _cuda_available() -> bool:

    return cuda.is_available()


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` accepts ``device_type`` here (cpu always; cuda when CUDA is available)."""
    return device_type == "cpu" or (device_type == "cuda" and _cuda_available())


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Inside an enabled ``autocast(device_type)`` block (torch's answer; the ops still run in full precision)."""
    return _state.enabled.get(device_type, False)


def get_autocast_dtype(device_type: str = "cuda"):

    default = getattr(dtypes, "bfloat16", None) if device_type == "cpu" else dtypes.float16
    return _state.dtype.get(device_type, default)


class autocast:
    """``with tl.autocast("cpu"):`` / ``@tl.autocast("cuda")``: accepted, computes in full precision (see module)."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(device_type)
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if self._enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        elif self._enabled and device_type not in ("cpu", "cuda"):
            warnings.warn(f"User provided device_type of '{device_type}', but it is not available here. Disabling",
                          stacklevel=2)
            self._enabled = False
        self._prev: list = []

    def __enter__(self):
        d = self.device
        self._prev.append((_state.enabled.get(d, False), _state.dtype.get(d)))
        _state.enabled[d] = self._enabled
        _state.dtype[d] = self.fast_dtype
        return self

    def __exit__(self, *exc):
        d = self.device
        _state.enabled[d], dt = self._prev.pop()
        if dt is None:
            _state.dtype.pop(d, None)
        else:
            _state.dtype[d] = dt
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """torch.amp.custom_fwd: a pass-through here (ops always run in full precision)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """torch.amp.custom_bwd: a pass-through here."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """PyTorch's ``GradScaler`` (see the module docstring): scale the loss, unscale and check the gradients,
    skip steps that overflowed, and adapt the scale."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._enabled and self._device.split(":")[0] == "cuda" and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict] = {}

    # ---- the loop's calls ----------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs * scale`` (a tensor, or tensors nested in lists/tuples); ``outputs`` itself when disabled."""
        if not self._enabled:
            return outputs

        def walk(v):
            if isinstance(v, Tensor):
                return v * self._scale
            if isinstance(v, (list, tuple)):
                out = [walk(e) for e in v]
                return type(v)(out) if not hasattr(v, "_fields") else type(v)(*out)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return walk(outputs)

    def _state_of(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and note whether any is inf or nan."""
        if not self._enabled:
            return
        st = self._state_of(optimizer)
        if st["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")

        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    g.mul_(inv)
                    if not found and not np.isfinite(g.detach().numpy()).all():
                        found = True
        st["found_inf"] = found
        st["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the (unscaled) gradients hold inf or nan; returns what step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        st = self._state_of(optimizer)
        if st["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == _READY:
            self.unscale_(optimizer)
        ret = None
        if not st["found_inf"]:
            ret = optimizer.step(*args, **kwargs)
        st["stage"] = _STEPPED
        return ret

    def update(self, new_scale=None) -> None:
        """Back off after an overflow, grow after ``growth_interval`` clean steps (or set ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # ---- inspection ----------------------------------------------------------------------------
    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

"""``tl.cuda.amp``: PyTorch's older spelling of :mod:`tinygrad_like.amp` for CUDA (``autocast``, ``GradScaler``).

``autocast(enabled=True, dtype=float16, cache_enabled=True)`` is ``tl.amp.autocast("cuda", ...)`` and
``GradScaler(...)`` is ``tl.amp.GradScaler("cuda", ...)``: without CUDA both warn and disable themselves, as
PyTorch does; with it they run in full precision (see :mod:`tinygrad_like.amp`).
"""

from __future__ import annotations

from . import amp as _amp
from .amp import custom_bwd, custom_fwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def __call__(self, fn):
        return _amp.autocast("cuda", self.fast_dtype, self._enabled, self._cache_enabled)(fn)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)

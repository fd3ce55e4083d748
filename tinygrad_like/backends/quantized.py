"""``tl.backends.quantized``: the quantized engine. tinygrad_like has no quantized tensors, so its only engine is
``"none"``; choosing another raises a clear error."""

from __future__ import annotations

import sys
import types

from ..unsupported import QUANTIZED

supported_engines = ["none"]


class _QuantizedEngineModule(types.ModuleType):
    """``engine`` as a checked attribute, as PyTorch's."""

    @property
    def engine(self) -> str:
        return "none"

    @engine.setter
    def engine(self, value: str) -> None:
        if value != "none":
            raise RuntimeError(f"torch.backends.quantized.engine = {value!r}: {QUANTIZED}")


sys.modules[__name__].__class__ = _QuantizedEngineModule

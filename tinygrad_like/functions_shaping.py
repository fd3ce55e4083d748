"""Free functions (``tl.<name>``) of the Tensor API's shaping family (see ``mixin/shaping.py``)."""

from __future__ import annotations

__all__: list[str] = []

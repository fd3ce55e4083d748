"""Free functions (``tl.<name>``) of the Tensor API's math family (see ``mixin/math.py``)."""

from __future__ import annotations

__all__: list[str] = []

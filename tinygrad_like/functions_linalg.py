"""Free functions (``tl.<name>``) of the Tensor API's linalg family (see ``mixin/linalg.py``)."""

from __future__ import annotations

__all__: list[str] = []

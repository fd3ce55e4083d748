"""Free functions (``tl.<name>``) of the Tensor API's sorting family (see ``mixin/sorting.py``)."""

from __future__ import annotations

__all__: list[str] = []

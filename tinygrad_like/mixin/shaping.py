"""Tensor methods: roll, tile, repeat_interleave, unfold, diff, take, scatter and index_* families."""

from __future__ import annotations


class ShapingMixin:
    """Tensor methods: roll, tile, repeat_interleave, unfold, diff, take, scatter and index_* families."""

    __slots__ = ()

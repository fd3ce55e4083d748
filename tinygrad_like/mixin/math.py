"""Tensor methods: rounding, trigonometry, logs, remainders, finite/inf/nan tests, bitwise ops."""

from __future__ import annotations


class MathMixin:
    """Tensor methods: rounding, trigonometry, logs, remainders, finite/inf/nan tests, bitwise ops."""

    __slots__ = ()

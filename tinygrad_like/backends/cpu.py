"""``tl.backends.cpu``: which SIMD level the CPU offers (``get_cpu_capability()``), as PyTorch names it."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"`` on x86 (what NumPy, which computes here, detected at start)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features  # (waits: NumPy's private table)
    except ImportError:
        return "DEFAULT"
    if all(features.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if features.get("AVX2") and features.get("FMA3"):
        return "AVX2"
    return "DEFAULT"

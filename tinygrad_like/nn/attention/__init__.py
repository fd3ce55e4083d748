"""``torch.nn.attention``: the choice of kernel behind ``F.scaled_dot_product_attention``. torch picks among flash,
memory-efficient, cuDNN and math kernels; tinygrad_like has one implementation (the math one, fused on the
backend), so ``sdpa_kernel`` accepts any choice and changes nothing, and the fused-kernel checks say no."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "can_use_flash_attention",
           "can_use_efficient_attention", "SDPAParams", "activate_flash_attention_impl",
           "current_flash_attention_impl", "list_flash_attention_impls", "register_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch's scaled-dot-product-attention kernels (names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


class SDPAParams:
    """The arguments a fused kernel is checked against (query, key, value, mask, dropout, causal, gqa)."""

    def __init__(self, query, key, value, attn_mask=None, dropout: float = 0.0, is_causal: bool = False,
                 enable_gqa: bool = False) -> None:
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


_active: list = [list(SDPBackend)]


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False):
    """Within the context, attention may use only ``backends`` (recorded; the one implementation here serves all)."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    if not isinstance(backends, (SDPBackend, Iterable)) or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances")
    _active.append(chosen)
    try:
        yield
    finally:
        _active.pop()


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    """False: there is no flash-attention kernel here (a CUDA kernel of recent GPUs in torch)."""
    return False


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    """False: there is no memory-efficient attention kernel here."""
    return False


def list_flash_attention_impls() -> list[str]:
    """The registered flash-attention implementations: none."""
    return []


def current_flash_attention_impl() -> str | None:
    """The active flash-attention implementation: none."""
    return None


def register_flash_attention_impl(impl: str, *, register_fn) -> None:
    """Refused: a flash-attention implementation is a GPU kernel library (FA3, FA4)."""
    raise NotImplementedError(f"register_flash_attention_impl({impl!r}): flash-attention implementations are CUDA "
                              f"kernel libraries; tinygrad_like computes attention with its own backend")


def activate_flash_attention_impl(impl: str) -> None:
    """Refused: no flash-attention implementation can be registered here."""
    raise NotImplementedError(f"activate_flash_attention_impl({impl!r}): no flash-attention implementations exist "
                              f"in tinygrad_like")


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Nothing to restore: no flash-attention implementation is ever active."""

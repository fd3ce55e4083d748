"""PyTorch's ``torch.backends.cuda`` switches (``matmul.allow_tf32`` ...), accepted and recorded.

They change no computation: the CUDA backend's kernels compute float32 matmuls in full float32 (no TF32), and
reductions in float32. A program may set and read them as in PyTorch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: attributes only."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "ieee"

    def __repr__(self) -> str:
        return f"<tl.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether this tinygrad_like has a CUDA backend (it always does; whether it runs is tl.cuda.is_available())."""
    return True


def preferred_linalg_library(backend=None):
    return "default"


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


_reduced_math_sdp = {"allowed": False}


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    _reduced_math_sdp["allowed"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _reduced_math_sdp["allowed"]


def is_flash_attention_available() -> bool:
    """False: there is no FlashAttention kernel here (attention is composed of our own ops)."""
    return False


def is_ck_sdpa_available() -> bool:
    """False: no Composable Kernel (ROCm) attention here."""
    return False


def can_use_flash_attention(params, debug: bool = False) -> bool:
    return False


def can_use_efficient_attention(params, debug: bool = False) -> bool:
    return False


def can_use_cudnn_attention(params, debug: bool = False) -> bool:
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> Iterator[None]:
    """PyTorch's older switch of the attention kernels inside a block (recorded; our attention has one path)."""
    previous = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(previous)


def preferred_blas_library(backend=None) -> str:
    """``"default"``: our matmul is a kernel of our own, not cuBLAS's (the choice is not recorded)."""
    return "default"


def preferred_rocm_fa_library(backend=None) -> str:
    return "default"


def cublas_workspace_size(size: int | None = None) -> int:
    """0: there is no cuBLAS workspace (no cuBLAS)."""
    return 0


def cublaslt_workspace_size(size: int | None = None) -> int:
    return 0


def blas_workspace_size(size: int | None = None, backend=None) -> int:
    return 0


class _PlanCache:
    """``torch.backends.cuda.cufft_plan_cache``: cuFFT's plan cache; FFTs run on the CPU here, so it stays empty."""

    size = 0
    max_size = 0

    def clear(self) -> None:
        """Nothing cached."""

    def __getitem__(self, device) -> _PlanCache:
        return self


cufft_plan_cache = _PlanCache()

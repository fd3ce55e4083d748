"""PyTorch's ``torch.backends.cuda`` switches (``matmul.allow_tf32`` ...), accepted and recorded.

They change no computation: the CUDA backend's kernels compute float32 matmuls in full float32 (no TF32), and
reductions in float32. A program may set and read them as in PyTorch.
"""

from __future__ import annotations


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

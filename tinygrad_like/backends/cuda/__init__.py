"""The CUDA backend (PyCUDA, our kernels). The package also holds PyTorch's ``torch.backends.cuda`` switches
(``matmul.allow_tf32`` ...; see ``flags``), which change nothing here."""

from .flags import (allow_fp16_bf16_reduction_math_sdp, blas_workspace_size, can_use_cudnn_attention,  # noqa: F401
                    can_use_efficient_attention, can_use_flash_attention, cublas_workspace_size,
                    cublaslt_workspace_size, cudnn_sdp_enabled, cufft_plan_cache, enable_cudnn_sdp, enable_flash_sdp,
                    enable_math_sdp, enable_mem_efficient_sdp, flash_sdp_enabled, fp16_bf16_reduction_math_sdp_allowed,
                    is_built, is_ck_sdpa_available, is_flash_attention_available, math_sdp_enabled, matmul,
                    mem_efficient_sdp_enabled, preferred_blas_library, preferred_linalg_library,
                    preferred_rocm_fa_library, sdp_kernel)

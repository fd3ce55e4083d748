"""The CUDA backend (PyCUDA, our kernels). The package also holds PyTorch's ``torch.backends.cuda`` switches
(``matmul.allow_tf32`` ...; see ``flags``), which change nothing here."""

from .flags import (enable_flash_sdp, enable_math_sdp, enable_mem_efficient_sdp, flash_sdp_enabled, is_built,  # noqa: F401
                    math_sdp_enabled, matmul, mem_efficient_sdp_enabled, preferred_linalg_library)

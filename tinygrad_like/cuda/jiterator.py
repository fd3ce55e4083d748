"""``tl.cuda.jiterator``: PyTorch's run-time compiled elementwise kernels from a C++ string, as clear errors.

Write the kernel in a ``.cu`` file and load it with ``tl.cuda.Kernel`` instead (tinygrad_like's way to run your
own CUDA code)."""

from __future__ import annotations

from ..unsupported import unsupported_function

__all__: list[str] = []

JITERATOR = ("the jiterator compiles elementwise kernels from C++ strings at run time inside PyTorch; tinygrad_like "
             "has none: write the "
             "kernel in a .cu file and load it with tl.cuda.Kernel")

_create_jit_fn = unsupported_function("torch.cuda.jiterator._create_jit_fn", JITERATOR)
_create_multi_output_jit_fn = unsupported_function("torch.cuda.jiterator._create_multi_output_jit_fn", JITERATOR)

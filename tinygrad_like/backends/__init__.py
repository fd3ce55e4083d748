"""Backends: one module per device kind behind one small protocol, written down in ``protocol.py`` (the table of
primitives) and ``signatures.py`` (how each is called).

The small modules beside them (``cudnn``, ``miopen``, ``mkldnn``, ``mps``, ``cpu``, ``mkl``, ``openmp``, ``opt_einsum``,
``nnpack``, ``xnnpack``, ``quantized``, ``mha``, ``cusparselt``, ``kleidiai``, ``python_native``, ``xeon``, and
``cuda.matmul``) are PyTorch's ``torch.backends`` switches and queries: each answers for tinygrad_like (which libraries
it has: none of those vendors'), and the switches a program sets are accepted and recorded only."""

# (imported here as torch.backends imports them, so ``torch.backends.mkldnn.enabled`` works without an import;
#  each is a few lines with no imports of the package's own above the backends layer)
from . import (cpu, cudnn, cusparselt, kleidiai, mha, miopen, mkl, mkldnn, mps, nnpack, openmp, opt_einsum,  # noqa: F401
               python_native, quantized, xeon, xnnpack)

"""CPU emulator for the CUDA kernels of ``kernel_src/`` (test-only; see ``emulator.py``)."""

from .emulator import EmuError, EmuKernel, Emulator, EmuToolchainError, parse_kernels

"""``cuda_device()``: the ``cuda`` device for the CUDA tests, on the real GPU where there is one, else the CPU
emulator (``tinygrad_like.backends.cuda_emu``, the ``cuda-emu`` device's engine) installed under the name ``cuda``,
so the same test files run on both."""

from __future__ import annotations


def cuda_device(*needs: tuple[str, str | None]):
    """For a module-scoped fixture (``yield from cuda_device()``): the ``cuda`` device, on the real GPU where
    CUDA is available, else on the emulator, installed for the fixture's lifetime. ``needs`` are extra
    (kernel, folder) pairs that must build; without a toolchain for the emulator the fixture skips, saying why."""
    import pytest

    import tinygrad_like as tl
    from tinygrad_like.backends.cuda import probe as probe_mod
    from tinygrad_like.backends.cuda import runtime
    from tinygrad_like.device import get_device, unregister_device

    if tl.cuda.is_available():
        yield get_device("cuda")
        return
    from tinygrad_like.backends.cuda_emu import EmuDriver, Emulator, EmuToolchainError, emulated_compile

    emulator = Emulator()
    try:
        for kernel, folder in (("fill_f32", None), *needs):
            (emulator if folder is None else Emulator(kernel_dir=folder)).kernel(kernel)
    except EmuToolchainError as e:  # no g++ or no cuda_fp16.h: nothing can run the kernels here
        pytest.skip(f"no GPU and no toolchain for the CUDA emulator: {e}")
    drv = EmuDriver(emulator)
    mp = pytest.MonkeyPatch()
    mp.setattr(probe_mod, "_status", probe_mod.probe(drv))
    mp.setattr(runtime, "_runtime", runtime.CudaRuntime(drv, compile=emulated_compile))
    try:
        yield get_device("cuda")
    finally:
        unregister_device("cuda")
        mp.undo()

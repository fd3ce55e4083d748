"""The ``cuda-emu`` device: the CUDA backend and its kernels on the CPU emulator, for learners without an NVIDIA GPU.

What is checked here is what a learner meets: the device by name, training on it with no host fallback, its
kernels named in the profiler on ``cuda-emu:0``, a learner's own kernel file, the error without a C++ compiler,
and the stand-in ``cuda_fp16.h`` (every half value converts as NumPy converts it). The backend's own tests run on
the same emulator under the name ``cuda`` (``tests/emu_driver.py``)."""

from __future__ import annotations

import importlib
import struct
from pathlib import Path

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.nn as nn
import tinygrad_like.nn.functional as F
from tinygrad_like.backends import cuda_emu
from tinygrad_like.backends.cuda_emu import Emulator, EmuToolchainError
from tinygrad_like.device import unregister_device

pytestmark = pytest.mark.cuda
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def emu_dev():
    try:
        return tl.device("cuda-emu")
    except RuntimeError as e:
        pytest.skip(str(e))


def test_a_small_network_trains_on_the_emulated_device_as_on_the_cpu(emu_dev):
    tl.manual_seed(0)
    nets = {}
    for dev in ("cpu", "cuda-emu"):
        tl.manual_seed(0)
        nets[dev] = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3)).to(dev)
    x = np.random.default_rng(0).standard_normal((8, 12)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 3, 8)
    losses = {}
    before = dict(emu_dev.raw_backend.fallbacks)
    for dev, net in nets.items():
        opt = tl.optim.Adam(net.parameters(), lr=1e-2)
        losses[dev] = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(net(tl.tensor(x, device=dev)), tl.tensor(y, device=dev))
            loss.backward()
            opt.step()
            losses[dev].append(loss.item())
    assert dict(emu_dev.raw_backend.fallbacks) == before  # every op ran on the emulated kernels
    np.testing.assert_allclose(losses["cuda-emu"], losses["cpu"], rtol=1e-5)
    assert next(nets["cuda-emu"].parameters()).device == emu_dev


def test_its_kernels_show_in_the_profiler_on_cuda_emu_and_data_moves_by_transfers(emu_dev):
    x = tl.tensor(np.arange(6, dtype=np.float32), device="cuda-emu")
    with tl.profile() as prof:
        y = (x * 2).exp().sum()
        y.item()
    names = {(e.name, e.device) for e in prof.kernels}
    assert ("ew_unary_contig_f32", "cuda-emu:0") in names, names
    back = x.cpu()
    assert back.device.type == "cpu" and back.numpy().tolist() == list(range(6))
    assert str(x.device) == "cuda-emu:0" and tl.device("cuda-emu:0") is emu_dev


def test_a_learners_own_kernel_runs_on_the_emulated_device(emu_dev):
    k = tl.cuda.Kernel(ROOT / "notebooks" / "kernels" / "squareplus.cu", "squareplus_f32")
    xs = np.linspace(-3, 3, 1000, dtype=np.float32)
    x, out = tl.tensor(xs, device="cuda-emu"), tl.empty(1000, device="cuda-emu")
    k(4, 256, out, x, 4.0, 1000)
    np.testing.assert_allclose(out.numpy(), 0.5 * (xs + np.sqrt(xs * xs + 4)), rtol=1e-6)
    with pytest.raises(ValueError, match=r"needs a tensor on cuda-emu \(where this launch runs\), got one on cpu"):
        k(4, 256, out, tl.ones(1000), 4.0, 1000)


def test_without_a_cxx_compiler_the_device_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_EMU_CXX", str(tmp_path / "no-such-g++"))
    with pytest.raises(EmuToolchainError, match="cannot run the C\\+\\+ compiler .*sudo apt install g\\+\\+"):
        cuda_emu.emulated_runtime(emulator=Emulator(cache_dir=tmp_path))
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.delenv("CUDA_EMU_CXX")
    with pytest.raises(EmuToolchainError, match="found no C\\+\\+ compiler .*xcode-select --install"):
        cuda_emu.emulated_runtime(emulator=Emulator(cache_dir=tmp_path))
    # through the device's name: the same words, as a RuntimeError like any unavailable device's
    device_mod = importlib.import_module("tinygrad_like.device")  # (tl.device is the function of that name)
    saved = {k: v for k, v in device_mod._devices.items() if k.startswith("cuda-emu")}
    unregister_device("cuda-emu")
    try:
        with pytest.raises(RuntimeError, match="device 'cuda-emu' is not available: .*found no C\\+\\+ compiler"):
            tl.device("cuda-emu")
    finally:
        device_mod._devices.update(saved)


HALF_KERNELS = r"""
#include <cuda_fp16.h>
extern "C" __global__ __launch_bounds__(256) void f2h(unsigned short* out, const float* x, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = __half_as_ushort(__float2half_rn(x[i]));
}
extern "C" __global__ __launch_bounds__(256) void h2f(float* out, const unsigned short* x, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = __half2float(__ushort_as_half(x[i]));
}
"""


def test_the_stand_in_cuda_fp16_converts_every_half_as_numpy_does(tmp_path):
    """float16 -> float32 exactly for all 65,536 halves; float32 -> float16 rounded to nearest even as NumPy
    rounds, on every half, every midpoint between two and the floats either side of it, and random bit patterns
    (NaN becomes 0x7fff, the GPU's canonical NaN)."""
    (tmp_path / "half.cu").write_text(HALF_KERNELS)
    try:
        emu = Emulator(cache_dir=tmp_path / "cache", kernel_dir=tmp_path)
        emu.kernel("f2h")
    except EmuToolchainError as e:
        pytest.skip(str(e))
    h = np.arange(65536, dtype=np.uint16)
    f = np.empty(65536, np.float32)
    emu.kernel("h2f").launch((64, 1, 1), (256, 1, 1), struct.pack("<QQq", f.ctypes.data, h.ctypes.data, h.size))
    ref = h.view(np.float16).astype(np.float32)
    assert np.array_equal(np.isnan(f), np.isnan(ref)) and np.array_equal(f[~np.isnan(ref)], ref[~np.isnan(ref)])
    finite = ref[np.isfinite(ref)]
    mids = ((np.sort(finite)[:-1].astype(np.float64) + np.sort(finite)[1:]) / 2).astype(np.float32)
    rng = np.random.default_rng(0)
    x = np.concatenate([finite, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
                        rng.integers(0, 2**32, 500_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        np.array([65504, 65519.99, 65520, np.inf, -np.inf, np.nan, -0.0], np.float32)])
    out = np.empty(x.size, np.uint16)
    emu.kernel("f2h").launch((64, 1, 1), (256, 1, 1), struct.pack("<QQq", out.ctypes.data, x.ctypes.data, x.size))
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    assert np.array_equal(out[~nan], want[~nan]) and (out[nan] == 0x7FFF).all()


def test_the_end_of_a_profile_collects_the_emulated_launches(emu_dev):
    # launches are timed by events collected at a sync point: the end of the profile is one, on cuda-emu too
    x = tl.randn(8, 8).to("cuda-emu")
    with tl.profile() as prof:
        y = x @ x + 1.0
    names = {row.name: row.calls for row in prof.key_averages()}
    assert names.get("gemm_f32", 0) + names.get("gemm_f32_vec", 0) == 1, names
    assert all(k.device == "cuda-emu:0" for k in prof.kernels), {k.device for k in prof.kernels}
    del y


def test_gradcheck_runs_through_a_learners_kernels_on_the_emulated_device(emu_dev, tmp_path):
    # tutorial 08's op in float64, forward and fused backward both as the learner's kernels on cuda-emu: gradcheck's
    # finite differences run the forward kernel, its analytic Jacobian the backward kernel
    src = tmp_path / "squareplus64.cu"
    src.write_text(r"""
extern "C" __global__ __launch_bounds__(256) void sp_f64(double* out, const double* x, double b, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = 0.5 * (x[i] + sqrt(x[i] * x[i] + b));
}
extern "C" __global__ __launch_bounds__(256) void sp_bwd_f64(double* gx, const double* g, const double* x, double b,
                                                            long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        gx[i] = g[i] * 0.5 * (1.0 + x[i] / sqrt(x[i] * x[i] + b));
}
""")
    fwd, bwd = tl.cuda.Kernel(src, "sp_f64"), tl.cuda.Kernel(src, "sp_bwd_f64")
    launches = []

    class SquareplusBackward(tl.autograd.Function):
        def forward(self, g, x):
            self.save_for_backward(x)
            gx = tl.empty(x.shape, dtype=x.dtype, device=x.device)
            bwd((2,), (64,), gx, g.contiguous(), x.contiguous(), 4.0, x.numel())
            launches.append("bwd")
            return gx

        def backward(self, gg):
            (x,) = self.saved_tensors
            return gg * 0.5 * (1 + x / (x * x + 4.0).sqrt()), None

    class Squareplus(tl.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            out = tl.empty(x.shape, dtype=x.dtype, device=x.device)
            fwd((2,), (64,), out, x.contiguous(), 4.0, x.numel())
            launches.append("fwd")
            return out

        def backward(self, g):
            (x,) = self.saved_tensors
            return (SquareplusBackward.apply(g, x),)

    tl.manual_seed(0)
    x = tl.randn(5, 7, dtype=tl.float64).to("cuda-emu").requires_grad_()
    assert tl.autograd.gradcheck(Squareplus.apply, (x,))
    assert launches.count("fwd") >= 2 * x.numel() and "bwd" in launches  # (both ran on the emulator)
    np.testing.assert_allclose(Squareplus.apply(x).detach().cpu().numpy(),
                               0.5 * (x.detach().cpu().numpy() + np.sqrt(x.detach().cpu().numpy() ** 2 + 4.0)),
                               rtol=1e-15)

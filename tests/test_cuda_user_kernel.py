"""``tl.cuda.Kernel``: a kernel from your own ``.cu`` file, as tutorial 08 writes one.

The kernel is the tutorial's own ``notebooks/kernels/squareplus.cu``. Parsing needs nothing, compiling
needs nvcc, and launching runs on the real GPU where there is one, else on the CPU emulator of
``tests/cuda_emu`` (the same arrangement as ``test_cuda_backend.py``, with the emulator pointed at the
file's folder). Values and gradients are checked against PyTorch's autograd of the same formula, and the
custom ``Function`` by float64 finite differences.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
from tinygrad_like.backends.cuda import compiler, runtime
from tinygrad_like.backends.cuda import probe as probe_mod
from tinygrad_like.backends.cuda.compiler import CudaCompileError

torch = pytest.importorskip("torch")

SRC = Path(__file__).resolve().parents[1] / "notebooks" / "kernels" / "squareplus.cu"
B = 4.0
BLOCK = 256


def squareplus_torch(x):
    return 0.5 * (x + torch.sqrt(x * x + B))


class Squareplus(tl.autograd.Function):
    """The tutorial's op: NumPy on the CPU, our kernels on cuda; backward in Tensor ops (works on both)."""

    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        if x.device.type == "cuda":
            out = tl.empty(x.shape, dtype=x.dtype, device=x.device)
            n = x.numel()
            forward_kernel()(((n + BLOCK - 1) // BLOCK,), (BLOCK, 1, 1), out, x.contiguous(), B, n)
            return out
        xn = x.detach().numpy()
        return 0.5 * (xn + np.sqrt(xn * xn + B))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * 0.5 * (1 + x / (x * x + B).sqrt()),)


def forward_kernel():
    return tl.cuda.Kernel(SRC, "squareplus_f32")


# ---- no GPU needed ---------------------------------------------------------------------------------------
def test_signature_is_read_from_the_source():
    k = tl.cuda.Kernel(SRC, "squareplus_backward_f32")
    sig = k.signature
    assert sig.max_threads == 256
    assert [(p.ctype, p.name, p.const) for p in sig.params] == [
        ("float*", "grad_x", False), ("float*", "g", True), ("float*", "x", True), ("float", "b", False),
        ("long long", "n", False)]
    assert "squareplus_backward_f32(float* grad_x, const float* g" in repr(k)


def test_unknown_kernel_or_file_is_a_clear_error(tmp_path):
    with pytest.raises(LookupError, match=r"no kernel named 'squareplus'.*squareplus_backward_f32.*squareplus_f32"):
        tl.cuda.Kernel(SRC, "squareplus")
    with pytest.raises(FileNotFoundError, match="no CUDA source"):
        tl.cuda.Kernel(tmp_path / "missing.cu", "k")
    bad = tmp_path / "bounds.cu"
    bad.write_text('extern "C" __global__ __launch_bounds__(THREADS) void k(float* x) {}')
    with pytest.raises(ValueError, match=r"__launch_bounds__\(THREADS\) is neither a number nor a #define"):
        tl.cuda.Kernel(bad, "k")
    ok = tmp_path / "define.cu"
    ok.write_text('#define THREADS 128\nextern "C" __global__ __launch_bounds__(THREADS) void k(float* x) {}')
    assert tl.cuda.Kernel(ok, "k").signature.max_threads == 128


def test_function_may_return_a_tensor_it_made():
    x = tl.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = Squareplus.apply(x)
    assert y.grad_fn.name == "Squareplus" and y.requires_grad
    xt = torch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    yt = squareplus_torch(xt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
    (y * tl.tensor([1.0, 2.0, 3.0])).sum().backward()
    (yt * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_function_gradcheck_float64():
    tl.manual_seed(0)
    x = tl.randn(4, 3, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(Squareplus.apply, (x,))

    class Wrong(Squareplus):
        __slots__ = ()

        def backward(self, g):  # forgot the 1/2
            (x,) = self.saved_tensors
            return (g * (1 + x / (x * x + B).sqrt()),)

    with pytest.raises(tl.autograd.GradcheckError, match="Jacobian mismatch"):
        tl.autograd.gradcheck(Wrong.apply, (x,))


@pytest.mark.skipif(compiler.find_nvcc() is None, reason="nvcc is not installed")
def test_compiles_with_nvcc_and_reports_compile_errors(tmp_path):
    mod = tl.cuda.Kernel(SRC, "squareplus_f32").compile("sm_90")
    assert mod.cubin[:4] == b"\x7fELF" and mod.arch == "sm_90"
    broken = tmp_path / "broken.cu"
    broken.write_text('extern "C" __global__ __launch_bounds__(256) void k(float* x) {\n  x[0] = y;\n}\n')
    with pytest.raises(CudaCompileError) as info:
        tl.cuda.Kernel(broken, "k").compile("sm_90")
    assert info.value.line == 2 and "y" in str(info.value)


def test_launch_without_cuda_says_why(monkeypatch):
    monkeypatch.setattr(runtime, "_runtime", None)
    monkeypatch.setattr(probe_mod, "_status", probe_mod.CudaStatus(False, "no NVIDIA driver here (test)"))
    with pytest.raises(RuntimeError, match=r"CUDA is not available: no NVIDIA driver here \(test\)"):
        forward_kernel()((1,), (32, 1, 1), tl.zeros(3), tl.zeros(3), B, 3)


def test_parameters_are_read_in_every_spelling(tmp_path):
    src = tmp_path / "spellings.cu"
    src.write_text('extern "C" __global__ __launch_bounds__(128) void k(float const* a, const float * const b, '
                   'float* const c, float * __restrict__ d, const float* __restrict__ e, size_t n, int64_t m, '
                   'unsigned u, bool flag) {}\n'
                   'extern "C" __global__ __launch_bounds__(64) void other(mystery_t x) {}\n'
                   'extern "C" __global__ __launch_bounds__(64) void none(void) {}\n')
    sig = tl.cuda.Kernel(src, "k").signature  # another kernel's unknown type does not stop this one
    assert [(p.ctype, p.const) for p in sig.params] == [
        ("float*", True), ("float*", True), ("float*", False), ("float*", False), ("float*", True),
        ("size_t", False), ("int64_t", False), ("unsigned", False), ("bool", False)]
    assert len(sig.pack(1, 2, 3, 4, 5, 6, 7, 8, True)) == 5 * 8 + 8 + 8 + 4 + 1
    assert tl.cuda.Kernel(src, "none").signature.params == ()
    with pytest.raises(ValueError, match=r"kernel other in .*spellings.cu: parameter `mystery_t x`: type "
                                         r"'mystery_t' has no packing rule"):
        tl.cuda.Kernel(src, "other")


class ReturnsAnInput(tl.autograd.Function):
    __slots__ = ()

    def forward(self, x):
        return x


class DoublesAsATensor(tl.autograd.Function):
    """A CPU forward that returns a tl Tensor it made (under no_grad), saving its output."""

    __slots__ = ()
    save_output = True

    def forward(self, x):
        with tl.no_grad():
            out = x * 2
        out.add_(0)  # a write before apply takes it: the saved version must be the one it has now
        return out

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * 2 + y * 0,)


def test_a_forward_returning_a_tensor_on_the_cpu():
    x = tl.tensor([1.0, -2.0], requires_grad=True)
    y = DoublesAsATensor.apply(x)
    assert y.grad_fn.name == "DoublesAsATensor" and y.grad_fn.saved_versions == (1,)
    y.sum().backward()  # no false version mismatch for an output written before it was returned
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="forward returned a tensor that is already part of the autograd graph"):
        ReturnsAnInput.apply(x)


# ---- on the device (the GPU, or the emulator) --------------------------------------------------------------
@pytest.fixture(scope="module")
def cuda():
    yield from cuda_device(("squareplus_f32", SRC.parent))


def test_kernel_forward_and_backward_match_torch(cuda):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((37, 11)).astype(np.float32) * 3
    x = tl.tensor(data, device="cuda", requires_grad=True)
    y = Squareplus.apply(x)
    assert y.device.type == "cuda" and y.grad_fn.name == "Squareplus"
    gdata = rng.standard_normal(data.shape).astype(np.float32)
    (y * tl.tensor(gdata, device="cuda")).sum().backward()
    xt = torch.tensor(data, requires_grad=True)
    yt = squareplus_torch(xt)
    (yt * torch.tensor(gdata)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_kernel_writes_its_output_and_bumps_its_version(cuda):
    k = tl.cuda.Kernel(SRC, "squareplus_backward_f32")
    x = tl.tensor([-3.0, -0.5, 0.0, 2.0, 10.0], device="cuda")
    g = tl.ones(5, device="cuda")
    out = tl.zeros(5, device="cuda")
    out.numpy()  # a host mirror exists now, so the write must make it stale
    v0 = out._version
    k((1,), (64, 1, 1), out, g, x, B, 5)
    assert out._version == v0 + 1 and out.storage.bumps[-1].op == "kernel squareplus_backward_f32"
    assert x._version == 0 and g._version == 0  # const pointers are only read
    xt = torch.tensor([-3.0, -0.5, 0.0, 2.0, 10.0], requires_grad=True)
    squareplus_torch(xt).sum().backward()
    np.testing.assert_allclose(out.numpy(), xt.grad.numpy(), rtol=1e-6)  # downloaded again: not the stale zeros


def test_launch_is_timed_by_the_profiler(cuda):
    x = tl.randn(1000, device="cuda")
    with tl.profile() as prof:
        Squareplus.apply(x)
    names = {row.name for row in prof.key_averages()}
    assert "squareplus_f32" in names, names


def test_bad_arguments_are_clear_errors(cuda):
    k = forward_kernel()
    out, x = tl.zeros(8, device="cuda"), tl.zeros(8, device="cuda")
    with pytest.raises(TypeError, match=r"takes 4 arguments, got 3"):
        k((1,), (32, 1, 1), out, x, B)
    with pytest.raises(ValueError, match=r"needs a tensor on cuda \(where this launch runs\), got one on cpu"):
        k((1,), (32, 1, 1), out, tl.zeros(8), B, 8)
    with pytest.raises(TypeError, match=r"points at float32, got a int64 tensor"):
        k((1,), (32, 1, 1), out, tl.zeros(8, dtype=tl.int64, device="cuda"), B, 8)
    with pytest.raises(ValueError, match=r"needs a contiguous tensor"):
        k((1,), (32, 1, 1), out, tl.zeros(4, 4, device="cuda").T, B, 8)
    with pytest.raises(TypeError, match=r"is a scalar; pass a Python number"):
        k((1,), (32, 1, 1), out, x, tl.tensor(4.0, device="cuda"), 8)
    with pytest.raises(ValueError, match=r"at most 256 threads per block"):
        k((1,), (512, 1, 1), out, x, B, 8)
    assert out._version == 0  # nothing ran



def test_views_with_offsets_and_pending_host_writes(cuda):
    k = forward_kernel()
    base = tl.tensor(np.arange(10, dtype=np.float32) - 5, device="cuda")
    out = tl.zeros(12, device="cuda")
    k(1, 64, out[3:10], base[2:9], B, 7)  # ints for grid and block; pointers into the middle of storages
    want = 0.5 * (np.arange(-3, 4) + np.sqrt(np.arange(-3, 4) ** 2 + B))
    got = out.numpy()
    np.testing.assert_allclose(got[3:10], want, rtol=1e-6)
    assert not got[:3].any() and not got[10:].any()
    x = tl.zeros(4, device="cuda")
    x.numpy()  # a current host mirror ...
    x.copy_(tl.tensor([1.0, 2.0, 3.0, 4.0]))  # ... written on the host: uploaded before the kernel reads it
    y = tl.empty(4, device="cuda")
    k((1,), (32,), y, x, B, 4)
    np.testing.assert_allclose(y.numpy(), 0.5 * (np.arange(1, 5) + np.sqrt(np.arange(1, 5) ** 2 + B)), rtol=1e-6)


def test_written_arguments_follow_the_in_place_rules(cuda):
    k = forward_kernel()
    leaf = tl.zeros(4, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"leaf Variable .* \(kernel squareplus_f32\)"):
        k(1, 32, leaf, tl.zeros(4, device="cuda"), B, 4)
    wide = tl.zeros(4, 1, device="cuda").expand(4, 3)
    with pytest.raises(RuntimeError, match="more than one element"):
        k(1, 32, wide, tl.zeros(12, device="cuda"), B, 12)
    same = tl.ones(4, device="cuda")
    k(1, 32, same, same, B, 4)  # in place: one write to one storage, one version
    assert same._version == 1
    with pytest.raises(ValueError, match=r"grid must be a positive int or a tuple of 1 to 3"):
        k((1, 1, 1, 1), 32, same, same, B, 4)


def test_an_edited_file_is_compiled_again(cuda, tmp_path):
    src = tmp_path / "edit.cu"
    src.write_text('extern "C" __global__ __launch_bounds__(64) void k(float* out, long long n) '
                   '{ for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = 1.0f; }\n')
    k = tl.cuda.Kernel(src, "k")
    out = tl.zeros(5, device="cuda")
    k(1, 32, out, 5)
    np.testing.assert_array_equal(out.numpy(), np.ones(5))
    src.write_text('extern "C" __global__ __launch_bounds__(64) void k(float* out, float v, long long n) '
                   '{ for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = v; }\n')
    os.utime(src, ns=(src.stat().st_atime_ns, src.stat().st_mtime_ns + 10**9))  # a later mtime, whatever the clock
    with pytest.raises(TypeError, match=r"takes 3 arguments, got 2"):  # the new signature ...
        k(1, 32, out, 5)
    k(1, 32, out, 7.5, 5)  # ... and the new code
    np.testing.assert_array_equal(out.numpy(), np.full(5, 7.5))

"""The CUDA backend's host half, tested without a GPU: probing, the nvcc compile cache, the buffer pool,
launch timing and the runtime's wiring (with a fake ``pycuda.driver``). The kernels themselves run only on
a GPU; ``test_kernel_compile.py`` and ``test_kernels_host_*.py`` check what can be checked without one."""

from __future__ import annotations

import importlib
import shutil
import struct

import pytest

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.backends.cuda import compiler, runtime
from tinygrad_like.backends.cuda import probe as probe_mod
from tinygrad_like.backends.cuda.pool import BufferPool, CudaOutOfMemoryError, StaleBufferError, size_class
from tinygrad_like.backends.cuda.timing import LaunchTimer

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found: install the CUDA toolkit to compile kernels")


# ---- a fake pycuda.driver ------------------------------------------------------------------------------
class FakeError(Exception):
    pass


class FakeAlloc:
    next_address = 1 << 32

    def __init__(self, nbytes):
        self.nbytes, self.address, self.freed = nbytes, FakeAlloc.next_address, False
        FakeAlloc.next_address += nbytes

    def __int__(self):
        return self.address

    def free(self):
        self.freed = True


class FakeEvent:
    """Events on one stream: waiting for one means every event recorded before it has completed too."""

    clock = 0.0
    synced_until = 0.0

    def __init__(self):
        self.t, self.done = None, True

    def record(self, stream=None):
        FakeEvent.clock += 1.5  # each recorded event is 1.5 ms after the previous one
        self.t = FakeEvent.clock
        return self

    def query(self):
        return self.done or self.t <= FakeEvent.synced_until

    def synchronize(self):
        self.done = True
        FakeEvent.synced_until = max(FakeEvent.synced_until, self.t)

    def time_since(self, start):
        return self.t - start.t


class FakeDriver:
    """Enough of pycuda.driver for probe() and CudaRuntime."""

    Error = FakeError
    MemoryError = FakeError
    Event = FakeEvent

    def __init__(self, count=1, init_error=None, name="NVIDIA H100 80GB HBM3", cc=(9, 0)):
        self._count, self._init_error, self._name, self._cc = count, init_error, name, cc
        self.launches, self.loaded, self.synced = [], [], 0
        driver = self

        class Device:
            @staticmethod
            def count():
                return driver._count

            def __init__(self, i):
                self.i = i

            def name(self):
                return driver._name

            def compute_capability(self):
                return driver._cc

            def total_memory(self):
                return 80 << 30

            def get_attribute(self, attr):
                return {"MULTIPROCESSOR_COUNT": 132}[attr]

        class Context:
            @staticmethod
            def synchronize():
                driver.synced += 1

        self.Device, self.Context = Device, Context
        self.device_attribute = type("device_attribute", (), {"MULTIPROCESSOR_COUNT": "MULTIPROCESSOR_COUNT"})

    def init(self):
        if self._init_error:
            raise FakeError(self._init_error)

    def get_driver_version(self):
        return 13000

    def mem_alloc(self, nbytes):
        return FakeAlloc(nbytes)

    def module_from_buffer(self, cubin):
        self.loaded.append(cubin)
        driver = self

        class Module:
            def get_function(self, name):
                class Function:
                    @staticmethod
                    def _launch_kernel(grid, block, arg_buf, shared, stream):
                        driver.launches.append((name, arg_buf, grid, block, shared))
                return Function()
        return Module()


# ---- probe ---------------------------------------------------------------------------------------------
def test_probe_reasons_for_each_way_cuda_can_be_missing(monkeypatch):
    ok = probe_mod.probe(FakeDriver())
    assert ok.available and ok.reason == "" and ok.device_count == 1 and ok.devices[0][1] == (9, 0)
    no_gpu = probe_mod.probe(FakeDriver(init_error="cuInit failed: no CUDA-capable device is detected"))
    assert not no_gpu.available and "no CUDA-capable device is detected" in no_gpu.reason
    zero = probe_mod.probe(FakeDriver(count=0))
    assert not zero.available and "0 CUDA devices" in zero.reason

    def no_libcuda(name, *a):
        raise ImportError("libcuda.so.1: cannot open shared object file: No such file or directory")
    monkeypatch.setattr(importlib, "import_module", no_libcuda)
    assert "no NVIDIA driver" in probe_mod._probe(None).reason and "libcuda.so.1" in probe_mod._probe(None).reason

    def no_pycuda(name, *a):
        raise ModuleNotFoundError("No module named 'pycuda'", name="pycuda")
    monkeypatch.setattr(importlib, "import_module", no_pycuda)
    assert "PyCUDA is not installed" in probe_mod._probe(None).reason


def test_arch_comes_from_the_device_not_nvccs_default():
    assert probe_mod.arch_of((9, 0)) == "sm_90" and probe_mod.arch_of((8, 6)) == "sm_86"


def test_tl_cuda_answers_on_a_machine_without_cuda(monkeypatch):
    device_mod = importlib.import_module("tinygrad_like.device")  # (tl.device is the function of that name)
    monkeypatch.setattr(probe_mod, "_status", probe_mod.CudaStatus(False, "PyCUDA is not installed: pip install x"))
    # such a machine has no started runtime and no cuda device (on the GPU machine, earlier tests made both)
    monkeypatch.setattr(runtime, "_runtime", None)
    monkeypatch.setattr(device_mod, "_devices", {"cpu": device_mod.CPU})
    assert tl.cuda.is_available() is False and tl.cuda.device_count() == 0
    assert tl.cuda.unavailable_reason().startswith("PyCUDA is not installed")
    for call in (tl.cuda.get_device_name, tl.cuda.synchronize):
        with pytest.raises(RuntimeError, match="CUDA is not available: PyCUDA is not installed"):
            call()
    assert tl.cuda.memory_stats() == {}  # (as PyTorch's before its allocator starts)
    tl.cuda.empty_cache()  # nothing to release: no error
    with pytest.raises(RuntimeError, match=r"device 'cuda' is not available: PyCUDA is not installed"):
        tl.zeros(2, device="cuda")


def test_tl_cuda_names_the_gpu_when_it_is_there(monkeypatch):
    monkeypatch.setattr(probe_mod, "_status", probe_mod.probe(FakeDriver()))
    assert tl.cuda.is_available() and tl.cuda.get_device_name() == "NVIDIA H100 80GB HBM3"
    assert tl.cuda.get_device_capability(0) == (9, 0)
    with pytest.raises(ValueError, match="index 3 out of range: this machine has 1 device"):
        tl.cuda.get_device_name(3)
    with pytest.raises(RuntimeError, match=r"device 'cuda:1' is not available: this build drives one GPU"):
        tl.ones(2).to("cuda:1")


# ---- compiler ------------------------------------------------------------------------------------------
@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYGRAD_LIKE_CACHE_DIR", str(tmp_path / "cache"))
    compiler.clear_memory_cache()
    yield tmp_path / "cache" / "cubin"
    compiler.clear_memory_cache()


@pytest.mark.cuda
@needs_nvcc
def test_compile_cache_miss_then_memory_then_disk_hits_each_an_event(cache, recorded):
    first = compiler.compile_kernel_file("fill.cu", "sm_90")
    assert first.cache == "miss" and first.cubin[:4] == b"\x7fELF"
    assert compiler.compile_kernel_file("fill.cu", "sm_90").cache == "memory"
    compiler.clear_memory_cache()
    again = compiler.compile_kernel_file("fill.cu", "sm_90")
    assert again.cache == "disk" and again.cubin == first.cubin and again.key == first.key
    assert compiler.compile_kernel_file("fill.cu", "sm_80").key != first.key  # the arch is part of the key
    seen = [(e.name, e.cache, e.cache_hit, e.arch) for e in recorded if isinstance(e, events.KernelCompiled)]
    assert seen == [("fill", "miss", False, "sm_90"), ("fill", "memory", True, "sm_90"),
                    ("fill", "disk", True, "sm_90"), ("fill", "miss", False, "sm_80")]


@pytest.mark.cuda
@needs_nvcc
def test_editing_an_included_header_invalidates_the_cache(cache, tmp_path):
    (tmp_path / "k.cuh").write_text("__device__ inline float twice(float x) { return 2.0f * x; }\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "k.cuh"\n'
                   'extern "C" __global__ void k(float* y) { y[threadIdx.x] = twice(y[threadIdx.x]); }\n')
    a = compiler.compile_kernel_file(src, "sm_90")
    (tmp_path / "k.cuh").write_text("__device__ inline float twice(float x) { return x + x; }\n")
    b = compiler.compile_kernel_file(src, "sm_90")
    assert b.cache == "miss" and a.key != b.key


@pytest.mark.cuda
@needs_nvcc
def test_a_compile_error_names_the_file_line_and_nvccs_message(cache, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('extern "C" __global__ void k(float* y) {\n    y[0] = 1.0f;\n    undeclared_thing(y);\n}\n')
    with pytest.raises(compiler.CudaCompileError) as e:
        compiler.compile_kernel_file(src, "sm_90")
    assert e.value.line == 3 and "undeclared_thing" in e.value.message
    assert f"{src}, line 3" in str(e.value) and "identifier" in str(e.value)


@pytest.mark.cuda
@needs_nvcc
def test_a_damaged_disk_cache_entry_is_recompiled(cache):
    first = compiler.compile_kernel_file("fill.cu", "sm_90")
    compiler.clear_memory_cache()
    (entry,) = cache.glob("fill-sm_90-*.cubin")
    entry.write_bytes(b"truncated")
    again = compiler.compile_kernel_file("fill.cu", "sm_90")
    assert again.cache == "miss" and again.cubin == first.cubin and entry.read_bytes() == first.cubin


def test_compiler_input_errors(cache):
    with pytest.raises(FileNotFoundError, match=r"no CUDA source .*nope\.cu \(kernel_src has: .*fill\.cu"):
        compiler.compile_kernel_file("nope.cu", "sm_90")
    with pytest.raises(ValueError, match="arch must look like 'sm_90', got 'compute90'"):
        compiler.compile_kernel_file("fill.cu", "compute90")


def test_error_locations_in_nvcc_and_gcc_formats():
    from pathlib import Path
    log = "x.cuh(4): error: something\nk.cu(12): error: identifier \"q\" is undefined\n"
    assert compiler.parse_error_location(log, Path("/a/k.cu")) == 12
    assert compiler.parse_error_location(log, Path("/a/other.cu")) == 4
    assert compiler.parse_error_location("k.cu:7:3: error: bad", Path("k.cu")) == 7
    assert compiler.parse_error_location("ptxas fatal: nothing", Path("k.cu")) is None


# ---- pool ----------------------------------------------------------------------------------------------
class CountingDriver:
    def __init__(self, capacity=None):
        self.capacity, self.live, self.allocs, self.frees, self.next = capacity, 0, 0, 0, 4096

    def alloc(self, n):
        if self.capacity is not None and self.live + n > self.capacity:
            raise MemoryError(f"cuMemAlloc failed: out of memory ({n} bytes)")
        self.live += n
        self.allocs += 1
        self.next += n
        return _Handle(self.next - n, n)

    def free(self, h):
        self.live -= h.n
        self.frees += 1


class _Handle:
    def __init__(self, address, n):
        self.address, self.n = address, n

    def __int__(self):
        return self.address


def test_size_classes():
    assert [size_class(n) for n in (1, 512, 513, 1000, 4096, 4097, 1 << 20)] == [512, 512, 1024, 1024, 4096, 8192,
                                                                                   1 << 20]
    assert size_class((1 << 20) + 1) == 2 << 20 and size_class(5 << 20) == 6 << 20


def test_a_training_step_allocates_nothing_new_after_warm_up():
    drv = CountingDriver()
    pool = BufferPool(drv.alloc, drv.free)
    params = [pool.alloc(n) for n in (784 * 512 * 4, 512 * 4, 512 * 10 * 4)]

    def step():  # activations, gradients and temporaries of different sizes, freed in another order
        tmp = [pool.alloc(n) for n in (256 * 784 * 4, 256 * 512 * 4, 256 * 512 * 4, 256 * 10 * 4, 4)]
        grads = [pool.alloc(p.nbytes) for p in params]
        for b in reversed(tmp):
            pool.free(b)
        for g in grads:
            pool.free(g)
    step()
    after_warmup = drv.allocs
    for _ in range(5):
        step()
    assert drv.allocs == after_warmup
    s = pool.stats()
    assert s["driver_allocs"] == after_warmup and s["pool_hits"] == 5 * 8
    assert s["allocated_bytes"] == sum(p.nbytes for p in params) and s["cached_bytes"] > 0


def test_freed_and_recycled_handles_raise_instead_of_aliasing():
    drv = CountingDriver()
    pool = BufferPool(drv.alloc, drv.free)
    a = pool.alloc(100)
    copy_of_a = a
    pool.free(a)
    b = pool.alloc(100)  # the same block, handed to someone else
    assert b.address and b.alive and not copy_of_a.alive
    with pytest.raises(StaleBufferError, match="device buffer of 100 bytes was freed"):
        int(copy_of_a)
    with pytest.raises(StaleBufferError):
        pool.free(a)  # double free
    pool.free(b)
    pool.empty_cache()
    assert drv.live == 0 and "freed" in repr(b)


def test_out_of_memory_releases_the_cache_retries_once_then_explains():
    drv = CountingDriver(capacity=8 << 20)
    pool = BufferPool(drv.alloc, drv.free)
    cached = pool.alloc(4 << 20)
    pool.free(cached)             # 4 MiB cached
    keep = pool.alloc(2 << 20)    # 2 MiB in use (+ 4 MiB cached = 6 of 8 MiB)
    big = pool.alloc(6 << 20)     # fails once, cache released, retried: fits
    assert big.alive and pool.stats()["oom_retries"] == 1 and pool.stats()["cached_bytes"] == 0
    with pytest.raises(CudaOutOfMemoryError) as e:
        pool.alloc(3 << 20)
    msg = str(e.value)
    assert "tried to allocate 3.00 MiB" in msg and "8.00 MiB in use" in msg and "0 B cached" in msg
    assert "cuMemAlloc failed" in msg
    assert keep.alive and big.alive  # nothing the user had is lost


# ---- timing --------------------------------------------------------------------------------------------
def test_launch_timings_are_read_back_in_order_at_a_sync_point(recorded):
    timer = LaunchTimer(FakeEvent, "cuda:0")
    for name in ("add_f32", "gemm_f32", "relu_f32"):
        start = timer.begin()
        timer.end(start, name, (4, 1, 1), (256, 1, 1), ((1024,),), 8192)
    timer._pending[1].end.done = False  # the GEMM is still running
    assert timer.collect() == 1 and timer.pending == 2
    assert timer.collect(wait=True) == 2 and timer.pending == 0
    timed = [e for e in recorded if isinstance(e, events.KernelTimed)]
    assert [e.name for e in timed] == ["add_f32", "gemm_f32", "relu_f32"]
    assert all(e.seconds == pytest.approx(1.5e-3) and e.grid == (4, 1, 1) and e.block == (256, 1, 1) for e in timed)


def test_an_uncollected_timer_stays_bounded():
    timer = LaunchTimer(FakeEvent, max_pending=3)
    for _ in range(5):
        timer.end(timer.begin(), "k", (1,), (1,), (), 0)
    assert timer.pending == 3 and timer.dropped == 2


# ---- runtime wiring ------------------------------------------------------------------------------------
def test_runtime_compiles_loads_once_and_times_launches_only_while_listened_to(monkeypatch):
    compiled = []

    def fake_compile(source, arch):
        compiled.append((source, arch))
        return compiler.CompiledModule(source, arch, b"\x7fELF-fake", "k" * 64, "miss", 0.0)
    monkeypatch.setattr(runtime, "compile_kernel_file", fake_compile)
    drv = FakeDriver()
    rt = runtime.CudaRuntime(drv)
    assert rt.arch == "sm_90" and rt.name == "NVIDIA H100 80GB HBM3"
    rt.launch("fill_f32", (2, 1, 1), (256, 1, 1), (1, 2.0, 3))
    rt.launch("fill_f16", (2, 1, 1), (256, 1, 1), (1, 2.0, 3))
    assert compiled == [("fill.cu", "sm_90")] and len(drv.loaded) == 1 and rt.timer.pending == 0
    # the argument buffer is cuLaunchKernel's: (float* out, float value, long long n), each naturally aligned
    assert drv.launches[0][1] == struct.pack("<QfIq", 1, 2.0, 0, 3)
    with pytest.raises(ValueError, match="at most 256 threads"):
        rt.launch("fill_f32", (1, 1, 1), (512, 1, 1), (1, 2.0, 3))
    with pytest.raises(TypeError, match=r"fill_f32\(float\* out, float value, long long n\)"):
        rt.launch("fill_f32", (1, 1, 1), (256, 1, 1), (1, 2.0))
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        rt.launch("fill_f32", (8, 1, 1), (128, 1, 1), (1, 0.0, 9), shapes=((9,),), nbytes=36)
        assert rt.timer.pending == 1
        rt.synchronize()
    finally:
        unsubscribe()
    assert drv.synced == 1 and [(n, g, b) for n, _, g, b, _ in drv.launches][-1] == ("fill_f32", (8, 1, 1),
                                                                                       (128, 1, 1))
    (timed,) = [e for e in seen if isinstance(e, events.KernelTimed)]
    assert (timed.name, timed.device, timed.grid, timed.nbytes) == ("fill_f32", "cuda:0", (8, 1, 1), 36)
    buf = rt.pool.alloc(1000)
    assert isinstance(buf.address, int) and rt.pool.stats()["driver_allocs"] == 1


# ---- review follow-ups: what must not happen ------------------------------------------------------------
def test_a_bare_kernel_name_never_picks_up_a_file_of_the_current_directory(cache, tmp_path, monkeypatch):
    (tmp_path / "fill.cu").write_text('extern "C" __global__ void nothing() {}\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(compiler, "_run_nvcc", lambda nvcc, path, arch, options: (path.read_bytes(), ""))
    monkeypatch.setattr(compiler, "nvcc_version", lambda nvcc: "fake")
    monkeypatch.setattr(compiler, "find_nvcc", lambda: "nvcc")
    assert b"fill_f32" in compiler.compile_kernel_file("fill.cu", "sm_90", use_disk=False).cubin
    assert b"nothing" in compiler.compile_kernel_file("./fill.cu", "sm_90", use_disk=False).cubin  # a path


def test_a_bad_nvcc_setting_is_a_clear_error(cache, monkeypatch, tmp_path):
    monkeypatch.setenv("NVCC", str(tmp_path / "no-such-nvcc"))
    with pytest.raises(RuntimeError, match=r"\$NVCC is set to .*no-such-nvcc.*not an executable file"):
        compiler.compile_kernel_file("fill.cu", "sm_90")
    with pytest.raises(RuntimeError, match=r"could not run nvcc \(/nonexistent/nvcc\)"):
        compiler._run(["/nonexistent/nvcc", "--version"], 5)


def test_a_driver_error_while_listing_devices_is_a_reason_not_a_crash():
    drv = FakeDriver()

    def broken_name(self):
        raise FakeError("cuDeviceGetName failed: unknown error")
    drv.Device.name = broken_name
    status = probe_mod.probe(drv)
    assert not status.available and "cuDeviceGetName failed" in status.reason


def test_memory_stats_before_first_use_creates_no_context(monkeypatch):
    monkeypatch.setattr(probe_mod, "_status", probe_mod.probe(FakeDriver()))
    monkeypatch.setattr(runtime, "_runtime", None)
    stats = tl.cuda.memory_stats()
    assert stats["driver_allocs"] == 0 and stats["reserved_bytes"] == 0
    assert runtime.runtime_if_started() is None


def test_a_launch_keeps_the_node_and_phase_it_was_launched_for_until_it_is_collected(recorded):
    """A CUDA kernel's time is known only at a synchronisation, long after its op: the node and phase are read at
    launch, so a timeline places it under the op that launched it, not under whatever runs at the sync."""
    from tinygrad_like import sites

    timer = LaunchTimer(FakeEvent, "cuda:0")
    class Node:
        pass

    forward_node, backward_node = Node(), Node()
    sites.context.node = forward_node
    try:
        timer.end(timer.begin(), "gemm_f32", (1,), (1,), (), 0)
        sites.context.node, sites.context.backward = backward_node, True
        timer.end(timer.begin(), "relu_backward_f32", (1,), (1,), (), 0)
    finally:
        sites.context.node, sites.context.backward = None, False
    timer.end(timer.begin(), "axpy_f32", (1,), (1,), (), 0)
    timer.collect(wait=True)  # (outside any op now)
    got = [(e.name, e.node, e.phase) for e in recorded if isinstance(e, events.KernelTimed)]
    assert got == [("gemm_f32", forward_node, "forward"), ("relu_backward_f32", backward_node, "backward"),
                   ("axpy_f32", None, "forward")]

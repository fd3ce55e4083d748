"""torch.cuda, torch.backends, torch.jit, torch.onnx and torch.nn.parallel against real torch.

This machine's torch is a CPU build (``torch.cuda.is_available()`` is False), so the no-GPU answers are compared with
it: the same values, and the same exception types (ours are also ``RuntimeError`` where torch's CPU build raises
``AssertionError``, as a CUDA build without a GPU does). The answers tinygrad_like gives *with* CUDA are checked on
the fake ``pycuda.driver`` of ``test_cuda_runtime.py`` (device facts, the pool's counters, streams, events, seeds);
no test here needs a GPU.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.backends.cuda import probe as probe_mod
from tinygrad_like.backends.cuda import runtime as runtime_mod

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import torch_census  # noqa: E402 - (tools/ is not a package)

no_cuda = pytest.mark.skipif(tl.cuda.is_available(), reason="compares the behaviour without CUDA")
MODULES = ("torch.cuda", "torch.backends", "torch.jit", "torch.onnx", "torch.nn.parallel")


# ---- the census: every name there, with torch's parameters ------------------------------------------------------
@pytest.mark.parametrize("module", MODULES)
def test_every_name_exists_with_torchs_parameters_or_has_a_reason(module):
    result = torch_census.census_of(module)
    reasons = torch_census.not_implemented()
    assert [n for n in result.missing if (module, n) not in reasons] == []
    assert result.mismatched == {}


# ---- torch.cuda without a GPU ------------------------------------------------------------------------------------
def _outcome(fn):
    try:
        return ("value", fn())
    except Exception as e:  # noqa: BLE001 - the exception's type is the answer compared
        return ("raises", type(e))


NO_GPU_CALLS = {
    "current_device": lambda c: c.current_device(),
    "get_device_name": lambda c: c.get_device_name(),
    "get_device_capability": lambda c: c.get_device_capability(),
    "get_device_properties": lambda c: c.get_device_properties(),
    "synchronize": lambda c: c.synchronize(),
    "init": lambda c: c.init(),
    "ipc_collect": lambda c: c.ipc_collect(),
    "current_stream": lambda c: c.current_stream(),
    "default_stream": lambda c: c.default_stream(),
    "get_rng_state": lambda c: c.get_rng_state(),
    "initial_seed": lambda c: c.initial_seed(),
    "get_sync_debug_mode": lambda c: c.get_sync_debug_mode(),
    "set_sync_debug_mode": lambda c: c.set_sync_debug_mode(0),
    "mem_get_info": lambda c: c.mem_get_info(),
    "get_per_process_memory_fraction": lambda c: c.get_per_process_memory_fraction(),
    "set_per_process_memory_fraction": lambda c: c.set_per_process_memory_fraction(0.5),
    "can_device_access_peer": lambda c: c.can_device_access_peer(0, 1),
    "caching_allocator_alloc": lambda c: c.caching_allocator_alloc(10),
    "profiler.start": lambda c: c.profiler.start(),
    "device_count": lambda c: c.device_count(),
    "is_available": lambda c: c.is_available(),
    "is_initialized": lambda c: c.is_initialized(),
    "memory_allocated": lambda c: c.memory_allocated(),
    "max_memory_allocated": lambda c: c.max_memory_allocated(),
    "memory_reserved": lambda c: c.memory_reserved(),
    "max_memory_reserved": lambda c: c.max_memory_reserved(),
    "memory_cached": lambda c: c.memory_cached(),
    "max_memory_cached": lambda c: c.max_memory_cached(),
    "memory_stats": lambda c: dict(c.memory_stats()),
    "memory_stats_as_nested_dict": lambda c: c.memory_stats_as_nested_dict(),
    "host_memory_stats": lambda c: dict(c.host_memory_stats()),
    "host_memory_stats_as_nested_dict": lambda c: c.host_memory_stats_as_nested_dict(),
    "empty_cache": lambda c: c.empty_cache(),
    "get_arch_list": lambda c: c.get_arch_list(),
    "get_gencode_flags": lambda c: c.get_gencode_flags(),
    "get_rng_state_all": lambda c: c.get_rng_state_all(),
    "set_rng_state_all": lambda c: c.set_rng_state_all([]),
    "manual_seed": lambda c: c.manual_seed(3),
    "manual_seed_all": lambda c: c.manual_seed_all(3),
    "seed_all": lambda c: c.seed_all(),
    "is_tf32_supported": lambda c: c.is_tf32_supported(),
    "is_bf16_supported": lambda c: c.is_bf16_supported(),
    "is_current_stream_capturing_module": lambda c: c.graphs.__name__.rsplit(".", 1)[1],
    "default_generators": lambda c: c.default_generators,
    "has_half": lambda c: (c.has_half, c.has_magma),
    "cudaStatus": lambda c: (c.cudaStatus.SUCCESS, c.cudaStatus.ERROR_NOT_READY),
    "set_device(-1)": lambda c: c.set_device(-1),
    "set_stream(None)": lambda c: c.set_stream(None),
    "stream(None)": lambda c: c.stream(None).__enter__(),
    "StreamContext(None)": lambda c: c.StreamContext(None).__enter__(),
    "device(-1)": lambda c: c.device(-1).__enter__(),
    "device(0)": lambda c: c.device(0).__enter__(),
    "Stream()": lambda c: c.Stream(),
    "nvtx.range_push": lambda c: c.nvtx.range_push("step"),
    "nvtx.mark": lambda c: c.nvtx.mark("here"),
    "FloatTensor(2)": lambda c: c.FloatTensor(2),
    "LongTensor([1])": lambda c: c.LongTensor([1]),
    "list_gpu_processes": lambda c: c.list_gpu_processes(),
    "utilization": lambda c: c.utilization(),
    "temperature": lambda c: c.temperature(),
    "power_draw": lambda c: c.power_draw(),
    "clock_rate": lambda c: c.clock_rate(),
    "memory_usage": lambda c: c.memory_usage(),
    "device_memory_used": lambda c: c.device_memory_used(),
}


@no_cuda
@pytest.mark.parametrize("name", NO_GPU_CALLS)
def test_cuda_without_a_gpu_answers_as_torchs_cpu_build(name):
    call = NO_GPU_CALLS[name]
    theirs, ours = _outcome(lambda: call(torch.cuda)), _outcome(lambda: call(tl.cuda))
    if theirs[0] == "raises":
        assert ours[0] == "raises" and issubclass(ours[1], theirs[1]), (ours, theirs)
    else:
        assert ours == theirs


@no_cuda
def test_device_of_a_cpu_tensor_and_the_legacy_types_are_no_gpu_names():
    with tl.cuda.device_of(tl.ones(1)), torch.cuda.device_of(torch.ones(1)):
        pass
    assert isinstance(tl.zeros(2), tl.cuda.FloatTensor) is isinstance(torch.zeros(2), torch.cuda.FloatTensor) is False
    assert repr(tl.cuda.FloatTensor) == repr(torch.cuda.FloatTensor)
    with pytest.raises(AssertionError, match="CUDA is not available"):
        tl.cuda.current_device()
    with pytest.raises(RuntimeError, match="CUDA is not available"):  # (as a CUDA build of torch without a GPU)
        tl.cuda.synchronize()
    with pytest.raises(RuntimeError):
        torch.cuda.Event()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tl.cuda.Event()


def test_cuda_error_classes_as_torchs():
    for ours, theirs in ((tl.cuda.CudaError, torch.cuda.CudaError),
                         (tl.cuda.DeferredCudaCallError, torch.cuda.DeferredCudaCallError)):
        assert [c.__name__ for c in ours.__mro__[1:]] == [c.__name__ for c in theirs.__mro__[1:]]
    assert tl.cuda.check_error(0) is None
    with pytest.raises(tl.cuda.CudaError, match="CUDA error 2"):
        tl.cuda.check_error(2)


CLEAR_ERRORS = {
    "CUDAGraph()": lambda: tl.cuda.CUDAGraph(),
    "graph(g)": lambda: tl.cuda.graph(None),
    "graph_pool_handle()": lambda: tl.cuda.graph_pool_handle(),
    "make_graphed_callables": lambda: tl.cuda.make_graphed_callables(tl.nn.Linear(1, 1), (tl.ones(1, 1),)),
    "MemPool()": lambda: tl.cuda.MemPool(),
    "CUDAPluggableAllocator": lambda: tl.cuda.CUDAPluggableAllocator("a.so", "alloc", "free"),
    "change_current_allocator": lambda: tl.cuda.change_current_allocator(None),
    "use_mem_pool": lambda: tl.cuda.use_mem_pool(None),
    "memory_snapshot": lambda: tl.cuda.memory_snapshot(),
    "ExternalStream": lambda: tl.cuda.ExternalStream(0),
    "get_stream_from_external": lambda: tl.cuda.get_stream_from_external(0),
    "cudart": lambda: tl.cuda.cudart(),
    "current_blas_handle": lambda: tl.cuda.current_blas_handle(),
    "current_solver_handle": lambda: tl.cuda.current_solver_handle(),
    "GreenContext()": lambda: tl.cuda.GreenContext(),
    "FloatStorage(2)": lambda: tl.cuda.FloatStorage(2),
    "sparse.FloatTensor()": lambda: tl.cuda.sparse.FloatTensor(),
    "jiterator._create_jit_fn": lambda: tl.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) {}"),
    "tunable.enable()": lambda: tl.cuda.tunable.enable(),
    "nccl.all_reduce": lambda: tl.cuda.nccl.all_reduce([tl.ones(2)]),
    "nccl.version": lambda: tl.cuda.nccl.version(),
    "tunable.set_filename": lambda: tl.cuda.tunable.set_filename("x.csv"),
    "jit.CompilationUnit": lambda: tl.jit.CompilationUnit("def f(x):\n    return x\n"),
    "jit.export_opnames": lambda: tl.jit.export_opnames(tl.nn.Linear(1, 1)),
    "onnx.ONNXProgram": lambda: tl.onnx.ONNXProgram(None, None),
    "onnx.InputObserver": lambda: tl.onnx.InputObserver(),
    "onnx.ops.attention": lambda: tl.onnx.ops.attention(tl.ones(1), tl.ones(1), tl.ones(1)),
    "backends.quantized.engine": lambda: setattr(tl.backends.quantized, "engine", "qnnpack"),
    "nn.parallel.replicate(detach)": lambda: tl.nn.parallel.replicate(tl.nn.Linear(1, 1), ["cpu"], detach=True),
}


@pytest.mark.parametrize("name", CLEAR_ERRORS)
def test_names_that_cannot_work_here_raise_a_clear_error(name):
    with pytest.raises(NotImplementedError if name != "backends.quantized.engine" else RuntimeError) as info:
        CLEAR_ERRORS[name]()
    assert "tinygrad_like" in str(info.value)


def test_tunable_is_never_enabled_and_turning_it_off_is_fine():
    assert (tl.cuda.tunable.is_enabled(), tl.cuda.tunable.tuning_is_enabled(),
            tl.cuda.tunable.record_untuned_is_enabled()) == (False, False, False)
    tl.cuda.tunable.enable(False)
    importlib.import_module("torch.cuda.nccl")
    assert tl.cuda.nccl.is_available([tl.ones(1)]) is torch.cuda.nccl.is_available([torch.ones(1)]) is False
    assert tl.cuda.graphs.is_current_stream_capturing() is False


# ---- torch.cuda with a (fake) GPU ----------------------------------------------------------------------------------
@pytest.fixture
def fake_gpu(monkeypatch):
    """tl.cuda on the fake driver of test_cuda_runtime.py: one H100, a started runtime, nothing launched."""
    fake = importlib.import_module("test_cuda_runtime")
    driver = fake.FakeDriver()
    monkeypatch.setattr(probe_mod, "_status", probe_mod.probe(driver))
    monkeypatch.setattr(runtime_mod, "_runtime", runtime_mod.CudaRuntime(driver))
    # (a "cuda" device made here binds the fake runtime: keep it out of the registry the next tests use)
    device_mod = importlib.import_module("tinygrad_like.device")  # (tl.device is the function of that name)
    monkeypatch.setattr(device_mod, "_devices", dict(device_mod._devices))
    yield driver


def test_device_facts_come_from_the_driver(fake_gpu):
    c = tl.cuda
    assert c.is_available() and c.is_initialized() and c.device_count() == 1 and c.current_device() == 0
    props = c.get_device_properties(0)
    assert (props.name, props.major, props.minor, props.total_memory, props.multi_processor_count) == (
        "NVIDIA H100 80GB HBM3", 9, 0, 80 << 30, 132)
    assert c.get_device_capability("cuda:0") == (9, 0) and c.get_device_name(tl.device("cuda")) == props.name
    assert c.get_arch_list() == ["sm_90"] and c.get_gencode_flags() == "-gencode compute=compute_90,code=sm_90"
    with pytest.raises(ValueError, match="index 1 out of range"):
        c.get_device_properties(1)
    c.set_device(0)
    with c.device(0):
        assert c.current_device() == 0
    assert c.can_device_access_peer(0, 0) is False
    c.set_sync_debug_mode("warn")
    assert c.get_sync_debug_mode() == 1
    c.set_sync_debug_mode(0)
    c.ipc_collect()
    c.init()


def test_memory_counters_follow_the_pool(fake_gpu):
    c = tl.cuda
    base = c.memory_allocated()
    c.reset_peak_memory_stats()
    ptr = c.caching_allocator_alloc(1000)
    assert c.memory_allocated() == base + 1000 and c.max_memory_allocated() == base + 1000
    assert c.memory_reserved() >= c.memory_allocated() and c.memory_cached() == c.memory_reserved()
    stats = c.memory_stats()
    assert stats["allocated_bytes.all.current"] == base + 1000 and stats["allocated_bytes.all.peak"] == base + 1000
    assert c.memory_stats_as_nested_dict()["allocated_bytes"]["all"]["current"] == base + 1000
    c.caching_allocator_delete(c.caching_allocator_alloc(5000))  # (a peak between two reads is still seen)
    c.caching_allocator_delete(ptr)
    assert c.memory_allocated() == base and c.max_memory_allocated() == base + 6000
    reserved = c.memory_reserved()
    c.empty_cache()
    assert c.memory_reserved() < reserved and c.max_memory_reserved() >= reserved
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == base
    assert "allocated_bytes.all.current" in c.memory_summary()
    with pytest.raises(RuntimeError, match="not an address"):
        c.caching_allocator_delete(ptr)
    c.set_per_process_memory_fraction(0.5)
    assert c.get_per_process_memory_fraction() == 0.5
    with pytest.raises(ValueError):
        c.set_per_process_memory_fraction(1.5)
    c.set_per_process_memory_fraction(1.0)
    with c.caching_allocator_disabled():
        pass
    assert c.get_allocator_backend() == "native"


def test_one_stream_and_real_events(fake_gpu):
    c = tl.cuda
    s = c.Stream()
    assert s == c.current_stream() == c.default_stream() and s.device == tl.device("cuda:0")
    synced = fake_gpu.synced
    with c.stream(s):
        s.synchronize()
    c.synchronize()
    assert fake_gpu.synced == synced + 2 and s.query()
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    start.record()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) == pytest.approx(1.5) and end.query()
    with pytest.raises(RuntimeError, match="enable_timing"):
        c.Event().elapsed_time(end)
    assert isinstance(s.record_event(), c.Event)


def test_seeding_and_rng_state_drive_the_default_generator(fake_gpu):
    c = tl.cuda
    with tl.random.fork_rng():  # (the default generator is the process's: leave it as it was)
        c.manual_seed(7)
        assert c.initial_seed() == 7 == tl.initial_seed()
        state = c.get_rng_state()
        a = tl.rand(4).tolist()
        c.set_rng_state(state)
        assert tl.rand(4).tolist() == a
        c.set_rng_state_all(c.get_rng_state_all())
        assert len(c.get_rng_state_all()) == 1 and c.default_generators == (tl.random.default_generator,)


def test_nvtx_ranges_nest_as_torchs(fake_gpu):
    nvtx = tl.cuda.nvtx
    assert nvtx.range_push("a") == 0 and nvtx.range_push("b") == 1
    assert nvtx.range_pop() == 1 and nvtx.range_pop() == 0 and nvtx.range_pop() == -1
    with nvtx.range("step {}", 3):
        pass
    nvtx.range_end(nvtx.range_start("x"))
    with tl.cuda.profiler.profile():
        pass


# ---- torch.backends ----------------------------------------------------------------------------------------------
def test_backend_flags_have_torchs_defaults_and_answers():
    for name in ("xnnpack", "quantized", "opt_einsum", "mkldnn", "mkl", "mha", "cusparselt", "kleidiai", "nnpack"):
        importlib.import_module(f"torch.backends.{name}")  # (torch imports some only on request)
    b, tb = tl.backends, torch.backends
    assert (b.mkldnn.enabled, b.mkldnn.deterministic, b.mkldnn.allow_tf32, b.mkldnn.fp32_precision) == (
        tb.mkldnn.enabled, tb.mkldnn.deterministic, tb.mkldnn.allow_tf32, tb.mkldnn.fp32_precision)
    assert [getattr(b.mkldnn, k).fp32_precision for k in ("matmul", "conv", "rnn")] == [
        getattr(tb.mkldnn, k).fp32_precision for k in ("matmul", "conv", "rnn")]
    assert (b.mkldnn.VERBOSE_OFF, b.mkldnn.VERBOSE_ON, b.mkldnn.VERBOSE_ON_CREATION, b.mkl.VERBOSE_OFF,
            b.mkl.VERBOSE_ON) == (tb.mkldnn.VERBOSE_OFF, tb.mkldnn.VERBOSE_ON, tb.mkldnn.VERBOSE_ON_CREATION,
                                  tb.mkl.VERBOSE_OFF, tb.mkl.VERBOSE_ON)
    assert b.mkldnn.is_acl_available() == tb.mkldnn.is_acl_available()
    assert (b.cusparselt.is_available(), b.cusparselt.version(), b.cusparselt.get_max_alg_id()) == (
        tb.cusparselt.is_available(), tb.cusparselt.version(), tb.cusparselt.get_max_alg_id())
    assert b.kleidiai.is_available() == tb.kleidiai.is_available()
    assert b.xnnpack.enabled == tb.xnnpack.enabled
    assert b.mha.get_fastpath_enabled() == tb.mha.get_fastpath_enabled()
    assert (b.opt_einsum.is_available(), b.opt_einsum.enabled, b.opt_einsum.strategy) == (
        tb.opt_einsum.is_available(), tb.opt_einsum.enabled, tb.opt_einsum.strategy)
    # (vendors' libraries tinygrad_like does not use: False here, whatever torch links)
    assert (b.mkl.is_available(), b.mkldnn.is_available(), b.openmp.is_available(), b.nnpack.is_available()) == (
        False, False, False, False)
    assert b.quantized.engine == "none" and b.quantized.supported_engines == ["none"]


def test_cudnn_and_cuda_switches_beside_the_census_as_torchs():
    b, tb = tl.backends, torch.backends
    assert (b.cudnn.fp32_precision, b.cudnn.depthwise_kernel, b.cudnn.conv.fp32_precision,
            b.cudnn.rnn.fp32_precision) == (tb.cudnn.fp32_precision, tb.cudnn.depthwise_kernel,
                                            tb.cudnn.conv.fp32_precision, tb.cudnn.rnn.fp32_precision)
    for name in ("cudnn_sdp_enabled", "fp16_bf16_reduction_math_sdp_allowed", "is_flash_attention_available",
                 "is_ck_sdpa_available", "flash_sdp_enabled", "math_sdp_enabled", "mem_efficient_sdp_enabled"):
        assert getattr(b.cuda, name)() == getattr(tb.cuda, name)(), name
    for lib in (tl, torch):
        with lib.backends.cuda.sdp_kernel(enable_flash=False, enable_cudnn=False):
            assert not lib.backends.cuda.flash_sdp_enabled() and not lib.backends.cuda.cudnn_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled() and lib.backends.cuda.cudnn_sdp_enabled()
        lib.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
        assert lib.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
        lib.backends.cuda.allow_fp16_bf16_reduction_math_sdp(False)


def test_mps_queries_raise_without_mps():
    assert tl.backends.mps.is_available() is False
    libs = (tl,) if torch.backends.mps.is_available() else (tl, torch)  # (compared where torch has no MPS either)
    for name, args in (("is_macos13_or_newer", ()), ("is_macos_or_newer", (13, 0))):
        for lib in libs:
            with pytest.raises(RuntimeError, match="without MPS backend"):
                getattr(lib.backends.mps, name)(*args)
    with pytest.raises(RuntimeError, match="without MPS backend"):
        tl.backends.mps.get_name()


def test_cpu_capability_as_torchs():
    theirs = torch.backends.cpu.get_cpu_capability()
    if theirs not in ("AVX512", "AVX2", "DEFAULT"):
        pytest.skip(f"torch reports {theirs!r}, a non-x86 level")
    assert tl.backends.cpu.get_cpu_capability() == theirs


def test_backend_switches_set_and_restore_as_torchs():
    for lib in (tl, torch):
        m = lib.backends.mkldnn
        with m.flags(enabled=False, deterministic=True):
            assert (m.enabled, m.deterministic) == (False, True)
        assert (m.enabled, m.deterministic) == (True, False)
        with m.verbose(m.VERBOSE_ON), lib.backends.mkl.verbose(lib.backends.mkl.VERBOSE_ON):
            pass
        importlib.import_module(f"{lib.__name__}.backends.miopen")
        with lib.backends.miopen.flags(immediate=True):
            assert lib.backends.miopen.immediate is True
        assert lib.backends.miopen.immediate is False
        n = lib.backends.nnpack
        with n.flags(enabled=False):
            pass
        previous = n.set_flags(False)
        assert isinstance(previous, tuple) and len(previous) == 1
        n.set_flags(previous[0])
        lib.backends.mha.set_fastpath_enabled(False)
        assert lib.backends.mha.get_fastpath_enabled() is False
        lib.backends.mha.set_fastpath_enabled(True)
    if not torch.backends.opt_einsum.is_available():
        for lib in (tl, torch):
            with pytest.raises(ValueError):
                lib.backends.opt_einsum.set_flags(True)
            with pytest.raises(ValueError):
                lib.backends.opt_einsum.set_flags(None, "greedy")


def test_python_native_has_no_dsls():
    pn = tl.backends.python_native
    assert pn.available_dsls == [] and pn.get_dsl_operations("triton") == [] and pn.is_dsl_disabled("triton")
    with pn.operations_disabled("aten::add"):
        assert pn.is_operation_disabled("aten::add")
    assert not pn.is_operation_disabled("aten::add")


# ---- torch.jit -----------------------------------------------------------------------------------------------------
ISINSTANCE_CASES = [
    ([1, 2], "list[int]"), ([1, "a"], "list[int]"), ([], "list[int]"), ({"a": 1}, "dict[str, int]"),
    ({"a": "b"}, "dict[str, int]"), ((1, "a"), "tuple[int, str]"), ((1,), "tuple[int, str]"),
    (None, "typing.Optional[int]"), (3, "typing.Optional[int]"), ("x", "typing.Optional[int]"), (1, "int"),
    (True, "int"), (1, "float"), (1.5, "float"), ([[1]], "list[list[int]]"),
]


@pytest.mark.parametrize("obj,spelled", ISINSTANCE_CASES)
def test_jit_isinstance_checks_contents_as_torchs(obj, spelled):
    target = eval(spelled, {"typing": typing})
    assert tl.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target)


def test_jit_isinstance_with_tensors_and_bare_containers():
    assert tl.jit.isinstance({"w": tl.ones(1)}, dict[str, tl.Tensor])
    assert torch.jit.isinstance({"w": torch.ones(1)}, dict[str, torch.Tensor])
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="without a contained type"):
            lib.jit.isinstance([1], list)


def test_jit_future_and_fork_as_torchs():
    for lib in (tl, torch):
        fut = lib.jit.Future()
        assert not fut.done()
        chained = fut.then(lambda f: f.value() + 1)
        fut.set_result(3)
        assert (fut.done(), fut.wait(), fut.value(), chained.wait()) == (True, 3, 3, 4)
        assert lib.jit.wait(lib.jit.fork(lambda x: x * 2, 5)) == 10


def test_jit_switches_record_as_torchs():
    for lib in (tl, torch):
        first = lib.jit.set_fusion_strategy([("DYNAMIC", 3)])
        assert lib.jit.set_fusion_strategy(first) == [("DYNAMIC", 3)]
        with pytest.raises(ValueError, match="STATIC' or 'DYNAMIC"):
            lib.jit.set_fusion_strategy([("BAD", 2)])
        before = lib.jit.onednn_fusion_enabled()
        lib.jit.enable_onednn_fusion(True)
        assert lib.jit.onednn_fusion_enabled() is True
        lib.jit.enable_onednn_fusion(before)
        with lib.jit.strict_fusion():
            pass
        assert lib.jit.script_if_tracing(lambda x: x + 1)(1) == 2
        assert issubclass(lib.jit.Error, Exception)
    assert tl.jit.onednn_fusion_enabled() == torch.jit.onednn_fusion_enabled()


# ---- torch.onnx ----------------------------------------------------------------------------------------------------
def test_onnx_export_raises_the_exporters_error_saying_it_is_not_supported(tmp_path):
    with pytest.raises(tl.onnx.OnnxExporterError, match="not supported") as info:
        tl.onnx.export(tl.nn.Linear(2, 1), (tl.ones(1, 2),), str(tmp_path / "m.onnx"))
    assert isinstance(info.value, NotImplementedError) and not (tmp_path / "m.onnx").exists()
    assert tl.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    for ours, theirs in ((tl.onnx.OnnxExporterError, torch.onnx.OnnxExporterError),
                         (tl.onnx.errors.SymbolicValueError, torch.onnx.errors.SymbolicValueError),
                         (tl.onnx.errors.UnsupportedOperatorError, torch.onnx.errors.UnsupportedOperatorError),
                         (tl.onnx.errors.OnnxExporterWarning, torch.onnx.errors.OnnxExporterWarning)):
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]

    class Net(tl.onnx.ExportableModule):
        def __init__(self):
            super().__init__()
            self.fc = tl.nn.Linear(2, 1)

        def forward(self, x):
            return self.fc(x)

    net = Net()
    assert net(tl.ones(3, 2)).shape == (3, 1) and net.input_names() is None
    with pytest.raises(tl.onnx.OnnxExporterError, match="not supported"):
        net.to_onnx()


# ---- torch.nn.parallel ---------------------------------------------------------------------------------------------
def _linear_pair():
    ours = tl.nn.Linear(3, 2)
    theirs = torch.nn.Linear(3, 2)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    return ours, theirs


def test_data_parallel_runs_the_module_and_its_gradients_reach_the_parameters():
    ours, theirs = _linear_pair()
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for device_ids in (None, ["cpu"], ["cpu", "cpu"]):
        ours.zero_grad()
        theirs.zero_grad()
        out = tl.nn.parallel.data_parallel(ours, tl.tensor(x), device_ids)
        ref = theirs(torch.tensor(x))  # (torch's data_parallel refuses CPU tensors: the module's own forward)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
        out.square().sum().backward()
        ref.square().sum().backward()
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_scatter_gather_parallel_apply_replicate_on_one_device():
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    chunks = tl.nn.parallel.scatter(tl.tensor(x), ["cpu", "cpu"])
    assert [c.tolist() for c in chunks] == [c.tolist() for c in torch.tensor(x).chunk(2)]
    pairs = tl.nn.parallel.scatter((tl.tensor(x), 7), ["cpu", "cpu"])
    assert len(pairs) == 2 and pairs[1][1] == 7 and pairs[1][0].tolist() == torch.tensor(x).chunk(2)[1].tolist()
    joined = tl.nn.parallel.gather(list(chunks), "cpu")
    assert joined.tolist() == torch.cat(torch.tensor(x).chunk(2)).tolist()
    ours, theirs = _linear_pair()
    replicas = tl.nn.parallel.replicate(ours, ["cpu", "cpu"])
    assert replicas == [ours, ours]
    outs = tl.nn.parallel.parallel_apply(replicas, list(chunks))
    refs = [theirs(c) for c in torch.tensor(x).chunk(2)]
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(AssertionError, match="number of modules"):
        tl.nn.parallel.parallel_apply(replicas, [chunks[0]])


def test_parallel_names_keep_torchs_parameters():
    for name in ("data_parallel", "scatter", "gather", "replicate", "parallel_apply"):
        assert list(inspect.signature(getattr(tl.nn.parallel, name)).parameters) == list(
            inspect.signature(getattr(torch.nn.parallel, name)).parameters)

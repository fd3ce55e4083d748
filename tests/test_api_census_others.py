"""torch.testing, torch.fft, torch.random, torch.utils.checkpoint and torch.profiler on tinygrad_like, against real
PyTorch: messages and error types of assert_close/make_tensor, fftfreq's values bit for bit, the checkpoint and
profiler helpers' behaviour."""

from __future__ import annotations

import functools
import gzip
import json
import math
import warnings

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import fft as tfft
from tinygrad_like import profiler as P
from tinygrad_like import random as R
from tinygrad_like import testing as T
from tinygrad_like.utils import checkpoint as CK

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.checkpoint")  # (torch.profiler and torch.testing come with torch)


# ---- torch.testing -------------------------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the result under test
        return type(e), str(e)
    return None, None


# each case: a function of a namespace ``m`` (torch or tinygrad_like) and its testing module ``t``
CLOSE_CASES = {
    "float": lambda m, t: t.assert_close(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.0])),
    "int": lambda m, t: t.assert_close(m.tensor([1, 2, 3]), m.tensor([1, 2, 4])),
    "0-d": lambda m, t: t.assert_close(m.tensor(1.0), m.tensor(1.5)),
    "python floats": lambda m, t: t.assert_close(1.0, 1.5),
    "python ints": lambda m, t: t.assert_close(1, 2),
    "int vs float": lambda m, t: t.assert_close(1, 1.0),
    "nan": lambda m, t: t.assert_close(m.tensor([math.nan]), m.tensor([math.nan])),
    "nan equal": lambda m, t: t.assert_close(m.tensor([math.nan]), m.tensor([math.nan]), equal_nan=True),
    "list item": lambda m, t: t.assert_close([m.tensor(1.0), m.tensor(2.0)], [m.tensor(1.0), m.tensor(3.0)]),
    "dict item": lambda m, t: t.assert_close({"a": m.tensor(1.0)}, {"a": m.tensor(3.0)}),
    "nested": lambda m, t: t.assert_close({"a": [m.tensor(1.0), 2]}, {"a": [m.tensor(1.0), 3]}),
    "keys": lambda m, t: t.assert_close({"a": 1}, {"b": 1}),
    "lengths": lambda m, t: t.assert_close([1, 2], [1, 2, 3]),
    "msg": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.2]), msg="custom"),
    "msg callable": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.2]), msg=lambda s: s + " EXTRA"),
    "rtol alone": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.2]), rtol=0.1),
    "atol alone": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.2]), atol=0.1),
    "within tolerance": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.05]), rtol=0.1, atol=0.0),
    "numpy": lambda m, t: t.assert_close(np.array([1.0]), np.array([1.2])),
    "2-d index": lambda m, t: t.assert_close(m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.0, 2.0], [3.0, 5.0]])),
    "bool": lambda m, t: t.assert_close(m.tensor([True]), m.tensor([False])),
    "inf": lambda m, t: t.assert_close(m.tensor([0.0]), m.tensor([math.inf])),
    "inf equal": lambda m, t: t.assert_close(m.tensor([math.inf]), m.tensor([math.inf])),
    "float64 defaults": lambda m, t: t.assert_close(m.tensor([1.0], dtype=m.float64),
                                                    m.tensor([1.0 + 1e-6], dtype=m.float64)),
    "float16 defaults": lambda m, t: t.assert_close(m.tensor([1.0], dtype=m.float16),
                                                    m.tensor([1.001], dtype=m.float16)),
    "dtype unchecked": lambda m, t: t.assert_close(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64),
                                                   check_dtype=False),
    "bools": lambda m, t: t.assert_close(True, False),
    "none": lambda m, t: t.assert_close(None, 1),
    "strings": lambda m, t: t.assert_close("a", "a"),
}


@pytest.mark.parametrize("case", CLOSE_CASES, ids=list(CLOSE_CASES))
def test_assert_close_errors_match_torch(case):
    ours, theirs = _error(lambda: CLOSE_CASES[case](tl, T)), _error(lambda: CLOSE_CASES[case](torch, torch.testing))
    assert ours[0] is theirs[0]
    if ours[1] is not None:
        assert ours[1] == theirs[1].replace("torch.Tensor", "tinygrad_like.tensor.Tensor")


def test_assert_close_attribute_messages_name_the_attribute():
    for fn, text in ((lambda: T.assert_close(tl.tensor([1.0]), tl.tensor([1.0, 2.0])), "attribute 'shape'"),
                     (lambda: T.assert_close(tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64)),
                      "attribute 'dtype' do not match: tinygrad_like.float32 != tinygrad_like.float64."),
                     (lambda: T.assert_close(tl.zeros(2, 3), tl.zeros(3, 2).t(), check_stride=True),
                      "attribute 'stride()' do not match: (3, 1) != (1, 2).")):
        with pytest.raises(AssertionError, match="The values for attribute") as info:
            fn()
        assert text in str(info.value)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        T.assert_close(tl.tensor([1.0]), np.array([1.0]))


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        T.assert_allclose(tl.tensor([1.0]), tl.tensor([1.00005]))
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="up to 0.0001 allowed"):
        T.assert_allclose(tl.tensor([1.0]), tl.tensor([1.2]))
    with pytest.warns(FutureWarning):
        T.assert_allclose([1.0, 2.0], [1.0, 2.0])


@pytest.mark.parametrize(("dtype", "low", "high"), [
    ("float32", None, None), ("float64", -1, 1), ("int64", None, None), ("uint8", None, None), ("bool", None, None),
    ("int8", -3, 3), ("float16", 0, 2),
])
def test_make_tensor_ranges_match_torch_defaults(dtype, low, high):
    x = T.make_tensor(50, 4, dtype=getattr(tl, dtype), device="cpu", low=low, high=high)
    assert x.shape == (50, 4) and x.dtype == getattr(tl, dtype)
    values = x.numpy().astype(np.float64)
    lo = {"bool": 0, "uint8": 0}.get(dtype, -9) if low is None else low
    hi = {"bool": 1, "int64": 9, "uint8": 9}.get(dtype, 9) if high is None else high
    assert values.min() >= lo and values.max() <= hi
    if dtype.startswith("int") or dtype == "uint8":
        assert values.max() < (10 if high is None else high)  # high is exclusive for integers


def test_make_tensor_options():
    x = T.make_tensor((3, 4), dtype=tl.float32, device="cpu", noncontiguous=True, requires_grad=True)
    assert x.shape == (3, 4) and not x.is_contiguous() and x.requires_grad
    z = T.make_tensor(200, dtype=tl.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert (z.numpy() != 0).all()
    for kwargs in (dict(dtype=torch.int64, requires_grad=True), dict(dtype=torch.float32, low=2, high=1),
                   dict(dtype=torch.float32, low=math.nan), dict(dtype=torch.uint8, low=-20, high=-10),
                   dict(dtype=torch.float32, noncontiguous=True, memory_format=torch.contiguous_format)):
        theirs = _error(lambda k=kwargs: torch.testing.make_tensor(3, device="cpu", **k))
        ours_kwargs = {k: (getattr(tl, str(v).split(".")[-1]) if k == "dtype" else v) for k, v in kwargs.items()}
        ours = _error(lambda k=ours_kwargs: T.make_tensor(3, device="cpu", **k))
        assert ours[0] is theirs[0] is ValueError, kwargs
        assert ours[1].split(",")[0].split(" but got")[0] == theirs[1].split(",")[0].split(" but got")[0]


def test_filecheck_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="TorchScript"):
        T.FileCheck()


# ---- torch.fft -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 4, 5, 16, 33])
@pytest.mark.parametrize("d", [1.0, 0.5, 3.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fftfreq_matches_torch_bit_for_bit(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(tfft, name)(n, d, dtype=getattr(tl, dtype))
        theirs = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        assert ours.dtype == getattr(tl, dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tfft.fftfreq(n, d).dtype == tl.float32


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 4, 6)])
def test_fftshift_and_ifftshift_match_torch(shape, dim):
    if isinstance(dim, tuple) and len(shape) < 2 or dim == 1 and len(shape) < 2:
        return
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    for name in ("fftshift", "ifftshift"):
        ours = getattr(tfft, name)(tl.tensor(x), dim=dim)
        theirs = getattr(torch.fft, name)(torch.tensor(x), dim=dim)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    back = tfft.ifftshift(tfft.fftshift(tl.tensor(x), dim=dim), dim=dim)
    np.testing.assert_array_equal(back.numpy(), x)


def test_fftshift_is_differentiable():
    x = tl.arange(5.0, requires_grad=True)
    (tfft.fftshift(x) * tl.arange(5.0)).sum().backward()
    t = torch.arange(5.0, requires_grad=True)
    (torch.fft.fftshift(t) * torch.arange(5.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
                                  "fftn", "ifftn", "rfftn", "irfftn"])
def test_transforms_say_complex_is_not_supported(name):
    assert hasattr(torch.fft, name)
    with pytest.raises(NotImplementedError, match=f"torch.fft.{name}\\(\\): complex tensors"):
        getattr(tfft, name)(tl.zeros(4))


# ---- torch.random --------------------------------------------------------------------------------------------------

def test_fork_rng_restores_the_stream():
    tl.manual_seed(7)
    assert R.initial_seed() == 7
    with R.fork_rng():
        inside = tl.rand(3)
    after = tl.rand(3)
    np.testing.assert_array_equal(inside.numpy(), after.numpy())
    with R.fork_rng(enabled=False):
        tl.rand(3)
    assert not np.array_equal(tl.rand(3).numpy(), after.numpy())
    with R.fork_rng(devices=[]):
        pass


def test_seed_reseeds_non_deterministically():
    a = R.seed()
    assert isinstance(a, int) and R.initial_seed() == a
    b = R.seed()
    assert a != b
    assert R.thread_safe_generator() is None and torch.random.thread_safe_generator() is None


# ---- torch.utils.checkpoint ----------------------------------------------------------------------------------------

def _net():
    tl.manual_seed(0)
    return tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 8), tl.nn.ReLU(), tl.nn.Linear(8, 2))


def _grads(net):
    return [p.grad.numpy().copy() for p in net.parameters()]


def test_checkpoint_signature_warnings_and_errors_as_torch():
    net = _net()
    x = tl.randn(3, 4, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        CK.checkpoint(net, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        CK.checkpoint(lambda t, scale: t * scale, x, use_reentrant=True, scale=2.0)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        torch.utils.checkpoint.checkpoint(lambda t, scale: t * scale, torch.ones(1, requires_grad=True),
                                          use_reentrant=True, scale=2.0)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        CK.checkpoint(net, x, use_reentrant=True, debug=True)


def test_checkpoint_passes_keyword_arguments_when_not_reentrant():
    w = tl.randn(4, 4, requires_grad=True)
    x = tl.randn(2, 4, requires_grad=True)
    y = CK.checkpoint(lambda t, weight: (t @ weight).tanh(), x, use_reentrant=False, weight=w)
    y.sum().backward()
    plain_x, plain_w = x.detach().requires_grad_(), w.detach().requires_grad_()
    (plain_x @ plain_w).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), plain_x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), plain_w.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("segments", [1, 2, 3, 5])
def test_checkpoint_sequential_gives_the_plain_gradients(segments):
    net = _net()
    x = tl.randn(3, 4)
    net(x).sum().backward()
    plain = _grads(net)
    net.zero_grad()
    CK.checkpoint_sequential(net, segments, x, use_reentrant=False).sum().backward()
    for a, b in zip(plain, _grads(net)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        CK.checkpoint_sequential(net, 2, x, use_reentrant=False, foo=1)


def test_context_fn_wraps_first_run_and_recomputation():
    seen = []

    class Ctx:
        def __init__(self, tag):
            self.tag = tag

        def __enter__(self):
            seen.append(self.tag)

        def __exit__(self, *exc):
            return None

    x = tl.randn(3, requires_grad=True)
    y = CK.checkpoint(lambda t: t.sin(), x, use_reentrant=False, context_fn=lambda: (Ctx("forward"), Ctx("recompute")))
    assert seen == ["forward"]
    y.sum().backward()
    assert seen == ["forward", "recompute"]
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_selective_checkpoint_contexts_keep_the_gradients():
    policy_calls = []

    def policy(ctx, op, *args, **kwargs):
        policy_calls.append(op)
        return CK.CheckpointPolicy.PREFER_RECOMPUTE

    x = tl.randn(3, requires_grad=True)
    y = CK.checkpoint(lambda t: (t * t).exp(), x, use_reentrant=False,
                      context_fn=functools.partial(CK.create_selective_checkpoint_contexts, policy))
    y.sum().backward()
    xv = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * xv * np.exp(xv * xv), rtol=1e-5)
    with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops"):
        CK.create_selective_checkpoint_contexts(3)
    with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops"):
        torch.utils.checkpoint.create_selective_checkpoint_contexts(3)


def test_checkpoint_helpers_as_torch():
    assert [p.name for p in CK.CheckpointPolicy] == [p.name for p in torch.utils.checkpoint.CheckpointPolicy]
    assert [p.value for p in CK.CheckpointPolicy] == [p.value for p in torch.utils.checkpoint.CheckpointPolicy]
    assert issubclass(CK.CheckpointError, RuntimeError)
    a, b = tl.ones(2, requires_grad=True), tl.ones(2)
    da, db, other = CK.detach_variable((a, b, 3))
    assert da.requires_grad and not db.requires_grad and da.grad_fn is None and other == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        CK.detach_variable([a])
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        torch.utils.checkpoint.detach_variable([torch.ones(1)])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
        CK.check_backward_validity([b, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CK.check_backward_validity([a])
    f, r = CK.noop_context_fn()
    with f, r:
        pass
    with CK.set_checkpoint_early_stop(False), CK.set_checkpoint_debug_enabled(True), CK.GraphExecGroup():
        y = CK.checkpoint(lambda t: t * 3, a, use_reentrant=False)
    assert CK.get_device_states(a) == ([], [])
    CK.set_device_states([], [])
    assert CK.DefaultDeviceType.get_device_type() == torch.utils.checkpoint.DefaultDeviceType.get_device_type()
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])
    ctx = CK.SelectiveCheckpointContext(is_recompute=False)
    assert ctx.is_recompute is False and ctx.op_output is None
    z = CK.CheckpointFunction.apply(lambda t: t.exp(), True, tl.zeros(2, requires_grad=True))
    assert z.grad_fn is not None


# ---- torch.profiler ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=1, active=1, repeat=2),
                                    dict(wait=2, warmup=1, active=3, skip_first=3),
                                    dict(wait=5, warmup=1, active=2, skip_first=2, skip_first_wait=1)])
def test_schedule_matches_torch(kwargs):
    ours, theirs = P.schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(s).name for s in range(30)] == [theirs(s).name for s in range(30)]


def test_schedule_errors_as_torch():
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        P.schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        P.schedule(wait=0, warmup=0, active=1)


def test_profile_steps_with_a_schedule_and_on_trace_ready():
    traces = []

    def ready(prof):
        traces.append((prof.step_num, len(prof.kernels)))

    sched = P.schedule(wait=1, warmup=1, active=2, repeat=2)
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(10):
            (tl.ones(3, 3) @ tl.ones(3, 3)).sum()
            prof.step()
    # torch's schedule: steps 2-3 and 6-7 are recorded, saved after steps 3 and 7
    assert [t[0] for t in traces] == [4, 8]
    assert all(n > 0 for _, n in traces)


def test_profile_without_schedule_calls_on_trace_ready_once_at_exit():
    calls = []
    with P.profile(on_trace_ready=calls.append, record_shapes=True, with_stack=True) as prof:
        tl.ones(2) + 1
    assert calls == [prof]


def test_record_function_ranges_and_key_averages_table(tmp_path):
    with P.profile() as prof:
        with P.record_function("model_inference"):
            (tl.ones(4, 4) @ tl.ones(4, 4)).relu()

        @P.record_function("helper")
        def helper():
            return tl.ones(2) * 2

        helper()
    assert [r.name for r in prof.ranges] == ["model_inference", "helper"]
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "matmul" in table and "model_inference" in table
    handler = P.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0", use_gzip=True)
    handler(prof)
    (written,) = list((tmp_path / "tb").iterdir())
    assert written.name.startswith("w0.") and written.name.endswith(".pt.trace.json.gz")
    trace = json.loads(gzip.open(written, "rt").read())
    assert any(e.get("name") == "model_inference" and e.get("cat") == "user_annotation" for e in trace["traceEvents"])


def test_profiler_enums_match_torch():
    assert [a.name for a in P.ProfilerActivity] == list(torch.profiler.ProfilerActivity.__members__)
    assert {(d.name, d.value) for d in P.DeviceType} == {(k, int(v)) for k, v in
                                                         torch.profiler.DeviceType.__members__.items()}
    assert [(a.name, a.value) for a in P.ProfilerAction] == [(a.name, a.value) for a in torch.profiler.ProfilerAction]
    assert P.ProfilerActivity.CPU in P.supported_activities()
    assert P.kineto_available() is False
    with pytest.raises(NotImplementedError, match="execution trace"):
        P.ExecutionTraceObserver()

"""nn modules of issue 17 against PyTorch: activations, normalization, padding, pairwise layers, parameter
containers, losses, recurrent layers, attention and transformer layers.

Each module is built in both libraries from the same constructor call; torch's ``state_dict`` is loaded into ours
(so parameter names, shapes and order must be torch's), then outputs and the gradients of every input and every
parameter are compared, in float64 and float32. Reprs must be torch's, and bad arguments fail with torch's
exception type and message.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from conftest import assert_close, torch

import tinygrad_like as tl
import tinygrad_like.nn.functional as TF

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch as the oracle")

TOL = {"float32": dict(atol=2e-5, rtol=2e-4), "float64": dict(atol=1e-10, rtol=1e-8)}


# ---- the harness ----------------------------------------------------------------------------------
class In:
    """One input: a NumPy array, and whether it is a leaf that requires grad (floats by default)."""

    def __init__(self, arr, grad: bool | None = None):
        self.arr = np.asarray(arr)
        self.grad = self.arr.dtype.kind == "f" if grad is None else grad


def _cast(a: np.ndarray, dtype: str) -> np.ndarray:
    return a.astype(dtype) if a.dtype.kind == "f" else a


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _state_to_tl(sd) -> dict:
    return {k: tl.tensor(v.detach().numpy().copy()) for k, v in sd.items()}


def run_module(make, inputs, dtype: str, call=None, train: bool = True, grad: bool = True, no_grad: bool = False):
    """Build ``make(nn)`` in both libraries, load torch's weights into ours, run ``call(lib, module, *xs)`` (default
    ``module(*xs)``) and compare outputs, then the gradients of inputs and parameters."""
    th_mod = make(torch.nn).to(getattr(torch, dtype))
    tl_mod = make(tl.nn).to(getattr(tl, dtype))
    th_names = [n for n, _ in th_mod.named_parameters()]
    assert [n for n, _ in tl_mod.named_parameters()] == th_names
    assert list(tl_mod.state_dict()) == list(th_mod.state_dict())
    for (n, p), (_, q) in zip(tl_mod.named_parameters(), th_mod.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
    tl_mod.load_state_dict(_state_to_tl(th_mod.state_dict()))
    th_mod.train(train)
    tl_mod.train(train)
    arrays = [_cast(i.arr, dtype) for i in inputs]
    th_in = [torch.tensor(a, requires_grad=i.grad and not no_grad) for a, i in zip(arrays, inputs)]
    tl_in = [tl.tensor(a, requires_grad=i.grad and not no_grad) for a, i in zip(arrays, inputs)]
    call = call or (lambda lib, m, *xs: m(*xs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if no_grad:
            with torch.no_grad():
                out_th = _flat(call(torch, th_mod, *th_in))
            with tl.no_grad():
                out_tl = _flat(call(tl, tl_mod, *tl_in))
        else:
            out_th = _flat(call(torch, th_mod, *th_in))
            out_tl = _flat(call(tl, tl_mod, *tl_in))
    assert len(out_tl) == len(out_th)
    for i, (a, b) in enumerate(zip(out_tl, out_th)):
        if b is None:
            assert a is None, f"output {i}: torch gives None"
            continue
        assert_close(a, b, **TOL[dtype], msg=f"output {i}: ")
    if not grad or no_grad:
        return tl_mod, th_mod
    rng = np.random.default_rng(1)
    pairs = [(a, b) for a, b in zip(out_tl, out_th) if b is not None and b.requires_grad]
    gs = [rng.standard_normal(b.shape).astype(dtype) for _, b in pairs]
    sum((a * tl.tensor(g)).sum() for (a, _), g in zip(pairs, gs)).backward()
    sum((b * torch.tensor(g)).sum() for (_, b), g in zip(pairs, gs)).backward()
    for i, (a, b) in enumerate(zip(tl_in, th_in)):
        if b.grad is not None:
            assert a.grad is not None, f"input {i} has no grad"
            assert_close(a.grad, b.grad, **TOL[dtype], msg=f"grad of input {i}: ")
    th_params = dict(th_mod.named_parameters())
    for n, p in tl_mod.named_parameters():
        q = th_params[n]
        if q.grad is None:
            assert p.grad is None or not np.any(p.grad.numpy()), f"{n}: torch has no grad"
            continue
        assert p.grad is not None, f"parameter {n} has no grad"
        assert_close(p.grad, q.grad, **TOL[dtype], msg=f"grad of {n}: ")
    return tl_mod, th_mod


def _rng(seed=0):
    return np.random.default_rng(seed)


def randn(*shape, seed=0, scale=1.0):
    return _rng(seed).standard_normal(shape) * scale


DTYPES = ["float64", "float32"]


# ---- activations -----------------------------------------------------------------------------------
ACTIVATIONS = [
    ("Hardtanh", lambda nn: nn.Hardtanh(), (2, 3, 4)),
    ("Hardtanh-args", lambda nn: nn.Hardtanh(-0.5, 2.0), (2, 3, 4)),
    ("Hardtanh-legacy", lambda nn: nn.Hardtanh(min_value=-2.0, max_value=0.3), (5,)),
    ("ReLU6", lambda nn: nn.ReLU6(), (2, 3, 4)),
    ("Hardswish", lambda nn: nn.Hardswish(), (2, 3, 4)),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), (2, 3, 4)),
    ("SELU", lambda nn: nn.SELU(), (2, 3, 4)),
    ("CELU", lambda nn: nn.CELU(1.3), (2, 3, 4)),
    ("Mish", lambda nn: nn.Mish(), (2, 3, 4)),
    ("Softsign", lambda nn: nn.Softsign(), (2, 3, 4)),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), (2, 3, 4)),
    ("Softmin", lambda nn: nn.Softmin(1), (2, 3, 4)),
    ("GLU", lambda nn: nn.GLU(), (2, 3, 4)),
    ("GLU-dim", lambda nn: nn.GLU(0), (4, 3)),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), (2, 3, 4)),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), (2, 3, 4)),
    ("Softshrink", lambda nn: nn.Softshrink(0.3), (2, 3, 4)),
    ("Hardshrink", lambda nn: nn.Hardshrink(), (2, 3, 4)),
    ("PReLU", lambda nn: nn.PReLU(), (2, 3, 4)),
    ("PReLU-channels", lambda nn: nn.PReLU(3, 0.1), (2, 3, 4)),
    ("PReLU-unbatched", lambda nn: nn.PReLU(), (7,)),
    ("ELU", lambda nn: nn.ELU(0.5), (2, 3, 4)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), (2, 3, 4)),
    ("Softplus", lambda nn: nn.Softplus(2.0, 3.0), (2, 3, 4)),
    ("ReLU", lambda nn: nn.ReLU(), (2, 3, 4)),
    ("SiLU", lambda nn: nn.SiLU(), (2, 3, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,shape", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_modules(name, make, shape, dtype):
    tl_mod, th_mod = run_module(make, [In(randn(*shape, scale=3.0))], dtype)
    assert repr(tl_mod) == repr(th_mod)


def test_activation_errors():
    x = tl.randn(2, 3)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        TF.glu(x, 1)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        tl.nn.PReLU(4)(x)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 3 and channel size = 1"):
        tl.nn.PReLU(3)(tl.randn(3))
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        TF.hardtanh(x, 1.0, -1.0)
    with pytest.raises(NotImplementedError, match="selu"):
        TF.selu(tl.tensor([1, 2]))


def test_activation_integer_inputs_match_torch():
    for fn in ("hardtanh", "relu6"):
        a = getattr(TF, fn)(tl.tensor([-3, 1, 7]))
        b = getattr(torch.nn.functional, fn)(torch.tensor([-3, 1, 7]))
        assert_close(a, b)


@pytest.mark.parametrize("make", [
    lambda nn: nn.ReLU(True), lambda nn: nn.ReLU6(True), lambda nn: nn.LeakyReLU(0.2, True),
    lambda nn: nn.ELU(inplace=True), lambda nn: nn.SELU(True), lambda nn: nn.CELU(inplace=True),
    lambda nn: nn.Hardtanh(inplace=True), lambda nn: nn.Threshold(1, 2, True), lambda nn: nn.SiLU(True),
    lambda nn: nn.Mish(True), lambda nn: nn.Hardswish(True), lambda nn: nn.Hardsigmoid(True),
    lambda nn: nn.Dropout(0.2, True)])
def test_inplace_reprs(make):
    assert repr(make(tl.nn)) == repr(make(torch.nn))


def test_threshold_and_hardtanh_gradient_at_the_boundary_is_torch_s():
    for fn, args in (("hardtanh", (-1.0, 1.0)), ("threshold", (1.0, 5.0)), ("relu6", ())):
        a = tl.tensor([-1.0, 1.0, 0.5, 6.0, 0.0], requires_grad=True)
        b = torch.tensor([-1.0, 1.0, 0.5, 6.0, 0.0], requires_grad=True)
        getattr(TF, fn)(a, *args).sum().backward()
        getattr(torch.nn.functional, fn)(b, *args).sum().backward()
        assert_close(a.grad, b.grad)


def test_softmax_dtype_and_implicit_dim():
    x = tl.randn(2, 3)
    assert TF.softmax(x, 1, dtype=tl.float64).dtype is tl.float64
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = TF.softmax(x)
    assert_close(y, torch.softmax(torch.tensor(x.numpy()), 1))


# ---- normalization ------------------------------------------------------------------------------------
NORMS = [
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    ("GroupNorm-noaffine", lambda nn: nn.GroupNorm(4, 4, affine=False, eps=1e-3), (3, 4, 5)),
    ("GroupNorm-nobias", lambda nn: nn.GroupNorm(1, 6, bias=False), (2, 6)),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), (2, 3, 5)),
    ("InstanceNorm1d-affine", lambda nn: nn.InstanceNorm1d(3, affine=True), (2, 3, 5)),
    ("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 5)),
    ("InstanceNorm2d-tracked", lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
     (2, 3, 4, 5)),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2), (1, 2, 3, 2, 4)),
    ("RMSNorm", lambda nn: nn.RMSNorm(4), (3, 4)),
    ("RMSNorm-2d", lambda nn: nn.RMSNorm((3, 4), eps=1e-3), (2, 3, 4)),
    ("RMSNorm-noaffine", lambda nn: nn.RMSNorm([4], elementwise_affine=False), (2, 3, 4)),
    ("LayerNorm-nobias", lambda nn: nn.LayerNorm(4, bias=False), (2, 3, 4)),
    ("LayerNorm-noaffine", lambda nn: nn.LayerNorm([3, 4], elementwise_affine=False), (2, 3, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,shape", NORMS, ids=[a[0] for a in NORMS])
def test_norm_modules(name, make, shape, dtype):
    tl_mod, th_mod = run_module(make, [In(randn(*shape) * 2 + 0.5)], dtype)
    assert repr(tl_mod) == repr(th_mod)
    for (n, a), (_, b) in zip(tl_mod.named_buffers(), th_mod.named_buffers()):  # running statistics moved alike
        assert_close(a, b, **TOL[dtype], msg=f"buffer {n}: ")


@pytest.mark.parametrize("dtype", DTYPES)
def test_instance_norm_running_stats_in_eval(dtype):
    make = lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=0.3)  # noqa: E731
    tl_mod, th_mod = run_module(make, [In(randn(4, 3, 6))], dtype)  # training: stats move
    arr = randn(2, 3, 6, seed=3).astype(dtype)
    th_mod.eval()
    tl_mod.eval()
    assert_close(tl_mod(tl.tensor(arr)), th_mod(torch.tensor(arr)), **TOL[dtype])


def test_norm_errors():
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        tl.nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        TF.group_norm(tl.randn(2, 3, 4), 2)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        tl.nn.InstanceNorm1d(3)(tl.randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4."):
        tl.nn.InstanceNorm1d(3, affine=True)(tl.randn(2, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        tl.nn.InstanceNorm1d(3)(tl.randn(2, 3, 1))
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        TF.rms_norm(tl.randn(2, 3), (4,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_normalize_and_instance_norm_functional(dtype):
    arr = randn(3, 4).astype(dtype)
    arr[1] = 0  # a zero row: divided by eps, gradient finite
    for kw in ({}, {"p": 1.0, "dim": 0}, {"eps": 0.5}):
        a, b = tl.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
        ya, yb = TF.normalize(a, **kw), torch.nn.functional.normalize(b, **kw)
        assert_close(ya, yb, **TOL[dtype])
        ya.sum().backward()
        yb.sum().backward()
        assert_close(a.grad, b.grad, **TOL[dtype])
    rm_a, rv_a = tl.zeros(3, dtype=getattr(tl, dtype)), tl.ones(3, dtype=getattr(tl, dtype))
    rm_b, rv_b = torch.zeros(3, dtype=getattr(torch, dtype)), torch.ones(3, dtype=getattr(torch, dtype))
    x = randn(2, 3, 5).astype(dtype)
    assert_close(TF.instance_norm(tl.tensor(x), rm_a, rv_a, momentum=0.2),
                 torch.nn.functional.instance_norm(torch.tensor(x), rm_b, rv_b, momentum=0.2), **TOL[dtype])
    assert_close(rm_a, rm_b, **TOL[dtype])
    assert_close(rv_a, rv_b, **TOL[dtype])
    assert_close(TF.instance_norm(tl.tensor(x), rm_a, rv_a, use_input_stats=False),
                 torch.nn.functional.instance_norm(torch.tensor(x), rm_b, rv_b, use_input_stats=False), **TOL[dtype])


def test_gradcheck_norms_and_pads():
    rng = _rng(5)
    x = tl.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w = tl.tensor(rng.standard_normal(4), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w: TF.group_norm(x, 2, w), (x, w))
    assert tl.autograd.gradcheck(lambda x: TF.pad(x, (2, 1), mode="reflect"), (x,))
    assert tl.autograd.gradcheck(lambda x: TF.pad(x, (1, 2, 2, 1), mode="circular"), (x,))
    assert tl.autograd.gradcheck(lambda x: TF.hardswish(x * 2), (x,))
    assert tl.autograd.gradcheck(lambda x: TF.celu(x, 0.6), (x,))
    assert tl.autograd.gradcheck(lambda x: TF.cosine_similarity(x[0], x[1], 0), (x,))


# ---- padding ----------------------------------------------------------------------------------------
PADS = [
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d(2), (2, 3, 4)),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), (2, 3, 4, 5)),
    ("ZeroPad2d-neg", lambda nn: nn.ZeroPad2d((-1, 2, 1, -1)), (2, 3, 4)),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d(1), (1, 2, 2, 3)),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d((2, 1), 3.5), (3, 4)),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d(1, -1.0), (2, 3, 4)),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 2.0), (1, 2, 2, 3, 2)),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d(2), (2, 3, 5)),
    ("ReflectionPad1d-unbatched", lambda nn: nn.ReflectionPad1d((3, 1)), (3, 4)),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d((1, 2, 2, 1)), (1, 2, 4, 5)),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d(1), (1, 2, 2, 3, 4)),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((4, 1)), (2, 3, 2)),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d(2), (2, 4, 3)),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d((1, 2, 1, 0, 0, 1)), (2, 2, 2, 3)),
    ("CircularPad1d", lambda nn: nn.CircularPad1d(3), (2, 3, 4)),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 0, 2, 3)), (1, 2, 3, 4)),
    ("CircularPad3d", lambda nn: nn.CircularPad3d(1), (1, 2, 2, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,shape", PADS, ids=[a[0] for a in PADS])
def test_pad_modules(name, make, shape, dtype):
    tl_mod, th_mod = run_module(make, [In(randn(*shape))], dtype)
    assert repr(tl_mod) == repr(th_mod)


@pytest.mark.parametrize("args,kw", [
    (((3,), (1, 1)), {"mode": "reflect"}),
    (((2, 3), (3, 1)), {"mode": "reflect"}),
    (((2, 3), (4, 1)), {"mode": "circular"}),
    (((2, 3, 4), (1, 1)), {"mode": "reflect", "value": 1.0}),
    (((2, 3), (1, 1)), {"mode": "bogus"}),
    (((2, 0), (1, 1)), {"mode": "replicate"}),
    (((2, 3), (1, 1, 1, 1)), {"mode": "replicate"}),
    (((2, 3), (1,)), {}),
    (((2, 3), (-2, -2)), {}),
])
def test_pad_errors_match_torch(args, kw):
    shape, p = args
    with pytest.raises(Exception) as th_err:
        torch.nn.functional.pad(torch.zeros(shape), p, **kw)
    with pytest.raises(type(th_err.value)) as err:
        TF.pad(tl.zeros(*shape), p, **kw)
    first = str(th_err.value).split("\n")[0].split(":")[0]
    assert first.split(" ")[:3] == str(err.value).split("\n")[0].split(":")[0].split(" ")[:3]


# ---- pairwise layers and containers --------------------------------------------------------------------
PAIRWISE = [
    ("Bilinear", lambda nn: nn.Bilinear(3, 4, 5), [(6, 3), (6, 4)]),
    ("Bilinear-nobias-3d", lambda nn: nn.Bilinear(2, 3, 4, bias=False), [(2, 5, 2), (2, 5, 3)]),
    ("Bilinear-unbatched", lambda nn: nn.Bilinear(2, 3, 4), [(2,), (3,)]),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(), [(4, 5), (4, 5)]),
    ("CosineSimilarity-bcast", lambda nn: nn.CosineSimilarity(dim=-1, eps=1e-3), [(3, 1, 4), (2, 4)]),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(), [(4, 5), (4, 5)]),
    ("PairwiseDistance-p1", lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True), [(4, 5), (5,)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,shapes", PAIRWISE, ids=[a[0] for a in PAIRWISE])
def test_pairwise_modules(name, make, shapes, dtype):
    tl_mod, th_mod = run_module(make, [In(randn(*s, seed=i)) for i, s in enumerate(shapes)], dtype)
    assert repr(tl_mod) == repr(th_mod)


def test_bilinear_init_and_errors():
    m = tl.nn.Bilinear(4, 3, 2)
    bound = 1 / math.sqrt(4)
    assert m.weight.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 4"):
        m(tl.randn(5, 3), tl.randn(5, 3))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        m(tl.randn(5, 4), tl.randn(4, 3))


def test_parameter_list():
    pl = tl.nn.ParameterList([tl.nn.Parameter(tl.randn(2)), tl.randn(2, 3)])
    assert isinstance(pl[1], tl.nn.Parameter) and pl[1].requires_grad
    pl.append(tl.nn.Parameter(tl.randn(4)))
    pl += [tl.randn(1)]
    assert len(pl) == 4 and [p.shape for p in pl] == [(2,), (2, 3), (4,), (1,)]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    assert len(pl[1:3]) == 2 and pl[-1].shape == (1,)

    class Net(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = tl.nn.ParameterList([tl.randn(3) for _ in range(2)])

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["ps.0", "ps.1"]
    assert list(net.state_dict()) == ["ps.0", "ps.1"]
    th = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(2)), torch.nn.Parameter(torch.randn(2, 3))])
    ours = tl.nn.ParameterList([tl.nn.Parameter(tl.randn(2)), tl.nn.Parameter(tl.randn(2, 3))])
    assert repr(ours).replace("tinygrad_like.", "torch.") == repr(th)
    with pytest.raises(IndexError):
        pl[7]
    pl[0] = tl.randn(5)
    assert pl[0].shape == (5,) and isinstance(pl[0], tl.nn.Parameter)
    copy.deepcopy(net)


def test_parameter_dict():
    pd = tl.nn.ParameterDict({"a": tl.nn.Parameter(tl.randn(2)), "b": tl.randn(3)})
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], tl.nn.Parameter)
    pd["c"] = tl.nn.Parameter(tl.zeros(1))
    assert "c" in pd and len(pd) == 3
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.pop("a").shape == (2,) and list(pd) == ["b", "c"]
    pd.update([("d", tl.randn(2))])
    assert [k for k, _ in pd.items()] == ["b", "c", "d"]
    with pytest.raises(KeyError):
        pd["zz"]
    assert pd.get("zz") is None
    del pd["b"]
    assert list(pd) == ["c", "d"] and "b" not in dict(pd.named_parameters())
    m = tl.nn.Module()
    m.params = tl.nn.ParameterDict({"w": tl.randn(2, 2)})
    assert list(m.state_dict()) == ["params.w"]


def test_module_dict_list_identity_flatten():
    md = tl.nn.ModuleDict({"a": tl.nn.Linear(2, 2), "b": tl.nn.ReLU()})
    assert list(md) == ["a", "b"] and isinstance(md["b"], tl.nn.ReLU)
    assert isinstance(md.pop("a"), tl.nn.Linear) and list(md) == ["b"] and not list(md.parameters())
    md.clear()
    assert len(md) == 0
    blocks = tl.nn.ModuleList([tl.nn.Linear(2, 2) for _ in range(3)] + [tl.nn.ReLU()])
    th_blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    assert repr(blocks) == repr(th_blocks)  # "(0-2): 3 x Linear(...)"
    ml = tl.nn.ModuleList([tl.nn.Identity(), tl.nn.Flatten(), tl.nn.Unflatten(1, (2, 3))])
    x = tl.randn(4, 6)
    assert ml[0](x) is x and ml[1](tl.randn(2, 3, 4)).shape == (2, 12) and ml[2](x).shape == (4, 2, 3)
    assert repr(tl.nn.Unflatten(1, (2, 3))) == repr(torch.nn.Unflatten(1, (2, 3)))
    assert repr(tl.nn.Flatten()) == repr(torch.nn.Flatten())
    oh = TF.one_hot(tl.tensor([0, 2, 1]), 4)
    assert_close(oh, torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 4))


# ---- losses -----------------------------------------------------------------------------------------
def _pm1(shape, seed):
    return np.where(_rng(seed).random(shape) > 0.5, 1.0, -1.0)


LOSSES = [
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), lambda: [In(randn(3, 4) * 2), In(randn(3, 4, seed=1))]),
    ("SmoothL1Loss-sum", lambda nn: nn.SmoothL1Loss(reduction="sum"), lambda: [In(randn(5)), In(randn(5, seed=2))]),
    ("SmoothL1Loss-beta0", lambda nn: nn.SmoothL1Loss(beta=0.0, reduction="none"),
     lambda: [In(randn(5)), In(randn(5, seed=2))]),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.7), lambda: [In(randn(3, 4) * 2), In(randn(3, 4, seed=1))]),
    ("HuberLoss-none", lambda nn: nn.HuberLoss("none", 2.0), lambda: [In(randn(3, 4) * 2), In(randn(3, 4, seed=1))]),
    ("KLDivLoss-batchmean", lambda nn: nn.KLDivLoss(reduction="batchmean"),
     lambda: [In(np.log(_rng(0).dirichlet(np.ones(4), 3))), In(_rng(1).dirichlet(np.ones(4), 3), grad=False)]),
    ("KLDivLoss-logtarget", lambda nn: nn.KLDivLoss(reduction="sum", log_target=True),
     lambda: [In(randn(3, 4)), In(randn(3, 4, seed=1))]),
    ("KLDivLoss-zero-target", lambda nn: nn.KLDivLoss(reduction="none"),
     lambda: [In(randn(2, 3)), In(np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]), grad=False)]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.2),
     lambda: [In(randn(6)), In(randn(6, seed=1)), In(_pm1(6, 2), grad=False)]),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(0.1),
     lambda: [In(randn(4, 5)), In(randn(4, 5, seed=1)), In(_pm1(4, 3), grad=False)]),
    ("CosineEmbeddingLoss-none", lambda nn: nn.CosineEmbeddingLoss(reduction="none"),
     lambda: [In(randn(4, 5)), In(randn(4, 5, seed=1)), In(_pm1(4, 4), grad=False)]),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(margin=0.5),
     lambda: [In(randn(4, 5)), In(randn(4, 5, seed=1)), In(randn(4, 5, seed=2))]),
    ("TripletMarginLoss-swap", lambda nn: nn.TripletMarginLoss(margin=2.0, p=1.0, swap=True, reduction="none"),
     lambda: [In(randn(4, 5)), In(randn(4, 5, seed=1)), In(randn(4, 5, seed=2))]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), lambda: [In(randn(3, 4)), In(_pm1((3, 4), 1), grad=False)]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(0.5),
     lambda: [In(randn(3, 4)), In(_pm1((3, 4), 1), grad=False)]),
    ("BCEWithLogitsLoss-posweight", lambda nn: nn.BCEWithLogitsLoss(pos_weight=_t(nn, [1.0, 2.0, 0.5])),
     lambda: [In(randn(4, 3)), In(_rng(1).random((4, 3)), grad=False)]),
    ("BCELoss-weight", lambda nn: nn.BCELoss(weight=_t(nn, [1.0, 2.0, 0.5])),
     lambda: [In(_rng(0).uniform(0.05, 0.95, (4, 3))), In(_rng(1).random((4, 3)), grad=False)]),
    ("NLLLoss-weight-ignore", lambda nn: nn.NLLLoss(weight=_t(nn, [1.0, 2.0, 0.5]), ignore_index=1),
     lambda: [In(np.log(_rng(0).dirichlet(np.ones(3), 5))), In(np.array([0, 1, 2, 2, 1]))]),
    ("CrossEntropyLoss-all", lambda nn: nn.CrossEntropyLoss(weight=_t(nn, [1.0, 2.0, 0.5]), ignore_index=0,
                                                            label_smoothing=0.1),
     lambda: [In(randn(5, 3)), In(np.array([0, 1, 2, 2, 1]))]),
    ("L1Loss-sum", lambda nn: nn.L1Loss(reduction="sum"), lambda: [In(randn(3, 4)), In(randn(3, 4, seed=1))]),
    ("MSELoss-legacy", lambda nn: nn.MSELoss(size_average=False), lambda: [In(randn(3, 4)), In(randn(3, 4, seed=1))]),
]


def _t(nn, values):
    lib = torch if nn is torch.nn else tl
    return lib.tensor(values)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,inputs", LOSSES, ids=[a[0] for a in LOSSES])
def test_loss_modules(name, make, inputs, dtype):
    if dtype == "float64" and ("weight" in name or "posweight" in name or "CrossEntropy" in name):
        make0 = make
        make = lambda nn: make0(nn).double()  # noqa: E731 - the class weights follow the module's dtype
    tl_mod, th_mod = run_module(make, inputs(), dtype)
    assert repr(tl_mod) == repr(th_mod)
    assert tl_mod.reduction == th_mod.reduction


def test_loss_errors_and_legacy_arguments():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert tl.nn.L1Loss(reduce=False).reduction == "none"
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        tl.nn.HuberLoss("bogus")
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        TF.smooth_l1_loss(tl.randn(3), tl.randn(3), beta=-1.0)
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        TF.cosine_embedding_loss(tl.randn(3), tl.randn(3), tl.ones(3))
    with pytest.raises(RuntimeError, match="The anchor, positive, and negative tensors are expected to have the same"):
        TF.triplet_margin_loss(tl.randn(3, 2), tl.randn(2), tl.randn(3, 2))
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        TF.mse_loss(tl.randn(3, 4), tl.randn(3, 4), weight=tl.ones(4))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        TF.kl_div(tl.randn(2, 3), tl.rand(2, 3))


# ---- recurrent ----------------------------------------------------------------------------------------
def _rnn_call(hidden):
    """Call with an initial state built from arrays (one per state tensor), each a grad-requiring leaf."""
    def call(lib, m, x, *hs):
        if not hs:
            return m(x)
        return m(x, (hs[0], hs[1]) if len(hs) == 2 else hs[0])
    return call


RNNS = [
    ("RNN", lambda nn: nn.RNN(3, 5), [(7, 2, 3)]),
    ("RNN-relu-2l-bi-bf-h0", lambda nn: nn.RNN(3, 5, 2, "relu", batch_first=True, bidirectional=True),
     [(2, 7, 3), (4, 2, 5)]),
    ("RNN-unbatched", lambda nn: nn.RNN(3, 4, bias=False), [(6, 3), (1, 4)]),
    ("LSTM", lambda nn: nn.LSTM(3, 5), [(7, 2, 3)]),
    ("LSTM-2l-bi-h0c0", lambda nn: nn.LSTM(3, 5, 2, bidirectional=True), [(6, 2, 3), (4, 2, 5), (4, 2, 5)]),
    ("LSTM-proj", lambda nn: nn.LSTM(3, 6, 2, proj_size=2, batch_first=True), [(2, 5, 3), (2, 2, 2), (2, 2, 6)]),
    ("LSTM-proj-bi", lambda nn: nn.LSTM(3, 6, proj_size=4, bidirectional=True), [(5, 2, 3)]),
    ("LSTM-unbatched", lambda nn: nn.LSTM(3, 5, bias=False), [(6, 3), (1, 5), (1, 5)]),
    ("GRU", lambda nn: nn.GRU(3, 5), [(7, 2, 3)]),
    ("GRU-2l-nobias", lambda nn: nn.GRU(3, 5, 2, bias=False), [(6, 2, 3), (2, 2, 5)]),
    ("GRU-bi-bf-unbatched", lambda nn: nn.GRU(3, 4, batch_first=True, bidirectional=True), [(5, 3), (2, 4)]),
    ("RNNCell", lambda nn: nn.RNNCell(3, 5), [(4, 3)]),
    ("RNNCell-relu-h", lambda nn: nn.RNNCell(3, 5, nonlinearity="relu"), [(4, 3), (4, 5)]),
    ("RNNCell-unbatched", lambda nn: nn.RNNCell(3, 5, bias=False), [(3,), (5,)]),
    ("LSTMCell", lambda nn: nn.LSTMCell(3, 5), [(4, 3)]),
    ("LSTMCell-hc", lambda nn: nn.LSTMCell(3, 5), [(4, 3), (4, 5), (4, 5)]),
    ("LSTMCell-unbatched", lambda nn: nn.LSTMCell(3, 5, bias=False), [(3,), (5,), (5,)]),
    ("GRUCell", lambda nn: nn.GRUCell(3, 5), [(4, 3), (4, 5)]),
    ("GRUCell-unbatched", lambda nn: nn.GRUCell(3, 5), [(3,)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,shapes", RNNS, ids=[a[0] for a in RNNS])
def test_recurrent_modules(name, make, shapes, dtype):
    inputs = [In(randn(*s, seed=i)) for i, s in enumerate(shapes)]
    tl_mod, th_mod = run_module(make, inputs, dtype, call=_rnn_call(len(shapes) - 1))
    assert repr(tl_mod) == repr(th_mod)


def test_rnn_dropout_between_layers_and_eval():
    tl.manual_seed(0)
    m = tl.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = tl.randn(5, 2, 3)
    a, b = m(x)[0].detach(), m(x)[0].detach()
    assert not np.allclose(a.numpy(), b.numpy())  # dropout between the layers draws a new mask
    m.eval()
    assert np.allclose(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        tl.nn.GRU(3, 4, dropout=0.2)


def test_rnn_init_and_flatten_parameters():
    m = tl.nn.GRU(4, 16, 2)
    bound = 1 / math.sqrt(16)
    for _, p in m.named_parameters():
        assert p.abs().max().item() <= bound
        assert p.std().item() > bound / 3  # uniform in (-bound, bound), not zeros
    m.flatten_parameters()
    assert len(m.all_weights) == 2 and len(m.all_weights[0]) == 4


@pytest.mark.parametrize("ctor,call,exc,msg", [
    (lambda: tl.nn.LSTM(3, 4), lambda m: m(tl.randn(2, 2, 2, 3)), ValueError,
     "LSTM: Expected input to be 2D or 3D, got 4D tensor instead"),
    (lambda: tl.nn.GRU(3, 4), lambda m: m(tl.randn(5, 2, 6)), RuntimeError,
     r"input.size\(-1\) must be equal to input_size. Expected 3, got 6"),
    (lambda: tl.nn.RNN(3, 4, 2), lambda m: m(tl.randn(5, 2, 3), tl.zeros(1, 2, 4)), RuntimeError,
     r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"),
    (lambda: tl.nn.LSTM(3, 4), lambda m: m(tl.randn(5, 2, 3), (tl.zeros(1, 2, 4), tl.zeros(1, 3, 4))), RuntimeError,
     r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 3, 4\]"),
    (lambda: tl.nn.RNN(3, 4), lambda m: m(tl.randn(5, 3), tl.zeros(1, 1, 4)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    (lambda: tl.nn.LSTM(3, 4), lambda m: m(tl.randn(5, 2, 3), (tl.zeros(2, 4), tl.zeros(2, 4))), RuntimeError,
     r"For batched 3-D input, hx and cx should also be 3-D but got \(2-D, 2-D\) tensors"),
    (lambda: tl.nn.GRU(3, 4), lambda m: m(tl.randn(5, 2, 3, dtype=tl.float64)), ValueError,
     "input must have the type"),
    (lambda: tl.nn.RNN(3, 4, nonlinearity="gelu"), None, ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda: tl.nn.GRU(3, 4, proj_size=2), None, TypeError, "proj_size"),
    (lambda: tl.nn.LSTM(3, 4, proj_size=4), None, ValueError, "proj_size has to be smaller than hidden_size"),
    (lambda: tl.nn.LSTM(3, 4, dropout=1.5), None, ValueError, "dropout should be a number in range"),
    (lambda: tl.nn.GRUCell(3, 4), lambda m: m(tl.randn(2, 5)), RuntimeError,
     "input has inconsistent input_size: got 5 expected 3"),
    (lambda: tl.nn.LSTMCell(3, 4), lambda m: m(tl.randn(2, 3), (tl.zeros(3, 4), tl.zeros(3, 4))), RuntimeError,
     "Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: tl.nn.RNNCell(3, 4), lambda m: m(tl.randn(2, 3, 3)), ValueError,
     "RNNCell: Expected input to be 1D or 2D, got 3D instead"),
])
def test_recurrent_errors(ctor, call, exc, msg):
    with pytest.raises(exc, match=msg):
        m = ctor()
        call(m)


# ---- attention ----------------------------------------------------------------------------------------
def _mask(lib, arr, dtype=None):
    t = lib.tensor(arr)
    return t if dtype is None else t.to(getattr(lib, dtype))


def _mha(**kw):
    """A call of the attention module with these keyword arguments, for a run's dtype: a ("mask", array[, "DT"])
    value becomes a tensor of each library (a float mask in the run's dtype when marked "DT")."""
    def for_dtype(dtype):
        def call(lib, m, q, k, v):
            args = {}
            for name, val in kw.items():
                if isinstance(val, tuple) and val and val[0] == "mask":
                    args[name] = _mask(lib, val[1], dtype if len(val) > 2 else None)
                else:
                    args[name] = val
            if args.pop("self_attn", False):
                return m(q, q, q, **args)
            return m(q, k, v, **args)
        return call
    return for_dtype


_KPM = np.array([[False, False, True, False, True], [False, False, False, False, False],
                 [False, True, False, False, False]])
_CAUSAL_BOOL = np.triu(np.ones((4, 5), bool), 1)
_FLOAT_MASK = randn(4, 5, seed=9)
_SQ_CAUSAL = np.triu(np.full((5, 5), -np.inf), 1)

MHAS = [
    ("mha", lambda nn: nn.MultiheadAttention(8, 2), _mha(), [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-noweights", lambda nn: nn.MultiheadAttention(8, 2), _mha(need_weights=False),
     [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-headweights", lambda nn: nn.MultiheadAttention(8, 4, batch_first=True), _mha(average_attn_weights=False),
     [(3, 4, 8), (3, 5, 8), (3, 5, 8)]),
    ("mha-kpm-bool", lambda nn: nn.MultiheadAttention(8, 2), _mha(key_padding_mask=("mask", _KPM)),
     [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-kpm-sdpa", lambda nn: nn.MultiheadAttention(8, 2), _mha(key_padding_mask=("mask", _KPM),
                                                                   need_weights=False),
     [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-attn-bool", lambda nn: nn.MultiheadAttention(8, 2), _mha(attn_mask=("mask", _CAUSAL_BOOL)),
     [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-attn-float-sdpa", lambda nn: nn.MultiheadAttention(8, 2), _mha(attn_mask=("mask", _FLOAT_MASK, "DT"),
                                                                          need_weights=False),
     [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-causal-hint", lambda nn: nn.MultiheadAttention(8, 2),
     _mha(self_attn=True, attn_mask=("mask", _SQ_CAUSAL, "DT"), is_causal=True, need_weights=False),
     [(5, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("mha-bias-kv-zero-attn", lambda nn: nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True),
     _mha(key_padding_mask=("mask", _KPM)), [(4, 3, 8), (5, 3, 8), (5, 3, 8)]),
    ("mha-kdim-vdim", lambda nn: nn.MultiheadAttention(8, 2, kdim=3, vdim=6, batch_first=True), _mha(),
     [(3, 4, 8), (3, 5, 3), (3, 5, 6)]),
    ("mha-nobias", lambda nn: nn.MultiheadAttention(6, 3, bias=False), _mha(need_weights=False),
     [(4, 2, 6), (5, 2, 6), (5, 2, 6)]),
    ("mha-unbatched", lambda nn: nn.MultiheadAttention(8, 2), _mha(key_padding_mask=("mask", _KPM[0])),
     [(4, 8), (5, 8), (5, 8)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,call,shapes", MHAS, ids=[a[0] for a in MHAS])
def test_multihead_attention(name, make, call, shapes, dtype):
    inputs = [In(randn(*s, seed=i)) for i, s in enumerate(shapes)]
    tl_mod, th_mod = run_module(make, inputs, dtype, call=call(dtype))
    assert repr(tl_mod) == repr(th_mod)
    # eval mode under no_grad is torch's fast path where it applies: the same numbers
    run_module(make, inputs, dtype, call=call(dtype), train=False, no_grad=True)


def test_mha_dropout_in_training_changes_weights_only_in_train_mode():
    tl.manual_seed(0)
    m = tl.nn.MultiheadAttention(8, 2, dropout=0.5)
    x = tl.randn(4, 2, 8)
    with tl.no_grad():
        assert not np.allclose(m(x, x, x)[0].numpy(), m(x, x, x)[0].numpy())
        m.eval()
        assert np.allclose(m(x, x, x)[0].numpy(), m(x, x, x)[0].numpy())


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        tl.nn.MultiheadAttention(6, 4)
    m = tl.nn.MultiheadAttention(8, 2)
    x = tl.randn(4, 2, 8)
    with pytest.raises(AssertionError, match="For batched \\(3-D\\) `query`, expected `key` and `value` to be 3-D"):
        m(x, tl.randn(4, 8), tl.randn(4, 8))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        m(x, x, x, attn_mask=tl.zeros(3, 3))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        m(tl.randn(4, 2, 6), tl.randn(4, 2, 6), tl.randn(4, 2, 6))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        m(x, x, x, key_padding_mask=tl.zeros(2, 4, dtype=tl.int64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_against_torch(dtype):
    rng = _rng(3)
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)))
    bool_mask = rng.random((4, 6)) > 0.4
    bool_mask[1] = False  # a query that may attend to nothing: zeros, not NaN
    float_mask = rng.standard_normal((2, 1, 4, 6)).astype(dtype)
    float_mask[0, 0, 2] = -np.inf
    for kw in ({}, {"attn_mask": bool_mask}, {"attn_mask": float_mask}, {"is_causal": True}, {"scale": 0.7},
               {"is_causal": True, "scale": 0.2}):
        a = [tl.tensor(t, requires_grad=True) for t in (q, k, v)]
        b = [torch.tensor(t, requires_grad=True) for t in (q, k, v)]
        ka = {n: tl.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        kb = {n: torch.tensor(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
        ya, yb = TF.scaled_dot_product_attention(*a, **ka), torch.nn.functional.scaled_dot_product_attention(*b, **kb)
        assert_close(ya, yb, **TOL[dtype])
        g = rng.standard_normal(yb.shape).astype(dtype)
        (ya * tl.tensor(g)).sum().backward()
        (yb * torch.tensor(g)).sum().backward()
        for x, y in zip(a, b):
            assert_close(x.grad, y.grad, **TOL[dtype])
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        TF.scaled_dot_product_attention(tl.tensor(q), tl.tensor(k), tl.tensor(v), tl.tensor(bool_mask),
                                        is_causal=True)
    # enable_gqa: fewer key/value heads than query heads
    kq = rng.standard_normal((1, 4, 3, 8)).astype(dtype)
    kk = rng.standard_normal((1, 2, 5, 8)).astype(dtype)
    assert_close(TF.scaled_dot_product_attention(tl.tensor(kq), tl.tensor(kk), tl.tensor(kk), enable_gqa=True),
                 torch.nn.functional.scaled_dot_product_attention(torch.tensor(kq), torch.tensor(kk),
                                                                  torch.tensor(kk), enable_gqa=True), **TOL[dtype])


# ---- transformer layers ---------------------------------------------------------------------------------
def _enc_call(mask=None, kpm=None, is_causal=False, mask_name="src_mask"):
    def call(lib, m, x):
        kw = {}
        if mask is not None:
            kw[mask_name] = lib.tensor(mask).to(x.dtype) if mask.dtype.kind == "f" else lib.tensor(mask)
        if kpm is not None:
            kw["src_key_padding_mask"] = lib.tensor(kpm)
        if is_causal:
            kw["is_causal"] = True
        return m(x, **kw)
    return call


def _dec_call(tgt_mask=None, mem_kpm=None):
    def call(lib, m, x, mem):
        kw = {}
        if tgt_mask is not None:
            kw["tgt_mask"] = lib.tensor(tgt_mask).to(x.dtype)
        if mem_kpm is not None:
            kw["memory_key_padding_mask"] = lib.tensor(mem_kpm)
        return m(x, mem, **kw)
    return call


_SQ5 = np.triu(np.full((5, 5), -np.inf), 1)
_KPM5 = np.array([[False, False, False, True, True], [False] * 5, [False, True, False, False, False]])

TRANSFORMERS = [
    ("enc-layer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), _enc_call(), [(5, 3, 8)]),
    ("enc-layer-normfirst-gelu-bf", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, 0.0, "gelu", batch_first=True,
                                                                          norm_first=True),
     _enc_call(mask=_SQ5, is_causal=True), [(3, 5, 8)]),
    ("enc-layer-kpm", lambda nn: nn.TransformerEncoderLayer(8, 4, 16, 0.0, bias=False),
     _enc_call(kpm=_KPM5, mask=np.triu(np.ones((5, 5), bool), 1)), [(5, 3, 8)]),
    ("enc-layer-callable-act", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, 0.0, nn.functional.silu,
                                                                     layer_norm_eps=1e-3), _enc_call(), [(5, 8)]),
    ("dec-layer", lambda nn: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), _dec_call(_SQ5, _KPM5[:, :4]),
     [(5, 3, 8), (4, 3, 8)]),
    ("dec-layer-normfirst-bf", lambda nn: nn.TransformerDecoderLayer(8, 2, 16, 0.0, "gelu", batch_first=True,
                                                                     norm_first=True), _dec_call(_SQ5),
     [(3, 5, 8), (3, 4, 8)]),
    ("encoder", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0), 2, nn.LayerNorm(8)),
     _enc_call(mask=_SQ5, kpm=_KPM5, mask_name="mask"), [(5, 3, 8)]),
    ("decoder", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), 2),
     _dec_call(_SQ5), [(3, 5, 8), (3, 4, 8)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,call,shapes", TRANSFORMERS, ids=[a[0] for a in TRANSFORMERS])
def test_transformer_layers(name, make, call, shapes, dtype):
    inputs = [In(randn(*s, seed=i)) for i, s in enumerate(shapes)]
    tl_mod, th_mod = run_module(make, inputs, dtype, call=call)
    assert repr(tl_mod) == repr(th_mod)
    # eval under no_grad is torch's fast path; with a key padding mask it zeroes the padded positions (see the
    # transformer module's doc), so those runs are compared in training mode only
    if "kpm" not in name and name != "encoder":
        run_module(make, inputs, dtype, call=call, train=False, no_grad=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eval_matches_torch_fast_path(dtype, monkeypatch):
    """In eval mode under no_grad torch runs its fused fast path (checked: its kernels are called); ours, the one
    path, gives the same numbers."""
    calls = []
    for name in ("_native_multi_head_attention", "_transformer_encoder_layer_fwd"):
        orig = getattr(torch, name)
        monkeypatch.setattr(torch, name, (lambda o, n: lambda *a, **k: calls.append(n) or o(*a, **k))(orig, name))
    x = [In(randn(3, 5, 8))]
    run_module(lambda nn: nn.MultiheadAttention(8, 2, batch_first=True), x, dtype,
               call=lambda lib, m, q: m(q, q, q), train=False, no_grad=True)
    run_module(lambda nn: nn.MultiheadAttention(8, 2, batch_first=True), x, dtype,
               call=lambda lib, m, q: m(q, q, q, need_weights=False), train=False, no_grad=True)
    run_module(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), x, dtype, train=False,
               no_grad=True)
    run_module(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", batch_first=True, norm_first=True),
               x, dtype, train=False, no_grad=True)
    assert calls == ["_native_multi_head_attention"] * 2 + ["_transformer_encoder_layer_fwd"] * 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_transformer(dtype):
    def make(nn):
        return nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16,
                              dropout=0.0, batch_first=True)

    def call(lib, m, src, tgt):
        mask = lib.nn.Transformer.generate_square_subsequent_mask(4).to(tgt.dtype)
        return m(src, tgt, tgt_mask=mask, src_key_padding_mask=lib.tensor(_KPM5[:2]))

    tl_mod, th_mod = run_module(make, [In(randn(2, 5, 8)), In(randn(2, 4, 8, seed=1))], dtype, call=call)
    assert repr(tl_mod) == repr(th_mod)


def test_transformer_init_mask_and_errors():
    m = tl.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    w = m.encoder.layers[0].linear1.weight
    bound = math.sqrt(6.0 / (8 + 16))
    assert w.abs().max().item() <= bound and w.std().item() > bound / 3
    assert m.encoder.layers[0].norm1.weight.tolist() == [1.0] * 8  # 1-D parameters keep their own init
    assert m.encoder.layers[0] is not tl.nn.TransformerEncoder(m.encoder.layers[0], 2).layers[0]  # deep copies
    assert_close(tl.nn.Transformer.generate_square_subsequent_mask(4),
                 torch.nn.Transformer.generate_square_subsequent_mask(4))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(tl.randn(5, 2, 8), tl.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        m(tl.randn(5, 2, 6), tl.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        tl.nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_tiny_gpt_block_trains_like_torch():
    """A causal self-attention block (the shape of a nanoGPT layer) trained three SGD steps in both libraries
    from the same weights: the losses agree step by step."""
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.TransformerEncoderLayer(16, 4, 32, 0.0, "gelu", batch_first=True,
                                                                norm_first=True), lib.nn.Linear(16, 7))

    th, ours = build(torch).double(), build(tl).double()
    ours.load_state_dict(_state_to_tl(th.state_dict()))
    x = randn(4, 6, 16)
    y = _rng(2).integers(0, 7, (4, 6))
    mask = np.triu(np.full((6, 6), -np.inf), 1)
    opt_th = torch.optim.SGD(th.parameters(), lr=0.1)
    opt_tl = tl.optim.SGD(ours.parameters(), lr=0.1)
    for _ in range(3):
        losses = []
        for lib, model, opt in ((torch, th, opt_th), (tl, ours, opt_tl)):
            layer, head = model[0], model[1]
            h = layer(lib.tensor(x), src_mask=lib.tensor(mask), is_causal=True)
            loss = lib.nn.functional.cross_entropy(head(h).reshape(-1, 7), lib.tensor(y).reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) < 1e-10


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04), (1.0, 0.5, 0.2, 3.0),
                                          (0.0, 1.0, 3.0, 4.0)])
def test_trunc_normal_draws_torchs_distribution(mean, std, a, b):
    """Bounds hold, and the moments match torch's trunc_normal_ on a large draw (same distribution, own stream;
    the last window is far in the tail, where ours comes from the inverse CDF)."""
    tl.manual_seed(0)
    torch.manual_seed(0)
    ours = tl.nn.init.trunc_normal_(tl.empty(200, 100), mean, std, a, b).numpy()
    theirs = torch.nn.init.trunc_normal_(torch.empty(200, 100), mean, std, a, b).numpy()
    assert ours.min() >= a and ours.max() <= b
    np.testing.assert_allclose(ours.mean(), theirs.mean(), atol=4 * theirs.std() / 141)
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.03)


@pytest.mark.parametrize("shape,gain", [((3, 5), 1.0), ((5, 3), 2.0), ((6, 2, 2), 0.5), ((4, 4), 1.0)])
def test_orthogonal_and_eye_init_as_torch(shape, gain):
    w = tl.nn.init.orthogonal_(tl.empty(*shape), gain=gain)
    m = w.reshape(shape[0], -1).numpy().astype(np.float64)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5)
    t = torch.nn.init.orthogonal_(torch.empty(*shape), gain=gain).reshape(shape[0], -1).double().numpy()
    ts = t @ t.T if t.shape[0] <= t.shape[1] else t.T @ t
    np.testing.assert_allclose(ts, small, atol=1e-5)
    for lib in (tl, torch):
        with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
            lib.nn.init.orthogonal_(lib.empty(3))
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
            lib.nn.init.eye_(lib.empty(2, 2, 2))
    np.testing.assert_array_equal(tl.nn.init.eye_(tl.empty(2, 3)).numpy(),
                                  torch.nn.init.eye_(torch.empty(2, 3)).numpy())


@pytest.mark.parametrize("shapes,gqa,match", [
    (((2, 3, 8), (4, 3, 8), (4, 3, 8)), False, "do not broadcast"),
    (((1, 6, 4, 8), (1, 4, 4, 8), (1, 4, 4, 8)), True, "must divide the number of heads"),
    (((1, 6, 4, 8), (1, 4, 4, 8), (1, 2, 4, 8)), True, "must divide the number of heads"),
])
def test_attention_shapes_that_do_not_fit_are_refused_by_name(shapes, gqa, match):
    """Found by review: the fused attention path raised NumPy's broadcast ValueError; torch raises a RuntimeError."""
    for lib in (tl, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.scaled_dot_product_attention(*[lib.ones(*s) for s in shapes], enable_gqa=gqa)
    with pytest.raises(RuntimeError, match=match):
        TF.scaled_dot_product_attention(*[tl.ones(*s) for s in shapes], enable_gqa=gqa)


def test_grouped_query_attention_with_different_key_and_value_heads_as_torch():
    q, k, v = (np.random.default_rng(3).standard_normal(s) for s in ((1, 6, 4, 8), (1, 3, 4, 8), (1, 2, 4, 8)))
    outs = []
    for lib in (tl, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = lib.nn.functional.scaled_dot_product_attention(*ts, enable_gqa=True, is_causal=True)
        out.sum().backward()
        outs.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_trunc_normal_fills_a_view_in_place_and_far_tails_quickly():
    """Found by review: a transposed tensor kept values outside [a, b] (the fill went to a copy), and a window far
    in a tail took seconds (a Python loop per element)."""
    base = tl.empty(4, 100)
    w = base.t()
    assert tl.nn.init.trunc_normal_(w, a=2.0, b=3.0) is w
    vals = base.numpy()
    assert vals.min() >= 2.0 and vals.max() <= 3.0 and len(np.unique(vals)) == vals.size
    big = tl.nn.init.trunc_normal_(tl.empty(500, 400), mean=1.0, std=0.1, a=1.5, b=1.6).numpy()
    # far in the tail the mass piles up near a: the mean is about a + std**2 / (a - mean)
    assert big.min() >= 1.5 and big.max() <= 1.6 and abs(big.mean() - 1.5 - 0.1 / 5.0) < 0.005


@pytest.mark.parametrize("qdt,mdt", [("float32", "int64"), ("float32", "float64"), ("float16", "int32")])
def test_attention_mask_dtypes_torch_refuses_are_refused_with_its_message(qdt, mdt):
    """A mask is bool, float32 or the query's dtype; torch names the others in C++ terms, and so do we."""
    msgs = []
    for lib in (tl, torch):
        q = lib.ones(2, 3, 4, dtype=getattr(lib, qdt))
        with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float") as e:
            lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=lib.zeros(3, 3, dtype=getattr(lib, mdt)))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_attention_float_mask_written_in_place_after_forward_on_the_cpu_as_torch():
    """On the CPU the backward reads the kept weights, not the mask: a later write to the mask changes nothing, as
    in torch (on CUDA the kernels read the mask again, and the write is an error: test_cuda_backend.py)."""
    grads = []
    for lib in (tl, torch):
        q = lib.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)), requires_grad=True)
        mask = lib.tensor(np.random.default_rng(1).standard_normal((3, 3)))
        y = lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
        mask.add_(1.0)
        y.sum().backward()
        grads.append(q.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)

"""Names PyTorch programs use that do little or nothing on one CPU process: constants, legacy constructors,
``Variable``, ``torch.distributed``, ``torch.nn.parallel``, ``torch.jit``, ``torch.onnx``; each against torch."""

from __future__ import annotations

import inspect
import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.distributed as dist
from tinygrad_like.nn.parallel import DataParallel, DistributedDataParallel

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
          "CharTensor", "ByteTensor", "BoolTensor"]


def same(ours, theirs) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy().astype(np.float64), theirs.float().numpy().astype(np.float64))


def raises_like(ours, theirs) -> Exception:
    """Both raise the same exception type; returns ours (for its message)."""
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(type(t.value)) as o:
        ours()
    return o.value


@pytest.mark.parametrize("name", ["inf", "nan", "pi", "e", "newaxis"])
def test_constants_have_torch_values_and_types(name):
    ours, theirs = getattr(tl, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    assert (math.isnan(ours) and math.isnan(theirs)) if name == "nan" else ours == theirs


@pytest.mark.parametrize("name", LEGACY)
@pytest.mark.parametrize("args", [([1, 0, 2],), ((3, -1),), (3,), (2, 3), (), (np.array([1, 2]),), (0,)])
def test_legacy_constructors_match_torch(name, args):
    ours, theirs = getattr(tl, name)(*args), getattr(torch, name)(*args)
    if len(args) and all(isinstance(a, int) for a in args):  # (sizes: torch's memory is uninitialized, ours zeros)
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype)[-4:] == str(theirs.dtype)[-4:]
        assert not ours.numpy().any()
    else:
        same(ours, theirs)
    assert ours.type() == theirs.type() == f"torch.{name}"
    assert isinstance(ours, getattr(tl, name)) and isinstance(theirs, getattr(torch, name))


def test_legacy_constructor_edge_cases_match_torch():
    same(tl.LongTensor([1.7, -2.2]), torch.LongTensor([1.7, -2.2]))
    same(tl.FloatTensor(tl.Size([2, 2])), torch.zeros(torch.FloatTensor(torch.Size([2, 2])).shape))
    t = tl.tensor([1.0, 2.0])
    alias = tl.FloatTensor(t)
    alias[0] = 5.0  # (torch's shares the data too)
    assert t.tolist() == [5.0, 2.0]
    assert "negative dimension" in str(raises_like(lambda: tl.FloatTensor(-1), lambda: torch.FloatTensor(-1)))
    raises_like(lambda: tl.LongTensor(2.5), lambda: torch.LongTensor(2.5))
    raises_like(lambda: tl.LongTensor("a"), lambda: torch.LongTensor("a"))
    e = raises_like(lambda: tl.FloatTensor(tl.tensor([1, 2])), lambda: torch.FloatTensor(torch.tensor([1, 2])))
    assert "tensor.type('torch.FloatTensor')" in str(e)


def test_isinstance_checks_dtype_as_torch():
    for ours, theirs in [(tl.zeros(2), torch.zeros(2)),
                         (tl.zeros(2, dtype=tl.int64), torch.zeros(2, dtype=torch.long))]:
        for name in LEGACY:
            assert isinstance(ours, getattr(tl, name)) == isinstance(theirs, getattr(torch, name)), name
    assert not isinstance([1.0], tl.FloatTensor)
    assert issubclass(tl.FloatTensor, tl.Tensor) == issubclass(torch.FloatTensor, torch.Tensor)
    assert repr(tl.FloatTensor) == repr(torch.FloatTensor) and tl.FloatTensor.__name__ == "FloatTensor"


def test_tensor_type_matches_torch():
    ours, theirs = tl.ones(2), torch.ones(2)
    assert ours.type() == theirs.type()
    for target in ["torch.LongTensor", "torch.DoubleTensor", "torch.BoolTensor"]:
        same(ours.type(target), theirs.type(target))
    same(ours.type(tl.LongTensor), theirs.type(torch.LongTensor))
    same(ours.type(tl.int32), theirs.type(torch.int32))
    same(ours.type(dtype=tl.int16), theirs.type(dtype=torch.int16))
    assert ours.type(tl.float32) is ours and theirs.type(torch.float32) is theirs
    for bad in ["float", "torch.float64"]:
        raises_like(lambda b=bad: ours.type(b), lambda b=bad: theirs.type(b))
    raises_like(lambda: ours.type(float), lambda: theirs.type(float))
    x = tl.ones(2, requires_grad=True)
    x.type(tl.float64).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_is_tensor_is_storage_as_tensor():
    for obj in [tl.ones(1), [1.0], 3.0]:
        ref = torch.ones(1) if isinstance(obj, tl.Tensor) else obj
        assert tl.is_tensor(obj) == torch.is_tensor(ref)
    assert tl.is_storage(tl.ones(2).storage) and not tl.is_storage(tl.ones(2)) and not torch.is_storage(torch.ones(2))
    for name in ["is_tensor", "is_storage"]:
        assert inspect.signature(getattr(tl, name)).parameters.keys() == \
            inspect.signature(getattr(torch, name)).parameters.keys()
    a = np.array([1.0, 2.0], dtype=np.float32)
    ours, theirs = tl.as_tensor(a), torch.as_tensor(a)
    a[0] = 9.0  # (both share a NumPy array's memory)
    same(ours, theirs)
    t = tl.ones(2)
    assert tl.as_tensor(t) is t and tl.as_tensor(t, dtype=tl.float32) is t
    same(tl.as_tensor([1, 2], dtype=tl.float64), torch.as_tensor([1, 2], dtype=torch.float64))
    same(tl.as_tensor(a, dtype=tl.int64), torch.as_tensor(a, dtype=torch.int64))


def test_variable_returns_a_detached_tensor_as_torch():
    t, tt = tl.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 2
    v, tv = tl.autograd.Variable(t), torch.autograd.Variable(tt)
    assert type(v) is tl.Tensor and type(tv) is torch.Tensor
    assert v.grad_fn is None and tv.grad_fn is None and not v.requires_grad
    assert tl.autograd.Variable(tl.ones(2), True).requires_grad
    assert tl.autograd.Variable(tl.ones(2), requires_grad=True).requires_grad
    assert isinstance(tl.zeros(1), tl.autograd.Variable) and isinstance(torch.zeros(1), torch.autograd.Variable)
    same(tl.autograd.Variable(), torch.autograd.Variable())
    base = tl.ones(2)
    tl.autograd.Variable(base)[0] = 5.0  # (shares the data, as torch's)
    assert base.tolist() == [5.0, 1.0]
    raises_like(lambda: tl.autograd.Variable([1, 2]), lambda: torch.autograd.Variable([1, 2]))
    with pytest.warns(UserWarning, match="volatile"):
        tl.autograd.Variable(tl.ones(1), volatile=True)


@pytest.fixture
def one_process_env(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29511")
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.mark.filterwarnings("ignore::UserWarning")  # (torch's BackendConfig warns on the unknown backend)
def test_distributed_answers_as_torch_before_init(monkeypatch):
    for name in ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]:
        monkeypatch.delenv(name, raising=False)
    assert (dist.is_available(), dist.is_initialized()) == (tdist.is_available(), tdist.is_initialized())
    assert (dist.is_gloo_available(), dist.is_nccl_available()) == (tdist.is_gloo_available(),
                                                                    tdist.is_nccl_available())
    for fn in ["get_rank", "get_world_size", "barrier"]:
        e = raises_like(getattr(dist, fn), getattr(tdist, fn))
        assert "init_process_group" in str(e)
    raises_like(lambda: dist.all_reduce(tl.ones(2)), lambda: tdist.all_reduce(torch.ones(2)))
    raises_like(dist.destroy_process_group, tdist.destroy_process_group)
    assert "RANK" in str(raises_like(lambda: dist.init_process_group("gloo"), lambda: tdist.init_process_group("gloo")))
    assert "MASTER_ADDR" in str(raises_like(lambda: dist.init_process_group("gloo", world_size=1, rank=0),
                                            lambda: tdist.init_process_group("gloo", world_size=1, rank=0)))
    e = raises_like(lambda: dist.init_process_group("foo", init_method="tcp://127.0.0.1:29514", world_size=1, rank=0),
                    lambda: tdist.init_process_group("foo", init_method="tcp://127.0.0.1:29514", world_size=1, rank=0))
    assert "Unknown backend type 'foo'" in str(e) and not dist.is_initialized()
    raises_like(lambda: DistributedDataParallel(tl.nn.Linear(2, 2)),
                lambda: torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2)))


@pytest.mark.parametrize("name", ["init_process_group", "destroy_process_group", "get_rank", "get_world_size",
                                  "barrier", "all_reduce", "reduce", "broadcast", "all_gather", "gather", "scatter",
                                  "get_backend", "is_available", "is_initialized"])
def test_distributed_signatures_match_torch(name):
    assert list(inspect.signature(getattr(dist, name)).parameters) == \
        list(inspect.signature(getattr(tdist, name)).parameters)


@pytest.mark.parametrize("backend", ["gloo", "nccl", None])
def test_a_world_of_one(one_process_env, backend):
    dist.init_process_group(backend)
    assert dist.is_initialized() and (dist.get_rank(), dist.get_world_size()) == (0, 1)
    t = tl.tensor([1.0, 2.0])
    for op in [dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX]:
        dist.all_reduce(t, op=op)
    assert t.tolist() == [1.0, 2.0]  # (torch's gloo, in a world of one, leaves it so: checked by hand)
    assert dist.all_reduce(t, async_op=True).wait() and dist.barrier() is None
    gathered = [tl.zeros(2)]
    dist.all_gather(gathered, t)
    assert gathered[0].tolist() == [1.0, 2.0]
    model = tl.nn.Linear(2, 1)
    ddp = DistributedDataParallel(model, device_ids=None)
    assert ddp.module is model and list(ddp.state_dict()) == ["module.weight", "module.bias"]
    with ddp.no_sync():
        assert not ddp.require_backward_grad_sync
    assert ddp.require_backward_grad_sync
    np.testing.assert_array_equal(ddp(tl.ones(3, 2)).detach().numpy(), model(tl.ones(3, 2)).detach().numpy())
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("gloo")
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_larger_worlds_and_bad_ranks_are_refused(one_process_env, monkeypatch):
    with pytest.raises(RuntimeError, match="only a world of size 1"):
        dist.init_process_group("nccl", world_size=4, rank=0)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="torchrun"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="rank"):
        dist.init_process_group("gloo", world_size=1, rank=1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29512", world_size=1, rank=0)
    assert dist.get_world_size() == 1


def test_data_parallel_wraps_as_torch():
    torch.manual_seed(0)
    theirs = torch.nn.Linear(3, 2)
    ours = tl.nn.Linear(3, 2)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    dp, tdp = DataParallel(ours), torch.nn.DataParallel(theirs)
    assert list(dp.state_dict()) == list(tdp.state_dict())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(dp(tl.tensor(x)).detach().numpy(), tdp(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    for cls, tcls in [(DataParallel, torch.nn.DataParallel),
                      (DistributedDataParallel, torch.nn.parallel.DistributedDataParallel)]:
        assert list(inspect.signature(cls).parameters) == list(inspect.signature(tcls).parameters)


@pytest.mark.filterwarnings("ignore:`torch.jit.fork` is deprecated", "ignore:`torch.jit.wait` is deprecated")
def test_jit_runs_eagerly():
    def double(x):
        return 2 * x

    assert tl.jit.script(double) is double and tl.jit.trace(double, (tl.ones(1),)) is double
    model = tl.nn.Linear(2, 2)
    assert tl.jit.script(model) is model
    assert tl.jit.ignore(double) is double and tl.jit.ignore(drop=True)(double) is double
    assert tl.jit.unused(double) is double and tl.jit.export(double) is double
    assert tl.jit.is_scripting() is torch.jit.is_scripting() is False
    assert tl.jit.is_tracing() is torch.jit.is_tracing() is False
    assert not isinstance(model, tl.jit.ScriptModule) and issubclass(tl.jit.ScriptModule, tl.nn.Module)
    assert tl.jit.wait(tl.jit.fork(double, 3)) == torch.jit.wait(torch.jit.fork(double, 3)) == 6
    with pytest.raises(NotImplementedError, match="state_dict"):
        tl.jit.save(model, "m.pt")
    for name in ["script", "ignore", "unused", "is_scripting", "export", "annotate", "fork", "wait", "save"]:
        assert list(inspect.signature(getattr(tl.jit, name)).parameters) == \
            list(inspect.signature(getattr(torch.jit, name)).parameters), name


def test_onnx_export_says_it_is_not_supported():
    with pytest.raises(NotImplementedError, match="ONNX export is not supported.*state_dict"):
        tl.onnx.export(tl.nn.Linear(2, 2), (tl.ones(1, 2),), "model.onnx", input_names=["x"])
    assert tl.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert list(inspect.signature(tl.onnx.export).parameters) == list(inspect.signature(torch.onnx.export).parameters)


PROGRAM = """
import math
import torch
import torch.nn.parallel
import torch.onnx
import torch.jit
from torch.distributed import init_process_group, destroy_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.autograd import Variable
init_process_group(backend="nccl")
model = DDP(torch.jit.script(torch.nn.Linear(2, 1)))
print(torch.distributed.get_rank(), torch.distributed.get_world_size(), torch.jit.is_scripting())
print(torch.LongTensor(3).shape[0], torch.LongTensor([1, 2]).tolist(), torch.FloatTensor(2, 3).type())
print(isinstance(torch.ones(2), torch.FloatTensor), torch.ones(2).type('torch.LongTensor').tolist())
v = Variable(torch.ones(1), requires_grad=True)
print(torch.inf == math.inf, round(torch.pi, 4), torch.newaxis, v.requires_grad)
print(sorted(model.state_dict()), torch.onnx.is_in_onnx_export())
destroy_process_group()
"""


def test_a_program_importing_them_runs_under_the_alias(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29513",
           "PYTHONPATH": os.path.dirname(os.path.dirname(tl.__file__))}
    out = subprocess.run([sys.executable, "-m", "tinygrad_like.run", str(path)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "0 1 False", "3 [1, 2] torch.FloatTensor", "True [1, 1]", "True 3.1416 None True",
        "['module.bias', 'module.weight'] False"]


def test_importing_them_has_no_side_effects():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = ("import sys, tinygrad_like.distributed as d, tinygrad_like.jit, tinygrad_like.onnx, "
                "tinygrad_like.nn.parallel; assert not d.is_initialized(); assert 'torch' not in sys.modules")
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(tl.__file__))})

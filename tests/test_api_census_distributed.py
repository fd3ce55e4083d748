"""``torch.distributed`` in a world of one process, against torch's gloo backend in a world of one (a FileStore in
``tmp_path``, so no port is shared): values, returned types and error types of every collective, the groups, the
stores, the classes, and the subpackages that are clear errors."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.distributed as dist

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")

OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
BIT_OPS = ["BAND", "BOR", "BXOR"]


@pytest.fixture
def worlds(tmp_path):
    """Our world of one and torch's (gloo, world size 1), both initialized; both destroyed after."""
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'ours'}", world_size=1, rank=0)
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path / 'torch'}", world_size=1, rank=0)
    yield
    dist.destroy_process_group()
    tdist.destroy_process_group()


def pair(values, dtype="float32"):
    return tl.tensor(values, dtype=getattr(tl, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def same(ours, theirs) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def raises_like(ours, theirs) -> Exception:
    """Both raise the same exception type; returns ours (for its message)."""
    with pytest.raises(Exception) as t:
        theirs()
    expected = type(t.value)
    if expected.__module__.startswith("torch.distributed"):  # (DistStoreError...: ours of the same name)
        expected = getattr(dist, expected.__name__)
    with pytest.raises(expected) as o:
        ours()
    return o.value


@pytest.mark.parametrize("op", OPS + BIT_OPS)
@pytest.mark.parametrize("fn", ["all_reduce", "reduce", "all_reduce_coalesced"])
def test_reductions_leave_the_tensor_as_torch_does(worlds, fn, op):
    dtype = "int64" if op in BIT_OPS else "float32"
    ours, theirs = pair([[1, -2], [3, 4]], dtype)
    arg_o, arg_t = ([ours], [theirs]) if fn.endswith("coalesced") else (ours, theirs)
    kwargs = {"dst": 0} if fn == "reduce" else {}
    getattr(dist, fn)(arg_o, op=getattr(dist.ReduceOp, op), **kwargs)
    getattr(tdist, fn)(arg_t, op=getattr(tdist.ReduceOp, op), **kwargs)
    same(ours, theirs)


def test_a_bare_premul_sum_is_refused_as_torch(worlds):
    e = raises_like(lambda: dist.all_reduce(tl.ones(2), op=dist.ReduceOp.PREMUL_SUM),
                    lambda: tdist.all_reduce(torch.ones(2), op=tdist.ReduceOp.PREMUL_SUM))
    assert "PREMUL_SUM" in str(e)


def test_async_work_and_its_future(worlds):
    ours, theirs = pair([1.0, 2.0])
    wo, wt = dist.all_reduce(ours, async_op=True), tdist.all_reduce(theirs, async_op=True)
    assert (wo.wait(), wo.is_completed(), wo.is_success()) == (wt.wait(), wt.is_completed(), wt.is_success())
    (fo,), (ft,) = wo.get_future().wait(), wt.get_future().wait()
    same(fo, ft)
    assert fo is ours and ft is theirs
    assert len(wo.result()) == len(wt.result()) == 1
    assert dist.all_reduce(ours) is tdist.all_reduce(theirs) is None
    assert isinstance(dist.broadcast(ours, 0, async_op=True), dist.Work)
    assert isinstance(dist.barrier(async_op=True), dist.Work) and isinstance(tdist.barrier(async_op=True), tdist.Work)
    assert dist.barrier() is tdist.barrier() is None
    assert dist.monitored_barrier() is tdist.monitored_barrier() is None


@pytest.mark.parametrize("call", [lambda d, t: d.reduce(t), lambda d, t: d.broadcast(t), lambda d, t: d.send(t),
                                  lambda d, t: d.isend(t)])
def test_reduce_broadcast_and_send_need_a_peer_rank(worlds, call):
    e = raises_like(lambda: call(dist, tl.ones(1)), lambda: call(tdist, torch.ones(1)))
    assert "Must specify global_rank" in str(e)


def test_broadcast_keeps_the_source(worlds):
    ours, theirs = pair([5.0, 6.0])
    dist.broadcast(ours, src=0)
    tdist.broadcast(theirs, src=0)
    same(ours, theirs)


@pytest.mark.parametrize("fn", ["all_gather_into_tensor", "all_gather_single", "reduce_scatter_tensor",
                                "reduce_scatter_single", "all_to_all_single"])
def test_tensor_collectives_copy_the_input(worlds, fn):
    (oo, ot), (io, it) = pair([0.0, 0.0, 0.0]), pair([7.0, 8.0, 9.0])
    getattr(dist, fn)(oo, io)
    getattr(tdist, fn)(ot, it)
    same(oo, ot)


def test_all_to_all_single_with_splits(worlds):
    (oo, ot), (io, it) = pair([0.0, 0.0]), pair([7.0, 8.0])
    dist.all_to_all_single(oo, io, [2], [2])
    tdist.all_to_all_single(ot, it, [2], [2])
    same(oo, ot)


def test_gloo_gathers_into_a_concatenated_output_only(worlds):
    (oo, ot), (io, it) = pair([[0.0, 0.0]]), pair([7.0, 8.0])
    raises_like(lambda: dist.all_gather_into_tensor(oo, io), lambda: tdist.all_gather_into_tensor(ot, it))


@pytest.mark.parametrize("fn", ["all_gather", "gather", "scatter", "reduce_scatter", "all_to_all",
                                "all_gather_coalesced"])
def test_list_collectives_copy_as_torch(worlds, fn):
    (oo, ot), (io, it) = pair([0.0, 0.0]), pair([3.0, 4.0])
    calls = {"all_gather": lambda d, o, i: d.all_gather([o], i), "gather": lambda d, o, i: d.gather(i, [o], dst=0),
             "scatter": lambda d, o, i: d.scatter(o, [i], src=0),
             "reduce_scatter": lambda d, o, i: d.reduce_scatter(o, [i]),
             "all_to_all": lambda d, o, i: d.all_to_all([o], [i]),
             "all_gather_coalesced": lambda d, o, i: d.all_gather_coalesced([[o]], [i])}
    assert calls[fn](dist, oo, io) is calls[fn](tdist, ot, it) is None
    same(oo, ot)
    same(io, it)


def test_gather_and_scatter_need_their_lists_on_the_root(worlds):
    assert "gather_list" in str(raises_like(lambda: dist.gather(tl.ones(1)), lambda: tdist.gather(torch.ones(1))))
    assert "scatter_list" in str(raises_like(lambda: dist.scatter(tl.ones(1)), lambda: tdist.scatter(torch.ones(1))))
    raises_like(lambda: dist.gather_object(1), lambda: tdist.gather_object(1))
    raises_like(lambda: dist.scatter_object_list([None]), lambda: tdist.scatter_object_list([None]))


def test_point_to_point_with_oneself_fails_as_torch(worlds):
    e = raises_like(lambda: dist.send(tl.ones(1), 0), lambda: tdist.send(torch.ones(1), 0))
    assert "destination rank should not be the same" in str(e)
    raises_like(lambda: dist.send_object_list([1], 0), lambda: tdist.send_object_list([1], 0))
    for fn in ["isend", "irecv", "recv"]:
        assert "itself" in str(raises_like(lambda f=fn: getattr(dist, f)(tl.ones(1), 0),
                                           lambda f=fn: getattr(tdist, f)(torch.ones(1), 0)))
    raises_like(lambda: dist.batch_isend_irecv([dist.P2POp(dist.isend, tl.ones(1), 0)]),
                lambda: tdist.batch_isend_irecv([tdist.P2POp(tdist.isend, torch.ones(1), 0)]))
    raises_like(lambda: dist.P2POp(dist.send, tl.ones(1), 0), lambda: tdist.P2POp(tdist.send, torch.ones(1), 0))
    raises_like(lambda: dist.batch_isend_irecv([]), lambda: tdist.batch_isend_irecv([]))


def test_object_collectives_give_copies_as_torch(worlds):
    obj = {"step": 3, "names": ["a", "b"]}
    for d in (dist, tdist):
        gathered, got, scattered, listed = [None], [None], [None], [obj, 5]
        d.all_gather_object(gathered, obj)
        d.gather_object(obj, got, dst=0)
        d.scatter_object_list(scattered, [obj], src=0)
        d.broadcast_object_list(listed, src=0)
        assert gathered == got == scattered == [obj] and listed == [obj, 5]
        assert (gathered[0] is obj, got[0] is obj, scattered[0] is obj, listed[0] is obj) == (False, False, False,
                                                                                               True)


def test_groups_as_torch(worlds):
    assert dist.group.WORLD is dist.GroupMember.WORLD is not None
    assert tdist.group.WORLD is tdist.GroupMember.WORLD is not None
    assert dist.GroupMember.NON_GROUP_MEMBER == tdist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_pg_count() == tdist.get_pg_count() == 1
    go, gt = dist.new_group([0]), tdist.new_group([0])
    assert isinstance(go, dist.ProcessGroup) and isinstance(gt, tdist.ProcessGroup)
    for g, d in ((go, dist), (gt, tdist)):
        assert (g.rank(), g.size(), g.name()) == (0, 1, "gloo")
        assert d.get_process_group_ranks(g) == [0] and d.get_group_rank(g, 0) == d.get_global_rank(g, 0) == 0
        assert (d.get_rank(g), d.get_world_size(g), d.get_backend(g)) == (0, 1, "gloo")
    assert dist.get_pg_count() == tdist.get_pg_count() == 2
    assert dist.get_group_rank(dist.group.WORLD, 0) == tdist.get_group_rank(tdist.group.WORLD, 0)
    assert dist.get_backend_config() == tdist.get_backend_config()
    assert type(dist.get_backend()) is str and type(tdist.get_backend()) is str
    so, st = dist.new_subgroups(group_size=1), tdist.new_subgroups(group_size=1)
    assert so[0] is so[1][0] and st[0] is st[1][0] and len(so[1]) == len(st[1]) == 1
    eo, et = dist.new_subgroups_by_enumeration([[0]]), tdist.new_subgroups_by_enumeration([[0]])
    assert len(eo[1]) == len(et[1]) == 1 and dist.get_process_group_ranks(eo[0]) == [0]
    dist.all_reduce(tl.ones(1), group=go)
    assert dist.split_group(split_ranks=[[0]]).size() == 1
    for bad in [lambda d: d.new_group([0, 1]), lambda d: d.new_subgroups(group_size=2), lambda d: d.new_subgroups(),
                lambda d: d.new_subgroups_by_enumeration([[0], [1]])]:
        raises_like(lambda b=bad: b(dist), lambda b=bad: b(tdist))


def test_destroying_the_world_forgets_every_group(worlds):
    dist.new_group()
    dist.destroy_process_group()
    assert dist.get_pg_count() == 0 and dist.group.WORLD is None and not dist.is_initialized()
    dist.init_process_group("gloo", init_method="file:///unused", world_size=1, rank=0)


@pytest.mark.parametrize("call", [
    lambda d, t: d.get_rank(), lambda d, t: d.get_backend(), lambda d, t: d.new_group(),
    lambda d, t: d.get_process_group_ranks(None), lambda d, t: d.monitored_barrier(),
    lambda d, t: d.all_gather_object([None], 1), lambda d, t: d.send(t.ones(1), 0),
    lambda d, t: d.all_gather_into_tensor(t.ones(1), t.ones(1)), lambda d, t: d.reduce_scatter_tensor(t.ones(1),
                                                                                                      t.ones(1)),
    lambda d, t: d.get_backend_config(), lambda d, t: d.broadcast_object_list([1]),
    lambda d, t: d.new_subgroups(group_size=1)])
def test_before_init_errors_are_torchs(call):
    e = raises_like(lambda: call(dist, tl), lambda: call(tdist, torch))
    assert isinstance(e, ValueError) and str(e) == dist.distributed_c10d._NOT_INITIALIZED
    assert dist.get_pg_count() == tdist.get_pg_count() == 0


def test_availability_and_environment(monkeypatch):
    for name in ["is_available", "is_gloo_available", "is_nccl_available", "is_mpi_available", "is_ucc_available",
                 "is_xccl_available", "is_torchelastic_launched"]:
        assert getattr(dist, name)() == getattr(tdist, name)(), name
    for backend in ["gloo", "nccl", "mpi", "ucc"]:
        assert dist.is_backend_available(backend) == tdist.is_backend_available(backend), backend
    for device in ["cpu", "cuda", "mps"]:
        assert dist.get_default_backend_for_device(device) == tdist.get_default_backend_for_device(device)
    raises_like(lambda: dist.get_default_backend_for_device("nowhere"),
                lambda: tdist.get_default_backend_for_device("nowhere"))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    raises_like(dist.get_node_local_rank, tdist.get_node_local_rank)
    assert dist.get_node_local_rank(fallback_rank=2) == tdist.get_node_local_rank(fallback_rank=2) == 2
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert dist.get_node_local_rank() == tdist.get_node_local_rank() == 0
    assert dist.default_pg_timeout == tdist.default_pg_timeout == dist.constants.default_pg_timeout
    assert dist.constants.default_pg_nccl_timeout == tdist.constants.default_pg_nccl_timeout


def test_reduce_op_backend_and_enums_as_torch():
    for op in OPS + BIT_OPS + ["PREMUL_SUM"]:
        ours, theirs = getattr(dist.ReduceOp, op), getattr(tdist.ReduceOp, op)
        assert (str(ours), repr(ours), ours.value) == (str(theirs), repr(theirs), theirs.value)
        assert dist.supports_complex(ours) == tdist.supports_complex(theirs)
        assert ours == getattr(dist.ReduceOp.RedOpType, op) and dist.ReduceOp(ours) == ours
    with pytest.warns(FutureWarning):
        assert dist.reduce_op.SUM == dist.ReduceOp.SUM
    for name in ["GLOO", "nccl", "Mpi", "custom_thing"]:
        assert dist.Backend(name) == tdist.Backend(name) and isinstance(dist.Backend(name), str)
    assert dist.Backend.backend_list == tdist.Backend.backend_list
    # (torch's map also holds backends registered by whatever ran before in this process, e.g. a "fake" one)
    theirs = {k: v for k, v in tdist.Backend.default_device_backend_map.items() if v != "fake"}
    assert dist.Backend.default_device_backend_map == theirs
    for backend in ["gloo", "nccl", "cpu:gloo,cuda:nccl"]:
        assert repr(dist.BackendConfig(dist.Backend(backend))) == repr(tdist.BackendConfig(tdist.Backend(backend)))
    assert list(dist.DebugLevel.__members__) == list(tdist.DebugLevel.__members__)
    assert str(dist.get_debug_level()) == str(tdist.get_debug_level())
    assert list(dist.BuiltinCommHookType.__members__) == list(tdist.BuiltinCommHookType.__members__)
    assert [c.__name__ for c in dist.QueueEmptyError.__mro__] == [c.__name__ for c in tdist.QueueEmptyError.__mro__]
    for name in ["DistBackendError", "DistNetworkError", "DistStoreError"]:
        assert [c.__name__ for c in getattr(dist, name).__mro__] == [c.__name__ for c in getattr(tdist, name).__mro__]


@pytest.mark.parametrize("name", ["AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "BarrierOptions",
                                  "BroadcastOptions", "GatherOptions", "ReduceOptions", "ReduceScatterOptions",
                                  "ScatterOptions"])
def test_options_have_torchs_fields_and_defaults(name):
    ours, theirs = getattr(dist, name)(), getattr(tdist, name)()
    fields = [a for a in dir(theirs) if not a.startswith("_")]
    assert fields == [a for a in dir(ours) if not a.startswith("_")]
    for field in fields:
        if field != "reduceOp":
            assert getattr(ours, field) == getattr(theirs, field), field


def test_debug_level_from_env(monkeypatch):
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL
    dist.set_debug_level(dist.DebugLevel.OFF)
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "LOUD")
    raises_like(dist.set_debug_level_from_env, tdist.set_debug_level_from_env)


@pytest.mark.parametrize("make", [lambda d: d.HashStore(), lambda d: d.PrefixStore("run", d.HashStore())])
def test_stores_answer_as_torchs(make):
    ours, theirs = make(dist), make(tdist)
    steps = [lambda s: s.timeout, lambda s: s.num_keys(), lambda s: s.set("a", "x"), lambda s: s.set("b", b"y"),
             lambda s: s.get("a"), lambda s: s.add("n", 3), lambda s: s.add("n", 2), lambda s: s.get("n"),
             lambda s: s.compare_set("a", "x", "z"), lambda s: s.compare_set("a", "q", "w"),
             lambda s: s.compare_set("new", "", "v"), lambda s: s.compare_set("absent", "e", "v"),
             lambda s: s.delete_key("a"), lambda s: s.delete_key("a"), lambda s: s.check(["b"]),
             lambda s: s.check(["a", "b"]), lambda s: s.append("b", "2"), lambda s: s.get("b"),
             lambda s: s.multi_get(["b", "n"]), lambda s: s.multi_set(["c"], ["3"]), lambda s: s.get("c"),
             lambda s: s.num_keys(), lambda s: s.has_extended_api(), lambda s: s.queue_push("q", "1"),
             lambda s: s.queue_len("q"), lambda s: s.queue_pop("q"), lambda s: s.queue_len("q"),
             lambda s: s.wait(["b", "c"])]
    for i, step in enumerate(steps):
        assert step(ours) == step(theirs), i
    for s in (ours, theirs):
        s.set_timeout(timedelta(milliseconds=50))
    raises_like(lambda: ours.get("missing"), lambda: theirs.get("missing"))
    raises_like(lambda: ours.wait(["missing"]), lambda: theirs.wait(["missing"]))
    e = raises_like(lambda: ours.queue_pop("q", block=False), lambda: theirs.queue_pop("q", block=False))
    assert isinstance(e, dist.QueueEmptyError)
    assert dist.PrefixStore("p", ours).underlying_store is ours


def test_a_hash_store_serves_threads():
    import threading  # (waits: only this test starts a thread)
    store = dist.HashStore()
    threading.Timer(0.05, store.set, ("ready", "1")).start()
    assert store.get("ready") == b"1"


def torch_parameters(name: str) -> list[str] | None:
    """torch's parameter names of ``torch.distributed.<name>``; None for a C++ function or class without any."""
    try:
        params = [p for p in inspect.signature(getattr(tdist, name)).parameters if p != "self"]
    except (TypeError, ValueError):
        return None
    return None if params == ["args", "kwargs"] else params


WITH_SIGNATURES = [n for n in sorted(set(dist.__all__)) if callable(getattr(tdist, n, None)) and torch_parameters(n)]


@pytest.mark.parametrize("name", WITH_SIGNATURES)
def test_signatures_match_torch(name):
    assert [p for p in inspect.signature(getattr(dist, name)).parameters if p != "self"] == torch_parameters(name)


CLEAR_ERRORS = ["DeviceMesh", "init_device_mesh", "Reducer", "Logger", "GradBucket", "ProcessGroupGloo", "TCPStore",
                "FileStore", "rendezvous", "register_rendezvous_handler"]


@pytest.mark.parametrize("name", CLEAR_ERRORS)
def test_multi_process_names_are_clear_errors(name):
    with pytest.raises(NotImplementedError, match="world of one process"):
        getattr(dist, name)("cpu", (1,))


@pytest.mark.parametrize("name", dist._submodules.NAMES)
def test_multi_process_subpackages_import_and_say_why(name):
    module = getattr(dist, name)
    assert module.__name__ == f"tinygrad_like.distributed.{name}"
    with pytest.raises(NotImplementedError, match="world of one process"):
        module.SomeClass()
    with pytest.raises(NotImplementedError, match="world of one process"):
        module.some_function()


PROGRAM = """
import torch
import torch.distributed as dist
import torch.distributed.fsdp
from torch.distributed import init_process_group, ReduceOp
from torch.distributed.elastic.multiprocessing.errors import record
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
import torch.distributed.algorithms.ddp_comm_hooks.default_hooks as hooks

@record
def main():
    init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=1, rank=0)
    t = torch.tensor([1.0, 2.0])
    dist.all_reduce(t, op=ReduceOp.SUM)
    out = torch.zeros(2)
    dist.all_gather_into_tensor(out, t)
    objs = [None]
    dist.all_gather_object(objs, {"loss": 0.5})
    print(t.tolist(), out.tolist(), objs, dist.get_world_size(), isinstance(t, FSDP))
    try:
        hooks.allreduce_hook(None, None)
    except NotImplementedError as e:
        print(type(e).__name__)
    dist.destroy_process_group()

main()
"""


def test_a_program_using_them_runs_under_the_alias(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(tl.__file__))}
    out = subprocess.run([sys.executable, "-m", "tinygrad_like.run", str(path)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[1.0, 2.0] [1.0, 2.0] [{'loss': 0.5}] 1 False", "NotImplementedError"]

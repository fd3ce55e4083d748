"""Autograd introspection as PyTorch answers it: node class names, next_functions with AccumulateGrad, _saved_*,
node hooks, torch.autograd.graph and torch.utils.hooks; each compared with real torch on the same program."""

import subprocess
import sys
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.nn.functional as TF
from tinygrad_like.autograd import graph as tl_graph
from tinygrad_like.utils import hooks as tl_hooks

torch = pytest.importorskip("torch")
import torch.autograd.graph as torch_graph  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.hooks as torch_hooks  # noqa: E402

RNG = np.random.default_rng(0)
ARRAYS = {k: RNG.standard_normal(s).astype(np.float32) for k, s in
          {"x": (3, 4), "y": (3, 4), "w1": (4, 5), "b1": (5,), "w2": (5, 2), "b2": (2,), "c": (3, 4),
           "t": (2, 3, 4), "v": (4,)}.items()}


def leaves(lib, grad=("x", "y", "w1", "b1", "w2", "b2", "t", "v")):
    return {k: lib.tensor(a, requires_grad=k in grad) for k, a in ARRAYS.items()}


def prog_xyz(lib, L, F_):
    z = L["x"] * 2  # a non-leaf
    return ((L["x"] * L["y"] + z) * L["c"]).sum()  # c: an input that needs no grad


def prog_mlp(lib, L, F_):
    h = (L["x"] @ L["w1"] + L["b1"]).relu()
    out = (h @ L["w2"] + L["b2"]).log_softmax(1)
    return -out.mean()


def prog_views(lib, L, F_):
    x, t = L["x"], L["t"]
    a = x.view(12)[2:7].sum() + x[0].sum(0) + x.t().sum(1).sum() + x.reshape(2, 6).mean(1).sum()
    b = t.transpose(0, 2).sum() + t.permute(2, 0, 1).sum() + t[:, 1].exp().sum() + t.unsqueeze(0).squeeze(0).sum()
    return a * b


def prog_ops(lib, L, F_):
    x, y, v = L["x"], L["y"], L["v"]
    a = (x / (y.abs() + 1)).tanh() + x.sigmoid() ** 2 + (x.exp() + 1).log()
    b = x.softmax(1) * (y.abs() + 1).sqrt() - y.neg() + (x @ v).unsqueeze(1)
    return (a.sum(0) + b.max() + (v @ v) * lib.where(x > 0, x, y).mean()).sum() + F_.relu(y).sum()


PROGRAMS = {"x*y+z": prog_xyz, "mlp": prog_mlp, "views": prog_views, "ops": prog_ops}


def walk(root, labels):
    """The graph under ``root`` as nested (name, children); a leaf is its label; None stays None."""
    memo = {}

    def go(node):
        if node is None:
            return None
        if type(node).__name__ == "AccumulateGrad":
            return ("AccumulateGrad", labels[id(node.variable)])
        if id(node) in memo:
            return memo[id(node)]
        out = (type(node).__name__, tuple((go(n), i) for n, i in node.next_functions))
        memo[id(node)] = out
        return out

    return go(root)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_graph_is_torchs_node_for_node(name):
    Lt, Ll = leaves(torch), leaves(tl)
    rt, rl = PROGRAMS[name](torch, Lt, F), PROGRAMS[name](tl, Ll, TF)
    gt = walk(rt.grad_fn, {id(t): k for k, t in Lt.items()})
    gl = walk(rl.grad_fn, {id(t): k for k, t in Ll.items()})
    assert gl == gt
    rt.backward()
    rl.backward()
    for k in Lt:
        if Lt[k].grad is not None:
            np.testing.assert_allclose(Ll[k].grad.numpy(), Lt[k].grad.numpy(), rtol=1e-5, atol=1e-5)


def test_node_names_reprs_and_tensor_repr_agree_with_torch():
    for lib in (torch, tl):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = x * x + 1
        node = z.grad_fn
        assert type(node).__name__ == "AddBackward0" and node.name() == "AddBackward0"
        assert repr(node) == f"<AddBackward0 object at {id(node):#x}>"
        assert repr(z).endswith("grad_fn=<AddBackward0>)")
        assert isinstance(node, (torch_graph if lib is torch else tl_graph).Node)
        acc = node.next_functions[0][0].next_functions[0][0]
        assert type(acc).__name__ == "AccumulateGrad" and acc.name() == "torch::autograd::AccumulateGrad"
        assert repr(acc) == f"<AccumulateGrad object at {id(acc):#x}>"
    assert tl.tensor([1.0], requires_grad=True).mul(2).grad_fn.name == "Mul"  # our short name, for the views


@pytest.mark.parametrize("make", [
    lambda L, x, y: L.matmul(x, y.T), lambda L, x, y: x[0] @ y[0], lambda L, x, y: x @ y[0],
    lambda L, x, y: x.sum(), lambda L, x, y: x.sum(1), lambda L, x, y: x.mean(), lambda L, x, y: x.mean(0),
    lambda L, x, y: x ** 2, lambda L, x, y: x ** y, lambda L, x, y: 2 ** x, lambda L, x, y: x.max(),
    lambda L, x, y: x.max(0)[0], lambda L, x, y: x.amax(1), lambda L, x, y: x.min(), lambda L, x, y: x.t(),
    lambda L, x, y: x[1], lambda L, x, y: x[:, 1:], lambda L, x, y: x.view(-1), lambda L, x, y: x.tril(),
    lambda L, x, y: x.triu(), lambda L, x, y: x.double(), lambda L, x, y: x.clamp(0, 1), lambda L, x, y: x.std(),
    lambda L, x, y: x.unsqueeze(0).squeeze(0), lambda L, x, y: x.unsqueeze(0).squeeze(),
    lambda L, x, y: L.cat([x, y], 1), lambda L, x, y: x.log1p(), lambda L, x, y: x.logsumexp(1),
])
def test_variant_names_are_torchs(make):
    xt, yt = torch.tensor(ARRAYS["x"], requires_grad=True), torch.tensor(ARRAYS["y"], requires_grad=True)
    xl, yl = tl.tensor(ARRAYS["x"], requires_grad=True), tl.tensor(ARRAYS["y"], requires_grad=True)
    assert type(make(tl, xl, yl).grad_fn).__name__ == type(make(torch, xt, yt).grad_fn).__name__


def test_linear_is_one_addmm_node_over_the_weight():
    """A deliberate difference: torch puts a TBackward0 between AddmmBackward0 and the weight."""
    x = tl.tensor(ARRAYS["x"])
    lin = tl.nn.Linear(4, 5)
    nf = lin(x).grad_fn.next_functions
    assert type(lin(x).grad_fn).__name__ == "AddmmBackward0"
    assert nf[0][0].variable is lin.bias and nf[1] == (None, 0) and nf[2][0].variable is lin.weight
    tx = torch.tensor(ARRAYS["x"])
    tnf = torch.nn.Linear(4, 5)(tx).grad_fn.next_functions
    assert [type(n).__name__ if n else None for n, _ in tnf] == ["AccumulateGrad", None, "TBackward0"]


def test_in_place_ops_name_the_node_as_torch():
    for lib in (torch, tl):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.add_(1)
        z = x * 3
        z.relu_()
        v = x * 1
        u = v[1:]
        u.mul_(2)
        names = [type(t.grad_fn).__name__ for t in (y, z, v, u)]
        assert names == ["AddBackward0", "ReluBackward0", "CopySlices", "AsStridedBackward0"]


def test_accumulate_grad_is_cached_per_leaf_and_holds_the_leaf():
    x = tl.ones(3, requires_grad=True)
    a, b = x * 2, x * 3
    acc = a.grad_fn.next_functions[0][0]
    assert acc is b.grad_fn.next_functions[0][0] is a.grad_fn.next_functions[0][0]
    assert acc.variable is x and acc.next_functions == ()
    assert tl_graph.get_gradient_edge(x).node is acc
    edge = tl_graph.get_gradient_edge(a)
    assert edge.node is a.grad_fn and edge.output_nr == 0
    assert torch_graph.get_gradient_edge(torch.ones(1, requires_grad=True) * 2).output_nr == 0
    with pytest.raises(RuntimeError):
        tl_graph.get_gradient_edge(tl.ones(2))
    with pytest.raises(RuntimeError):
        torch_graph.get_gradient_edge(torch.ones(2))


SAVED = [
    ("mul", lambda x, y: x * y, ["_saved_self", "_saved_other"]),
    ("mul_number", lambda x, y: x * 2, ["_saved_other"]),
    ("div", lambda x, y: x / y, ["_saved_self", "_saved_other"]),
    ("pow", lambda x, y: x ** 2, ["_saved_self", "_saved_exponent"]),
    ("powt", lambda x, y: x.abs() ** y, ["_saved_exponent", "_saved_result"]),
    ("exp", lambda x, y: x.exp(), ["_saved_result"]),
    ("log", lambda x, y: x.abs().log(), []),
    ("tanh", lambda x, y: x.tanh(), ["_saved_result"]),
    ("sigmoid", lambda x, y: x.sigmoid(), ["_saved_result"]),
    ("relu", lambda x, y: x.relu(), ["_saved_result"]),
    ("mm", lambda x, y: x @ y.T, ["_saved_self"]),
    ("sum", lambda x, y: x.sum(), ["_saved_self_sym_sizes"]),
    ("sum_dim", lambda x, y: x.sum(1, keepdim=True), ["_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"]),
    ("mean", lambda x, y: x.mean(), ["_saved_self_sym_sizes", "_saved_self_sym_numel"]),
    ("mean_dim", lambda x, y: x.mean(0), ["_saved_dim", "_saved_keepdim", "_saved_self_sym_numel"]),
    ("view", lambda x, y: x.view(12), ["_saved_self_sym_sizes"]),
    ("reshape", lambda x, y: x.reshape(2, 6), ["_saved_self_sym_sizes"]),
    ("transpose", lambda x, y: x.unsqueeze(0).transpose(0, 2), ["_saved_dim0", "_saved_dim1"]),
    ("permute", lambda x, y: x.unsqueeze(0).permute(2, 0, 1), ["_saved_dims"]),
    ("softmax", lambda x, y: x.softmax(1), ["_saved_dim", "_saved_result"]),
    ("log_softmax", lambda x, y: x.log_softmax(1), ["_saved_dim", "_saved_result"]),
    ("add", lambda x, y: x + y, ["_saved_alpha"]),
    ("sub", lambda x, y: x - y, ["_saved_alpha"]),
    ("cat", lambda x, y: x.unsqueeze(0).expand(2, 3, 4).sum(0), ["_saved_self_sym_sizes"]),
]


def _same(a, b):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, tl.Tensor)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
    else:
        assert a == b and type(a) is type(b) or (isinstance(b, tuple) and tuple(a) == b)


@pytest.mark.parametrize("name,f,attrs", SAVED, ids=[s[0] for s in SAVED])
def test_saved_attributes_are_torchs(name, f, attrs):
    xt, yt = torch.tensor(ARRAYS["x"], requires_grad=True), torch.tensor(ARRAYS["y"], requires_grad=True)
    xl, yl = tl.tensor(ARRAYS["x"], requires_grad=True), tl.tensor(ARRAYS["y"], requires_grad=True)
    nt, nl = f(xt, yt).grad_fn, f(xl, yl).grad_fn
    for attr in attrs:
        _same(getattr(nl, attr), getattr(nt, attr))
    if name == "mul":  # a saved leaf is the leaf itself, as in torch
        assert nl._saved_self is xl and nt._saved_self is xt
    if name == "mul_number":
        assert nl._saved_self is None and nt._saved_self is None
    if name == "exp":
        assert nl._saved_result.grad_fn is nl and nt._saved_result.grad_fn is nt
    with pytest.raises(AttributeError):
        nl._saved_no_such_thing  # noqa: B018


def test_saved_tensor_after_backward_raises_torchs_error():
    for lib in (torch, tl):
        x = lib.ones(3, requires_grad=True)
        y = x * x
        y.sum().backward()
        with pytest.raises(RuntimeError, match=r"^Trying to backward through the graph a second time \(or directly "
                                               r"access saved tensors after they have already been freed\)"):
            y.grad_fn._saved_self  # noqa: B018
        s = x.sum(0)
        s.backward()
        assert s.grad_fn._saved_dim == (0,)  # (not a tensor: still there)


def _run_hooks(lib):
    calls = []
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * w
    z = y.exp()
    node = y.grad_fn
    node.metadata["tag"] = "mul"
    h1 = node.register_prehook(lambda go: (calls.append(("pre", go[0].tolist())), (go[0] * 2,))[1])
    h2 = node.register_hook(lambda gi, go: (calls.append(("post", len(gi), go[0].tolist())), (gi[0] + 1, gi[1]))[1])
    acc = node.next_functions[0][0]
    h3 = acc.register_prehook(lambda go: (calls.append(("acc", go[0].tolist())), None)[1])
    h5 = acc.register_hook(lambda gi, go: calls.append(("acc_post", len(gi), go[0].tolist())))
    x.grad = lib.ones(3)  # (the post hook sees the incoming gradient, not the accumulated .grad)
    seen = []
    h4 = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    z.sum().backward(retain_graph=True)
    first = (x.grad.tolist(), w.grad.tolist(), list(seen))
    for h in (h1, h2, h3, h4, h5):
        h.remove()
    x.grad = w.grad = None
    z.sum().backward()
    return calls, first, (x.grad.tolist(), w.grad.tolist()), seen, node.metadata


def test_node_hooks_and_post_accumulate_hook_as_torch():
    ct, ft, st, seen_t, mt = _run_hooks(torch)
    cl, fl, sl, seen_l, ml = _run_hooks(tl)
    assert len(cl) == len(ct) and [c[0] for c in cl] == [c[0] for c in ct]
    for a, b in zip(cl, ct):
        np.testing.assert_allclose(np.array(a[-1]), np.array(b[-1]), rtol=1e-6)
    np.testing.assert_allclose(fl[0], ft[0], rtol=1e-6)
    np.testing.assert_allclose(fl[1], ft[1], rtol=1e-6)
    np.testing.assert_allclose(fl[2], ft[2], rtol=1e-6)
    np.testing.assert_allclose(sl, st, rtol=1e-6)
    assert len(seen_l) == len(seen_t) == 1 and ml == mt == {"tag": "mul"}


def test_post_accumulate_hook_refuses_non_leaves():
    for lib in (torch, tl):
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
            (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda t: None)


def _saved_hooks_run(lib, graph):
    log = []

    def pack(t):
        log.append("pack")
        return t * 1

    def unpack(t):
        log.append("unpack")
        return t

    x = lib.tensor([0.5, 1.0, 1.5], requires_grad=True)
    with graph.saved_tensors_hooks(pack, unpack):
        y = x * x
        z = y.exp()
    saved = z.grad_fn._saved_result.tolist()
    z.sum().backward()
    return log, x.grad.tolist(), saved


def test_saved_tensors_hooks_are_called_as_torch_calls_them():
    lt, gt, st = _saved_hooks_run(torch, torch_graph)
    ll, gl, sl = _saved_hooks_run(tl, tl_graph)
    assert ll == lt
    np.testing.assert_allclose(gl, gt, rtol=1e-6)
    np.testing.assert_allclose(sl, st, rtol=1e-6)


def test_save_on_cpu_and_disable_saved_tensors_hooks():
    for lib, graph in ((torch, torch_graph), (tl, tl_graph)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with graph.save_on_cpu():
            y = (x * x).sin()
        y.sum().backward()
        np.testing.assert_allclose(x.grad.tolist(), (2 * np.array([1.0, 2.0]) * np.cos([1.0, 4.0])).tolist(),
                                   rtol=1e-6)
        with graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass


def _multi(lib, graph, mode):
    got = []
    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    h = graph.register_multi_grad_hook((a, b), lambda g: got.append(g), mode=mode)
    (a * 2 + b * 3).sum().backward()
    (a * 4).sum().backward()
    h.remove()
    (a * 5).sum().backward()
    return [[None if t is None else t.tolist() for t in g] if mode == "all" else g.tolist() for g in got]


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook(mode):
    assert _multi(tl, tl_graph, mode) == _multi(torch, torch_graph, mode)


def test_increment_version_and_allow_mutation():
    for lib, graph in ((torch, torch_graph), (tl, tl_graph)):
        x = lib.ones(2)
        v = x._version
        graph.increment_version(x)
        assert x._version == v + 1
    with pytest.raises(NotImplementedError, match="refused at backward"):
        tl_graph.allow_mutation_on_saved_tensors()


def test_removable_handle_is_torchs():
    for mod in (torch_hooks, tl_hooks):
        d, extra = OrderedDict(), OrderedDict()
        h = mod.RemovableHandle(d, extra_dict=extra)
        d[h.id], extra[h.id] = "hook", "x"
        with h:
            assert h.id in d
        assert d == {} and extra == {}
        h2 = mod.RemovableHandle(d)
        assert h2.id > h.id
    x = tl.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 3)
    assert isinstance(h, tl_hooks.RemovableHandle)
    h.remove()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_unserializable_hook_and_warn_if_has_hooks():
    for lib, mod in ((torch, torch_hooks), (tl, tl_hooks)):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g)
        with pytest.warns(UserWarning, match="will not be serialized"):
            mod.warn_if_has_hooks(x)
        y = lib.ones(2, requires_grad=True)
        y.register_hook(mod.unserializable_hook(lambda g: g))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mod.warn_if_has_hooks(y)


def test_backward_hook_helper_runs_a_modules_full_backward_hooks():
    seen = []
    module = object()
    bh = tl_hooks.BackwardHook(module, {0: lambda m, gi, go: seen.append(("hook", m is module, gi[0].tolist(),
                                                                           go[0].tolist()))},
                               {0: lambda m, go: seen.append(("pre", go[0].tolist()))})
    x = tl.ones(2, requires_grad=True)
    (xi,) = bh.setup_input_hook((x,))
    out = bh.setup_output_hook(xi * 3)
    (out * 2).sum().backward()
    assert seen == [("pre", [2.0, 2.0]), ("hook", True, [6.0, 6.0], [2.0, 2.0])]
    assert x.grad.tolist() == [6.0, 6.0]


def test_census_names_of_torch_utils_hooks_and_graph_exist():
    for name in ("RemovableHandle", "BackwardHook", "unserializable_hook", "warn_if_has_hooks"):
        assert hasattr(tl_hooks, name) and hasattr(torch_hooks, name)
    for name in ("Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
                 "disable_saved_tensors_hooks", "register_multi_grad_hook", "increment_version",
                 "allow_mutation_on_saved_tensors"):
        assert hasattr(tl_graph, name) and hasattr(torch_graph, name)


def test_imports_work_under_the_torch_alias():
    code = ("import tinygrad_like; tinygrad_like.install_as_torch()\n"
            "import torch.autograd.graph, torch.utils.hooks\n"
            "from torch.autograd.graph import saved_tensors_hooks, Node\n"
            "x = torch.ones(2, requires_grad=True); y = x * 2\n"
            "assert isinstance(y.grad_fn, Node) and torch.utils.hooks.RemovableHandle is not None\n"
            "print(type(y.grad_fn).__name__, y.grad_fn.next_functions)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("MulBackward0 ((<AccumulateGrad object at 0x")


TORCHVIZ_PROGRAM = '''
import re
import torch
from torchviz import make_dot
torch.manual_seed(0)
x = torch.randn(4, 3)
w1 = torch.randn(3, 5, requires_grad=True); b1 = torch.zeros(5, requires_grad=True)
w2 = torch.randn(5, 1, requires_grad=True)
y = ((x @ w1 + b1).tanh() @ w2).sigmoid().mean()
for saved in (False, True):
    dot = make_dot(y, params={"w1": w1, "b1": b1, "w2": w2}, show_attrs=saved, show_saved=saved)
    src = re.sub(r"\\d{6,}", "N", dot.source)  # (node ids are addresses)
    print("\\n".join(sorted(line.strip() for line in src.splitlines())))
'''


def test_torchviz_draws_the_same_graph(tmp_path):
    pytest.importorskip("torchviz")
    path = tmp_path / "viz.py"
    path.write_text(TORCHVIZ_PROGRAM)
    out = []
    for args in ([], ["-m", "tinygrad_like.run"]):
        r = subprocess.run([sys.executable, *args, str(path)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out.append(r.stdout)
    assert out[1] == out[0]
    assert "label=MmBackward0" in out[0] and "label=AccumulateGrad" in out[0]


def test_builtin_nodes_have_no_saved_tensors_under_the_alias_only():
    """As torch's built-in nodes (torchviz draws saved_tensors where it finds them); the project's own style keeps
    ``saved_tensors`` on every node for the views and the notebooks."""
    from tinygrad_like import _format

    x = tl.ones(2, requires_grad=True)
    y = x * x
    assert len(y.grad_fn.saved_tensors) == 2
    try:
        _format.use_torch_style(True)
        assert not hasattr(y.grad_fn, "saved_tensors") and y.grad_fn._saved_self is x
        y.sum().backward()  # (backward itself still reads them)
    finally:
        _format.use_torch_style(False)
    assert x.grad.tolist() == [2.0, 2.0]
    assert not hasattr(torch.ones(2, requires_grad=True).mul(2).grad_fn, "saved_tensors")

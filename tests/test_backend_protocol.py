"""The backend protocol is one table (``tinygrad_like/backends/protocol.py``) and one class of signatures beside it
(``signatures.Backend``), and the code holds to them: the NumPy backend implements exactly the table's primitives, the
core calls no other (and passes their arguments by position), the timing wrapper times what the table says, the
NumPy, sim and CUDA backends have the signatures the class gives, and the CUDA backend serves every primitive, by a
kernel or by the host fallback (which writes back the operands the table says a primitive writes).

The differences the signature checks allow are the deliberate ones ``Backend``'s docstring lists: a primitive that
one of NumPy's own callables serves (a ufunc, ``np.where``, ``np.clip``) is checked by position only, and the CUDA
backend's host fallback takes ``*args``."""

from __future__ import annotations

import ast
import inspect
import re
import typing
from pathlib import Path

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
from tinygrad_like.backends.cuda.backend import CudaBackend
from tinygrad_like.backends.numpy_backend import NumpyBackend
from tinygrad_like.backends.protocol import IN_PLACE, PRIMITIVES, UNTIMED
from tinygrad_like.backends.signatures import Backend
from tinygrad_like.backends.sim import SimBackend

ATTRIBUTES = {"name", "is_host"}  # plain attributes of a backend, not primitives


def _public_callables(cls) -> set:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def test_the_numpy_backend_implements_exactly_the_table():
    host = {n for n, p in PRIMITIVES.items() if not p.device_only}
    have = _public_callables(NumpyBackend)
    assert sorted(host - have) == [], "primitives of the table the NumPy backend lacks"
    assert sorted(have - set(PRIMITIVES)) == [], "NumPy backend methods missing from the table"


def test_the_core_calls_only_primitives_of_the_table():
    """Statically, every ``backend.X`` / ``be.X`` the core names; at run time, every callable a varied workload (a
    CNN step with Adam, indexing, random draws, comparisons, bitwise ops...) asks the backend for."""
    root = Path(tl.__file__).parent
    called = set()
    for f in root.rglob("*.py"):
        # (the backends call their own helpers; the views, installed inside the package from a wheel, are not core)
        if not {"backends", "widgets"} & set(f.relative_to(root).parts):
            called |= set(re.findall(r"\b(?:backend|be)\.([a-z_][a-z_0-9]*)", f.read_text()))
    assert called and sorted(called - set(PRIMITIVES) - ATTRIBUTES) == []

    asked = set()

    class Recording:
        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            value = getattr(self._inner, name)
            if callable(value):
                asked.add(name)
            return value

    dev = tl.device("cpu")
    mp = pytest.MonkeyPatch()
    mp.setattr(dev, "backend", Recording(dev.backend))
    try:
        tl.manual_seed(0)
        model = tl.nn.Sequential(tl.nn.Conv2d(1, 4, 3, padding=1), tl.nn.ReLU(), tl.nn.MaxPool2d(2), tl.nn.Flatten(),
                                 tl.nn.LayerNorm(64), tl.nn.Dropout(0.1), tl.nn.Linear(64, 3))
        opt = tl.optim.Adam(model.parameters(), lr=1e-3)
        x, y = tl.randn(2, 1, 8, 8), tl.tensor([0, 2])
        tl.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        a, i = tl.randn(3, 4, requires_grad=True), tl.tensor([2, 0])
        out = (a[i].softmax(1).sum() + a[1:].log_softmax(0).exp().sum() + a.gather(1, tl.tensor([[0], [1], [2]])).mean()
               + tl.cat([a, a]).flip(0)[:3].tanh().sigmoid().sum() + a.logsumexp(1).sum() + a.cumsum(1).max())
        out.backward()
        ints = tl.randint(0, 9, (5,))
        _ = (ints & 3, ints | 1, ints ^ 2, ints == 3, ints < 4, ints.argmax(), (ints > 2).any(), tl.randperm(4),
             tl.rand(2), tl.arange(3), tl.linspace(0, 1, 3), tl.eye(2), tl.nn.functional.pad(a, (1, 1)), a.tril(),
             a.triu(), a.repeat(2, 1), a.clamp(-1, 1), tl.where(a > 0, a, 0.0), tl.nonzero(a > 0), a.std())
    finally:
        mp.undo()
    assert len(asked) > 40 and sorted(asked - set(PRIMITIVES)) == []


def test_rows_are_well_formed():
    kinds = {"memory", "elementwise", "matmul", "reduce", "movement", "creation", "random", "index", "fused",
             "optimizer"}
    for p in PRIMITIVES.values():
        assert p.kind in kinds, p
        assert all(isinstance(i, int) and i >= 0 for i in p.writes), p
        assert (p.returns == "none") == (p.kind in ("optimizer",) or p.name in ("setitem", "assign", "wait",
                                                                                  "upload", "upload_into",
                                                                                  "download_into", "axpy", "scale")), p
    assert IN_PLACE == {"setitem": (0,), "assign": (0,), "axpy": (0,), "scale": (0,), "adam_step": (0, 2, 3, 11),
                        "upload_into": (0,), "download_into": (1,)}
    assert {"alloc", "view", "from_numpy", "to_numpy"} <= UNTIMED and "copy" not in UNTIMED


def test_the_timing_wrapper_times_the_computing_primitives_only():
    x = tl.randn(3, 4)
    with tl.profile() as prof:
        y = (x + 1).T.contiguous()  # add and copy compute; the transposed view moves nothing
        y.numpy()
    names = [k.name for k in prof.kernels]
    assert names == ["add", "copy"], names
    assert not set(names) & UNTIMED


@pytest.fixture(scope="module")
def cuda():
    yield from cuda_device()


def test_the_cuda_backend_serves_every_primitive(cuda):
    be = cuda.raw_backend
    for name in PRIMITIVES:
        assert callable(getattr(be, name)), name  # a kernel of its own, or the host fallback
    with pytest.raises(AttributeError):
        be.not_a_primitive  # noqa: B018 - the fallback serves the table's names, nothing else


def test_the_host_fallback_writes_back_what_the_table_says(cuda):
    be = cuda.raw_backend
    dst = be.from_numpy(np.zeros(4, np.float32))
    before = be.fallbacks["setitem"]
    be._fallback("setitem", (dst, (slice(1, 3),), np.float32(5)))  # forced onto the host path
    assert be.fallbacks["setitem"] == before + 1
    np.testing.assert_array_equal(be.to_numpy(dst), [0, 5, 5, 0])


# ---- the signatures: signatures.Backend against the table and against every backend ---------------------------------
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
#: public attributes of a backend that are not primitives: the device's own API (tl.cuda.memory_stats...), flags
#: the core reads with getattr, and the CUDA backend's copy helper and tuning constants
EXTRAS = {SimBackend: {"memory_stats", "empty_cache", "simulated"},
          CudaBackend: {"contiguous", "times_itself", "cross_entropy_reads_logits", "ROW_REG", "ROW_REG_MIN_THREADS",
                        "ROW_REG_MAX_GRID"}}


def _protocol_names() -> set:
    return {n for n, v in vars(Backend).items() if inspect.isfunction(v) and not n.startswith("_")}


def _shape(params) -> list:
    """A signature's parameters without their annotations: (name, kind, default)."""
    return [(p.name, p.kind, p.default) for p in params]


def _protocol_params(name: str) -> list:
    return list(inspect.signature(getattr(Backend, name)).parameters.values())[1:]  # (without self)


def _implementation(cls, name: str):
    """(the callable, its parameters as the caller sees them: without self) for a primitive ``cls`` defines or
    inherits; parameters None for a callable without a signature of its own (a ufunc: see ``_numpy_serves``)."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, staticmethod):
        fn, drop = raw.__func__, 0
    else:
        assert inspect.isfunction(raw), f"{cls.__name__}.{name}: {raw!r} is neither a function nor a staticmethod"
        fn, drop = raw, 1
    if isinstance(fn, np.ufunc):
        return fn, None
    return fn, list(inspect.signature(fn).parameters.values())[drop:]


def _numpy_serves(fn) -> bool:
    """Whether the primitive is one of NumPy's own callables (no wrapper of ours around it)."""
    return isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"


def _binds_by_position(fn, n: int) -> bool:
    if isinstance(fn, np.ufunc):
        return fn.nin == n and fn.nout == 1
    try:
        inspect.signature(fn).bind(*range(n))
    except TypeError:
        return False
    return True


def _disagreements(cls, names) -> list:
    out = []
    for name in sorted(names):
        want = _protocol_params(name)
        fn, have = _implementation(cls, name)
        if _numpy_serves(fn):  # (a ufunc, np.where, np.clip: their own names and extra optional parameters)
            if any(p.kind != inspect.Parameter.POSITIONAL_ONLY for p in want):
                out.append(f"{cls.__name__}.{name}: NumPy's own callable, but the protocol names its parameters")
            elif not _binds_by_position(fn, len(want)):
                out.append(f"{cls.__name__}.{name}: NumPy's {fn!r} does not take {len(want)} positional arguments")
        elif _shape(have) != _shape(want):
            out.append(f"{cls.__name__}.{name}{inspect.signature(fn)} != {inspect.signature(getattr(Backend, name))}")
    return out


def test_the_signatures_are_the_table():
    """One method per primitive, with a one-line docstring and type hints that resolve; elementwise operands are
    positional-only (as NumPy's ufuncs take them)."""
    assert _protocol_names() == set(PRIMITIVES)
    assert typing.get_type_hints(Backend) == {"name": str, "is_host": bool}
    for name in PRIMITIVES:
        fn = getattr(Backend, name)
        assert fn.__doc__ and len(fn.__doc__.strip().splitlines()) == 1, name
        typing.get_type_hints(fn)
        if PRIMITIVES[name].kind == "elementwise" and name not in ("softplus", "cast", "round", "nan_to_num", "axpy",
                                                                    "scale"):
            assert all(p.kind == inspect.Parameter.POSITIONAL_ONLY for p in _protocol_params(name)), name


def test_the_operands_a_primitive_writes_are_array_parameters():
    for name, writes in IN_PLACE.items():
        params = _protocol_params(name)
        for i in writes:
            assert i < len(params) and params[i].kind in _POSITIONAL, (name, i)
            assert params[i].annotation in ("Native", "HostArray", "Native | None"), (name, params[i])


def test_the_numpy_backend_has_the_signatures():
    """Every primitive as ``Backend`` gives it; those NumPy serves with its own callable take their operands by
    position (the ufuncs, ``np.where`` and ``np.clip``: none other)."""
    host = {n for n, p in PRIMITIVES.items() if not p.device_only}
    assert _disagreements(NumpyBackend, host) == []
    own = {n for n in host if _numpy_serves(_implementation(NumpyBackend, n)[0])}
    assert {n for n in own if not isinstance(getattr(NumpyBackend, n), np.ufunc)} == {"where", "clip"}


def test_the_sim_backend_has_the_signatures():
    assert _disagreements(SimBackend, PRIMITIVES) == []
    assert _public_callables(SimBackend) - set(PRIMITIVES) <= EXTRAS[SimBackend]


def test_the_cuda_backend_has_the_signatures_and_falls_back_for_the_rest():
    """The primitives the CUDA backend defines have the signatures; every other one is served by ``__getattr__``'s
    host fallback, which forwards ``*args`` to the NumPy backend's (whose signature is checked above)."""
    own = {n for n in PRIMITIVES if inspect.getattr_static(CudaBackend, n, None) is not None}
    assert len(own) > 80 and _disagreements(CudaBackend, own) == []
    public = {n for n in dir(CudaBackend) if not n.startswith("_")}
    assert public - set(PRIMITIVES) - ATTRIBUTES <= EXTRAS[CudaBackend]
    bare = CudaBackend.__new__(CudaBackend)  # (the fallback's lookup needs no runtime; calling it would)
    for name in set(PRIMITIVES) - own:
        assert not PRIMITIVES[name].device_only, name
        fallback = getattr(bare, name)
        assert fallback.__name__ == name and str(inspect.signature(fallback)) == "(*args)"


def _primitive_calls(path: Path, receivers: tuple):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PRIMITIVES:
            receiver = ast.unparse(node.func.value)
            if receiver == "be" or receiver.endswith(receivers):
                yield node


def test_the_core_passes_primitive_arguments_by_position():
    """The CUDA host fallback forwards ``*args`` only, and NumPy's ufuncs take their operands by position only: a
    keyword argument to a primitive would work on one backend and fail on another."""
    root = Path(tl.__file__).parent
    checked, by_keyword = 0, []
    for f in root.rglob("*.py"):
        parts = set(f.relative_to(root).parts)
        if "widgets" in parts or ("backends" in parts and "cuda" not in parts):
            continue
        receivers = ("backend", "self", "self._host") if "cuda" in parts else ("backend",)
        for call in _primitive_calls(f, receivers):
            checked += 1
            if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
                by_keyword.append(f"{f.relative_to(root)}:{call.lineno}: {ast.unparse(call)}")
    assert checked > 300 and by_keyword == []


def _tuple_length(returns: str):
    """How many results a row's ``returns`` names ("(out, cols)" -> 2), or None for one."""
    m = re.match(r"\(([^)]*)\)", returns)
    return None if m is None else len(m.group(1).split(","))


def test_a_fused_primitive_returns_the_same_shape_of_result_on_every_backend(cuda):
    """The fused forwards and backwards the CUDA backend runs with kernels of its own return the tuple the table
    names, as the NumPy backend does (the rest run NumPy's on the host, so return the same by construction): a
    forward without a backward state returns None in its place (CUDA's gelu), so the ops unpack one shape."""
    be, host = cuda.raw_backend, NumpyBackend()
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x, w, b = f32(2, 3, 6, 6), f32(4, 3, 3, 3), f32(4)
    conv = ((1, 1), (1, 1), (1, 1))
    logits, target = f32(5, 7), np.array([0, 3, 6, 1, 2])
    q, k, v = f32(2, 4, 8), f32(2, 5, 8), f32(2, 5, 8)
    calls = {
        "conv2d": lambda m, a: m.conv2d(a(x), a(w), a(b), *conv),
        "conv2d_backward": lambda m, a: m.conv2d_backward(a(f32(2, 4, 6, 6)), m.conv2d(a(x), a(w), None, *conv)[1],
                                                          a(w), x.shape, *conv, True, True, True),
        "max_pool2d": lambda m, a: m.max_pool2d(a(x), (2, 2), (2, 2), (0, 0), (1, 1)),
        "layer_norm": lambda m, a: m.layer_norm(a(f32(4, 16)), (1,), 1e-5),
        "cross_entropy": lambda m, a: m.cross_entropy(a(logits), a(target), None, -100, 0.0),
        "cross_entropy_coefs": lambda m, a: m.cross_entropy_coefs(
            *m.cross_entropy(a(logits), a(target), None, -100, 0.0)[1:]),
        "gelu": lambda m, a: m.gelu(a(f32(3, 4)), "none", True),
        "attention": lambda m, a: m.attention(a(q), a(k), a(v), 0.35, None, True),
        "attention_backward": lambda m, a: m.attention_backward(a(f32(2, 4, 8)), a(q), a(k), a(v), a(f32(2, 4, 8)),
                                                                *m.attention(a(q), a(k), a(v), 0.35, None, True)[1:],
                                                                0.35, None, True),
    }
    before = dict(be.fallbacks)
    for name, call in calls.items():
        n = _tuple_length(PRIMITIVES[name].returns)
        on_host, on_device = call(host, lambda a: a), call(be, be.from_numpy)
        assert type(on_host) is tuple and type(on_device) is tuple, name
        assert len(on_host) == len(on_device) == n, (name, len(on_host), len(on_device), n)
    new = {k for k, c in be.fallbacks.items() if c != before.get(k, 0)}
    assert new == {"cross_entropy_coefs"}, "a call above ran on the host, not the CUDA backend's own kernels"  # (it
    # builds the dense coefficients on the host by design)

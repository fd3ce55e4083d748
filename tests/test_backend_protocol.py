"""The backend protocol is one table (``tinygrad_like/backends/protocol.py``), and the code holds to it: the NumPy
backend implements exactly its primitives, the core calls no other, the timing wrapper times what the table says,
and the CUDA backend serves every primitive, by a kernel or by the host fallback (which writes back the operands the
table says a primitive writes)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
from tinygrad_like.backends.numpy_backend import NumpyBackend
from tinygrad_like.backends.protocol import IN_PLACE, PRIMITIVES, UNTIMED

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

"""Grad mode is per thread, as in PyTorch; the profiler tells threads apart (issue 15).

Before: the backward engine and ``no_grad`` flipped one process-wide flag, so two threads training separate
models failed in 5 runs of 5 (or left a ``.grad`` silently None), and overlapping ``no_grad`` blocks in two
threads could leave grad mode off for the whole process.
"""

from __future__ import annotations

import gc
import threading

import numpy as np

import tinygrad_like as tl
from tinygrad_like import events

nn, F = tl.nn, tl.nn.functional


def _train(seed: int, steps: int = 30) -> list[np.ndarray]:
    g = tl.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    with tl.no_grad():
        for p in model.parameters():
            p.copy_(tl.randn(*p.shape, generator=g) * 0.3)
    opt = tl.optim.SGD(model.parameters(), lr=0.05)
    x, y = tl.randn(32, 6, generator=g), tl.randint(0, 3, (32,), generator=g)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        for p in model.parameters():
            assert p.grad is not None, "a gradient went missing"
        with tl.no_grad():  # a no_grad block in the middle of the other thread's backward
            model(x).sum()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def _run(seed: int, got: dict, errors: list) -> None:
    try:
        got[seed] = _train(seed)
    except Exception as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)


def test_two_threads_train_separate_models_as_they_would_alone():
    want = {seed: _train(seed) for seed in (1, 2)}
    for _ in range(5):
        got, errors = {}, []

        threads = [threading.Thread(target=_run, args=(s, got, errors)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for seed in (1, 2):
            for a, b in zip(got[seed], want[seed]):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert tl.is_grad_enabled()


def test_no_grad_in_one_thread_leaves_the_others_alone():
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def worker() -> None:
        with tl.no_grad():
            entered.set()
            release.wait(5)
            seen["worker"] = tl.is_grad_enabled()
        seen["worker after"] = tl.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    entered.wait(5)
    x = tl.ones(2, requires_grad=True)
    seen["main"] = tl.is_grad_enabled() and (x * 2).grad_fn is not None
    with tl.no_grad():  # overlapping blocks, left in the other order than entered
        release.set()
        t.join()
        seen["main inside"] = tl.is_grad_enabled()
    assert seen == {"worker": False, "worker after": True, "main": True, "main inside": False}
    assert tl.is_grad_enabled()
    fresh = {}
    t2 = threading.Thread(target=lambda: fresh.setdefault("on", tl.is_grad_enabled()))
    with tl.no_grad():  # a thread started inside no_grad starts with grad enabled, as in torch
        t2.start()
        t2.join()
    assert fresh["on"] is True


def test_backward_in_one_thread_does_not_stop_recording_in_another():
    """The engine runs backward without recording; that must not switch recording off elsewhere."""
    stop = threading.Event()
    missing = []

    def recorder() -> None:
        x = tl.ones(3, requires_grad=True)
        while not stop.is_set():
            if (x * 2).grad_fn is None:
                missing.append(1)

    t = threading.Thread(target=recorder)
    t.start()
    try:
        for _ in range(200):
            w = tl.randn(8, 8, requires_grad=True)
            ((w @ w).tanh().sum()).backward()
    finally:
        stop.set()
        t.join()
    assert not missing


def test_the_profiler_gives_each_thread_its_track():
    def work() -> None:
        x = tl.randn(4, requires_grad=True)
        (x * x).sum().backward()

    with tl.profile() as prof:
        work()
        t = threading.Thread(target=work, name="worker-7")
        t.start()
        t.join()
    assert len(prof.threads) == len(prof.events)
    assert {"MainThread", "worker-7"} <= set(prof.threads)
    names = {e["args"]["name"] for e in prof.chrome_trace()["traceEvents"] if e["name"] == "thread_name"}
    assert any(n.startswith("worker-7 · ") for n in names) and any(n.startswith("MainThread · ") for n in names)


def test_a_profile_dropped_without_stop_unsubscribes():
    assert not events.ACTIVE
    tl.profile().start()  # never stopped, no reference kept
    gc.collect()
    assert not events.ACTIVE, "the dropped profile still listens (every op pays for it)"
    prof = tl.profile().start()
    assert events.ACTIVE
    prof.stop()
    assert not events.ACTIVE

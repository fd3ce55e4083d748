"""The one channel from the core to observers (widgets, profiler, logs).

Observers call :func:`subscribe` with a callable that receives frozen event records. With no
subscriber, the core pays one module-attribute check (``events.ACTIVE``) per emit site and nothing
else: backends swap in their timed variants only while someone listens.

>>> import tinygrad_like as tl
>>> seen = []
>>> unsubscribe = tl.events.subscribe(seen.append)
>>> _ = tl.ones(2, requires_grad=True) + 1
>>> unsubscribe()
>>> any(isinstance(e, tl.events.OpRecorded) for e in seen)
True
"""

from __future__ import annotations

import sys
import time
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

#: True while at least one subscriber listens. Emit sites test this before building a record.
ACTIVE = False
#: True while recorded graph nodes get an ``origin`` (switched by ``sites.record_origins``).
ORIGINS = False
#: ``ACTIVE or ORIGINS``: the one flag the op-recording paths test, so watching nodes costs nothing when
#: nobody does (the three places that record nodes test this instead of ``ACTIVE``).
WATCH_NODES = False

_subscribers: list[Callable[[Any], None]] = []
_kinds: list[tuple | None] = []  # per subscriber (same order): the event classes it wants, None for all
_routes: dict[type, tuple] = {}  # event class -> the subscribers that want it (rebuilt lazily after a change)
_named: dict[type, int] = {}  # event class -> how many subscribers listed it in their kinds (see wants_named)
_activation_hooks: list[Callable[[bool], None]] = []


def subscribe(fn: Callable[[Any], None], kinds: tuple | None = None) -> Callable[[], None]:
    """Call ``fn(event)`` for every event from now on, or only for events of the classes in ``kinds`` (a view that
    draws kernels need not be called for every allocation); returns a function that unsubscribes."""
    global ACTIVE
    if not callable(fn):
        raise TypeError(f"subscribe() expects a callable taking one event, got {type(fn).__name__}")
    if kinds is not None:
        kinds = tuple(kinds)
        if not all(isinstance(k, type) for k in kinds):
            raise TypeError(f"subscribe(kinds=...) expects event classes such as events.KernelTimed, got {kinds!r}")
    _subscribers.append(fn)
    _kinds.append(kinds)
    _routes.clear()
    for k in kinds or ():
        _named[k] = _named.get(k, 0) + 1
    if not ACTIVE:
        ACTIVE = True
        _refresh()
        for hook in _activation_hooks:
            hook(True)

    def unsubscribe() -> None:
        global ACTIVE
        for i, f in enumerate(_subscribers):
            if f is fn:
                for k in _kinds[i] or ():
                    _named[k] -= 1
                del _subscribers[i], _kinds[i]
                break
        else:
            return
        _routes.clear()
        if not _subscribers and ACTIVE:
            ACTIVE = False
            _refresh()
            for hook in _activation_hooks:
                hook(False)

    return unsubscribe


def _refresh() -> None:
    global WATCH_NODES
    WATCH_NODES = ACTIVE or ORIGINS


def _set_origins(on: bool) -> None:
    """Called by ``sites.record_origins`` (the public switch)."""
    global ORIGINS
    ORIGINS = on
    _refresh()


def on_activation(hook: Callable[[bool], None]) -> None:
    """Register ``hook(active)`` to run when the first subscriber arrives or the last leaves.

    Backends use this to swap timed primitives in and out, so the hot path stays untouched.
    """
    _activation_hooks.append(hook)
    if ACTIVE:
        hook(True)


def _route(kind: type) -> tuple:
    route = _routes[kind] = tuple(f for f, k in zip(_subscribers, _kinds) if k is None or issubclass(kind, k))
    return route


def wants(kind: type) -> bool:
    """Whether any subscriber listens for events of class ``kind`` now. The sites of frequent events ask before they
    build a record (a view listening for kernels only should not pay for every allocation's record)."""
    route = _routes.get(kind)
    return bool(route if route is not None else _route(kind))


def wants_named(kind: type) -> bool:
    """Whether a subscriber asked for events of class ``kind`` by name (in its ``kinds``): for events whose very
    watching costs something (``StorageFreed``: a weak reference per storage), which a subscriber of every event
    (a profile) does not need to pay for."""
    return _named.get(kind, 0) > 0


# storage id -> the weak reference whose callback reports its death (only while someone names StorageFreed)
_free_watch: dict[int, Any] = {}


def watch_free(st) -> None:
    """Report the death of storage ``st`` as a ``StorageFreed`` event (what a memory timeline needs: storages die
    without one otherwise). Made for each new storage while a subscriber names the event, and by such a subscriber
    for the storages alive when it starts."""
    if st.id in _free_watch:
        return
    sid, device, nbytes = st.id, str(st.device), st.nbytes

    def freed(_ref, sid=sid, device=device, nbytes=nbytes) -> None:
        _free_watch.pop(sid, None)
        if ACTIVE and wants(StorageFreed):
            emit(StorageFreed(sid, device, nbytes, now()))

    _free_watch[sid] = weakref.ref(st, freed)


def emit(event: Any) -> None:
    """Deliver ``event`` to every subscriber that wants its class. A failing observer never breaks the computation."""
    route = _routes.get(type(event))
    if route is None:
        route = _route(type(event))
    for fn in route:
        try:
            fn(event)
        except Exception as exc:  # noqa: BLE001 - observers must not break user code
            print(f"tinygrad_like.events: subscriber {fn!r} raised {type(exc).__name__}: {exc}",
                  file=sys.stderr)


#: The clock every event uses (seconds, monotonic, high resolution): ``time.perf_counter`` itself, not a wrapper.
now: Callable[[], float] = time.perf_counter


# The records are named tuples: immutable like frozen dataclasses, and made about three times faster (0.24 against
# 0.8 us), which counts while a view listens: a training step of a small MLP emits some seventy of them.


class Site(NamedTuple):
    """Where something happened in user code: a file and line, or a notebook cell and line."""

    filename: str
    lineno: int
    function: str
    label: str  # human form: "train.py:42 in step" or "cell In[5], line 3"

    def __str__(self) -> str:
        return self.label


class OpRecorded(NamedTuple):
    """A differentiable op ran with grad recording on; ``node`` is the graph node (a Function)."""

    op: str
    node: Any
    input_shapes: tuple
    output_shape: tuple
    dtype: str
    device: str
    time: float
    output_id: int | None = None  # the storage id of the op's result (made after its forward returned)


class BackwardStep(NamedTuple):
    """The backward engine ran one node."""

    index: int
    op: str
    node: Any
    seconds: float
    time: float


class VersionBump(NamedTuple):
    """An in-place write moved a storage's version counter."""

    storage_id: int
    version: int
    op: str
    site: Site | None
    time: float


class StorageStateChanged(NamedTuple):
    """A storage changed residency or dirty side, or was filled by a copy; ``direction`` is "h2d", "d2h" or None (no
    bytes moved). A new device storage made by ``.to(device)`` reports its upload so, at its residency ("gpu")."""

    storage_id: int
    residency: str
    dirty: str | None
    direction: str | None
    nbytes: int
    seconds: float
    time: float


class StorageFreed(NamedTuple):
    """A storage died (its last tensor was dropped); reported only while someone listens for this event (a weak
    reference's callback per storage: nothing is watched otherwise)."""

    storage_id: int
    device: str
    nbytes: int
    time: float


class StorageAllocated(NamedTuple):
    storage_id: int
    device: str
    dtype: str
    nbytes: int
    time: float


class KernelTimed(NamedTuple):
    """One primitive (a NumPy call or a CUDA kernel) and how long it took.

    ``start`` is on the :func:`now` clock; ``seconds`` the duration. ``grid``/``block`` are set for CUDA. ``node_ref``
    is a weak reference to the graph node whose forward or backward launched it (None outside an op), so that a
    profile keeping its events keeps no graph alive; ``node`` reads it. ``phase`` is "forward", "backward" or
    "optimizer" (see :func:`~tinygrad_like.sites.launch_context`; None from a producer that does not say).
    """

    name: str
    device: str
    start: float
    seconds: float
    shapes: tuple
    nbytes: int
    grid: tuple | None = None
    block: tuple | None = None
    node_ref: Any = None
    phase: str | None = None

    @property
    def node(self):
        """The graph node that launched it: None outside an op, or once the node is garbage. A node of an op that
        ran without recording (no input needed grad) has no ``seq``."""
        ref = self.node_ref
        return None if ref is None else ref()


class KernelCompiled(NamedTuple):
    """A CUDA source compiled (``cache`` "miss") or found in the memory or disk cache."""

    name: str
    source: str
    seconds: float
    cache_hit: bool
    time: float
    arch: str | None = None
    cache: str | None = None   # "memory", "disk" or "miss"
    key: str | None = None     # the first hex digits of the cache key

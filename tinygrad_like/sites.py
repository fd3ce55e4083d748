"""Find the user's line of code that triggered something (outside this package's own frames).

Also where graph nodes come from: while origins are recorded, every recorded node gets ``node.origin``, an
:class:`Origin` naming the modules whose ``forward`` was running and the user's line. Off by default, and then
free: the op path tests one flag it already tested for events. Two levels, because they cost differently:

- the module scope costs one attribute read per op; ``tinygrad_like.widgets`` turns it on at import
  (:func:`record_scopes`), so graph views group ops by the module that really made them;
- the user's line costs a walk up the Python stack (a few tenths of a µs per op on CPython 3.11, which builds
  frame objects on demand: see :func:`origin`), too much for every step of a training loop. It is recorded from
  the moment someone asks (:func:`request_lines`: importing ``tinygrad_like.widgets``, opening a view that shows
  lines) until an optimizer next steps, while an owner registered with :func:`listen` lives, and everywhere
  after :func:`record_origins`.

>>> import tinygrad_like as tl
>>> with tl.sites.recording_origins():
...     y = tl.ones(2, requires_grad=True) * 2
>>> y.grad_fn.origin.scope, y.grad_fn.origin.site.function
((), '<module>')
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType
from typing import NamedTuple

from . import events
from .events import Site

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _Context(threading.local):
    """What user code is running on this thread (class attributes are each thread's defaults)."""

    scope: tuple = ()  # the modules whose forward runs, outermost first (pushed only while recording)
    optimizer: str | None = None  # class name of the optimizer whose step() runs, else None
    write_site = None  # the user's line for every in-place write now (a built-in optimizer's step: one stack walk)
    node = None  # the graph node whose forward or backward runs (set only while someone listens to events)
    backward: bool = False  # True while the backward engine runs a node (set only while someone listens)


#: This thread's context: read by graph recording (scope), by Storage.bump (optimizer), and by the backends when
#: they report a kernel (node, backward, optimizer).
context = _Context()


def as_backward(fn: Callable, *args):
    """``fn(*args)`` with its kernels reported as backward (a root gradient made before the engine starts)."""
    ctx = context
    outer, ctx.backward = ctx.backward, True
    try:
        return fn(*args)
    finally:
        ctx.backward = outer


def launch_context() -> tuple:
    """``(node_ref, phase)`` of a kernel launched now: a weak reference to the graph node whose forward or backward
    launched it (None outside an op), and ``"optimizer"``, ``"backward"`` or ``"forward"`` (everything else). What a
    timeline needs to place a launch exactly, read when it is launched (a CUDA kernel's time is known only later)."""
    ctx = context
    node = ctx.node
    ref = None if node is None else _weak(node)  # (CPython hands back the same reference for the same node)
    if ctx.optimizer is not None:
        return ref, "optimizer"
    return ref, "backward" if ctx.backward else "forward"


_weak = weakref.ref


def _cell_label(filename: str) -> str | None:
    """Map an IPython cell's temporary filename to "In[5]", without importing IPython."""
    ipy = sys.modules.get("IPython.core.getipython")  # (not ``IPython``: its module __getattr__ is slow)
    if ipy is None:
        return None
    try:
        shell = ipy.get_ipython()
        n = shell.compile._filename_map.get(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - any IPython internals change just drops the nicer label
        return None
    return None if n is None else f"In[{n}]"


#: Sites in files (not notebook cells) by (filename, lineno, function): a training loop writes from the same few
#: lines every step, and every in-place write names its line. Cells are not kept: a cell re-run with identical
#: code shares its temporary file name, and is labelled with its newest ``In[n]``.
_file_sites: dict[tuple, Site] = {}


def make_site(filename: str, lineno: int, function: str) -> Site:
    """A :class:`Site` with its human label ("cell In[5], line 3" or "train.py:42 in step")."""
    key = (filename, lineno, function)
    site = _file_sites.get(key)
    if site is not None:
        return site
    cell = _cell_label(filename)
    if cell is not None:
        return Site(filename, lineno, function, f"cell {cell}, line {lineno}")
    label = f"{os.path.basename(filename)}:{lineno}" + (f" in {function}" if function != "<module>" else "")
    site = Site(filename, lineno, function, label)
    if len(_file_sites) < 10_000:  # (bounded: generated code could make endless distinct lines)
        _file_sites[key] = site
    return site


def user_site(skip_internal: bool = True) -> Site | None:
    """The innermost frame that is not inside ``tinygrad_like`` (the line a learner wrote)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return make_site(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


# ---- the scope: one per call -------------------------------------------------------------------------
class Scope(tuple):
    """``context.scope`` while scopes are recorded: the modules (and :class:`Marker` s) whose forward runs,
    outermost first. A new one is made per call, so its identity names that call, and ``up`` is the caller's
    scope (one level up): a graph tells the two calls of a shared module apart, and in which call of a block a
    child's op ran, by walking ``up``. (A tuple subclass has no ``__slots__`` room: ``up`` lives in its dict.)"""

    up: tuple


class Marker:
    """A named part of one module's forward that graphs draw as a group of its own (a recurrent layer's layer
    ``l0`` and time step ``t3``), pushed on the scope like a module, and only while scopes are recorded.

    ``name`` is the path component (``rnn.l0.t3``), ``label`` what a learner reads ("t = 3"), ``kind`` what it
    is ("layer", "step") and ``type_name`` the group's type ("LSTM step")."""

    __slots__ = ("name", "label", "kind", "type_name")

    def __init__(self, name: str, label: str, kind: str, type_name: str = "") -> None:
        self.name, self.label, self.kind, self.type_name = name, label, kind, type_name

    def __repr__(self) -> str:
        return f"<Marker {self.name}>"


def enter(entry) -> tuple:
    """Push ``entry`` (a :class:`Marker`) on this thread's scope; returns the scope to restore afterwards
    (``context.scope = outer``). Call it only while scopes are recorded (``events.ORIGINS``)."""
    ctx = context
    outer = ctx.scope
    s = _tuple_new(Scope, (*outer, entry))
    s.up = outer
    ctx.scope = s
    return outer


# ---- origins of graph nodes -------------------------------------------------------------------------
class Origin(NamedTuple):
    """Where a graph node was made: the user's code and line, and the module scope at that moment.

    Immutable and cheap to make (a named tuple: a frozen dataclass costs three times as much to build,
    and one is built per op while recording). ``code``/``lasti`` are kept raw because the line number
    (a scan of the code's line table) and a :class:`Site` label cost more than the op itself;
    :attr:`lineno` and :attr:`site` work them out when someone reads them.
    (An IPython cell's label is looked up then too: a cell re-run with identical code shares its
    temporary file name and is labelled with its newest ``In[n]``.)
    """

    code: CodeType | None  # the user's code object (None if lines were not recorded or no user frame was found)
    lasti: int  # where in ``code`` (``frame.f_lasti``: the byte offset of the call that made the node)
    scope: tuple  # nn.Module objects (and Markers) whose forward was running, outermost first; () outside any

    @property
    def lineno(self) -> int:
        """The user's line number (0 when no line was recorded)."""
        c = self.code
        return 0 if c is None else _line_at(c, self.lasti)

    @property
    def site(self) -> Site | None:
        """The user's line, as :func:`user_site` would have named it."""
        c = self.code
        return None if c is None else make_site(c.co_filename, _line_at(c, self.lasti), c.co_name)

    @property
    def module(self):
        """The innermost module whose forward made the node, or None."""
        return next((m for m in reversed(self.scope) if type(m) is not Marker), None)

    def __repr__(self) -> str:
        mods = "/".join(m.name if type(m) is Marker else type(m).__name__ for m in self.scope)
        return f"<Origin {self.site}{' in ' + mods if mods else ''}>"


def _line_at(code: CodeType, lasti: int) -> int:
    """The line of the instruction at byte offset ``lasti`` of ``code`` (what ``frame.f_lineno`` says there)."""
    line = 0
    for start, end, n in code.co_lines():
        if start <= lasti < end:
            return n if n is not None else line
        if n is not None:
            line = n
    return line or code.co_firstlineno


_tuple_new = tuple.__new__
_getframe = sys._getframe


def origin(node=None) -> Origin:
    """The :class:`Origin` of ``node``, being recorded now (called by the ops only while recording)."""
    if not LINES:  # scopes only: ops in the same forward share one Origin (no allocation per op)
        global _last
        scope = context.scope
        last = _last
        if last[2] is scope:
            return last
        _last = last = _tuple_new(Origin, (None, 0, scope))
        return last
    # The user's line: the first frame outside the package. Walking there with ``f_back`` makes a frame object for
    # every frame passed (CPython 3.11 builds them on demand); ``_getframe(k)`` makes only the k-th. Frames 1-2
    # are always ours (``_watched``, then ``apply`` or ``_attach``), so the walk starts at 3: the op's method for
    # ``x + y`` (one step back to the user), or the user's own frame when they call an op's ``apply`` themselves
    # (``Permute.apply(x, (1, 0))``, their own Function or a subclass of ours). Starting at 4 for our ops skipped
    # that frame and named its caller's line.
    try:
        f = _getframe(1 if node is None else 3)
    except ValueError:  # (a shallower stack: package code at its bottom, a thread's target)
        f = _getframe(1)
    ours, theirs = _our_files, _user_files
    file = f.f_code.co_filename  # (a str caches its hash: a set lookup is cheap; a code object's hash is not)
    while file in ours or (file not in theirs and _is_ours(file)):
        f = f.f_back
        if f is None:
            return _tuple_new(Origin, (None, 0, context.scope))
        file = f.f_code.co_filename
    code, lasti, scope = f.f_code, f.f_lasti, context.scope  # (f_lasti: f_lineno scans the line table)
    global _last_line
    last = _last_line
    if last[1] == lasti and last[0] is code and last[2] is scope:  # the ops of one call (a LayerNorm's), a loop's
        return last
    _last_line = last = _tuple_new(Origin, (code, lasti, scope))
    return last


_our_files: set = set()  # file names of this package's modules (frames the walk passes)
_user_files: set = set()  # file names outside it seen so far (bounded: see _is_ours)


def _is_ours(file: str) -> bool:
    """Whether ``file`` is one of this package's, remembered in one of the two sets (once per file name)."""
    if file.startswith(_PKG_DIR):
        _our_files.add(file)
        return True
    if len(_user_files) > 10_000:  # (each notebook cell run has a file name of its own)
        _user_files.clear()
    _user_files.add(file)
    return False


_NO_ORIGIN: Origin = _tuple_new(Origin, (None, 0, ()))
_last: Origin = _NO_ORIGIN  # the scopes-only Origin made last (reused while its scope runs)
_last_line: Origin = _NO_ORIGIN  # the Origin with a line made last (reused by the next op from the same call)
#: Whether origins name the user's line now (read by :func:`origin`; set by :func:`_update` only).
LINES = False
_explicit = False  # record_origins(True): scopes and lines everywhere
_scopes = False  # record_scopes(True): scopes only
_listeners = 0  # live owners registered with listen
_requested = False  # a view asked for lines: recorded until an optimizer next steps (see request_lines)


def _update() -> None:
    global LINES, _last, _last_line
    LINES = _explicit or _listeners > 0 or _requested
    _last = _last_line = _NO_ORIGIN  # (a reused Origin holds its modules: once unused it must not keep them alive)
    events._set_origins(LINES or _scopes)


def record_origins(on: bool = True) -> bool:
    """Record scopes and lines for every node from now on, or stop; returns the previous setting.

    The switch is process-wide (like ``no_grad``); the module scope it records is per thread. Views ask for
    the lines of the next forward pass by themselves (:func:`request_lines`), so most code never calls this.
    """
    global _explicit
    previous, _explicit = _explicit, bool(on)
    _update()
    return previous


def record_scopes(on: bool = True) -> bool:
    """Record only the module scope of each node (cheap); returns the previous setting."""
    global _scopes
    previous, _scopes = _scopes, bool(on)
    _update()
    return previous


def listen(owner: object) -> Callable[[], None]:
    """Record lines while ``owner`` (a view) lives, and after it until an optimizer steps (:func:`request_lines`);
    returns a function that stops the first part early (at ``close()``).

    Calling the returned function twice, or after ``owner`` was collected, does nothing more.
    """
    global _listeners
    _listeners += 1
    request_lines()
    return weakref.finalize(owner, _unlisten)


def request_lines() -> None:
    """Record the user's line of every new node from now until an optimizer next steps.

    What a view that shows lines asks for: a graph built before it was open has no lines ("re-run the cell to
    record lines"), and the forward pass run again after it, even once that view is closed or dropped, records
    them. A training loop's first ``step()`` ends it, so the loop does not pay for a stack walk per op.
    """
    global _requested
    if not _requested:
        _requested = True
        _update()


def end_requested_lines() -> None:
    """Stop what :func:`request_lines` started (called by every optimizer's ``step``; views that are open still
    record lines while they are)."""
    global _requested
    if _requested:
        _requested = False
        _update()


def lines_requested() -> bool:
    """Whether a view's request for lines (:func:`request_lines`) is still running."""
    return _requested


def _unlisten() -> None:
    global _listeners
    _listeners -= 1
    _update()


def origins_enabled() -> bool:
    """Whether recorded nodes get an ``origin`` now (with lines or scopes only: see :data:`LINES`)."""
    return events.ORIGINS


@contextmanager
def recording_origins(on: bool = True) -> Iterator[None]:
    """``with recording_origins():`` records origins inside the block, then restores the setting."""
    previous = record_origins(on)
    try:
        yield
    finally:
        record_origins(previous)

"""Find the user's line of code that triggered something (outside this package's own frames).

Also where graph nodes come from: with :func:`record_origins` on, every recorded node gets
``node.origin``, an :class:`Origin` naming the user's line and the modules whose ``forward`` was
running. Off by default, and then free: the op path tests one flag it already tested for events.

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
from collections.abc import Iterator
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


#: This thread's context: read by graph recording (scope) and by Storage.bump (optimizer).
context = _Context()


def _cell_label(filename: str) -> str | None:
    """Map an IPython cell's temporary filename to "In[5]", without importing IPython."""
    ipy = sys.modules.get("IPython")
    if ipy is None:
        return None
    try:
        shell = ipy.get_ipython()
        n = shell.compile._filename_map.get(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - any IPython internals change just drops the nicer label
        return None
    return None if n is None else f"In[{n}]"


def make_site(filename: str, lineno: int, function: str) -> Site:
    """A :class:`Site` with its human label ("cell In[5], line 3" or "train.py:42 in step")."""
    cell = _cell_label(filename)
    if cell is not None:
        label = f"cell {cell}, line {lineno}"
    else:
        label = f"{os.path.basename(filename)}:{lineno}" + (f" in {function}" if function != "<module>" else "")
    return Site(filename, lineno, function, label)


def user_site(skip_internal: bool = True) -> Site | None:
    """The innermost frame that is not inside ``tinygrad_like`` (the line a learner wrote)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return make_site(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


# ---- origins of graph nodes -------------------------------------------------------------------------
class Origin(NamedTuple):
    """Where a graph node was made: the user's code and line, and the module scope at that moment.

    Immutable and cheap to make (a named tuple: a frozen dataclass costs three times as much to build,
    and one is built per op while recording). ``code``/``lineno`` are kept raw because building a
    :class:`Site` label costs more than the op itself; :attr:`site` builds it when someone reads it.
    (An IPython cell's label is looked up then too: a cell re-run with identical code shares its
    temporary file name and is labelled with its newest ``In[n]``.)
    """

    code: CodeType | None  # the user's code object (None if no user frame was found)
    lineno: int
    scope: tuple  # nn.Module objects whose forward was running, outermost first; () outside any module

    @property
    def site(self) -> Site | None:
        """The user's line, as :func:`user_site` would have named it."""
        c = self.code
        return None if c is None else make_site(c.co_filename, self.lineno, c.co_name)

    @property
    def module(self):
        """The innermost module whose forward made the node, or None."""
        return self.scope[-1] if self.scope else None

    def __repr__(self) -> str:
        mods = "/".join(type(m).__name__ for m in self.scope)
        return f"<Origin {self.site}{' in ' + mods if mods else ''}>"


_tuple_new = tuple.__new__


def origin() -> Origin:
    """The :class:`Origin` of a node being recorded now (called by the ops only while recording)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return _tuple_new(Origin, (None, 0, context.scope))
    return _tuple_new(Origin, (f.f_code, f.f_lineno, context.scope))


def record_origins(on: bool = True) -> bool:
    """Turn origin recording on or off for the whole process; returns the previous setting.

    The switch is process-wide (like ``no_grad``); the module scope it records is per thread.
    """
    previous = events.ORIGINS
    events._set_origins(bool(on))
    return previous


def origins_enabled() -> bool:
    """Whether recorded nodes get an ``origin`` now."""
    return events.ORIGINS


@contextmanager
def recording_origins(on: bool = True) -> Iterator[None]:
    """``with recording_origins():`` records origins inside the block, then restores the setting."""
    previous = record_origins(on)
    try:
        yield
    finally:
        record_origins(previous)

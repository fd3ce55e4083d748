"""Find the user's line of code that triggered something (outside this package's own frames)."""

from __future__ import annotations

import os
import sys

from .events import Site

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


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


def user_site(skip_internal: bool = True) -> Site | None:
    """The innermost frame that is not inside ``tinygrad_like`` (the line a learner wrote)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    fn, line, func = f.f_code.co_filename, f.f_lineno, f.f_code.co_name
    cell = _cell_label(fn)
    if cell is not None:
        label = f"cell {cell}, line {line}"
    else:
        label = f"{os.path.basename(fn)}:{line}" + (f" in {func}" if func != "<module>" else "")
    return Site(fn, line, func, label)

"""The cell a kernel launch ran in: a robust identity under Jupyter, nbval and plain Python.

Cells are numbered without ``In[n]`` where there is none (nbval runs cells with ``store_history=False``): a
``pre_run_cell`` / ``post_run_cell`` hook on the running IPython shell (installed when this module is imported
there) gives each cell a sequence number, labelled ``In[n]`` when IPython stores the cell in its history and
``cell k`` otherwise; outside IPython each view counts the cells itself (``KernelTimeline.after_cell()`` moves on).
Before a cell starts, the hook also files the inbox of every open timeline (:func:`track`), so the launches of the
cell that ended keep its number.
"""

from __future__ import annotations

import weakref

__all__ = ["CELLS", "hook_shell", "track"]


class _Cells:
    """The cell running now, from IPython's ``pre_run_cell`` / ``post_run_cell`` events.

    ``seq`` counts cells (1, 2, ...) since the hooks were installed; ``number[seq]`` / ``label[seq]`` are
    ``n`` / ``"In[n]"`` for a cell IPython stores in its history, else the sequence number / ``"cell k"``.
    """

    def __init__(self) -> None:
        self.shell = None
        self.seq = 0
        self.number: dict[int, int] = {}
        self.label: dict[int, str] = {}

    def install(self, shell) -> bool:
        """Hook ``shell`` (once); the cell running now becomes cell 1 (``In[n]`` when the history names it)."""
        if shell is None:
            return False
        if self.shell is shell:
            return True
        try:
            cbs = shell.events.callbacks
            for name, fn in (("pre_run_cell", _pre_run_cell), ("post_run_cell", _post_run_cell)):
                if fn not in cbs.get(name, []):
                    shell.events.register(name, fn)
        except Exception:  # noqa: BLE001 - a shell without IPython's events: count cells per view instead
            return False
        self.shell = shell
        self.seq += 1
        hist = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
        n = len(hist) - 1 if hist else 0
        self._name(self.seq, n if n >= 1 else None)
        return True

    def _name(self, seq: int, n: int | None) -> None:
        self.number[seq] = n if n is not None else seq
        self.label[seq] = f"In[{n}]" if n is not None else f"cell {seq}"

    def pre(self, info) -> None:
        self.seq += 1
        n = None
        if getattr(info, "store_history", False):
            ec = getattr(self.shell, "execution_count", None)
            if isinstance(ec, int):  # IPython 9 counts the running cell before pre_run_cell, IPython 8 after
                n = ec - 1 if _EC_AHEAD else ec
        self._name(self.seq, n)

    def post(self, result) -> None:
        info = getattr(result, "info", None)
        ec = getattr(result, "execution_count", None)
        if getattr(info, "store_history", False) and isinstance(ec, int):
            self._name(self.seq, ec)  # the authoritative number


def _ec_ahead() -> bool:
    try:
        import IPython
        return IPython.version_info[0] >= 9
    except Exception:  # noqa: BLE001
        return True


_EC_AHEAD = _ec_ahead()
CELLS = _Cells()


#: open timelines: their inboxes are filed before a new cell starts (the cell they ran in is read when filing)
_TIMELINES: weakref.WeakSet = weakref.WeakSet()


def _pre_run_cell(info=None) -> None:
    for view in list(_TIMELINES):
        view._drain()
    CELLS.pre(info)


def _post_run_cell(result=None) -> None:
    CELLS.post(result)


def _get_ipython():
    """The running IPython shell (a kernel or a terminal), or None.

    A bare ``InteractiveShell`` singleton does not count: IPython's display formatting creates one on first use
    in a plain Python process (``Output.append_display_data`` does), and its execution count never moves.
    """
    try:
        from IPython import get_ipython
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    sh = get_ipython()
    return None if sh is None or type(sh) is InteractiveShell else sh


def hook_shell() -> bool:
    """Hook the running IPython shell, if there is one (once): whether cells are numbered by the hooks (else each
    view counts them)."""
    return CELLS.install(_get_ipython())


def track(view) -> None:
    """File ``view``'s inbox (``view._drain()``) before every cell starts, while the view lives (held weakly)."""
    _TIMELINES.add(view)


hook_shell()  # importing the widgets in a notebook starts the count

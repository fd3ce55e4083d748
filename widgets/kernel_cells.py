"""The cell a kernel launch ran in: a robust identity under Jupyter, nbval and plain Python.

Cells are numbered without ``In[n]`` where there is none (nbval runs cells with ``store_history=False``): a
``pre_run_cell`` / ``post_run_cell`` hook on the running IPython shell (installed when this module is imported
there) gives each cell a sequence number, labelled ``In[n]`` when IPython stores the cell in its history and
``cell k`` otherwise; outside IPython each view counts the cells itself (``KernelTimeline.after_cell()`` moves on).
Before a cell starts, the hook also files the inbox of every open timeline (:func:`track`), so the launches of the
cell that ended keep its number.

Work a view does between cells, for a click in the browser (a ``BackwardStepper``'s Step: a comm message, no cell
runs), is filed under a group of its own named by the cell that made the view, ``In[5] · BackwardStepper``
(:func:`acting_for`), not under whichever cell ran last: that cell's span would stretch over the minutes between
its launches and the click, and squeeze every other cell of the timeline.
"""

from __future__ import annotations

import weakref

__all__ = ["CELLS", "hook_shell", "track", "acting_for", "made_in"]

#: keys of the groups of work done between cells (above any cell's sequence number)
GROUP_BASE = 1_000_000_000


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
        self.running = False  # a cell runs now (between pre_run_cell and post_run_cell)
        self.acting: int | None = None  # the group key while a view works for a click between cells
        self._groups: dict[tuple, int] = {}  # (made-in cell seq, view class name) -> group key

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

    def group(self, made_seq: int, made_label: str, name: str) -> int:
        """The key of the work ``name`` (a view class) does between cells for a view made in cell ``made_seq``."""
        key = self._groups.get((made_seq, name))
        if key is None:
            key = self._groups[(made_seq, name)] = GROUP_BASE + len(self._groups)
            self.number[key] = self.number.get(made_seq, made_seq)  # (sorts next to the cell that made the view)
            self.label[key] = f"{made_label} · {name}" if made_label else f"{name} (clicks)"
        return key

    def pre(self, info) -> None:
        self.running = True
        self.seq += 1
        n = None
        if getattr(info, "store_history", False):
            ec = getattr(self.shell, "execution_count", None)
            if isinstance(ec, int):  # IPython 9 counts the running cell before pre_run_cell, IPython 8 after
                n = ec - 1 if _EC_AHEAD else ec
        self._name(self.seq, n)

    def post(self, result) -> None:
        self.running = False
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


def made_in() -> tuple[int, str]:
    """The cell running now as ``(sequence number, label)`` (``(0, "")`` when the hooks do not number cells): what a
    view records when it is made, to name the work it does later for clicks."""
    cells = CELLS
    if cells.shell is None:
        return 0, ""
    return cells.seq, cells.label.get(cells.seq, f"cell {cells.seq}")


class acting_for:
    """``with acting_for(view):`` the kernels launched inside (a click's work, between cells) are filed under the
    group of the view (:meth:`_Cells.group`): every open timeline files what came before first, and what came inside
    on the way out. Inside a running cell (a test or a cell calling the handler) nothing changes."""

    __slots__ = ("key", "outer")

    def __init__(self, view) -> None:
        made = getattr(view, "__dict__", {}).get("_made_in") or (0, "")
        self.key = None if CELLS.running else CELLS.group(made[0], made[1], type(view).__name__)

    def __enter__(self):
        if self.key is not None:
            _drain_all()
            self.outer, CELLS.acting = CELLS.acting, self.key
        return self

    def __exit__(self, *exc) -> None:
        if self.key is not None:
            _drain_all()
            CELLS.acting = self.outer


def _drain_all() -> None:
    for view in list(_TIMELINES):
        view._drain()


def hook_shell() -> bool:
    """Hook the running IPython shell, if there is one (once): whether cells are numbered by the hooks (else each
    view counts them)."""
    return CELLS.install(_get_ipython())


def track(view) -> None:
    """File ``view``'s inbox (``view._drain()``) before every cell starts, while the view lives (held weakly)."""
    _TIMELINES.add(view)


hook_shell()  # importing the widgets in a notebook starts the count

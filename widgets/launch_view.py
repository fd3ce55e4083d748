"""``LaunchView``: one kernel launch on the emulated device, as a learner sees it, from a trace
(``with tl.cuda.trace() as tr: ...``; ``LaunchView(tr)``).

- **Structure**: the grid of blocks, and the threads of a block in rows of warps (32 lanes). Hovering a block or a
  thread asks Python what it is and wrote (details on demand: a launch of a million threads sends only aggregates),
  and the elements a hovered thread wrote are outlined in the output.
- **Work**: each element of an output coloured by the block, warp or thread that wrote it, so a grid-stride loop
  (stripes), a tiled matmul (tiles) and a reduction (one element per block) are recognisable at a glance.
- **Barriers**: the traced block's shared memory, one row of 32 banks per 128 bytes, stepped phase by phase
  between ``__syncthreads()`` with Back / Step (or the arrow keys): the words written in the phase filled with the
  writer's colour, the words read outlined.
- **Memory behaviour**: per line of the kernel, each warp's global accesses in 32-byte sectors (coalesced or not)
  and its shared accesses in bank passes (conflicts), worst first, each with one line that explains it and the fix.

Layers: the trace (``tinygrad_like.backends.cuda_emu.trace``, in the core), the *model* (``launch_model``: the
payload, pure functions), the *widget* (``launch_widget`` + ``static/launch.js``: canvases, crisp at any zoom and
pixel density, light and dark themes) and the *static picture* (``launch_png``) a saved notebook shows.
"""

from __future__ import annotations

from typing import Any

from ._base import View
from ._static_picture import add_png
from .launch_model import block_info, element_info, launch_payload, thread_info
from .launch_png import launch_png
from .launch_widget import LaunchWidget

__all__ = ["LaunchView"]

_COLOURS = ("block", "warp", "thread")


class LaunchView(View):
    """Draw traced launches: ``LaunchView(tr)`` (a ``tl.cuda.trace()`` recorder: its last launch, the others in a
    menu), ``LaunchView(tr[0])`` (one ``LaunchTrace``) or a list of them. ``launch``: which one first (an index, or
    a kernel name: its last launch); ``output``: the pointer argument drawn (default: the first one written);
    ``color_by``: "block", "warp" or "thread"."""

    css_class = "tl-launch-view"

    def __init__(self, traces: Any, launch: int | str = -1, *, output: str | None = None,
                 color_by: str = "block") -> None:
        self._traces = _as_list(traces)
        self._index = _pick(self._traces, launch)
        if color_by not in _COLOURS:
            raise ValueError(f"color_by must be one of {_COLOURS}, got {color_by!r}")
        if output is not None and output not in self._traces[self._index].writers:
            raise ValueError(f"{self._traces[self._index].kernel} has no written pointer argument {output!r}; it "
                             f"has {list(self._traces[self._index].writers)}")
        self._output = output
        self._color_by = color_by
        super().__init__(live=False)
        self.refresh()

    def _make_widget(self) -> LaunchWidget:
        return LaunchWidget(self)

    @property
    def trace(self):
        """The launch shown (a ``LaunchTrace``)."""
        return self._traces[self._index]

    def show(self, launch: int | str | None = None, *, output: str | None = None, color_by: str | None = None) -> None:
        """Show another launch, output or colouring (what the view's menus do)."""
        if launch is not None:
            self._index = _pick(self._traces, launch)
            self._output = None
        if output is not None:
            if output not in self.trace.writers:
                raise ValueError(f"{self.trace.kernel} has no pointer argument {output!r}; it has "
                                 f"{list(self.trace.writers)}")
            self._output = output
        if color_by is not None:
            if color_by not in _COLOURS:
                raise ValueError(f"color_by must be one of {_COLOURS}, got {color_by!r}")
            self._color_by = color_by
        self.refresh()

    def _render(self) -> None:
        self.widget.payload = launch_payload(self._traces, self._index, self._output, self._color_by)

    # ---- from the browser -----------------------------------------------------------------------------
    def on_message(self, content: dict) -> None:
        kind = content.get("type")
        if kind == "close":
            self.close()
        elif kind == "launch" and isinstance(content.get("index"), int) and 0 <= content["index"] < len(self._traces):
            self.show(content["index"])
        elif kind == "output" and content.get("name") in self.trace.writers:
            self.show(output=content["name"])
        elif kind == "color" and content.get("by") in _COLOURS:
            self.show(color_by=content["by"])
        elif kind == "hover_thread" and _ints(content, "block", "thread"):
            b, t = content["block"], content["thread"]
            if 0 <= b < self.trace.num_blocks and 0 <= t < self.trace.threads_per_block:
                self.widget.send(thread_info(self.trace, b, t))
        elif kind == "hover_block" and _ints(content, "square"):
            per = self.widget.payload["blocks"]["per"]
            if 0 <= content["square"] * per < self.trace.num_blocks:
                self.widget.send(block_info(self.trace, content["square"], per))
        elif kind == "hover_element" and _ints(content, "element") and content.get("name") in self.trace.writers:
            if 0 <= content["element"] < len(self.trace.writers[content["name"]]):
                self.widget.send(element_info(self.trace, content["name"], content["element"]))

    def summary(self) -> str:
        return self.trace.summary()

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus :func:`launch_png` of the output it draws, for a saved notebook where widgets do not run."""
        return add_png(super()._repr_mimebundle_(**kwargs), launch_png(self.widget.payload))


def _ints(content: dict, *keys: str) -> bool:
    return all(isinstance(content.get(k), int) and not isinstance(content.get(k), bool) for k in keys)


def _as_list(traces: Any) -> list:
    launches = getattr(traces, "launches", None)
    if launches is not None:  # a TraceRecorder
        traces = launches
    elif hasattr(traces, "writers") and hasattr(traces, "grid"):  # one LaunchTrace
        traces = [traces]
    traces = list(traces) if isinstance(traces, (list, tuple)) else None
    if not traces or not all(hasattr(t, "writers") and hasattr(t, "grid") for t in traces):
        raise TypeError("LaunchView draws traced launches: pass what `with tl.cuda.trace() as tr:` recorded (tr, "
                        "tr[0] or a list of them), with at least one launch on the cuda-emu device in it")
    return traces


def _pick(traces: list, launch: int | str) -> int:
    if isinstance(launch, str):
        found = [i for i, t in enumerate(traces) if t.kernel == launch]
        if not found:
            raise ValueError(f"no launch of {launch!r} in the trace; it has {[t.kernel for t in traces]}")
        return found[-1]
    if not isinstance(launch, int) or not -len(traces) <= launch < len(traces):
        raise IndexError(f"launch must be an index into the {len(traces)} traced launches, got {launch!r}")
    return launch % len(traces)

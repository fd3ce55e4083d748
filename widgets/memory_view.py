"""``MemoryTimelineView``: where the memory goes, drawn. Bytes alive over a span of code (a training step, or any
span), stacked by what they are for (parameters, gradients, optimizer state, saved for backward, outputs,
temporaries, inputs and data, the host copies of device tensors read on the host, a device pool's cached bytes),
with the forward, backward and optimizer phases shaded, each copy between host and device marked on the x axis, and
the peak marked with what was alive there and who made it. Hovering an event lists the storages alive at it
(asked of Python on demand); clicking a row selects the op's node in an open ``GraphView``. Two recordings side by
side (``compare=``) answer "what does no_grad / checkpointing / a smaller batch save?" on one scale.

``MemoryTimelineView(mem)`` draws a recording (``with tl.memory_timeline(...) as mem:``);
``MemoryTimelineView(model=net, optimizer=opt)`` starts its own and draws it live while the cell runs (Pause
stops the redraws, ``view.stop()`` the recording); with ``per_cell=True`` (the Dashboard's Memory tab) it records
each cell anew, and only while it can be seen: a hidden tab or a paused view records nothing.

Layers: the recording (``tinygrad_like.memory_timeline``, in the core), the *model* (``memory_model``), the *widget*
(``memory_widget`` + ``static/memory.js``: one canvas per run, crisp at any pixel density, light and dark themes) and
the *static picture* (``memory_png``).
"""

from __future__ import annotations

import weakref

from tinygrad_like import events
from tinygrad_like.device import get_device
from tinygrad_like.memory_timeline import MemoryTimeline, memory_timeline

from . import selection
from ._base import View
from ._static_picture import add_png
from .memory_model import alive_rows, timeline_payload
from .memory_png import memory_png
from .memory_widget import MemoryWidget

__all__ = ["MemoryTimelineView"]


def _stop_boxed(box: list) -> None:
    """Stop the recording a view made (the view is closed or gone)."""
    if box[0] is not None and box[0].recording:
        box[0].stop()


class MemoryTimelineView(View):
    """See the module docstring. ``timeline``: a ``MemoryTimeline`` (recorded or recording), or None to record one
    now for ``model`` and ``optimizer``; ``compare``: a second one drawn beside it; ``device``: the device drawn
    (default: the model's, else the one with the most bytes)."""

    css_class = "tl-memory-view"
    listens_to = (events.StorageAllocated, events.StorageFreed, events.StorageStateChanged)

    def __init__(self, timeline: MemoryTimeline | None = None, compare: MemoryTimeline | None = None, *,
                 model=None, optimizer=None, device: str | None = None, name: str = "", per_cell: bool = False,
                 lines: bool = True) -> None:
        for what, t in (("timeline", timeline), ("compare", compare)):
            if t is not None and not isinstance(t, MemoryTimeline):
                raise TypeError(f"MemoryTimelineView({what}=...) takes what `with tl.memory_timeline() as mem:` "
                                f"recorded, got {type(t).__name__}")
        if per_cell and timeline is not None:
            raise ValueError("per_cell=True records cell by cell by itself: pass model= and optimizer=, not a timeline")
        self._owned = timeline is None
        self.per_cell = per_cell
        self._record_args = (model, optimizer, lines, name)
        self.timeline = timeline if timeline is not None else self._new_recording()
        self._last_done = None  # per_cell: the last cell's finished recording (drawn until the next one has events)
        self.compare = compare
        self.device = None if device is None else str(get_device(device))  # ("sim" -> "sim:0", as recorded)
        # a view dropped without close() stops the recording it made (the finalizer holds the box, not the view)
        self._recording_box = [self.timeline if self._owned else None]
        self._stopper = weakref.finalize(self, _stop_boxed, self._recording_box)
        super().__init__(live=self.timeline.recording or per_cell)
        selection.register(self)
        self.refresh()

    def _new_recording(self) -> MemoryTimeline:
        model, optimizer, lines, name = self._record_args
        t = memory_timeline(model, optimizer, lines=lines, name=name).start()
        box = self.__dict__.get("_recording_box")
        if box is not None:
            box[0] = t
        return t

    # ---- per_cell: a recording per cell, and only while the view can be seen (a hidden tab costs nothing)
    def _update_live(self) -> None:
        super()._update_live()
        if not self.__dict__.get("per_cell"):
            return
        if not self._is_live and self.timeline.recording:
            self.timeline.stop()
            self._last_done = self.timeline if len(self.timeline) else self._last_done
        elif self._is_live and not self.timeline.recording:
            self.timeline = self._new_recording()

    def after_cell(self) -> None:
        """per_cell: the cell's recording is done: draw it, and start the next one while the view can be seen."""
        if not self.per_cell:
            return super().after_cell()
        if self.timeline.recording:
            self.timeline.stop()
            if len(self.timeline):
                self._last_done = self.timeline
        if self._live():
            self.refresh()
            self.timeline = self._new_recording()

    def _make_widget(self) -> MemoryWidget:
        return MemoryWidget(self)

    def stop(self) -> MemoryTimeline:
        """End the recording this view started (its categories are settled then) and draw it once more; a
        ``per_cell`` view records no further cells."""
        self.per_cell = False
        self.timeline.stop()
        if self._last_done is not None and not len(self.timeline):
            self.timeline = self._last_done
        self._stop_listening()
        self.refresh()
        return self.timeline

    def _runs(self) -> list[MemoryTimeline]:
        return [t for t in (self._shown_timeline(), self.compare) if t is not None]

    def _shown_timeline(self) -> MemoryTimeline:
        """What is drawn: the recording, or (per_cell, before the new cell's first event) the last cell's."""
        t = self.timeline
        if self.per_cell and self._last_done is not None and (not len(t) or t is self._last_done):
            return t if len(t) and not t.recording else self._last_done
        return t

    def _device(self) -> str | None:
        """The device drawn: the chosen one while the recording shown has it (a live view's next cell may not), else
        the recording's default."""
        return self.device if self.device in self._shown_timeline().devices else None

    def _compare_device(self) -> str | None:
        """The compared run is drawn on the chosen device where it has one (else on its own default)."""
        c = self.compare
        return self.device if c is not None and self.device in c.devices else None

    def _render(self) -> None:
        self.widget.payload = timeline_payload(self._shown_timeline(), self.compare, device=self._device(),
                                               compare_device=self._compare_device(), live=self.per_cell)

    def on_message(self, content: dict) -> None:
        kind = content.get("type")
        if kind == "close":
            self.close()
        elif kind == "alive" and isinstance(content.get("run"), int) and isinstance(content.get("index"), int):
            runs = self._runs()
            if 0 <= content["run"] < len(runs) and -1 <= content["index"] < len(runs[content["run"]]):
                run = runs[content["run"]]
                device = self._device() if content["run"] == 0 else self._compare_device()
                info = alive_rows(run, content["index"], device)
                self.widget.send({"type": "alive_info", "run": content["run"], "pin": bool(content.get("pin")),
                                  **info})
        elif kind == "device" and isinstance(content.get("device"), str):
            shown = self._shown_timeline()
            if content["device"] in shown.devices:  # (one of the devices the menu offered)
                self.device = content["device"]
                self.refresh()
        elif kind == "select" and isinstance(content.get("storage"), int):
            for run in self._runs():
                a = run.allocations.get(content["storage"])
                if a is None:
                    continue
                # the storage in an open StorageView, then the node that made it in an open GraphView
                self._selected_storage = selection.StorageSelection(a.storage_id)  # (the hub holds it weakly)
                selection.select(self._selected_storage, source=self)
                if a.node is not None:
                    selection.select(a.node, source=self)
                return

    def on_shared_select(self, node) -> None:
        """Another view selected a node: nothing to move here (the rows name their nodes)."""

    def close(self) -> None:
        if self.__dict__.get("_owned"):
            self._stopper()
        selection.unregister(self)
        super().close()

    def summary(self) -> str:
        if self.per_cell:
            return "<MemoryTimelineView: the memory of each cell, recorded while the view is on screen>"
        t = self._shown_timeline()
        p = t.peak_on(self._device())
        return (f"<MemoryTimelineView: {len(t):,} events, peak {p.bytes:,} bytes on {p.device}"
                f"{', compared with a second run' if self.compare is not None else ''}>")

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus :func:`memory_png` of the stacked areas, for a saved notebook where widgets do not run."""
        return add_png(super()._repr_mimebundle_(**kwargs), memory_png(self.widget.payload))

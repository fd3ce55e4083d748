"""What every view shares: a root widget with stable CSS classes (``tl-view`` and the view's own), refresh on
demand, after every cell (``%load_ext tinygrad_like.widgets``), and throttled refresh while events stream in during
a long cell; pause, visibility and closing. A closed view is a shell that keeps only plain values and displays as
"closed"; a view dropped without ``close()`` closes its widgets when collected, unless its widget was handed out (read
by the user's code, or displayed: then the widget keeps its view); ``lifecycle`` releases the views a notebook no
longer shows.

A view keeps the *model* (plain Python data computed from the core: ``graph_model``, ``storage_model``,
``kernel_model``) apart from the *drawing* (the browser code in ``static/``, through an anywidget such as
``graph_widget``; or a pure function model -> matplotlib Figure, such as ``training_view.draw_training``), from the
*static picture* a saved notebook shows (``_static_picture``) and from the widget wiring here, so models and
drawings are unit-tested without a browser.
"""

from __future__ import annotations

import html
import os
import sys
import time
import weakref
from typing import Any

import ipywidgets

from tinygrad_like import events

from . import kernel_cells, lifecycle

#: every open view; the post_run_cell hook refreshes these
_OPEN: weakref.WeakSet = weakref.WeakSet()

#: at most this many redraws a second per view from events during a cell
MAX_REFRESH_HZ = 10.0
#: all views together may spend at most this share of wall time redrawing while a cell runs
LIVE_BUDGET = 0.04


class _SharedBudget:
    """After a live redraw that took ``c`` seconds, no view redraws live for ``c / LIVE_BUDGET``."""

    next_allowed = 0.0


_BUDGET = _SharedBudget()


def html_table(header: list[str], rows: list[list[Any]], css: str = "tl-table") -> str:
    """A small HTML table (values escaped) for HTML widgets."""
    import html

    head = "".join(f"<th style='text-align:left;padding:1px 6px'>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:1px 6px'>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table class='{css}' style='border-collapse:collapse;font-size:12px'><tr>{head}</tr>{body}</table>"


class _ClosedFlag:
    """``view.closed``: True once closed or released (the view holds nothing any more and displays as "closed").
    Read-only from outside, yet a subclass may keep its own ``closed`` attribute (a plain, non-data descriptor)."""

    def __get__(self, view, owner=None):
        return self if view is None else "_closed_as" in view.__dict__


#: where this package's modules live: a read of ``view.widget`` from elsewhere is the user's (it hands the widget out)
_OUR_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: the attribute of a handed-out root widget that holds its view
_HOLDS_VIEW = "_tl_view"


class _WidgetSlot:
    """``view.widget``, the root widget. Read by code outside this package (``ipywidgets.VBox([view.widget])``,
    ``w = GraphView(y).widget``), or displayed, the widget is *handed out*: from then on it holds its view (so the
    buttons and drawing keep working while the user holds only the widget), and the view no longer closes it when
    collected; the notebook hooks of :mod:`.lifecycle` and ``close()`` free it instead. A view whose widget was never
    handed out closes its widgets when dropped."""

    def __get__(self, view, owner=None):
        if view is None:
            return self
        d = view.__dict__
        widget = d.get("_widget")
        if widget is None:
            return view.__getattr__("widget")  # (a closed view: says so)
        if d.get("_handed_out") != "read" and not _getframe(1).f_code.co_filename.startswith(_OUR_DIR):
            _hand_out(view, "read")
        return widget

    def __set__(self, view, widget) -> None:
        view.__dict__["_widget"] = widget


_getframe = sys._getframe


def _hand_out(view: View, how: str) -> None:
    """The user holds (``how="read"``) or shows (``"shown"``) ``view``'s widget: the widget keeps the view alive, and
    the view's collection no longer closes it (see :class:`_WidgetSlot`)."""
    d = view.__dict__
    if "_closed_as" in d or d.get("_handed_out") in (how, "read"):
        return
    d["_handed_out"] = how
    d["_reaper"].detach()
    d["_widget"].__dict__[_HOLDS_VIEW] = view
    if how == "read":
        lifecycle.held(view)  # (in a notebook: released when its cell runs again, if nothing names it by then)


def no_longer_shown(view: View) -> None:
    """The lifecycle found ``view`` shown nowhere (its cell ran again, or its output was cleared) yet still named by
    a variable: if only a display had handed its widget out, the widget lets go of the view again, and the view
    closes its widgets once the variable drops it (as one never displayed does)."""
    if view.__dict__.get("_handed_out") == "shown":
        take_back(view)


def take_back(view: View) -> None:
    """Undo :func:`_hand_out`: the widget no longer keeps ``view`` alive, and the view closes its widgets when it is
    dropped (the lifecycle, for a view shown nowhere; a test suite, for the views a finished test read widgets of)."""
    d = view.__dict__
    if not d.get("_handed_out") or "_closed_as" in d:
        return
    del d["_handed_out"]
    widget = d["_widget"]
    widget.__dict__.pop(_HOLDS_VIEW, None)
    d["_reaper"] = weakref.finalize(view, close_tree, widget)


class View:
    """Base of every view: ``widget`` is the root container (class ``tl-view`` and ``css_class``).

    Subclasses implement ``_render()`` (rebuild the widget contents from a fresh model). Events
    named in ``listens_to`` (event classes) mark the view stale; a stale view redraws at most
    ``MAX_REFRESH_HZ`` times a second while a cell runs, within a budget all views share (at most
    ``LIVE_BUDGET`` of wall time), and once more after the cell.

    A view does no work while it is **paused** (``pause()``, or its Pause button) or **not visible**: a root
    widget with a synced ``visible`` trait (the anywidget views: their browser code sets it from an
    IntersectionObserver) reports when it is scrolled away, in a hidden tab or a collapsed output. Its handler is
    then unsubscribed: the first event of ``listens_to`` only marks it stale (and unsubscribes that marker), so a
    hidden view costs a training step nothing, and it redraws once when it is shown or resumed again. Events of
    ``records_hidden`` are history the view cannot rebuild from the core (transfers, kernel launches): those
    reach ``_on_event`` whether the view is seen or not.
    """

    css_class = "tl-view"
    listens_to: tuple = ()
    records_hidden: tuple = ()  # event classes (a subset of listens_to) delivered even while hidden or paused

    def __init_subclass__(cls, **kwargs) -> None:
        """A closed view is a shell (see :meth:`release`): whatever a subclass's ``close``, ``summary`` or display
        does, on a closed view ``close()`` does nothing, and ``summary()`` and the display say "closed"."""
        super().__init_subclass__(**kwargs)
        for name, guard in _GUARDS.items():
            fn = cls.__dict__.get(name)
            if fn is not None and not getattr(fn, "_shell_guard", False):
                setattr(cls, name, guard(fn))

    widget = _WidgetSlot()

    def __init__(self, *, live: bool = True) -> None:
        self.widget = self._make_widget()
        # dropped without close() before its widget was handed out: its widgets close with it (ipywidgets would keep
        # them, and their comms, for good); the finalizer holds the widget, never the view (until handed out, the
        # view's widgets reach their view only weakly)
        self._reaper = weakref.finalize(self, close_tree, self.widget)
        self._made_in = kernel_cells.made_in()  # (names the work it does later for clicks, in a kernel timeline)
        self.widget.add_class("tl-view")
        self.widget.add_class(self.css_class)
        self._stale = False
        self._last_draw = 0.0
        self._unsubscribe = None  # the subscription of listens_to minus records_hidden (handler or marker)
        self._unsubscribe_records = None  # the subscription of records_hidden
        self._handler_on = False  # whether _unsubscribe delivers to _on_event (else to the stale marker)
        self._listening = False  # subscribed (live views, until closed)
        self._paused = False
        self._shown = True  # False while a container (the Dashboard's tabs) hides this view
        self._is_live = True  # not paused and visible: kept up to date by the changes, read by every event
        self.redraws = 0
        if live:
            self._start_listening()
        if self.widget.has_trait("visible") or self.widget.has_trait("paused"):
            names = [n for n in ("visible", "paused") if self.widget.has_trait(n)]
            self.widget.observe(weak_callback(self, "_on_shown"), names=names)
        _OPEN.add(self)

    # ---- subscriptions ----------------------------------------------------------------------------
    def _subscribe_records(self):
        """Subscribe what must arrive while hidden too (views with their own fast path override this)."""
        return _subscribe_weakly(self, kinds=self.records_hidden)

    def _resubscribe(self) -> None:
        """While live, the events of ``listens_to`` reach ``_on_event``; while paused or out of sight, only the
        first one arrives, at a marker that marks the view stale and unsubscribes itself (none once it is stale)."""
        kinds = tuple(k for k in self.listens_to if k not in self.records_hidden)
        if not self._listening or not kinds:
            return
        live = self._is_live
        if self._unsubscribe is not None:
            if self._handler_on == live:
                return
            self._unsubscribe()
            self._unsubscribe = None
        if live or not self._stale:
            self._handler_on = live
            self._unsubscribe = _subscribe_weakly(self, "_on_event" if live else "_mark_stale", kinds=kinds)

    def _mark_stale(self, event) -> None:
        """The one event a hidden view receives: something it shows may have changed; stop listening until shown."""
        self._stale = True
        if self._unsubscribe is not None and not self._handler_on:
            self._unsubscribe()
            self._unsubscribe = None

    def _start_listening(self) -> None:
        """Subscribe as a view made with ``live=True`` does (after :meth:`_stop_listening`; benchmarks use the pair)."""
        if self._listening or not self.listens_to:
            return
        self._listening = True
        if self.records_hidden:
            self._unsubscribe_records = self._subscribe_records()
        self._resubscribe()

    def _stop_listening(self) -> None:
        self._listening = False
        for name in ("_unsubscribe", "_unsubscribe_records"):
            unsubscribe = getattr(self, name)
            if unsubscribe is not None:
                unsubscribe()
                setattr(self, name, None)

    # ---- pause and visibility ---------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        """True while live updates are paused (the view keeps what it shows, and catches up on ``resume()``)."""
        return bool(self.widget.paused) if self.widget.has_trait("paused") else self._paused

    def pause(self) -> None:
        if self.widget.has_trait("paused"):
            self.widget.paused = True
        self._paused = True
        self._update_live()

    def resume(self) -> None:
        """Live again; a view that missed changes while paused redraws now."""
        self._paused = False
        if self.widget.has_trait("paused"):
            self.widget.paused = False  # (observed: _on_shown redraws)
        else:
            self._on_shown()
        self._update_live()

    @property
    def visible(self) -> bool:
        """Whether the view can be seen: not in a hidden tab of a container, and, where the browser reports it (a
        root widget with a ``visible`` trait, or the probe in the controls bar), on screen."""
        if not self._shown:
            return False
        if self.widget.has_trait("visible"):
            return bool(self.widget.visible)
        probe = getattr(self, "_probe", None)
        return True if probe is None else bool(probe.visible)

    def set_shown(self, shown: bool, catch_up: bool = True) -> None:
        """For containers: this view's tab was shown or hidden (a hidden view only remembers what changed). With
        ``catch_up`` a view shown again redraws now if it missed something (the container may do it instead)."""
        self._shown = bool(shown)
        self._update_live()
        if catch_up:
            self._on_shown()

    def _live(self) -> bool:
        """Not paused and visible: the flag every event reads (asking the widgets' traits each time costs about a
        microsecond an event), updated whenever pause, visibility or a container's tab changes."""
        return self._is_live

    def _update_live(self) -> None:
        self._is_live = not self.paused and self.visible
        self._resubscribe()

    def _controls(self) -> ipywidgets.HBox:
        """Pause/Resume and Close buttons (class ``tl-controls``) for a view whose root is a plain ipywidgets box; the
        anywidget views draw their own. Clicks run in the kernel, so they take effect when the running cell ends."""
        pause = ipywidgets.ToggleButton(value=False, description="Pause",
                                        tooltip="pause live updates; resume to catch up",
                                        layout=ipywidgets.Layout(width="auto"))
        pause.add_class("tl-pause")
        close = ipywidgets.Button(description="Close", tooltip="close this view and free what it holds",
                                  layout=ipywidgets.Layout(width="auto"))
        close.add_class("tl-close")
        pause.observe(weak_callback(self, "_on_pause_button"), names="value")
        close.on_click(weak_callback(self, "close"))
        self._pause_button = pause
        from .probe import VisibilityProbe

        self._probe = VisibilityProbe()  # (reports whether this view is on screen; draws nothing)
        self._probe.observe(weak_callback(self, "_on_shown"), names="visible")
        # (flex "0 0 auto": never squeezed by a neighbour)
        box = ipywidgets.HBox([pause, close, self._probe], layout=ipywidgets.Layout(flex="0 0 auto"))
        box.add_class("tl-controls")
        return box

    def _on_pause_button(self) -> None:
        button = self._pause_button
        button.description = "Resume" if button.value else "Pause"
        self.pause() if button.value else self.resume()

    def _on_shown(self) -> None:
        """Shown or resumed (or hidden, or paused: then only the flag changes): draw once if something changed
        meanwhile."""
        self._update_live()
        if self._is_live and self._stale:
            self.refresh()

    def _make_widget(self) -> ipywidgets.DOMWidget:
        """The root widget; views with their own browser code return their anywidget here."""
        return ipywidgets.VBox()

    # ---- refreshing -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Rebuild from the current state of the core."""
        self._stale = False
        self.redraws += 1
        self._render()
        self._last_draw = time.perf_counter()  # measured from the end: a slow redraw waits its full period
        if self._unsubscribe is None:  # drawn while hidden (on request): watch for the next change again
            self._resubscribe()

    def _live_update(self) -> None:
        """What a redraw during a running cell does; views with slow figures override it with a cheaper
        update (text and tables) and leave the figure to ``after_cell``."""
        self.refresh()

    def _render(self) -> None:
        raise NotImplementedError

    def _on_event(self, event) -> None:
        if not isinstance(event, self.listens_to):
            return
        self._stale = True
        if self._is_live:  # (else paused or out of sight: remember, draw when shown)
            self._maybe_redraw()

    def _maybe_redraw(self) -> None:
        """Redraw now if this view's rate limit and the budget all views share allow it."""
        t0 = time.perf_counter()
        if t0 - self._last_draw >= 1.0 / MAX_REFRESH_HZ and t0 >= _BUDGET.next_allowed:
            self._live_update()
            t1 = time.perf_counter()
            self._last_draw = t1
            _BUDGET.next_allowed = t1 + (t1 - t0) / LIVE_BUDGET

    def after_cell(self) -> None:
        """Called by the post_run_cell hook: draw what changed during the cell (nothing while paused or hidden)."""
        if (self._stale or not self.listens_to) and self._live():
            self.refresh()

    def close(self) -> None:
        """Stop listening, close the widget with every widget under it (ipywidgets keeps each one, and the
        callbacks it holds, in a global registry until it is closed), and let go of what the view observed: the view
        becomes a shell that says it is closed (see :meth:`release`)."""
        self._stop_listening()
        _OPEN.discard(self)
        self._reaper.detach()
        widget = self.__dict__["_widget"]
        widget.__dict__.pop(_HOLDS_VIEW, None)  # (a widget the user kept no longer keeps the shell)
        close_tree(widget)
        lifecycle.forget(self)
        self._become_shell()

    closed = _ClosedFlag()

    def _no_longer_shown(self) -> None:
        no_longer_shown(self)

    def release(self, why: str = "") -> None:
        """Close the view because nothing shows it any more (``why``: "its cell was run again", "its output was
        cleared"); what is left says so when displayed. The notebook hooks of :mod:`.lifecycle` call it."""
        if "_closed_as" not in self.__dict__:
            self.__dict__["_release_reason"] = why
            self.close()

    def _become_shell(self) -> None:
        """Keep only the plain values (numbers, text, and lists or dicts of them: ``redraws``, a monitor's
        ``history``) and drop every object the view held: its widgets, graph, model, tensors and callbacks."""
        d = self.__dict__
        why = d.pop("_release_reason", "")
        kept = {k: v for k, v in d.items() if _plain(v)}
        d.clear()
        d.update(kept)
        d["_closed_as"] = why

    def __getattr__(self, name: str):
        # (only for attributes not found: a closed view lost its objects; say why rather than a bare AttributeError)
        d = self.__dict__
        if "_closed_as" in d:
            why = d["_closed_as"]
            raise ClosedViewError(f"this {type(self).__name__} is closed{f' ({why})' if why else ''}: it no longer "
                                  f"holds {name!r}; make a new view")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _closed_text(self) -> str:
        why = self.__dict__.get("_closed_as", "")
        return f"<{type(self).__name__}: closed{f', released because {why}' if why else ''}>"

    def _closed_bundle(self) -> dict:
        """What a closed view displays: a line saying so (no widget: its comm is gone)."""
        why = self.__dict__.get("_closed_as", "")
        note = (f"released because {why}: it let go of its graph and subscriptions" if why
                else "its widgets and what it observed were freed")
        text = (f"<b>{html.escape(type(self).__name__)}</b> closed: {html.escape(note)}. "
                f"Make a new view to see it again.")
        return {"text/plain": self._closed_text(),
                "text/html": f"<div class='tl-view tl-closed' style='padding:4px 8px;font-size:13px;"
                             f"color:var(--jp-ui-font-color2, #555)'>{text}</div>"}

    # ---- display ---------------------------------------------------------------------------------
    def summary(self) -> str:
        """One stable line for the notebook's plain-text output (nbval compares it; the widget's own
        repr would include timings and model ids)."""
        return f"<{type(self).__name__}>"

    def _repr_mimebundle_(self, **kwargs):
        if "_closed_as" in self.__dict__:
            return self._closed_bundle()
        data = self.widget._repr_mimebundle_(**kwargs) or {}
        if isinstance(data, tuple):  # (data, metadata), as some ipywidgets versions return it
            data = data[0]
        data["text/plain"] = self.summary()
        _hand_out(self, "shown")  # (its widget lives on the page: it must keep the view that answers its clicks)
        lifecycle.displayed(self)  # (in a notebook: held while shown, released when its cell is run again)
        return data

    def __repr__(self) -> str:
        return self._closed_text() if "_closed_as" in self.__dict__ else self.summary()


class ClosedViewError(AttributeError):
    """An attribute of a closed view was asked for (a closed view keeps only plain numbers and text)."""


def _plain(value, budget: int = 100_000) -> bool:
    """Numbers, text, None, and lists, tuples or dicts of them (a closed view keeps these, nothing else)."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > budget:
            return False
        if v is None or isinstance(v, (bool, int, float, str)):
            continue
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        else:
            return False
    return True


def _guard_close(fn):
    def close(self, *args, **kwargs):
        d = self.__dict__
        if "_closed_as" in d:  # (closed already: its objects are gone, there is nothing left to close)
            return None
        return fn(self, *args, **kwargs)
    return _wrapped(close, fn)


def _guard_summary(fn):
    def summary(self, *args, **kwargs):
        return self._closed_text() if "_closed_as" in self.__dict__ else fn(self, *args, **kwargs)
    return _wrapped(summary, fn)


def _guard_display(fn):
    def _repr_mimebundle_(self, *args, **kwargs):
        return self._closed_bundle() if "_closed_as" in self.__dict__ else fn(self, *args, **kwargs)
    return _wrapped(_repr_mimebundle_, fn)


def _wrapped(wrapper, fn):
    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    wrapper.__wrapped__ = fn
    wrapper._shell_guard = True
    return wrapper


_GUARDS = {"close": _guard_close, "summary": _guard_summary, "_repr_mimebundle_": _guard_display}
View.close = _guard_close(View.close)
View.summary = _guard_summary(View.summary)


def close_tree(root: ipywidgets.Widget) -> None:
    """Close ``root`` and every widget it holds in a trait: children of containers (a Tab's pages too), and
    the Layout and Style widgets each one makes. Closing an already closed widget does nothing."""
    stack, seen = [root], set()
    while stack:
        w = stack.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        for name in w.keys:
            value = getattr(w, name, None)
            if isinstance(value, ipywidgets.Widget):
                stack.append(value)
            elif isinstance(value, (tuple, list)):
                stack.extend(v for v in value if isinstance(v, ipywidgets.Widget))
        w.close()


def _subscribe_weakly(view: View, method: str = "_on_event", kinds: tuple | None = None):
    """Subscribe ``view.<method>`` (for the event classes ``kinds``, None for all) without keeping the view alive:
    once the view is garbage, the subscription removes itself (and with the last one, events.ACTIVE goes back to
    False)."""
    ref = weakref.ref(view)

    def forward(event) -> None:
        v = ref()
        if v is not None:  # (else the finalizer is about to unsubscribe)
            getattr(v, method)(event)

    unsubscribe = events.subscribe(forward, kinds)
    collected = weakref.finalize(view, unsubscribe)  # the view was dropped without close(): stop listening

    def stop() -> None:
        collected.detach()
        unsubscribe()

    return stop


def weak_callback(view: View, method: str):
    """A widget callback (``on_click``, ``observe``) that calls ``view.method()`` without keeping the view
    alive: ipywidgets keeps every widget, and so its callbacks, in a global registry."""
    ref = weakref.ref(view)

    def call(*_args) -> None:
        v = ref()
        if v is not None and "_closed_as" not in v.__dict__:  # (a closed view is a shell: a late click does nothing)
            getattr(v, method)()

    return call


def refresh_open_views() -> None:
    for view in list(_OPEN):
        if view not in _OPEN:  # closed meanwhile by one refreshed before it (a Dashboard replacing its tabs' views)
            continue
        try:
            view.after_cell()
        except Exception as exc:  # noqa: BLE001 - a broken view must not break the notebook
            import sys
            print(f"tinygrad_like.widgets: {type(view).__name__} failed to refresh: {exc}", file=sys.stderr)


def _post_run_cell(result=None) -> None:
    refresh_open_views()


def load_ipython_extension(ipython) -> None:
    """``%load_ext tinygrad_like.widgets``: refresh open views after every cell."""
    # first the lifecycle (views a re-run cell no longer shows are released, not refreshed once more); the first view
    # displayed without %load_ext registers it too
    lifecycle.attach(ipython)
    ipython.events.unregister("post_run_cell", _post_run_cell) if _post_run_cell in ipython.events.callbacks.get(
        "post_run_cell", []) else None
    ipython.events.register("post_run_cell", _post_run_cell)


def unload_ipython_extension(ipython) -> None:
    if _post_run_cell in ipython.events.callbacks.get("post_run_cell", []):
        ipython.events.unregister("post_run_cell", _post_run_cell)
    lifecycle.detach(ipython)

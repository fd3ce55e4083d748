// timeline_interact.js -- what the user does to KernelTimeline's canvas: wheel zooms the time axis about the
// pointer (horizontal wheel / shift+wheel pans), drag pans (time and, when rows overflow, rows), the keys f, +, -,
// arrows and Escape; hover shows a tooltip (op, kernel, shapes, bytes, duration, cell, user's line); click selects a
// launch (`selected`, which Python turns into a graph-node selection in open graph views). One of the parts of the
// timeline's ES module (see timeline_store.js).

/** Seconds as short text: 1.23 s, 45.6 ms, 789 µs, 12.0 ns. */
function fmtTime(s) {
  const a = Math.abs(s);
  if (a >= 1) return (+s.toPrecision(3)) + " s";
  if (a >= 1e-3) return (+(s * 1e3).toPrecision(3)) + " ms";
  if (a >= 1e-6) return (+(s * 1e6).toPrecision(3)) + " µs";
  return (+(s * 1e9).toPrecision(3)) + " ns";
}
function fmtBytes(b) {
  if (b < 1024) return Math.round(b) + " B";
  const u = ["KiB", "MiB", "GiB", "TiB"];
  let i = -1;
  do { b /= 1024; i++; } while (b >= 1024 && i < u.length - 1);
  return (+b.toPrecision(3)) + " " + u[i];
}

/**
 * Zoom, pan, hover, click and keys of one timeline: `view` is the state the parts share (see timelinePainter; here
 * also `model`, the drawing `area`, the `tooltip`, and `autoFit`: follow new launches until the user zooms or pans),
 * `painter` what timelinePainter made. listen() attaches the handlers to the drawing area and the root.
 */
function timelineInteraction(view, painter) {
  const { model, root, area, canvas, tooltip, S, V } = view;
  const { schedule, plotW, rowsH, fitK, hitTest } = painter;

  // ---- zoom and pan: world time t (compressed seconds) -> CSS px: x = plotLeft + (t - V.t0) * V.k ----------
  function kRange() { return [fitK() * 0.5, 1e10]; }  // 1e10 px/s: a tenth of a nanosecond per pixel
  function fit() {
    view.autoFit = true;
    if (!view.L) return;
    V.k = fitK();
    V.t0 = -view.L.total * 0.01;
    hideTooltip();
    schedule();
  }
  function zoomAt(factor, px) {
    view.autoFit = false;
    const [lo, hi] = kRange();
    const k = clamp(V.k * factor, lo, hi);
    const labelW = view.labelW;
    const t = V.t0 + (px - labelW) / V.k;   // keep the time under the pointer in place
    V.t0 = t - (px - labelW) / k;
    V.k = k;
    schedule();
  }
  function zoomBy(f) { hideTooltip(); zoomAt(f, view.labelW + plotW() / 2); }
  function panBy(dx, dy) {
    view.autoFit = false;
    V.t0 -= dx / V.k;
    scrollRows(dy);
    schedule();
  }
  function scrollRows(dy) {
    const maxSy = Math.max(0, (view.L ? view.L.names.length : 0) * ROW_H - rowsH());
    V.sy = clamp(V.sy - dy, 0, maxSy);
  }

  // ---- hover and click -----------------------------------------------------------------------------------
  /** The pointer in CSS px from the canvas's top-left corner (the canvas fills the drawing area). */
  function areaPoint(ev) {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }
  function showTooltip(i, near, px, py) {
    const R = S.row(i);
    const rows = [
      ["op", R.op || "—"], ["kernel", R.name], ["phase", R.phase], ["shapes", R.shapes || "—"],
      ["bytes", R.nbytes ? fmtBytes(R.nbytes) : "—"], ["duration", fmtTime(R.dur)], ["device", R.device],
      ["cell", R.cell || "—"], ["line", R.line || "—"],
    ];
    const tbl = h("table");
    for (const [k, v] of rows) {
      const tr = h("tr");
      tr.append(h("th", null, k), h("td", null, v));
      tbl.append(tr);
    }
    const title = h("div", "tl-tooltip-title");
    title.append(h("span", "tl-swatch tl-phase-" + R.phase), h("span", null, R.op ? `${R.op} · ${R.name}` : R.name));
    tooltip.replaceChildren(title, tbl);
    if (near > 1) tooltip.append(h("div", "tl-tooltip-more", `${near - 1} more launch${near > 2 ? "es" : ""} here: zoom in`));
    tooltip.hidden = false;
    tooltip.dataset.seq = String(R.seq);
    // place it beside the pointer, inside the widget
    const ar = canvas.getBoundingClientRect(), rr = root.getBoundingClientRect();
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = ar.left - rr.left + px + 14, y = ar.top - rr.top + py + 14;
    if (x + tw > rr.width) x = Math.max(0, ar.left - rr.left + px - tw - 14);
    if (y + th > rr.height && y - th - 28 > 0) y = y - th - 28;
    tooltip.style.left = x + "px";
    tooltip.style.top = y + "px";
  }
  function hideTooltip() {
    tooltip.hidden = true;
    if (view.hover !== -1) { view.hover = -1; schedule(); }
  }
  function onHover(ev) {
    const [px, py] = areaPoint(ev);
    const [i, near] = hitTest(px, py);
    if (i < 0) { hideTooltip(); area.style.cursor = ""; return; }
    area.style.cursor = "pointer";
    if (i !== view.hover) { view.hover = i; schedule(); }
    showTooltip(i, near, px, py);
  }

  let drag = null;
  function onPointerDown(ev) {
    if (ev.button !== 0) return;
    drag = { id: ev.pointerId, sx: ev.clientX, sy: ev.clientY, lx: ev.clientX, ly: ev.clientY, moved: false };
  }
  function onPointerMove(ev) {
    if (drag && ev.pointerId === drag.id) {
      if (!drag.moved && Math.hypot(ev.clientX - drag.sx, ev.clientY - drag.sy) > 4) {
        drag.moved = true;
        area.setPointerCapture(ev.pointerId);
        area.classList.add("tl-dragging");
        hideTooltip();
      }
      if (drag.moved) {
        panBy(ev.clientX - drag.lx, ev.clientY - drag.ly);
        drag.lx = ev.clientX; drag.ly = ev.clientY;
        return;
      }
    }
    onHover(ev);
  }
  function onPointerUp(ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    area.classList.remove("tl-dragging");
    if (area.hasPointerCapture(ev.pointerId)) area.releasePointerCapture(ev.pointerId);
    if (!root.contains(document.activeElement)) root.focus({ preventScroll: true });
    if (d.moved) return;
    const [px, py] = areaPoint(ev);
    const [i] = hitTest(px, py);
    select(i < 0 ? -1 : S.first + i);
  }
  function select(seq) {
    view.selectedSeq = seq;
    root.dataset.selected = String(seq);
    schedule();
    if (model.get("selected") !== seq) { model.set("selected", seq); model.save_changes(); }
  }

  // wheel: zoom the time axis about the pointer; horizontal wheel or shift+wheel pans
  function onWheel(ev) {
    ev.preventDefault();
    hideTooltip();
    let dx = ev.deltaX, dy = ev.deltaY;
    if (ev.deltaMode === 1) { dx *= 16; dy *= 16; } else if (ev.deltaMode === 2) { dx *= view.vw; dy *= view.vh; }
    const [px] = areaPoint(ev);
    if (ev.shiftKey || Math.abs(dx) > Math.abs(dy)) { panBy(-(dx || dy), 0); return; }
    zoomAt(Math.exp(-clamp(dy, -200, 200) * 0.004), Math.max(px, view.labelW));
  }
  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.tagName === "BUTTON") return;
    let done = true;
    switch (ev.key) {
      case "f": case "F": fit(); break;
      case "+": case "=": zoomBy(1.6); break;
      case "-": case "_": zoomBy(1 / 1.6); break;
      case "ArrowLeft": panBy(plotW() / 8, 0); break;
      case "ArrowRight": panBy(-plotW() / 8, 0); break;
      case "ArrowUp": panBy(0, ROW_H); break;
      case "ArrowDown": panBy(0, -ROW_H); break;
      case "Escape": select(-1); hideTooltip(); break;
      default: done = false;
    }
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  }

  function listen() {
    area.addEventListener("pointerdown", onPointerDown);
    area.addEventListener("pointermove", onPointerMove);
    area.addEventListener("pointerup", onPointerUp);
    area.addEventListener("pointercancel", () => { drag = null; area.classList.remove("tl-dragging"); });
    area.addEventListener("pointerleave", () => { if (!drag) hideTooltip(); });
    area.addEventListener("wheel", onWheel, { passive: false });
    root.addEventListener("keydown", onKey);
  }

  return { fit, zoomBy, hideTooltip, listen };
}

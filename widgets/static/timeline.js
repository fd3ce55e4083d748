// timeline.js: the browser side of KernelTimeline (an anywidget ES module), assembled from parts.
//
// Python (widgets/kernel_view.py, through widgets/kernel_widget.py) records every kernel launch as typed
// columns and sends them compactly (see timeline_store.js). widgets/kernel_widget.py loads common.js, then the
// parts, then this file, as one ES module that shares one scope (widgets/_static.py):
//   - timeline_store.js: the launches in growable typed arrays, and their layout (rows, compressed time axis);
//   - timeline_paint.js: the canvas (one pixel per device pixel; each pixel column of a row shows one phase's
//     colour), and which launch is painted where;
//   - timeline_interact.js: zoom, pan, hover tooltip, click to select, keys;
//   - this file: the DOM skeleton, the state the parts share, the traitlets and messages, the observers.
// `visible` follows an IntersectionObserver and the page's visibility; the Pause / Resume button toggles `paused`,
// Close sends {"type": "close"}. No build step, no imports.

// (h, button, clamp, watchVisibility: common.js; Store, layoutRows, PHASES: timeline_store.js; timelinePainter,
// ROW_H, AXIS_H: timeline_paint.js; timelineInteraction: timeline_interact.js -- all put in front of this file)

function render({ model, el }) {
  // ---- static skeleton --------------------------------------------------------------------------------
  const root = h("div", "tl-timeline");
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");  // keep JupyterLab's command keys away
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "kernel timeline: wheel to zoom, drag to pan, f to fit, click a bar to select");
  root.dataset.zoom = "1";
  root.dataset.launches = "0";

  const toolbar = h("div", "tl-toolbar");
  const legend = h("div", "tl-legend");
  const swatchCount = {};
  for (const p of PHASES) {
    const item = h("span", "tl-legend-item");
    item.dataset.phase = p;
    const sw = h("span", "tl-swatch tl-phase-" + p);
    const cnt = h("span", "tl-legend-count", "");
    swatchCount[p] = cnt;
    item.append(sw, h("span", "tl-legend-label", p), cnt);
    legend.append(item);
  }
  const zoomBar = h("div", "tl-zoombar");
  zoomBar.append(
    button("−", "Zoom out", () => interaction.zoomBy(1 / 1.6), "Zoom out (−)"),
    button("+", "Zoom in", () => interaction.zoomBy(1.6), "Zoom in (+)"),
    button("Fit", "Fit", () => interaction.fit(), "Show every launch (f)"),
  );
  const pauseBtn = button("Pause", "Pause live updates", () => {
    model.set("paused", !model.get("paused"));
    model.save_changes();
  }, "Stop redrawing while cells run (the launches are still recorded)");
  pauseBtn.classList.add("tl-pause");
  const clearBtn = button("Clear", "Clear", () => model.send({ type: "clear" }), "Forget every recorded launch");
  clearBtn.classList.add("tl-clear");
  const closeBtn = button("Close", "Close the timeline", () => model.send({ type: "close" }),
                          "Close this view: it stops listening and frees what it recorded");
  closeBtn.classList.add("tl-close");
  const ctlBar = h("div", "tl-ctlbar");
  ctlBar.append(pauseBtn, clearBtn, closeBtn);
  toolbar.append(legend, h("div", "tl-spacer"), zoomBar, ctlBar);

  const header = h("div", "tl-header");
  const area = h("div", "tl-area");
  const canvas = h("canvas", "tl-canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "kernel launches over time, one row per kernel");
  const emptyEl = h("div", "tl-empty", "no kernel launches yet: run a cell");
  area.append(canvas, emptyEl);
  const tooltip = h("div", "tl-tooltip");
  tooltip.hidden = true;
  const tables = h("div", "tl-tables");
  root.append(toolbar, header, area, tables, tooltip);
  el.appendChild(root);
  const ctx = canvas.getContext("2d", { alpha: true });

  // ---- the state the parts share ------------------------------------------------------------------------
  const view = {
    model, root, area, canvas, ctx, tooltip,
    S: new Store(),
    L: null,                     // layout: see relayout()
    colours: null,               // theme colours, read from CSS (see readColours)
    disposed: false,
    V: { t0: 0, k: 1, sy: 0 },   // the time axis (see timelinePainter); sy: vertical scroll of the rows, CSS px
    vw: 0, vh: 0, dpr: 1,        // the drawing area's CSS size, devicePixelRatio
    devW: 0, devH: 0,            // the canvas's size in device pixels, where the browser reports it (see below)
    labelW: 120,                 // the row-label gutter (CSS px)
    autoFit: true,               // follow new launches until the user zooms or pans
    hover: -1, selectedSeq: -1,  // row index under the pointer; sequence number of the selection
  };
  const S = view.S, V = view.V;
  const painter = timelinePainter(view);
  const interaction = timelineInteraction(view, painter);
  const { schedule, readColours, measureLabels, plotW } = painter;

  /** Rows (kernel names by total time), compressed x per launch, per-row launch lists sorted by x. */
  function relayout() {
    const n = S.n;
    view.L = layoutRows(S);
    root.dataset.launches = String(n);
    root.dataset.rows = String(view.L.names.length);
    emptyEl.hidden = n > 0;
    const counts = S.phaseCounts();
    PHASES.forEach((p, k) => { swatchCount[p].textContent = counts[k] ? String(counts[k]) : ""; });
    view.labelW = measureLabels();
    onHeight();
  }

  // ---- model -> view -------------------------------------------------------------------------------------
  function afterData() {
    relayout();
    if (view.autoFit) interaction.fit(); else schedule();
    if (view.hover >= S.n) view.hover = -1;
  }
  function onData() {
    const d = model.get("data") || {};
    if (!d.meta) return;
    if (S.apply(d.meta, d.buffers || [], true)) afterData();
  }
  function onCustom(msg, buffers) {
    if (!msg || msg.type !== "append") return;
    if (S.apply(msg, buffers || [], false)) afterData();
    else if (msg.rev !== S.rev || msg.base > S.end) model.send({ type: "sync" });  // we missed something
  }
  function onTables() {
    const t = model.get("tables") || {};
    header.innerHTML = t.header || "";     // HTML made by Python, every value escaped there
    tables.innerHTML = (t.stats || "") + (t.cells ? "<div class='tl-subtitle'>Cells</div>" + t.cells : "") +
      "<div class='tl-subtitle'>Compiles</div>" + (t.compiles || "");
  }
  function onPaused() {
    const p = !!model.get("paused");
    pauseBtn.textContent = p ? "Resume" : "Pause";
    pauseBtn.setAttribute("aria-label", p ? "Resume live updates" : "Pause live updates");
    pauseBtn.setAttribute("aria-pressed", String(p));
    root.classList.toggle("tl-paused", p);
  }
  function onSelected() {
    view.selectedSeq = model.get("selected");
    root.dataset.selected = String(view.selectedSeq);
    schedule();
  }
  /** The drawing area is as tall as its rows need, at most `height` (beyond it the rows scroll). */
  function onHeight() {
    const most = model.get("height") || 472, rows = view.L ? view.L.names.length : 0;
    const want = Math.round(clamp(AXIS_H + rows * ROW_H + 8, 120, most)) + "px";
    if (area.style.height !== want) area.style.height = want;
  }

  // ---- visibility: `visible` is false when scrolled away, collapsed, in a hidden tab or a hidden page -----
  const stopWatching = watchVisibility(model, root, null, (v) => { root.dataset.visible = String(v); });

  // the theme: JupyterLab marks <body> when it switches; read the colours again then
  const themeObs = new MutationObserver(() => {
    view.colours = null;
    if (view.L) view.labelW = measureLabels();
    schedule();
  });
  themeObs.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light", "class"] });

  // The canvas fills the drawing area's inside (clientWidth x clientHeight CSS px). Its backing store should be exactly
  // as many device pixels as the browser gives its box, or the browser scales it: a second observer asks for that
  // size ("device-pixel-content-box", Chromium and Firefox) and paint() uses it; until it answers, or where it is not
  // supported, the CSS size times devicePixelRatio, rounded.
  const ro = new ResizeObserver(() => {
    const w = area.clientWidth, hh = area.clientHeight;
    if (!w || !hh) return;
    const oldPlot = plotW();
    if (w !== view.vw || hh !== view.vh) {
      view.vw = w; view.vh = hh;
      canvas.style.width = view.vw + "px";
      canvas.style.height = view.vh + "px";
      view.devW = view.devH = 0;  // (the canvas observer reports the new box's device size)
    }
    view.dpr = window.devicePixelRatio || 1;
    view.colours = null;
    readColours();
    if (view.L) view.labelW = measureLabels();
    if (view.autoFit) interaction.fit(); else { V.k *= plotW() / oldPlot; schedule(); }
  });
  ro.observe(area);
  const devRo = new ResizeObserver((entries) => {
    const box = entries[entries.length - 1].devicePixelContentBoxSize;
    if (!box || !box[0]) return;
    view.devW = box[0].inlineSize; view.devH = box[0].blockSize;
    view.dpr = window.devicePixelRatio || 1;
    schedule();
  });
  try { devRo.observe(canvas, { box: "device-pixel-content-box" }); } catch (e) { /* not supported: CSS size x dpr */ }
  // devicePixelRatio changes (browser zoom, another screen) without a resize of the element in CSS px
  let dprQuery = null;
  function watchDpr() {
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    dprQuery = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    dprQuery.addEventListener("change", onDpr);
  }
  function onDpr() {
    view.dpr = window.devicePixelRatio || 1;
    if (view.L) view.labelW = measureLabels();
    watchDpr();
    schedule();
  }
  watchDpr();

  interaction.listen();

  const handlers = {
    "change:data": onData, "change:tables": onTables, "change:paused": onPaused,
    "change:selected": onSelected, "change:height": onHeight, "msg:custom": onCustom,
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);

  // For tests (and the console): where launch `seq` is drawn, in client px, or null when it is not in view;
  // and the sequence numbers of the launches of kernel `name` (optionally of one phase), oldest first.
  root.tlLaunchPoint = (seq) => painter.launchPoint(seq);
  root.tlLaunches = (name, phase) => {
    const out = [];
    for (let i = 0; i < S.n; i++) {
      if (S.strs[S.c.name[i]] === name && (phase == null || PHASES[S.c.phase[i]] === phase)) out.push(S.first + i);
    }
    return out;
  };

  onHeight();
  onPaused();
  onTables();
  onSelected();
  readColours();
  onData();
  // tell Python what we have: it sends a fresh snapshot if launches came as messages before we existed
  model.send({ type: "hello", rev: S.rev, end: S.end });

  return () => {
    view.disposed = true;
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    painter.cancel();
    stopWatching();
    ro.disconnect();
    devRo.disconnect();
    themeObs.disconnect();
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    root.remove();
  };
}

export default { render };

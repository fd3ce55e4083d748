// graph.js: the browser side of the autograd-graph view (an anywidget ES module).
//
// The Python side (widgets/graph_widget.py) computes every coordinate; this file only draws the
// payload described in CONTRACT.md, handles zoom / pan / hover / click / keyboard / search, and
// reports user actions with model.send. No build step and no imports: plain modern JS.
//
// Drawing: one <svg> the size of the drawing, inside a clipping div (.tl-canvas); zoom and pan are one
// CSS transform on that <svg>, written at most once per animation frame (see paint()). Paint order:
// frames (expanded groups, shallow first), edge lines, invisible wider edge hit-paths (hover targets), boxes,
// the selection ring. A graph of more than CULL_AT boxes is culled: only the boxes, edges and frames that meet
// a window round the visible part (the viewport and a margin of most of a viewport each way) exist as SVG
// elements; the window moves (elements made and removed) in the frame where the view leaves it, so a drag
// within it is a pure recomposite. Stepper state only toggles classes and edge widths; it is kept per box and
// edge index and applied when an element is made. Every listener lives on elements inside the widget:
// removing it removes them.

const ARROW = 7;          // arrowhead length (drawing px); edge paths stop this short of the target
const LOD_TEXT = 0.4;     // below this zoom, text is hidden (unreadable anyway, and costly to paint)
// the zoom from which every label is at least 10 CSS px on the screen (the smallest, the sub line, is 10.5 px): the
// first view, Fit, an expanded group, the stepper's current box and a node revealed by a search are shown at this
// zoom or more (graph.css sizes the text); below it Fit asks Python to fold the graph to its overview
const READABLE_K = 10 / 10.5;
const LABEL_PX = 12;      // a box label's font size in drawing px (graph.css): data-label-px = LABEL_PX * zoom
const LOD_MIN = 0.12;     // below this zoom, arrowheads are hidden too
const MAX_RESULTS = 20;   // search dropdown length
const CULL_AT = 400;      // graphs with more boxes than this make SVG elements only for what is near the view
const CULL_MARGIN = 0.75; // the cull window reaches this many viewport widths (heights) beyond each side
const FOLLOW_MS = 180;    // the stepper's move to the current box: quick, so a Step never waits on it
const FOLD_WAIT_MS = 1500; // after asking Python to fold (Fit), fit what is drawn if no new graph came by then

// (h, s, setAttrs, button, clamp, fitText, watchVisibility: common.js, put in front of this module)

/** A gradient norm as short text; null means "no gradient" and non-finite values read as such. */
function fmtNorm(v) {
  if (v == null) return "none";
  if (typeof v !== "number" || !Number.isFinite(v)) return String(v).toLowerCase();
  if (v === 0) return "0";
  const a = Math.abs(v);
  return a < 1e-3 || a >= 1e4 ? v.toExponential(2) : String(+v.toPrecision(3));
}

/** Polyline through `points`, shortened by `cut` px at its end so the arrowhead marker sits there. */
function edgePath(points, cut) {
  const p = points.map((q) => [q[0], q[1]]);
  const n = p.length;
  if (n >= 2 && cut > 0) {
    const [ax, ay] = p[n - 2], [bx, by] = p[n - 1];
    const len = Math.hypot(bx - ax, by - ay);
    if (len > cut * 1.5) { p[n - 1] = [bx - (bx - ax) * cut / len, by - (by - ay) * cut / len]; }
  }
  return p.map((q, i) => (i ? "L" : "M") + q[0].toFixed(1) + " " + q[1].toFixed(1)).join(" ");
}

// ====================================================================================================
function render({ model, el }) {
  // ---- static skeleton -------------------------------------------------------------------------
  const root = h("div", "tl-graph");
  root.tabIndex = 0;
  // keep JupyterLab's command-mode shortcuts (a, b, d d, arrows...) away from keys meant for us
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "autograd graph: drag to pan, wheel to zoom, f to fit, / to search");
  root.dataset.zoom = "1";
  root.dataset.labelPx = String(LABEL_PX);
  root.dataset.currentBox = "";

  const toolbar = h("div", "tl-toolbar");
  const stepBar = h("div", "tl-stepbar");
  const stepButtons = {
    back: button("Back", null, () => send({ type: "back" }), "Step back (← or ↑)"),
    step: button("Step", null, () => send({ type: "step", n: 1 }), "Run the next backward node (→ or ↓)"),
    step10: button("Step 10", null, () => send({ type: "step", n: 10 }), "Run the next 10 backward nodes"),
    run: button("Run to end", null, () => send({ type: "run" }), "Run the rest of the backward pass"),
    reset: button("Reset", null, () => send({ type: "reset" }), "Back to before the first step"),
  };
  stepBar.append(...Object.values(stepButtons));

  const searchWrap = h("div", "tl-search-wrap");
  const search = h("input", "tl-search");
  search.type = "search";
  search.placeholder = "find node…";
  search.setAttribute("aria-label", "Find node");
  search.spellcheck = false;
  const results = h("div", "tl-search-results");
  results.setAttribute("role", "listbox");
  results.hidden = true;
  searchWrap.append(search, results);

  const zoomBar = h("div", "tl-zoombar");
  zoomBar.append(
    button("−", "Zoom out", () => zoomBy(1 / 1.4), "Zoom out (−)"),
    button("+", "Zoom in", () => zoomBy(1.4), "Zoom in (+)"),
    button("Fit", "Fit", () => userFit(), "Fit the drawing in the view (f)"),
  );
  // Pause / Resume and Close, as every view has (widgets/_base.py): Python answers the messages and keeps the
  // `paused` trait, which this button shows
  const viewBar = h("div", "tl-viewbar");
  const pauseBtn = button("Pause", null, () => send({ type: model.get("paused") ? "resume" : "pause" }),
                          "Pause live updates; resume to catch up");
  pauseBtn.classList.add("tl-pause");
  const closeBtn = button("Close", null, () => closeView(), "Close this view and free the graph it holds");
  closeBtn.classList.add("tl-close");
  viewBar.append(pauseBtn, closeBtn);
  toolbar.append(stepBar, searchWrap, h("div", "tl-spacer"), zoomBar, viewBar);

  const statusEl = h("div", "tl-status");
  statusEl.setAttribute("aria-live", "polite");
  const notesEl = h("div", "tl-notes");
  const graphNotes = h("div", "tl-notes-graph");   // the graph's own notes (Python)
  const zoomNote = h("div", "tl-note tl-note-info tl-zoom-note", "zoom in to read the labels");
  zoomNote.setAttribute("role", "note");
  zoomNote.hidden = true;                           // shown by a Fit that leaves the labels under 10 px
  notesEl.append(graphNotes, zoomNote);

  const view = h("div", "tl-canvas");
  const svg = s("svg", { width: 1, height: 1 }, "tl-svg");   // sized to the drawing in build()
  const defs = s("defs");
  for (const [id, cls, w] of [["tl-arrow", "tl-arrow", 7], ["tl-arrow-grad", "tl-arrow tl-arrow-grad", 11]]) {
    // refX=0: the marker starts where the (shortened) path ends and its tip reaches the target
    const m = s("marker", { id: id + uid(), viewBox: "0 0 10 10", refX: 0, refY: 5, markerUnits: "userSpaceOnUse",
      markerWidth: ARROW, markerHeight: w, orient: "auto", preserveAspectRatio: "none" }, cls);
    m.append(s("path", { d: "M0 0 L10 5 L0 10 z" }));
    defs.append(m);
  }
  const arrowId = defs.children[0].id, arrowGradId = defs.children[1].id;
  const scene = s("g", {}, "tl-scene");
  const frameLayer = s("g", {}, "tl-frames");
  const edgeLayer = s("g", {}, "tl-edges");
  const hitLayer = s("g", {}, "tl-edge-hits");
  const boxLayer = s("g", {}, "tl-boxes");
  const ringLayer = s("g", {}, "tl-rings");
  scene.append(frameLayer, edgeLayer, hitLayer, boxLayer, ringLayer);
  svg.append(defs, scene);
  // A stepping error sits above the drawing (never over it) until dismissed; a new error shows again.
  const errorEl = h("div", "tl-error");
  errorEl.setAttribute("role", "alert");
  errorEl.hidden = true;
  const errorText = h("span", "tl-error-text");
  const errorClose = button("×", "Dismiss", () => { dismissedError = errorText.textContent; errorEl.hidden = true; },
                            "Hide this message (the node stays marked)");
  errorClose.classList.add("tl-error-close");
  errorEl.append(errorText, errorClose);
  let dismissedError = null;
  const emptyEl = h("div", "tl-empty", "nothing to draw");
  emptyEl.hidden = true;
  view.append(svg, emptyEl);
  // the selection ring: one rectangle moved to the selected box, drawn round it (so the box's own outline,
  // red when stale and orange when current, stays visible)
  const selRing = s("rect", { rx: 8 }, "tl-sel-ring");
  selRing.style.display = "none";
  ringLayer.append(selRing);

  const tooltip = h("div", "tl-tooltip");
  tooltip.hidden = true;
  const details = h("div", "tl-details");
  root.append(toolbar, statusEl, notesEl, errorEl, view, details, tooltip);
  el.appendChild(root);

  function send(msg) { if (!closed) model.send(msg); }
  function uid() { return "-" + Math.random().toString(36).slice(2, 9); }

  // ---- drawing state -----------------------------------------------------------------------------
  // Boxes, edges and frames are addressed by their index in the payload; their SVG elements exist only while
  // they meet the cull window (every one of them when the graph has CULL_AT boxes or fewer).
  let G = { boxes: [], edges: [], frames: [], nodes: [], owner: [] };
  let boxEls = [];                 // box index -> <g class="tl-box">, or null while culled
  let edgeEls = [];                // edge index -> visible <path>, or null (culled, or no points)
  let hitEls = [];                 // edge index -> its invisible hit <path>
  let frameEls = [];               // frame index -> <g class="tl-frame">, or null while culled
  let frameDepthLayers = [];       // depth -> <g> inside frameLayer (nested frames paint over their parents)
  let edgeBounds = [];             // edge index -> [x0, y0, x1, y1] of its polyline, or null
  let boxById = new Map();         // box id -> box index
  let frameIdx = new Map();        // frame id -> frame index
  let boxEdges = [];               // box index -> edge indices touching it (hover highlight)
  let pairEdge = new Map();        // "src,dst" underlying node pair -> edge index
  let edgeNorm = new Map();        // edge index -> gradient norm shown (stepper)
  let boxState = new Map();        // box index -> the state classes it carries now ("tl-current tl-visited")
  let edgeState = new Map();       // edge index -> its gradient style now (see applyState)
  let culling = false;             // more than CULL_AT boxes: elements only inside `win`
  let win = null;                  // the cull window [x0, y0, x1, y1] (drawing px) whose elements exist
  let nDrawn = 0;                  // box elements that exist now (data-drawn)
  let boxesShown = false;          // data-boxes written for the current graph
  let F = null;                    // label fonts (for ellipses), read once per graph
  let lastCursor = -1;
  let currentBox = null;           // box index of the stepper's current node
  let pendingExpand = null;        // the group id the learner asked to expand: zoom to it when its frame arrives
  let pendingFit = 0;              // a timer: Fit asked Python to fold; fit the next graph (or this one at timeout)
  let closed = false;

  // ---- view transform: screen = world * k + (x, y) ---------------------------------------------
  const T = { k: 1, x: 0, y: 0 };
  let vw = 0, vh = 0;              // view size in CSS px
  let initialised = false;         // first sensible view set (needs a laid-out, non-zero view)
  let rafId = 0, anim = null, disposed = false;
  let settleTimer = 0;             // see settle()
  let layerOn = false, rasterK = 0; // the svg is its own compositor layer now; the zoom its bitmap was drawn at

  function schedule() { if (!rafId && !disposed) rafId = requestAnimationFrame(paint); }
  function paint(now) {
    rafId = 0;
    if (anim) {
      const t = clamp((now - anim.t0) / anim.dur, 0, 1), e = 1 - (1 - t) ** 3;  // ease-out cubic
      T.k = anim.from.k * (anim.to.k / anim.from.k) ** e;     // geometric: feels uniform when zooming
      // interpolate the world point at the view centre, so the path does not swing sideways
      const c = anim.from.c.map((v, i) => v + (anim.to.c[i] - v) * e);
      T.x = vw / 2 - c[0] * T.k;
      T.y = vh / 2 - c[1] * T.k;
      if (t < 1) schedule(); else anim = null;
    }
    // A CSS transform on the <svg> element, not an SVG transform attribute on a <g>: Chrome lays out
    // every SVG <text> again whenever the scale of an SVG transform changes, while a CSS transform change
    // only recomposites the svg's layer (see settle() for keeping that layer sharp).
    if (!layerOn) { svg.style.willChange = "transform"; layerOn = true; rasterK = T.k; }
    svg.style.transform = `translate(${T.x.toFixed(2)}px,${T.y.toFixed(2)}px) scale(${T.k.toFixed(5)})`;
    root.dataset.zoom = String(+T.k.toPrecision(6));
    root.dataset.labelPx = String(Math.round(LABEL_PX * T.k * 100) / 100);
    lod("tl-lod-low", LOD_TEXT);
    lod("tl-lod-min", LOD_MIN);
    // a culled graph: move the window if the view left it, and make what it lacks (a frame's budget at a time;
    // the first drawing of a graph makes everything visible at once)
    if (culling && vw) {
      syncWindow();
      if (makeSome(6, !boxesShown)) schedule();
    }
    if (!zoomNote.hidden && !anim && T.k >= READABLE_K) zoomNote.hidden = true;   // (zoomed in far enough)
    if (!boxesShown && (!culling || (win && !nVisibleToMake))) {
      boxesShown = true;
      const n = G.boxes.length;
      afterPaint(() => { root.dataset.boxes = String(n); });
    }
    settle();
  }
  /** While the view moves, the svg is its own compositor layer (will-change: transform): a pan or zoom frame only
   *  recomposites it (p95 frame 183 -> 17 ms on 2,000 boxes). Chrome scales that layer as a bitmap drawn at the
   *  zoom it had when it became a layer: blurred or blocky text at any other zoom. So 150 ms after the last move,
   *  if the zoom changed, the layer is dropped and the browser draws the svg again at the zoom shown and the
   *  device's pixel ratio (crisp text); the next move makes it a layer again, drawn at that zoom. */
  function settle() {
    clearTimeout(settleTimer);
    if (!layerOn || T.k === rasterK) return;
    settleTimer = setTimeout(() => {
      if (disposed) return;
      if (anim || drag) { settle(); return; }
      svg.style.willChange = "auto";
      layerOn = false;
    }, 150);
  }
  /** Level-of-detail class on the root, with 5% hysteresis: each flip restyles every label drawn once. */
  function lod(cls, at) {
    const on = root.classList.contains(cls);
    if (on ? T.k > at * 1.05 : T.k < at * 0.95) root.classList.toggle(cls, !on);
  }
  function kRange() {
    const W = G.width || 1, H = G.height || 1;
    const fitK = Math.min(vw / W, vh / H) || 1;
    return [Math.min(0.1, fitK * 0.5), 6];
  }
  function zoomAt(factor, px, py) {
    anim = null;
    const [lo, hi] = kRange();
    const k = clamp(T.k * factor, lo, hi);
    T.x = px - (px - T.x) * (k / T.k);
    T.y = py - (py - T.y) * (k / T.k);
    T.k = k;
    schedule();
  }
  function zoomBy(f) { hideTooltip(); zoomAt(f, vw / 2, vh / 2); }
  function panBy(dx, dy) { anim = null; T.x += dx; T.y += dy; schedule(); }

  /** Move the view so world point (cx, cy) is centred at zoom k, animated (over `dur` ms) unless `instant`. */
  function centre(cx, cy, k, instant, dur) {
    if (instant || !vw) {
      T.k = k; T.x = vw / 2 - cx * k; T.y = vh / 2 - cy * k; anim = null; schedule();
      return;
    }
    const from = { k: T.k, c: [(vw / 2 - T.x) / T.k, (vh / 2 - T.y) / T.k] };
    anim = { from, to: { k, c: [cx, cy] }, t0: performance.now(), dur: dur || 300 };
    schedule();
  }
  /** The zoom at which the whole drawing fits the view (never above natural size). */
  function fitK() {
    const pad = 20, W = G.width || 1, H = G.height || 1;
    return clamp(Math.min((vw - 2 * pad) / W, (vh - 2 * pad) / H), kRange()[0], 1);
  }
  function fit(animate) {
    if (!vw || !vh) return;
    centre((G.width || 1) / 2, (G.height || 1) / 2, fitK(), !animate);
  }
  /** Fit asked by the learner (button, "f"). A drawing that fits only with labels under 10 px is first folded by
   *  Python to its overview ({"type": "fold_to_fit"}); the new graph is then fitted (build()). If no new graph
   *  comes (nothing left to fold) or it still does not fit readably, it is fitted anyway, with a note. */
  function userFit() {
    if (!vw || !vh) return;
    hideTooltip();
    if (fitK() >= READABLE_K) { zoomNote.hidden = true; fit(true); return; }
    if (pendingFit) return;   // (already asked)
    send({ type: "fold_to_fit" });
    pendingFit = setTimeout(() => { pendingFit = 0; fitAnyway(); }, FOLD_WAIT_MS);
  }
  function fitAnyway() {
    if (disposed || !vw) return;
    fit(true);
    zoomNote.hidden = fitK() >= READABLE_K;
  }
  /** Bring a world rectangle into view (animated) if it is not inside the viewport shrunk by `margin`
   *  (a fraction of its size). `readable`: also zoom in if its text is under 10 px at the current zoom. */
  function ensureVisible(x0, y0, x1, y1, margin, readable, dur) {
    if (!vw || !vh) return false;
    const sx0 = x0 * T.k + T.x, sy0 = y0 * T.k + T.y, sx1 = x1 * T.k + T.x, sy1 = y1 * T.k + T.y;
    const mx = vw * margin, my = vh * margin;
    const tooSmall = readable && T.k < READABLE_K;
    if (!tooSmall && sx0 >= mx && sy0 >= my && sx1 <= vw - mx && sy1 <= vh - my) return false;
    let k = tooSmall ? 1 : T.k;
    // (a readable target is shown at a readable zoom even if it is larger than the view: its label is what counts)
    k = Math.min(k, (vw * 0.9) / Math.max(x1 - x0, 1), (vh * 0.9) / Math.max(y1 - y0, 1));
    if (tooSmall) k = Math.max(k, READABLE_K);
    centre((x0 + x1) / 2, (y0 + y1) / 2, Math.max(k, kRange()[0]), false, dur);
    return true;
  }
  function showBox(i, margin, readable, dur) {
    const b = G.boxes[i];
    return b ? ensureVisible(b.x - b.w / 2, b.y - b.h / 2, b.x + b.w / 2, b.y + b.h / 2, margin, readable, dur) : false;
  }
  /** After the learner expanded a group: its frame at a zoom where the new labels are 10 px or more (the current
   *  zoom if already so), centred on the frame; a frame larger than the view shows its top-left part (the view's
   *  centre stays inside the frame) and the learner pans from there. */
  function showExpanded(f) {
    if (!vw || !vh) return;
    const k = Math.max(T.k, READABLE_K), pad = 24 / k;
    const halfW = vw / 2 / k, halfH = vh / 2 / k;
    const cx = f.w + 2 * pad <= 2 * halfW ? f.x + f.w / 2 : f.x - pad + halfW;
    const cy = f.h + 2 * pad <= 2 * halfH ? f.y + f.h / 2 : f.y - pad + halfH;
    const sx0 = f.x * T.k + T.x, sy0 = f.y * T.k + T.y;
    const inside = sx0 >= 0 && sy0 >= 0 && (f.x + f.w) * T.k + T.x <= vw && (f.y + f.h) * T.k + T.y <= vh;
    if (k === T.k && inside) return;   // readable and wholly in view already: stay
    centre(cx, cy, k, false, 300);
  }
  /** Stepper: the current box fully on screen with its labels at 10 px or more; if not, a quick move there. */
  function follow() {
    if (currentBox == null || !initialised || !G.boxes[currentBox]) return;
    showBox(currentBox, 0.02, true, FOLLOW_MS);
  }
  /** The first view of a graph: all of it if its text stays readable (10 CSS px or more: READABLE_K), else the
   *  output box (loss) and what leads to it at natural size, where the text is what graph.css says. (A fit at any
   *  zoom where text is drawn at all, 0.5 and up, gave 6 px labels on a 1,000-op graph folded into 15 boxes.) */
  function initialView() {
    if (!vw || !vh || !G.boxes.length) return;
    initialised = true;
    const W = G.width || 1, H = G.height || 1;
    if (Math.min((vw - 40) / W, (vh - 40) / H) >= READABLE_K) { fit(false); return; }
    const out = G.boxes.find((b) => b.kind === "output");
    const k = 1, cx = W * k <= vw ? W / 2 : out ? out.x : W / 2;
    // the output (loss) at 80% of the view's height, the graph above it; else the top of the drawing
    const cy = out ? Math.max(out.y - (0.3 * vh) / k, vh / 2 / k) : vh / 2 / k;
    centre(cx, cy, k, true);
  }

  // ---- building the SVG from `graph` ----------------------------------------------------------
  function fonts() {
    const fam = (root.isConnected && getComputedStyle(root).fontFamily) ||
      getComputedStyle(document.body).getPropertyValue("--jp-ui-font-family") || "system-ui, sans-serif";
    return { label: `600 12px ${fam}`, sub: `10.5px ${fam}` };
  }

  /** The `graph` trait: UTF-8 JSON in a binary buffer (see graph_widget.py), or a plain object. The buffer comes as
   * a DataView from the kernel, but may be an ArrayBuffer or a typed array (a saved notebook, another front-end). */
  function readGraph() {
    const g = model.get("graph");
    if (g instanceof ArrayBuffer || ArrayBuffer.isView(g)) {
      return g.byteLength ? JSON.parse(new TextDecoder().decode(g)) : {};  // (decode takes either, offset included)
    }
    return g || {};
  }

  /** A new graph: index it, then make the elements of what is near the view (all of it for a small graph). */
  function build() {
    G = Object.assign({ boxes: [], edges: [], frames: [], nodes: [], owner: [], notes: [] }, readGraph());
    F = fonts();
    const nb = G.boxes.length, ne = G.edges.length;
    boxEls = new Array(nb).fill(null); edgeEls = new Array(ne).fill(null); hitEls = new Array(ne).fill(null);
    frameEls = new Array(G.frames.length).fill(null);
    boxById = new Map(); frameIdx = new Map(); pairEdge = new Map();
    boxEdges = G.boxes.map(() => []);
    G.boxes.forEach((b, i) => boxById.set(b.id, i));
    G.frames.forEach((f, i) => frameIdx.set(f.id, i));
    edgeBounds = G.edges.map((e, i) => {
      const pts = e.points && e.points.length >= 2 ? e.points : null;
      if (!pts) return null;
      if (boxEdges[e.s]) boxEdges[e.s].push(i);
      if (boxEdges[e.t]) boxEdges[e.t].push(i);
      for (const [a, b] of e.pairs || []) pairEdge.set(a + "," + b, i);
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [x, y] of pts) { x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y); }
      return [x0 - ARROW, y0 - ARROW, x1 + ARROW, y1 + ARROW];
    });
    svg.setAttribute("width", Math.max(1, G.width || 1));
    svg.setAttribute("height", Math.max(1, G.height || 1));
    boxState = new Map(); edgeState = new Map(); edgeNorm = new Map(); lastCursor = -1;
    hideTooltip();
    frameLayer.replaceChildren(); edgeLayer.replaceChildren(); hitLayer.replaceChildren(); boxLayer.replaceChildren();
    frameDepthLayers = [];
    nDrawn = 0; win = null; boxesShown = false; toMake = []; nVisibleToMake = 0;
    culling = nb > CULL_AT;
    root.classList.toggle("tl-culled", culling);

    // notes above the drawing
    graphNotes.replaceChildren(...(G.notes || []).map((n) => {
      const lvl = ["warn", "error", "info"].includes(n.level) ? n.level : "info";
      const d = h("div", `tl-note tl-note-${lvl}`, n.text);
      d.setAttribute("role", lvl === "info" ? "note" : "alert");
      return d;
    }));
    emptyEl.hidden = nb > 0;

    // where to look: the first view; a fit the learner asked for; the group the learner expanded
    if (!initialised) initialView();
    const fitting = !!pendingFit && initialised;
    if (fitting) { clearTimeout(pendingFit); pendingFit = 0; }
    const expanded = pendingExpand != null ? G.frames[frameIdx.get(pendingExpand)] : null;
    pendingExpand = null;
    if (!culling) {   // a small graph: every element now
      for (let i = 0; i < G.frames.length; i++) makeFrame(i);
      for (let i = 0; i < ne; i++) if (edgeBounds[i]) makeEdge(i);
      for (let i = 0; i < nb; i++) makeBox(i);
    }
    root.dataset.drawn = String(nDrawn);
    delete root.dataset.filling;
    applyState(true);
    applySelected("keep");
    const stepper = !!model.get("stepper"), cb = currentBox != null ? G.boxes[currentBox] : null;
    if (fitting) fitAnyway();
    // an expanded group that holds the stepper's current node: show that node, readable (it is in the frame)
    else if (expanded && stepper && cb && cb.x >= expanded.x && cb.x <= expanded.x + expanded.w &&
             cb.y >= expanded.y && cb.y <= expanded.y + expanded.h) showBox(currentBox, 0.02, true, 300);
    else if (expanded) showExpanded(expanded);
    else if (stepper) follow();
    if (!fitting) zoomNote.hidden = true;
    // an open result list is made again from the new nodes; a closed one stays closed (picking a result closes it
    // and makes Python send a new graph: re-running the search then opened the list again, over the drawing)
    if (results.hidden || !search.value.trim()) closeResults(); else runSearch();
    schedule();   // (paint() makes the culled elements and then writes data-boxes)
  }

  /** Run fn after the browser has painted the current changes (rAF, then a task after the frame). */
  function afterPaint(fn) {
    requestAnimationFrame(() => setTimeout(() => { if (!disposed) fn(); }, 0));
  }

  // ---- culling: the elements of what meets the window round the view -----------------------------------
  const meets = (a, x0, y0, x1, y1) => a[0] <= x1 && a[2] >= x0 && a[1] <= y1 && a[3] >= y0;
  let toMake = [];        // [kind, index] still to make for the window, what meets the visible part first
  let nVisibleToMake = 0; // how many of toMake's first entries meet the visible part
  /** Move the cull window when the visible part of the drawing leaves it (or is far smaller than it): remove the
   *  elements of what no longer meets it, and list what now does and has none (the visible part first). A linear
   *  pass over the payload: 0.1-0.3 ms for 4,000 boxes. */
  function syncWindow() {
    const k = T.k, vx0 = -T.x / k, vy0 = -T.y / k, vx1 = (vw - T.x) / k, vy1 = (vh - T.y) / k;
    const area = (vx1 - vx0) * (vy1 - vy0);
    if (win && vx0 >= win[0] && vy0 >= win[1] && vx1 <= win[2] && vy1 <= win[3] &&
        (win[2] - win[0]) * (win[3] - win[1]) <= area * 16 * (1 + 2 * CULL_MARGIN) ** 2) return;
    const mx = (vx1 - vx0) * CULL_MARGIN, my = (vy1 - vy0) * CULL_MARGIN;
    const [x0, y0, x1, y1] = win = [vx0 - mx, vy0 - my, vx1 + mx, vy1 + my];
    const near = [], far = [];
    const want = (kind, i, bb) => { if (meets(bb, vx0, vy0, vx1, vy1)) near.push([kind, i]); else far.push([kind, i]); };
    G.frames.forEach((f, i) => {
      const bb = [f.x, f.y, f.x + f.w, f.y + f.h];
      if (meets(bb, x0, y0, x1, y1)) { if (!frameEls[i]) want(0, i, bb); }
      else if (frameEls[i]) { frameEls[i].remove(); frameEls[i] = null; }
    });
    edgeBounds.forEach((bb, i) => {
      if (bb && meets(bb, x0, y0, x1, y1)) { if (!edgeEls[i]) want(1, i, bb); }
      else if (edgeEls[i]) { edgeEls[i].remove(); hitEls[i].remove(); edgeEls[i] = hitEls[i] = null; }
    });
    G.boxes.forEach((b, i) => {
      const bb = [b.x - b.w / 2, b.y - b.h / 2, b.x + b.w / 2, b.y + b.h / 2];
      if (meets(bb, x0, y0, x1, y1)) { if (!boxEls[i]) want(2, i, bb); }
      else if (boxEls[i]) {
        if (boxEls[i].contains(document.activeElement)) root.focus({ preventScroll: true });
        boxEls[i].remove(); boxEls[i] = null; nDrawn--;
      }
    });
    toMake = near.concat(far);
    nVisibleToMake = near.length;
  }
  /** Make listed elements for at most `budgetMs` of this frame (what is visible first; all of that if
   *  `visibleAtOnce`); the rest in the next frames, so a zoom out that uncovers hundreds of boxes never stalls a
   *  frame. Returns whether any are left. */
  function makeSome(budgetMs, visibleAtOnce) {
    const t0 = performance.now(), must = visibleAtOnce ? nVisibleToMake : 8;
    let n = 0;
    while (n < toMake.length && (n < must || performance.now() - t0 < budgetMs)) {
      const [kind, i] = toMake[n++];
      if (kind === 0) { if (!frameEls[i]) makeFrame(i); }
      else if (kind === 1) { if (!edgeEls[i]) makeEdge(i); }
      else if (!boxEls[i]) makeBox(i);
    }
    toMake = toMake.slice(n);
    nVisibleToMake = Math.max(0, nVisibleToMake - n);
    root.dataset.drawn = String(nDrawn);
    if (toMake.length) root.dataset.filling = "true"; else delete root.dataset.filling;
    return toMake.length > 0;
  }

  // ---- the elements of one frame, edge, box ----------------------------------------------------------
  function makeFrame(i) {
    const f = G.frames[i], depth = f.depth || 0;
    // one <g> per depth, in depth order, so a nested frame paints over its parent whenever either is made
    for (let d = frameDepthLayers.length; d <= depth; d++) frameLayer.append(frameDepthLayers[d] = s("g"));
    const g = s("g", { "data-id": f.id, "data-depth": depth }, "tl-frame");
    g.append(s("rect", { x: f.x, y: f.y, width: f.w, height: f.h, rx: 8 }, "tl-frame-rect"));
    const t = s("text", { x: f.x + 8, y: f.y + 13 }, "tl-frame-label");
    t.textContent = "▾ " + fitText(f.label, f.w - 26, F.sub);
    const title = s("title"); title.textContent = "collapse " + f.label;
    t.append(title);
    g.append(t);
    if (f.id === (model.get("selected") || "")) g.classList.add("tl-selected");
    frameDepthLayers[depth].append(g);
    frameEls[i] = g;
  }
  /** An edge: a visible path and an invisible, wider hit path (hover target, never painted). */
  function makeEdge(i) {
    const pts = G.edges[i].points;
    const p = s("path", { d: edgePath(pts, ARROW), "marker-end": `url(#${arrowId})`, "data-idx": i }, "tl-edge");
    const hp = s("path", { d: edgePath(pts, 0), "data-idx": i }, "tl-edge-hit");
    edgeLayer.append(p);
    hitLayer.append(hp);
    edgeEls[i] = p; hitEls[i] = hp;
    const key = edgeState.get(i);
    if (key) styleEdge(i, key);
    if (hoverEdges.includes(i)) p.classList.add("tl-hover");
  }
  function makeBox(i) {
    const b = G.boxes[i];
    const x0 = b.x - b.w / 2, y0 = b.y - b.h / 2;
    const pill = b.kind === "param" || b.kind === "leaf";   // drawn as rounded pills
    const g = s("g", { "data-id": b.id, "data-kind": b.kind, "data-idx": i }, "tl-box tl-kind-" + b.kind);
    if (b.stale) g.classList.add("tl-stale");
    if (b.expandable) {
      g.classList.add("tl-expandable");
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", `expand ${b.label} ${b.sub || ""}`.trim());
      // the "stacked cards" look: a second outline peeking out behind the box
      g.append(s("rect", { x: x0 + 3, y: y0 + 3, width: b.w, height: b.h, rx: 5 }, "tl-box-stack"));
    }
    g.append(s("rect", { x: x0, y: y0, width: b.w, height: b.h, rx: pill ? b.h / 2 : 5 }, "tl-box-shape"));
    // Python sizes boxes for the text (CONTRACT.md); the ellipsis is only a guard for wider fonts.
    // The lines sit near the centre, where even a pill's rounded ends take almost no room.
    const pad = 6, room = b.w - 2 * pad;
    const off = clamp(b.h * 0.2, 4, 7);   // two lines: label above the centre, sub below
    const ly = b.sub ? b.y - off : b.y;
    // a group's "▸" marker is its own <text> at the left edge, so the label's text stays the label;
    // the label is then centred in the room right of the marker
    const label = s("text", { x: b.expandable ? b.x + 6 : b.x, y: ly }, "tl-box-label");
    label.textContent = fitText(b.label ?? "", b.expandable ? room - 12 : room, F.label);
    if (b.expandable) {
      const m = s("text", { x: x0 + 7, y: ly }, "tl-box-marker");
      m.textContent = "▸";
      g.append(m);
    }
    g.append(label);
    if (b.sub) {
      const sub = s("text", { x: b.x, y: b.y + off + 1 }, "tl-box-sub");
      sub.textContent = fitText(b.sub, room, F.sub);
      g.append(sub);
    }
    const cls = boxState.get(i);
    if (cls) setClasses(g, "", cls);
    if (b.id === (model.get("selected") || "")) g.classList.add("tl-selected");
    boxLayer.append(g);
    boxEls[i] = g;
    nDrawn++;
  }

  // ---- stepper state: classes and edge widths only, never a rebuild ---------------------------
  // The wanted state is computed in full (per box and edge index, whether its element exists or not), then only
  // the differences from what is drawn are written: a step late in a long backward touches a handful of elements.
  function applyState(fromBuild) {
    const st = model.get("state") || {};
    const steps = st.steps || [], owner = G.owner || [];
    const cursor = clamp(st.cursor | 0, 0, steps.length);

    const want = new Map();   // box index -> Set of state classes
    const mark = (bi, c) => {
      if (bi == null || !G.boxes[bi]) return;
      if (!want.has(bi)) want.set(bi, new Set());
      want.get(bi).add(c);
    };
    for (let i = 0; i < cursor; i++) mark(owner[steps[i][0]], "tl-visited");
    // the current node's box: Python names it (state.current_box); else the box that shows the last step's node
    const cb = Number.isInteger(st.current_box) ? st.current_box : null;
    const cur = cb != null && G.boxes[cb] ? cb : cursor > 0 ? owner[steps[cursor - 1][0]] : undefined;
    if (cur != null) mark(cur, "tl-current");
    for (const n of st.filled || []) mark(owner[n], "tl-filled");
    if (st.error && st.error.node != null) mark(owner[st.error.node], "tl-error-node");
    const now = new Map();
    for (const [bi, set] of want) now.set(bi, [...set].sort().join(" "));
    for (const [bi, was] of boxState) if (!now.has(bi) && boxEls[bi]) setClasses(boxEls[bi], was, "");
    for (const [bi, cls] of now) if (boxState.get(bi) !== cls && boxEls[bi]) setClasses(boxEls[bi], boxState.get(bi) || "", cls);
    boxState = now;

    // gradient norms on edges: step [node, [[input, norm]...]] travels along the edge with pair [input, node]
    edgeNorm = new Map();
    for (let i = 0; i < cursor; i++) {
      const [node, sent] = steps[i];
      for (const [inp, norm] of sent || []) {
        const e = pairEdge.get(inp + "," + node);
        if (e == null) continue;   // input and node inside the same collapsed box: no edge drawn
        const prev = edgeNorm.get(e);
        edgeNorm.set(e, prev == null || (typeof norm === "number" && norm > prev) ? norm : prev);
      }
    }
    let max = 0, min = Infinity;
    for (const v of edgeNorm.values()) if (Number.isFinite(v) && v > 0) { max = Math.max(max, v); min = Math.min(min, v); }
    // width 1.2..6 px on a log scale from the smallest norm shown so far to the largest, spanning at least one
    // decade (norms within a few percent of each other look alike) and at most six
    const decades = max > 0 ? clamp(Math.log10(max / min), 1, 6) : 1;
    const edgeNow = new Map();   // edge index -> its style key: "" plain, "bad", or a stroke width
    for (const [i, v] of edgeNorm) {
      if (v != null && !Number.isFinite(v)) { edgeNow.set(i, "bad"); continue; }
      const r = v > 0 && max > 0 ? clamp(1 + Math.log10(v / max) / decades, 0, 1) : 0;
      edgeNow.set(i, (1.2 + 4.8 * r).toFixed(1));
    }
    for (const [i] of edgeState) if (!edgeNow.has(i)) styleEdge(i, "");
    for (const [i, key] of edgeNow) if (edgeState.get(i) !== key) styleEdge(i, key);
    edgeState = edgeNow;

    const errText = st.error ? String(st.error.text ?? "error") : "";
    errorText.textContent = errText;
    errorEl.hidden = !errText || errText === dismissedError;
    stepButtons.back.classList.toggle("tl-muted", cursor === 0);
    // nothing more to run: at the end, stopped by an error, or a graph whose backward already freed it
    const atEnd = (!!st.done || !!st.error || !!st.freed) && cursor >= steps.length;
    for (const b of [stepButtons.step, stepButtons.step10, stepButtons.run]) {
      b.classList.toggle("tl-muted", atEnd);
      b.setAttribute("aria-disabled", String(atEnd));
    }

    currentBox = cur != null ? cur : null;
    root.dataset.currentBox = currentBox != null ? String(currentBox) : "";
    // a new state in stepper mode brings the current box into view, readable (a new graph does it in build())
    if (!fromBuild && model.get("stepper") && cursor !== lastCursor) follow();
    lastCursor = cursor;
    afterPaint(() => { root.dataset.cursor = String(cursor); });
  }

  function setClasses(e, was, now) {
    for (const c of was.split(" ")) if (c) e.classList.remove(c);
    for (const c of now.split(" ")) if (c) e.classList.add(c);
  }
  /** key: "" (no gradient), "bad" (a non-finite norm) or a stroke width in px. */
  function styleEdge(i, key) {
    const p = edgeEls[i];
    if (!p) return;
    p.classList.toggle("tl-grad", key !== "");
    p.classList.toggle("tl-grad-bad", key === "bad");
    p.style.strokeWidth = key === "" ? "" : key === "bad" ? "4px" : key + "px";
    p.setAttribute("marker-end", `url(#${key === "" ? arrowId : arrowGradId})`);
  }

  // ---- selection and details --------------------------------------------------------------------
  let localSel = null;   // the id this view set itself (a click): no need to bring it into view
  function select(id) {
    if (model.get("selected") === id) return;
    localSel = id;
    model.set("selected", id);
    model.save_changes();
  }
  /** Highlight the selected box (or frame). reveal: "python" (Python chose it, e.g. a search: show it,
   *  readable), "keep" (after a rebuild: keep it in view), or false. */
  function applySelected(reveal) {
    for (const e of root.querySelectorAll(".tl-selected")) e.classList.remove("tl-selected");
    const id = model.get("selected") || "";
    const bi = boxById.get(id), fi = frameIdx.get(id);
    const selEl = bi != null ? boxEls[bi] : fi != null ? frameEls[fi] : null;
    if (selEl) selEl.classList.add("tl-selected");
    const b = bi != null ? G.boxes[bi] : null;
    selRing.style.display = b ? "" : "none";
    if (b) {
      const pad = 4;
      setAttrs(selRing, { x: b.x - b.w / 2 - pad, y: b.y - b.h / 2 - pad, width: b.w + 2 * pad, height: b.h + 2 * pad,
                          rx: b.kind === "param" || b.kind === "leaf" ? b.h / 2 + pad : 8 });
    }
    if (!reveal || !initialised || (bi == null && fi == null)) return;
    if (bi != null) { showBox(bi, 0.02, reveal === "python"); return; }
    const f = G.frames[fi];   // an expanded group: show its top-left corner and label
    ensureVisible(f.x, f.y, f.x + Math.min(f.w, vw / T.k / 2), f.y + Math.min(f.h, vh / T.k / 2), 0.02, reveal === "python");
  }
  function onSelectedChange() {
    const id = model.get("selected") || "";
    applySelected(id !== localSel ? "python" : false);
    localSel = null;
  }
  /** Expand or collapse a group; an expansion asked here is zoomed to when its frame arrives (showExpanded). */
  function toggle(id) {
    if (boxById.has(id) && G.boxes[boxById.get(id)].expandable) pendingExpand = id;
    send({ type: "toggle", id });
  }

  function renderDetails() {
    const d = model.get("details") || {};
    const parts = [];
    if (!d.title && !(d.rows || []).length) {
      parts.push(h("div", "tl-details-empty", "Click a box to see its details; click a group to expand it."));
      details.replaceChildren(...parts);
      return;
    }
    const head = h("div", "tl-details-head");
    head.append(h("div", "tl-details-title", d.title || ""));
    for (const a of d.actions || []) {
      const text = a === "expand" ? "Expand" : a === "collapse" ? "Collapse" : String(a);
      head.append(button(text, null, () => { const id = model.get("selected"); if (id) toggle(id); }));
    }
    parts.push(head);
    const table = (rows, cls) => {
      const t = h("table", cls);
      for (const r of rows) {
        const tr = h("tr");
        tr.append(h("th", "", r[0]), h("td", "", r[1]));
        t.append(tr);
      }
      return t;
    };
    if ((d.rows || []).length) parts.push(table(d.rows, "tl-details-rows"));
    if ((d.saved || []).length) {
      parts.push(h("div", "tl-details-sub", "saved for backward"));
      const ul = h("ul", "tl-details-saved");
      for (const sv of d.saved) ul.append(h("li", sv.stale ? "tl-stale-text" : "", sv.text));
      parts.push(ul);
    }
    if ((d.grads || []).length) {
      parts.push(h("div", "tl-details-sub", "gradients sent"));
      parts.push(table(d.grads, "tl-details-grads"));
    }
    details.replaceChildren(...parts);
  }

  function renderStepper() {
    const on = !!model.get("stepper");
    stepBar.hidden = !on;
    statusEl.textContent = model.get("status") || "";
    statusEl.hidden = !on && !statusEl.textContent;
  }
  function renderHeight() {
    view.style.height = (model.get("height") || 560) + "px";
  }
  function renderPaused() {
    const p = !!model.get("paused");
    pauseBtn.textContent = p ? "Resume" : "Pause";
    pauseBtn.setAttribute("aria-pressed", String(p));
    root.classList.toggle("tl-paused", p);
    root.dataset.paused = String(p);
  }

  // ---- Close ---------------------------------------------------------------------------------------
  // Close sends {"type": "close"}: Python closes the view (frees its graph, stops listening) and its widget.
  // The drawing gives way to "closed" at once. Closing the widget then makes the notebook remove this view and
  // hide its output (ipywidgets does so for every closed widget), so the same word is left in the output's place
  // (see the cleanup at the end of render()).
  let closedHost = null;   // the notebook output holding this view, when the learner closed it
  function closeView() {
    if (closed) return;
    send({ type: "close" });
    closed = true;
    closedHost = el.closest(".jp-OutputArea-output") || null;
    anim = null;
    clearTimeout(pendingFit);
    hideTooltip();
    root.classList.add("tl-closed");
    root.dataset.closed = "true";
    const msg = h("div", "tl-closed-msg", "closed");
    msg.title = "This view was closed and has freed its graph; display a new one to see it again.";
    root.replaceChildren(msg);
  }

  // ---- tooltip ------------------------------------------------------------------------------------
  let hoverKey = "", hoverEdges = [];
  function tipRows(target) {
    const box = target.closest(".tl-box"), edge = target.closest(".tl-edge-hit");
    if (box) {
      const b = G.boxes[+box.dataset.idx];
      return b ? ["b" + box.dataset.idx, (b.tip && b.tip.length ? b.tip : [[b.kind, b.label]]), +box.dataset.idx, null] : null;
    }
    if (edge) {
      const i = +edge.dataset.idx, e = G.edges[i];
      if (!e) return null;
      const rows = [[null, e.label ?? ""]];
      if (edgeNorm.has(i)) rows.push([null, `|grad| = ${fmtNorm(edgeNorm.get(i))}`, "tl-tip-grad"]);
      return ["e" + i, rows, null, i];
    }
    return null;
  }
  function setHoverEdges(list) {
    for (const i of hoverEdges) edgeEls[i] && edgeEls[i].classList.remove("tl-hover");
    hoverEdges = list;
    for (const i of hoverEdges) edgeEls[i] && edgeEls[i].classList.add("tl-hover");
  }
  function onHover(ev) {
    const r = tipRows(ev.target);
    if (!r) { hideTooltip(); return; }
    const [key, rows, bi, ei] = r;
    if (key !== hoverKey) {
      hoverKey = key;
      const t = h("table");
      for (const [k, v, cls] of rows) {
        const tr = h("tr");
        if (k == null) { const td = h("td", cls || "", v); td.colSpan = 2; tr.append(td); }
        else tr.append(h("th", "", k), h("td", "", v));
        t.append(tr);
      }
      tooltip.replaceChildren(t);
      tooltip.hidden = false;
      setHoverEdges(bi != null ? boxEdges[bi] || [] : [ei]);
    }
    // place near the pointer, flipped to stay inside the widget
    const rr = root.getBoundingClientRect();
    let x = ev.clientX - rr.left + 14, y = ev.clientY - rr.top + 16;
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    if (x + tw > rr.width - 4) x = Math.max(4, ev.clientX - rr.left - tw - 10);
    if (y + th > rr.height - 4) y = Math.max(4, ev.clientY - rr.top - th - 10);
    tooltip.style.transform = `translate(${x}px, ${y}px)`;
  }
  function hideTooltip() {
    if (!hoverKey && tooltip.hidden) return;
    hoverKey = "";
    tooltip.hidden = true;
    setHoverEdges([]);
  }

  // ---- pointer: drag pans, a click without movement selects --------------------------------------
  let drag = null;
  function viewPoint(ev) {
    const r = view.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }
  function onPointerDown(ev) {
    if (ev.button !== 0) return;
    anim = null;
    drag = { id: ev.pointerId, sx: ev.clientX, sy: ev.clientY, x0: T.x, y0: T.y, moved: false, target: ev.target };
  }
  function onPointerMove(ev) {
    if (drag && ev.pointerId === drag.id) {
      const dx = ev.clientX - drag.sx, dy = ev.clientY - drag.sy;
      if (!drag.moved && Math.hypot(dx, dy) > 4) {
        drag.moved = true;
        view.setPointerCapture(ev.pointerId);
        view.classList.add("tl-dragging");
        hideTooltip();
      }
      if (drag.moved) { T.x = drag.x0 + dx; T.y = drag.y0 + dy; schedule(); return; }
    }
    onHover(ev);
  }
  function onPointerUp(ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    view.classList.remove("tl-dragging");
    if (view.hasPointerCapture(ev.pointerId)) view.releasePointerCapture(ev.pointerId);
    // keyboard focus for the arrow keys, taken when the button goes up: a focus change restyles the page
    // around the widget (focus-within rules), which made the first frame of a drag 120-200 ms
    if (!root.contains(document.activeElement)) root.focus({ preventScroll: true });
    if (!d.moved) clickOn(d.target);
  }
  function clickOn(target) {
    const label = target.closest(".tl-frame-label");
    if (label) {
      const id = label.parentNode.dataset.id;
      select(id);
      toggle(id);
      return;
    }
    const box = target.closest(".tl-box");
    if (!box) { select(""); return; }
    const b = G.boxes[+box.dataset.idx];
    select(b.id);
    if (b.expandable) toggle(b.id);
  }
  function onPointerCancel() { drag = null; view.classList.remove("tl-dragging"); }

  // ---- wheel: mouse wheel and pinch zoom; trackpad two-finger scroll pans ---------------------
  function onWheel(ev) {
    ev.preventDefault();
    anim = null;
    hideTooltip();
    let dx = ev.deltaX, dy = ev.deltaY;
    if (ev.deltaMode === 1) { dx *= 16; dy *= 16; } else if (ev.deltaMode === 2) { dx *= vw; dy *= vh; }
    const [px, py] = viewPoint(ev);
    if (ev.ctrlKey || ev.metaKey) {           // trackpad pinch arrives as ctrl+wheel; also real ctrl+wheel
      zoomAt(Math.exp(-clamp(dy, -30, 30) * 0.01), px, py);
      return;
    }
    // A mouse notch is a large whole number of CSS px (or of device px, under browser zoom) with no
    // horizontal part; a trackpad two-finger scroll has small or fractional deltas, or a horizontal part.
    const whole = (v) => Math.abs(v - Math.round(v)) < 0.01;
    const notch = ev.deltaMode !== 0 || (ev.deltaX === 0 && Math.abs(ev.deltaY) >= 40 &&
      (whole(ev.deltaY) || whole(ev.deltaY * (window.devicePixelRatio || 1))));
    if (!notch || ev.shiftKey) {
      if (ev.shiftKey && !dx) { dx = dy; dy = 0; }
      panBy(-dx, -dy);
    } else {
      zoomAt(Math.exp(-clamp(dy, -120, 120) * 0.0025), px, py);
    }
  }

  // ---- keyboard ---------------------------------------------------------------------------------
  function onKey(ev) {
    if (ev.target === search || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const stepper = !!model.get("stepper");
    const onButton = ev.target.tagName === "BUTTON";
    let done = true;
    switch (ev.key) {
      case "ArrowRight": case "ArrowDown": if (stepper) send({ type: "step", n: 1 }); else done = false; break;
      case "ArrowLeft": case "ArrowUp": if (stepper) send({ type: "back" }); else done = false; break;
      case "f": case "F": userFit(); break;
      case "+": case "=": zoomBy(1.4); break;
      case "-": case "_": zoomBy(1 / 1.4); break;
      case "/": search.focus(); search.select(); break;
      case "Escape": select(""); hideTooltip(); break;
      case "Enter": {
        if (onButton) { done = false; break; }
        const box = ev.target.closest && ev.target.closest(".tl-box");
        const id = box ? box.dataset.id : model.get("selected");
        const bi = boxById.get(id);
        if (bi != null && G.boxes[bi].expandable) { select(id); toggle(id); } else done = false;
        break;
      }
      default: done = false;
    }
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  }

  // ---- search -------------------------------------------------------------------------------------
  let found = [], active = 0;
  function runSearch() {
    const q = search.value.trim().toLowerCase();
    if (!q) { closeResults(); return; }
    const hits = [];
    (G.nodes || []).forEach(([name, path], i) => {
      const n = String(name ?? "").toLowerCase(), p = String(path ?? "").toLowerCase();
      let rank = -1;
      if (n === q) rank = 0;
      else if (n.startsWith(q)) rank = 1;
      else if (n.includes(q)) rank = 2;
      else if (p.includes(q)) rank = 3;
      else if ((p + "." + n).includes(q)) rank = 4;
      if (rank >= 0) hits.push([rank, i]);
    });
    hits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    found = hits.slice(0, MAX_RESULTS).map((x) => x[1]);
    active = 0;
    const rows = found.map((i, j) => {
      const [name, path] = G.nodes[i];
      const r = h("div", "tl-search-result");
      r.setAttribute("role", "option");
      r.dataset.node = String(i);
      r.append(h("span", "tl-search-name", name), h("span", "tl-search-path", path || ""));
      r.addEventListener("mousedown", (e) => { e.preventDefault(); pick(j); });
      return r;
    });
    if (!rows.length) rows.push(h("div", "tl-search-none", "no match"));
    else if (hits.length > found.length) rows.push(h("div", "tl-search-none", `${hits.length - found.length} more…`));
    results.replaceChildren(...rows);
    results.hidden = false;
    highlight();
  }
  function highlight() {
    results.querySelectorAll(".tl-search-result").forEach((r, j) => r.classList.toggle("tl-active", j === active));
  }
  function pick(j) {
    if (found[j] == null) return;
    send({ type: "reveal", node: found[j] });
    closeResults();
  }
  function closeResults() { results.hidden = true; results.replaceChildren(); found = []; }
  function onSearchKey(ev) {
    ev.stopPropagation();   // typing "f" or "-" here must not zoom
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (found.length) { active = (active + (ev.key === "ArrowDown" ? 1 : found.length - 1)) % found.length; highlight(); }
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      pick(active);
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      if (!results.hidden) closeResults(); else { search.value = ""; root.focus({ preventScroll: true }); }
    }
  }
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", onSearchKey);
  search.addEventListener("focus", () => { if (search.value.trim()) runSearch(); });
  search.addEventListener("blur", () => setTimeout(() => { if (!disposed && document.activeElement !== search) closeResults(); }, 100));

  // ---- wiring -------------------------------------------------------------------------------------
  // on the view, not the <svg>: the svg covers only the drawing, the view also the empty space around it
  view.addEventListener("pointerdown", onPointerDown);
  view.addEventListener("pointermove", onPointerMove);
  view.addEventListener("pointerup", onPointerUp);
  view.addEventListener("pointercancel", onPointerCancel);
  view.addEventListener("pointerleave", () => { if (!drag) hideTooltip(); });
  view.addEventListener("wheel", onWheel, { passive: false });
  root.addEventListener("keydown", onKey);

  const ro = new ResizeObserver(() => {
    // inside another widget container (the Dashboard's tabs), the container's own Pause and Close act for this view:
    // a Close here would leave an empty tab
    viewBar.hidden = !!(el.parentElement && el.parentElement.closest(".widget-container"));
    const r = view.getBoundingClientRect();
    if (!r.width || !r.height) return;
    // keep the world point at the view centre fixed across a resize
    if (vw && vh) { T.x += (r.width - vw) / 2; T.y += (r.height - vh) / 2; }
    vw = r.width; vh = r.height;
    if (!initialised) { initialView(); applySelected("keep"); }
    schedule();
  });
  ro.observe(view);

  const handlers = {
    "change:graph": build,
    "change:state": applyState,
    "change:selected": onSelectedChange,
    "change:details": renderDetails,
    "change:stepper": renderStepper,
    "change:status": renderStepper,
    "change:height": renderHeight,
    "change:paused": renderPaused,
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);

  renderHeight();
  renderPaused();
  renderStepper();
  renderDetails();
  build();
  schedule();

  return () => {
    disposed = true;
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    if (rafId) cancelAnimationFrame(rafId);
    clearTimeout(pendingFit);
    clearTimeout(settleTimer);
    ro.disconnect();
    root.remove();
    // closed by its button: the notebook hides the output of a closed widget; say "closed" beside it instead
    if (closedHost && closedHost.parentNode && !closedHost.parentNode.querySelector(".tl-graph-closed")) {
      const note = h("div", "tl-graph-closed", "closed");
      note.style.cssText = "padding: 4px 8px; color: var(--jp-ui-font-color2, GrayText); font-style: italic;";
      closedHost.after(note);
    }
  };
}

export default { render };

// timeline.js: the browser side of KernelTimeline (an anywidget ES module).
//
// Python (widgets/kernel_view.py, through widgets/kernel_widget.py) records every kernel launch as typed
// columns and sends them compactly: a snapshot in the `data` traitlet ({meta, buffers}: one binary buffer per
// column) and, after it, only the new launches as custom "append" messages with the same layout. This file
// keeps the rows in growable typed arrays, lays them out (one row per kernel name, most total time on top;
// x = time within each cell, cells side by side with the idle time between them cut out) and draws them on one
// <canvas> whose backing store has one pixel per device pixel. Only what is in view is drawn: each row is searched
// for the visible time range (binary search over its launches sorted by start), and its launches are binned per
// device-pixel column, each column painted in the one legend colour of the phase with the most time in it (see
// "painting"), so a frame costs O(visible launches + pixel columns), never O(all) draw calls, and no column shows a
// blend of two phases' colours however narrow the bars.
//
// Interaction: wheel zooms the time axis about the pointer (horizontal wheel / shift+wheel pans), drag pans
// (time and, when rows overflow, rows), buttons −, +, Fit; hover shows a tooltip (op, kernel, shapes, bytes,
// duration, cell, user's line); click selects a launch (`selected`, which Python turns into a graph-node
// selection in open graph views). `visible` follows an IntersectionObserver and the page's visibility; the
// Pause / Resume button toggles `paused`, Close sends {"type": "close"}. No build step, no imports.

const PHASES = ["forward", "backward", "optimizer", "transfer"];
const ROW_H = 18;         // CSS px per kernel row
const AXIS_H = 24;        // CSS px of the time axis above the rows
const BAR_PAD = 3;        // CSS px between a bar and its row's edges
const COLS = ["start", "dur", "name", "dev", "shape", "node", "cell", "phase", "nbytes"];
const NODE_COLS = ["node_op", "node_line"];
const TYPED = { d: Float64Array, f: Float32Array, I: Uint32Array, i: Int32Array, H: Uint16Array, B: Uint8Array };

// (h, button, clamp, watchVisibility: common.js, put in front of this module)

/** A DataView from ipywidgets as a typed array of `code` (copied: the view's offset may be unaligned). */
function typed(dv, code) {
  const T = TYPED[code];
  if (!dv) return new T(0);
  const bytes = dv instanceof ArrayBuffer ? new Uint8Array(dv) : new Uint8Array(dv.buffer, dv.byteOffset, dv.byteLength);
  return new T(bytes.slice().buffer);
}
/** Seconds as short text: 1.23 s, 45.6 ms, 789 µs, 12.0 ns. */
function fmtTime(s) {
  const a = Math.abs(s);
  if (a >= 1) return (+s.toPrecision(3)) + " s";
  if (a >= 1e-3) return (+(s * 1e3).toPrecision(3)) + " ms";
  if (a >= 1e-6) return (+(s * 1e6).toPrecision(3)) + " µs";
  return (+(s * 1e9).toPrecision(3)) + " ns";
}
/** Tick `j * step` (seconds) in the unit of the step, with just the decimals the step needs: "1.5 ms". A step of a
 *  tenth of a unit or more already counts in that unit ("7.5 ms", not "7500 µs"). */
function fmtTick(j, step) {
  const [u, name] = step >= 0.1 ? [1, "s"] : step >= 1e-4 ? [1e-3, "ms"] : step >= 1e-7 ? [1e-6, "µs"] : [1e-9, "ns"];
  const digits = Math.max(0, -Math.floor(Math.log10(step / u) + 1e-9));
  return (j * step / u).toFixed(digits) + " " + name;
}
function fmtBytes(b) {
  if (b < 1024) return Math.round(b) + " B";
  const u = ["KiB", "MiB", "GiB", "TiB"];
  let i = -1;
  do { b /= 1024; i++; } while (b >= 1024 && i < u.length - 1);
  return (+b.toPrecision(3)) + " " + u[i];
}
/** A "nice" tick step (1, 2 or 5 times a power of ten) near `raw`. */
function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw)), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

// -- the launch store: growable typed columns with sequence numbers ------------------------------------------
class Store {
  constructor() { this.reset(); }
  reset() {
    this.rev = -1; this.first = 0; this.n = 0; this.cap = 0;
    this.c = {};
    this.strs = [""];
    this.nodeFirst = 0; this.nodesN = 0; this.nodeCap = 0; this.nc = {};
    this.cells = [];
  }
  get end() { return this.first + this.n; }
  grow(cols, cap, need, codes) {
    if (need <= cap && codes.every(([name]) => cols[name])) return cap;
    const next = Math.max(need, cap * 2, 1024);
    for (let k = 0; k < codes.length; k++) {
      const [name, code] = codes[k];
      const a = new TYPED[code](next);
      if (cols[name]) a.set(cols[name].subarray(0, cap));
      cols[name] = a;
    }
    return next;
  }
  /** Apply a snapshot (`reset`) or an append; false if an append does not follow what this store has. */
  apply(meta, buffers, reset) {
    if (!meta) return false;
    if (reset) {
      this.reset();
      this.rev = meta.rev; this.first = meta.base; this.nodeFirst = meta.nodes_base;
      this.strs = [];
    } else if (meta.rev !== this.rev || meta.base !== this.end || meta.strs_base !== this.strs.length ||
               meta.nodes_base !== this.nodeFirst + this.nodesN) {
      return false;
    }
    for (const s of meta.strs || []) this.strs.push(s);
    const types = meta.types, nc = COLS.length;
    const codes = COLS.map((name, i) => [name, types[i]]);
    const ncodes = NODE_COLS.map((name, i) => [name, types[nc + i]]);
    this.cap = this.grow(this.c, this.cap, this.n + meta.n, codes);
    for (let k = 0; k < nc; k++) this.c[COLS[k]].set(typed(buffers[k], types[k]).subarray(0, meta.n), this.n);
    this.n += meta.n;
    this.nodeCap = this.grow(this.nc, this.nodeCap, this.nodesN + meta.nodes_n, ncodes);
    for (let k = 0; k < NODE_COLS.length; k++) {
      this.nc[NODE_COLS[k]].set(typed(buffers[nc + k], types[nc + k]).subarray(0, meta.nodes_n), this.nodesN);
    }
    this.nodesN += meta.nodes_n;
    this.trim(meta.first, meta.node_first);
    this.cells = meta.cells || this.cells;
    return true;
  }
  /** Drop rows before sequence number `first` and nodes before `nodeFirst` (Python dropped them). */
  trim(first, nodeFirst) {
    const k = Math.min(first - this.first, this.n);
    if (k > 0) {
      for (const name of COLS) this.c[name].copyWithin(0, k, this.n);
      this.n -= k; this.first += k;
    }
    const j = Math.min(nodeFirst - this.nodeFirst, this.nodesN);
    if (j > 0) {
      for (const name of NODE_COLS) this.nc[name].copyWithin(0, j, this.nodesN);
      this.nodesN -= j; this.nodeFirst += j;
    }
  }
  /** Everything known about row `i` (not the sequence number: the index into the arrays). */
  row(i) {
    const c = this.c, s = this.strs;
    const nid = c.node[i], j = nid - this.nodeFirst;
    const hasNode = nid >= 0 && j >= 0 && j < this.nodesN;
    return {
      seq: this.first + i, name: s[c.name[i]], device: s[c.dev[i]], shapes: s[c.shape[i]], start: c.start[i],
      dur: c.dur[i], nbytes: c.nbytes[i], phase: PHASES[c.phase[i]] || "?", cell: this.cells[c.cell[i]] || "",
      op: hasNode ? s[this.nc.node_op[j]] : "", line: hasNode ? s[this.nc.node_line[j]] : "",
    };
  }
}

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
    button("−", "Zoom out", () => zoomBy(1 / 1.6), "Zoom out (−)"),
    button("+", "Zoom in", () => zoomBy(1.6), "Zoom in (+)"),
    button("Fit", "Fit", () => fit(), "Show every launch (f)"),
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

  // ---- data and layout ----------------------------------------------------------------------------------
  const S = new Store();
  let L = null;              // layout: see relayout()
  let colours = null;        // theme colours, read from CSS (see readColours)
  let disposed = false, rafId = 0;

  /** Rows (kernel names by total time), compressed x per launch, per-row launch lists sorted by x. */
  function relayout() {
    const n = S.n, c = S.c;
    const nCells = S.cells.length || 1;
    const lo = new Float64Array(nCells).fill(Infinity), hi = new Float64Array(nCells).fill(-Infinity);
    const totals = new Float64Array(S.strs.length);
    for (let i = 0; i < n; i++) {
      const ce = c.cell[i], s = c.start[i], e = s + c.dur[i];
      if (s < lo[ce]) lo[ce] = s;
      if (e > hi[ce]) hi[ce] = e;
      totals[c.name[i]] += c.dur[i];
    }
    // cells side by side in order, a small gap between them: idle time between cells is cut out
    let span = 0, used = 0;
    for (let k = 0; k < nCells; k++) if (hi[k] > lo[k] || hi[k] === lo[k]) { span += Math.max(hi[k] - lo[k], 0); used++; }
    const gap = used > 1 ? Math.max(span * 0.02, 1e-6) : 0;
    const off = new Float64Array(nCells), cellX = [];
    let x = 0;
    for (let k = 0; k < nCells; k++) {
      if (!(hi[k] >= lo[k])) continue;
      off[k] = x - lo[k];
      cellX.push({ k, x0: x, x1: x + (hi[k] - lo[k]) });
      x += hi[k] - lo[k] + gap;
    }
    const total = Math.max(x - gap, 1e-9);
    const xs = new Float64Array(n);
    for (let i = 0; i < n; i++) xs[i] = c.start[i] + off[c.cell[i]];
    // rows: names with launches, most total time first
    const present = new Uint8Array(S.strs.length);
    for (let i = 0; i < n; i++) present[c.name[i]] = 1;
    const names = [];
    for (let k = 0; k < present.length; k++) if (present[k]) names.push(k);
    names.sort((a, b) => totals[b] - totals[a] || (S.strs[a] < S.strs[b] ? -1 : 1));
    const rowOf = new Int32Array(S.strs.length).fill(-1);
    names.forEach((k, r) => { rowOf[k] = r; });
    // CSR lists: launches of row r are idx[rowStart[r] .. rowStart[r + 1]), sorted by x
    const rowStart = new Int32Array(names.length + 1);
    for (let i = 0; i < n; i++) rowStart[rowOf[c.name[i]] + 1]++;
    for (let r = 0; r < names.length; r++) rowStart[r + 1] += rowStart[r];
    const fill = rowStart.slice(0, names.length), idx = new Int32Array(n), maxDur = new Float64Array(names.length);
    for (let i = 0; i < n; i++) {
      const r = rowOf[c.name[i]];
      idx[fill[r]++] = i;
      if (c.dur[i] > maxDur[r]) maxDur[r] = c.dur[i];
    }
    for (let r = 0; r < names.length; r++) {   // launches arrive in time order; sort only rows that are not
      const a = rowStart[r], b = rowStart[r + 1];
      let sorted = true;
      for (let q = a + 1; q < b && sorted; q++) if (xs[idx[q]] < xs[idx[q - 1]]) sorted = false;
      if (!sorted) idx.set(Array.from(idx.subarray(a, b)).sort((u, v) => xs[u] - xs[v]), a);
    }
    L = { xs, names, rowOf, rowStart, idx, maxDur, total, cellX, totals };
    root.dataset.launches = String(n);
    root.dataset.rows = String(names.length);
    emptyEl.hidden = n > 0;
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < n; i++) counts[c.phase[i]]++;
    PHASES.forEach((p, k) => { swatchCount[p].textContent = counts[k] ? String(counts[k]) : ""; });
    labelW = measureLabels();
    onHeight();
  }

  // ---- view: world time t (compressed seconds) -> CSS px: x = plotLeft + (t - V.t0) * V.k ----------------
  const V = { t0: 0, k: 1, sy: 0 };  // sy: vertical scroll of the rows, CSS px
  let vw = 0, vh = 0, dpr = 1;
  let labelW = 120;                  // the row-label gutter (CSS px)
  let autoFit = true;                // follow new launches until the user zooms or pans
  let hover = -1, selectedSeq = -1;  // row index under the pointer; sequence number of the selection
  let frameMs = 0;

  const plotW = () => Math.max(vw - labelW - 8, 10);
  const rowsH = () => Math.max(vh - AXIS_H, ROW_H);
  /** The zoom (px per second) that shows every launch, with 1% of margin each side. */
  const fitK = () => plotW() / ((L ? L.total : 1) * 1.02);
  function kRange() { return [fitK() * 0.5, 1e10]; }  // 1e10 px/s: a tenth of a nanosecond per pixel
  function fit() {
    autoFit = true;
    if (!L) return;
    V.k = fitK();
    V.t0 = -L.total * 0.01;
    hideTooltip();
    schedule();
  }
  function zoomAt(factor, px) {
    autoFit = false;
    const [lo, hi] = kRange();
    const k = clamp(V.k * factor, lo, hi);
    const t = V.t0 + (px - labelW) / V.k;   // keep the time under the pointer in place
    V.t0 = t - (px - labelW) / k;
    V.k = k;
    schedule();
  }
  function zoomBy(f) { hideTooltip(); zoomAt(f, labelW + plotW() / 2); }
  function panBy(dx, dy) {
    autoFit = false;
    V.t0 -= dx / V.k;
    scrollRows(dy);
    schedule();
  }
  function scrollRows(dy) {
    const maxSy = Math.max(0, (L ? L.names.length : 0) * ROW_H - rowsH());
    V.sy = clamp(V.sy - dy, 0, maxSy);
  }

  // ---- colours and fonts from the theme ---------------------------------------------------------------
  function readColours() {
    const cs = getComputedStyle(root);
    const v = (name, fb) => (cs.getPropertyValue(name) || "").trim() || fb;
    colours = {
      phase: PHASES.map((p) => v("--tl-phase-" + p, "#888")),
      fg: v("--tl-fg", "#333"), fg2: v("--tl-fg2", "#666"), fg3: v("--tl-fg3", "#999"),
      grid: v("--tl-grid", "rgba(128,128,128,0.25)"), stripe: v("--tl-stripe", "rgba(128,128,128,0.06)"),
      bg: v("--tl-bg", "transparent"), sel: v("--tl-sel", "#000"), cellLine: v("--tl-cell-line", "#888"),
      font: cs.fontFamily || "system-ui, sans-serif",
    };
  }
  function measureLabels() {
    if (!L) return 120;
    if (!colours) readColours();
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.font = `12px ${colours.font}`;
    let w = 40;
    for (const k of L.names) w = Math.max(w, ctx.measureText(S.strs[k]).width);
    ctx.restore();
    return Math.ceil(Math.min(w, 220) + 16);
  }
  function fitText(text, maxW) {
    if (ctx.measureText(text).width <= maxW) return text;
    let a = 0, b = text.length;
    while (a < b) {
      const m = (a + b + 1) >> 1;
      if (ctx.measureText(text.slice(0, m) + "…").width <= maxW) a = m; else b = m - 1;
    }
    return text.slice(0, a) + "…";
  }

  // ---- painting ------------------------------------------------------------------------------------------
  // Every bar is drawn on whole device pixels, one colour per device-pixel column of a row, so that at any zoom each
  // column shows exactly one legend colour (issue 16: with 100,000 launches most bars are narrower than a pixel, and
  // antialiased or overdrawn sub-pixel bars blended into colours that are in no legend). The rule, per row and per
  // device-pixel column of the plot ("binning"):
  //   * a launch at least one device px wide adds, to each column it overlaps, the part of the column it covers
  //     (0..1, in px of time); a narrower one adds its whole width (plus a hair, so zero-length launches count) to
  //     the one column that holds its middle, and that column is then always painted (a tiny kernel stays visible);
  //   * a column is painted if such a narrow launch is in it or launches cover at least half of it, and it takes the
  //     colour of the phase with the most time in it.
  // Columns of one phase side by side become one rectangle (a run), so a frame issues at most one rectangle per
  // column and row however many launches are in view, and costs O(visible launches + columns). The hit test
  // (hitTest, below) applies the same rule, so hovering a column names a launch of the colour drawn there. The
  // canvas itself is shown at its device-pixel size (the ResizeObserver below) and with `image-rendering:
  // pixelated` (timeline.css): where the page puts it at a fractional device-pixel offset, or for the moment its
  // backing store lags a change of devicePixelRatio, the browser then shows whole pixels, never blends them.
  const NARROW_EPS = 1e-9;   // px added to a narrow launch's width: zero-length launches count too
  function schedule() { if (!rafId && !disposed) rafId = requestAnimationFrame(paint); }
  // per-phase rectangle lists, reused between frames: x, y, w, h in device px
  const rects = PHASES.map(() => ({ a: new Float32Array(4096), n: 0 }));
  function pushRect(p, x, y, w, hh) {
    const R = rects[p];
    if (R.n + 4 > R.a.length) { const b = new Float32Array(R.a.length * 2); b.set(R.a); R.a = b; }
    R.a[R.n++] = x; R.a[R.n++] = y; R.a[R.n++] = w; R.a[R.n++] = hh;
  }
  // per-column accumulators of one row (reused: grown to the widest plot seen): acc[col * 4 + phase] is the time
  // (in px) of that phase in the column from launches' ends and narrow launches, dif[] the difference array of the
  // columns that wide launches cover whole (+1 where such a run starts, -1 past its end), must[col] = 1 where a
  // narrow launch sits
  let acc = new Float64Array(0), dif = new Float64Array(0), must = new Uint8Array(0);

  /** The plot in device px of the canvas as it is now: left and right edge (the bars' columns are
   *  left + 0 .. left + nc - 1), top of the rows, device px per second `k`, and the time at the left edge `tA`.
   *  Whole numbers (but k and tA), so that every bar edge and the clip fall on device-pixel boundaries. */
  function geom() {
    const W = canvas.width, H = canvas.height;
    const left = Math.round(labelW * dpr), right = Math.max(left + 1, Math.round(W - 8 * dpr));
    return { W, H, left, right, nc: right - left, top: Math.round(AXIS_H * dpr), rowH: ROW_H * dpr, k: V.k * dpr,
             tA: V.t0 };
  }
  /** Row r's first launch (index into L.idx) that may reach time t or later: start >= t - the row's longest. */
  function firstFrom(r, t) {
    const xs = L.xs, idx = L.idx;
    let lo = L.rowStart[r], hi = L.rowStart[r + 1];
    const from = t - L.maxDur[r];
    while (lo < hi) { const m = (lo + hi) >> 1; if (xs[idx[m]] < from) lo = m + 1; else hi = m; }
    return lo;
  }

  function paint() {
    rafId = 0;
    if (disposed || !vw || !vh) return;
    const started = performance.now();
    if (!colours) readColours();
    // the backing store: the canvas's exact size in device pixels where the browser reports it (devW, devH: see the
    // ResizeObserver), else the CSS size times devicePixelRatio. (A report more than a pixel away from that is not
    // believed: Chromium's emulated device scale factors, as in its headless tests, report the unscaled size.)
    let cw = Math.round(vw * dpr), ch = Math.round(vh * dpr);
    if (devW && Math.abs(devW - vw * dpr) <= 1 && Math.abs(devH - vh * dpr) <= 1) { cw = devW; ch = devH; }
    if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.imageSmoothingEnabled = false;  // (nothing is scaled here; said anyway, in case an image is ever drawn)
    ctx.clearRect(0, 0, cw, ch);
    if (!L || !S.n) { root.dataset.drawn = "0"; return; }
    const C = colours, c = S.c, xs = L.xs;
    const G = geom(), { W, H, left, right, nc, top, rowH, k, tA } = G;
    const tB = tA + nc / k;
    const firstRow = Math.floor(V.sy / ROW_H), lastRow = Math.min(L.names.length, Math.ceil((V.sy + rowsH()) / ROW_H));
    const yOf = (r) => Math.round(top + r * rowH - V.sy * dpr);

    // row stripes (each exactly down to the next row's top, so none overlaps or leaves a gap)
    ctx.fillStyle = C.stripe;
    for (let r = firstRow; r < lastRow; r++) if (r % 2 === 1) ctx.fillRect(0, yOf(r), W, yOf(r + 1) - yOf(r));

    // time grid and axis (time within the compressed axis; labels in ms/µs); grid lines on whole device px
    const step = niceStep(90 * dpr / k);
    const lineW = Math.max(1, Math.round(dpr));
    ctx.font = `${11 * dpr}px ${C.font}`;
    ctx.textBaseline = "middle";
    ctx.fillStyle = C.grid;
    const j0 = Math.ceil(tA / step), j1 = Math.floor(tB / step);
    for (let j = j0; j <= j1; j++) ctx.fillRect(left + Math.round((j * step - tA) * k), top, lineW, H - top);
    ctx.fillStyle = C.fg2;
    ctx.textAlign = "center";
    for (let j = j0; j <= j1; j++) {
      const x = left + (j * step - tA) * k;
      if (x > left + 20 * dpr && x < right - 20 * dpr) ctx.fillText(fmtTick(j, step), x, top - 7 * dpr);
    }

    // bars, clipped to the plot area (a clip on whole device px: no partly covered column at its edges)
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, nc, H - top);
    ctx.clip();
    for (const R of rects) R.n = 0;
    let drawn = 0, visible = 0;
    const pad = Math.round(BAR_PAD * dpr), barH = Math.max(1, Math.round(rowH) - 2 * pad);
    if (acc.length < nc * 4) {
      acc = new Float64Array(nc * 4); dif = new Float64Array(nc * 4 + 4); must = new Uint8Array(nc);
    }
    // runs of columns of one phase in the current row become one rectangle
    let runA = 0, runB = 0, runP = -1, y = 0;
    const endRun = () => { if (runP >= 0) { pushRect(runP, runA, y, runB - runA, barH); drawn++; } runP = -1; };
    const addCol = (p, x) => {
      if (p === runP && x === runB) { runB = x + 1; return; }
      endRun();
      runA = x; runB = x + 1; runP = p;
    };
    for (let r = firstRow; r < lastRow; r++) {
      y = yOf(r) + pad;
      acc.fill(0, 0, nc * 4); dif.fill(0, 0, nc * 4 + 4); must.fill(0, 0, nc);
      let any = false;
      const b = L.rowStart[r + 1];
      for (let q = firstFrom(r, tA); q < b; q++) {
        const i = L.idx[q], x = xs[i];
        if (x > tB) break;
        const f0 = (x - tA) * k, f1 = f0 + c.dur[i] * k;  // columns (fractional) from the plot's left edge
        if (f1 < 0) continue;
        visible++;
        any = true;
        const p = c.phase[i];
        if (f1 - f0 < 1) {                              // narrow: all of it in the column of its middle
          const m = Math.floor((f0 + f1) / 2);
          if (m >= 0 && m < nc) { acc[m * 4 + p] += f1 - f0 + NARROW_EPS; must[m] = 1; }
          continue;
        }
        const a = Math.max(f0, 0), e = Math.min(f1, nc); // wide: the part of each column it covers
        if (e <= a) continue;
        const pa = Math.floor(a), pe = Math.floor(e);
        if (pa === pe) { acc[pa * 4 + p] += e - a; continue; }
        acc[pa * 4 + p] += pa + 1 - a;                  // its first column, partly
        if (pe < nc && e > pe) acc[pe * 4 + p] += e - pe;  // its last column, partly
        if (pe > pa + 1) { dif[(pa + 1) * 4 + p] += 1; dif[pe * 4 + p] -= 1; }  // whole columns between
      }
      if (!any) continue;
      // sweep the columns: each painted one takes the phase with the most time in it
      let w0 = 0, w1 = 0, w2 = 0, w3 = 0;  // running sums of the difference array (whole columns covered)
      for (let col = 0; col < nc; col++) {
        const o = col * 4;
        w0 += dif[o]; w1 += dif[o + 1]; w2 += dif[o + 2]; w3 += dif[o + 3];
        const s0 = acc[o] + w0, s1 = acc[o + 1] + w1, s2 = acc[o + 2] + w2, s3 = acc[o + 3] + w3;
        if (!must[col] && s0 + s1 + s2 + s3 < 0.5 - 1e-9) { endRun(); continue; }
        let p = 0, best = s0;
        if (s1 > best) { p = 1; best = s1; }
        if (s2 > best) { p = 2; best = s2; }
        if (s3 > best) p = 3;
        addCol(p, left + col);
      }
      endRun();
    }
    for (let p = 0; p < 4; p++) {
      const R = rects[p], A = R.a;
      if (!R.n) continue;
      ctx.fillStyle = C.phase[p];
      ctx.beginPath();
      for (let q = 0; q < R.n; q += 4) ctx.rect(A[q], A[q + 1], A[q + 2], A[q + 3]);
      ctx.fill();
    }
    // cell boundaries: a dashed line in the middle of the idle gap between two cells (so it crosses no bar), made
    // of whole-pixel dashes
    ctx.fillStyle = C.cellLine;
    const dash = Math.max(2, Math.round(3 * dpr));
    for (let q = 1; q < L.cellX.length; q++) {
      const x = left + Math.floor(((L.cellX[q - 1].x1 + L.cellX[q].x0) / 2 - tA) * k);
      if (x < left || x >= right) continue;
      for (let yy = top; yy < H; yy += 2 * dash) ctx.fillRect(x, yy, lineW, Math.min(dash, H - yy));
    }
    // the selected and hovered launches: a frame around the bar (at least 3 px wide so it is seen), whole pixels
    for (const [i, style, lw] of [[hover, C.fg2, lineW], [selectedSeq - S.first, C.sel, 2 * lineW]]) {
      if (i < 0 || i >= S.n) continue;
      const r = L.rowOf[c.name[i]];
      if (r < firstRow || r >= lastRow) continue;
      const f0 = (xs[i] - tA) * k, f1 = f0 + c.dur[i] * k;
      const x0 = left + Math.floor(f1 - f0 < 1 ? (f0 + f1) / 2 : f0);  // (a narrow one: the column paint() gave it)
      const x1 = Math.max(x0 + Math.round(3 * dpr), left + Math.ceil(f1));
      outline(x0 - lw, yOf(r) + pad - lw - lineW, x1 - x0 + 2 * lw, barH + 2 * lw + 2 * lineW, lw, style);
    }
    ctx.restore();

    // cell labels in the axis band (over the grid, left-aligned at the cell's start)
    ctx.textAlign = "left";
    ctx.font = `600 ${11 * dpr}px ${C.font}`;
    ctx.fillStyle = C.fg;
    for (const cx of L.cellX) {
      const x = left + (cx.x0 - tA) * k, x1 = left + (cx.x1 - tA) * k;
      if (x1 < left || x > right) continue;
      const label = S.cells[cx.k] || "";
      ctx.fillText(label, Math.max(x, left) + 3 * dpr, 8 * dpr);
    }
    // row labels in the gutter
    ctx.font = `${12 * dpr}px ${C.font}`;
    ctx.textAlign = "right";
    ctx.fillStyle = C.fg;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, left, H - top);
    ctx.clip();
    for (let r = firstRow; r < lastRow; r++) {
      ctx.fillText(fitText(S.strs[L.names[r]], left - 14 * dpr), left - 8 * dpr, yOf(r) + rowH / 2);
    }
    ctx.restore();
    // a scroll hint when rows overflow
    const maxSy = L.names.length * ROW_H - rowsH();
    if (maxSy > 0) {
      const track = H - top, th = Math.round(Math.max(20 * dpr, track * rowsH() / (L.names.length * ROW_H)));
      ctx.fillStyle = C.grid;
      ctx.fillRect(W - Math.round(5 * dpr), top + Math.round((track - th) * (V.sy / maxSy)), Math.round(3 * dpr), th);
    }
    root.dataset.zoom = String(+(V.k / fitK()).toPrecision(6));  // 1 = fit
    root.dataset.drawn = String(drawn);
    root.dataset.inview = String(visible);
    frameMs = performance.now() - started;
    root.dataset.paintMs = frameMs.toFixed(2);
  }
  /** A rectangle's outline `lw` device px thick, inside (x, y, w, hh), of four filled rectangles (no stroke, which
   *  would straddle pixel edges). */
  function outline(x, y, w, hh, lw, style) {
    ctx.fillStyle = style;
    ctx.fillRect(x, y, w, lw);
    ctx.fillRect(x, y + hh - lw, w, lw);
    ctx.fillRect(x, y + lw, lw, hh - 2 * lw);
    ctx.fillRect(x + w - lw, y + lw, lw, hh - 2 * lw);
  }

  // ---- hover and click -----------------------------------------------------------------------------------
  /** The pointer in CSS px from the canvas's top-left corner (the canvas fills the drawing area). */
  function areaPoint(ev) {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }
  /** The launch (row index) under CSS point (px, py), and how many launches share its pixel column: in that
   *  kernel's row, the device-pixel column under the pointer, or the nearest painted one within 3 CSS px, and in it
   *  the launch that paint() drew it for (columnHit). [-1, 0] if none. */
  function hitTest(px, py) {
    if (!L || !S.n || py < AXIS_H) return [-1, 0];
    const r = Math.floor((py - AXIS_H + V.sy) / ROW_H);
    if (r < 0 || r >= L.names.length) return [-1, 0];
    const G = geom();
    const col = Math.floor(px * dpr) - G.left, tol = Math.max(1, Math.round(3 * dpr));
    for (let d = 0; d <= tol; d++) {
      for (const cc of d ? [col - d, col + d] : [col]) {
        if (cc < 0 || cc >= G.nc) continue;
        const hit = columnHit(G, r, cc);
        if (hit) return hit;
      }
    }
    return [-1, 0];
  }
  /** Column `col` of row `r` as paint() bins it (the same weights, see "painting"): null if it is not painted, else
   *  [the longest launch in it of the phase it is painted in (the one whose colour is seen there), launches in it]. */
  function columnHit(G, r, col) {
    const { k, tA } = G, xs = L.xs, c = S.c, end = L.rowStart[r + 1];
    const tTo = tA + (col + 1) / k;
    const sum = [0, 0, 0, 0], hits = [];
    let must = false;
    for (let q = firstFrom(r, tA + col / k); q < end; q++) {
      const i = L.idx[q], x = xs[i];
      if (x > tTo) break;
      const f0 = (x - tA) * k, f1 = f0 + c.dur[i] * k;
      let w;
      if (f1 - f0 < 1) {                                 // narrow: counts in the column of its middle only
        if (Math.floor((f0 + f1) / 2) !== col) continue;
        w = f1 - f0 + NARROW_EPS;
        must = true;
      } else {                                           // wide: the part of the column it covers
        w = Math.min(f1, col + 1) - Math.max(f0, col);
        if (!(w > 0)) continue;
      }
      sum[c.phase[i]] += w;
      hits.push(i);
    }
    if (!must && sum[0] + sum[1] + sum[2] + sum[3] < 0.5 - 1e-9) return null;
    let p = 0;
    for (let q = 1; q < 4; q++) if (sum[q] > sum[p]) p = q;
    let best = -1;
    for (const i of hits) {
      if (c.phase[i] === p && (best < 0 || c.dur[i] > c.dur[best])) best = i;
    }
    return [best, hits.length];
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
    if (hover !== -1) { hover = -1; schedule(); }
  }
  function onHover(ev) {
    const [px, py] = areaPoint(ev);
    const [i, near] = hitTest(px, py);
    if (i < 0) { hideTooltip(); area.style.cursor = ""; return; }
    area.style.cursor = "pointer";
    if (i !== hover) { hover = i; schedule(); }
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
    selectedSeq = seq;
    root.dataset.selected = String(seq);
    schedule();
    if (model.get("selected") !== seq) { model.set("selected", seq); model.save_changes(); }
  }

  // wheel: zoom the time axis about the pointer; horizontal wheel or shift+wheel pans
  function onWheel(ev) {
    ev.preventDefault();
    hideTooltip();
    let dx = ev.deltaX, dy = ev.deltaY;
    if (ev.deltaMode === 1) { dx *= 16; dy *= 16; } else if (ev.deltaMode === 2) { dx *= vw; dy *= vh; }
    const [px] = areaPoint(ev);
    if (ev.shiftKey || Math.abs(dx) > Math.abs(dy)) { panBy(-(dx || dy), 0); return; }
    zoomAt(Math.exp(-clamp(dy, -200, 200) * 0.004), Math.max(px, labelW));
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

  // ---- model -> view -------------------------------------------------------------------------------------
  function afterData() {
    relayout();
    if (autoFit) fit(); else schedule();
    if (hover >= S.n) hover = -1;
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
    selectedSeq = model.get("selected");
    root.dataset.selected = String(selectedSeq);
    schedule();
  }
  /** The drawing area is as tall as its rows need, at most `height` (beyond it the rows scroll). */
  function onHeight() {
    const most = model.get("height") || 472, rows = L ? L.names.length : 0;
    const want = Math.round(clamp(AXIS_H + rows * ROW_H + 8, 120, most)) + "px";
    if (area.style.height !== want) area.style.height = want;
  }

  // ---- visibility: `visible` is false when scrolled away, collapsed, in a hidden tab or a hidden page -----
  const stopWatching = watchVisibility(model, root, null, (v) => { root.dataset.visible = String(v); });

  // the theme: JupyterLab marks <body> when it switches; read the colours again then
  const themeObs = new MutationObserver(() => { colours = null; if (L) labelW = measureLabels(); schedule(); });
  themeObs.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light", "class"] });

  // The canvas fills the drawing area's inside (clientWidth x clientHeight CSS px). Its backing store should be exactly
  // as many device pixels as the browser gives its box, or the browser scales it: a second observer asks for that
  // size ("device-pixel-content-box", Chromium and Firefox) and paint() uses it; until it answers, or where it is not
  // supported, the CSS size times devicePixelRatio, rounded.
  let devW = 0, devH = 0;
  const ro = new ResizeObserver(() => {
    const w = area.clientWidth, hh = area.clientHeight;
    if (!w || !hh) return;
    const oldPlot = plotW();
    if (w !== vw || hh !== vh) {
      vw = w; vh = hh;
      canvas.style.width = vw + "px";
      canvas.style.height = vh + "px";
      devW = devH = 0;  // (the canvas observer reports the new box's device size)
    }
    dpr = window.devicePixelRatio || 1;
    colours = null;
    readColours();
    if (L) labelW = measureLabels();
    if (autoFit) fit(); else { V.k *= plotW() / oldPlot; schedule(); }
  });
  ro.observe(area);
  const devRo = new ResizeObserver((entries) => {
    const box = entries[entries.length - 1].devicePixelContentBoxSize;
    if (!box || !box[0]) return;
    devW = box[0].inlineSize; devH = box[0].blockSize;
    dpr = window.devicePixelRatio || 1;
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
  function onDpr() { dpr = window.devicePixelRatio || 1; if (L) labelW = measureLabels(); watchDpr(); schedule(); }
  watchDpr();

  area.addEventListener("pointerdown", onPointerDown);
  area.addEventListener("pointermove", onPointerMove);
  area.addEventListener("pointerup", onPointerUp);
  area.addEventListener("pointercancel", () => { drag = null; area.classList.remove("tl-dragging"); });
  area.addEventListener("pointerleave", () => { if (!drag) hideTooltip(); });
  area.addEventListener("wheel", onWheel, { passive: false });
  root.addEventListener("keydown", onKey);

  const handlers = {
    "change:data": onData, "change:tables": onTables, "change:paused": onPaused,
    "change:selected": onSelected, "change:height": onHeight, "msg:custom": onCustom,
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);

  // For tests (and the console): where launch `seq` is drawn, in client px, or null when it is not in view;
  // and the sequence numbers of the launches of kernel `name` (optionally of one phase), oldest first.
  root.tlLaunchPoint = (seq) => {
    const i = seq - S.first;
    if (!L || i < 0 || i >= S.n || !canvas.width) return null;
    const G = geom(), r = L.rowOf[S.c.name[i]], cr = canvas.getBoundingClientRect();
    // the device-pixel columns paint() gives it: a narrow launch the column of its middle, a wide one those it covers
    const f0 = (L.xs[i] - G.tA) * G.k, f1 = f0 + S.c.dur[i] * G.k;
    const c0 = f1 - f0 < 1 ? Math.floor((f0 + f1) / 2) : Math.floor(f0), c1 = f1 - f0 < 1 ? c0 + 1 : Math.ceil(f1);
    const y = AXIS_H + r * ROW_H - V.sy + ROW_H / 2;
    if (c1 <= 0 || c0 >= G.nc || y < AXIS_H || y > vh) return null;
    const mid = (Math.max(c0, 0) + Math.min(c1, G.nc)) / 2;  // (device px from the plot's left edge)
    return [cr.left + (G.left + mid) / dpr, cr.top + y];
  };
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
    disposed = true;
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    if (rafId) cancelAnimationFrame(rafId);
    stopWatching();
    ro.disconnect();
    devRo.disconnect();
    themeObs.disconnect();
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    root.remove();
  };
}

export default { render };

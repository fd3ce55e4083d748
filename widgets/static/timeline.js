// timeline.js: the browser side of KernelTimeline (an anywidget ES module).
//
// Python (widgets/kernel_view.py, through widgets/kernel_widget.py) records every kernel launch as typed
// columns and sends them compactly: a snapshot in the `data` traitlet ({meta, buffers}: one binary buffer per
// column) and, after it, only the new launches as custom "append" messages with the same layout. This file
// keeps the rows in growable typed arrays, lays them out (one row per kernel name, most total time on top;
// x = time within each cell, cells side by side with the idle time between them cut out) and draws them on one
// <canvas> sized by devicePixelRatio. Only what is in view is drawn: each row is searched for the visible time
// range (binary search over its launches sorted by start), and bars narrower than a device pixel are merged
// with their neighbours of the same phase, so a frame costs O(visible launches), never O(all) draw calls.
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
  function schedule() { if (!rafId && !disposed) rafId = requestAnimationFrame(paint); }
  // per-phase rectangle lists, reused between frames: x, y, w, h in device px
  const rects = PHASES.map(() => ({ a: new Float32Array(4096), n: 0 }));
  function pushRect(p, x, y, w, hh) {
    const R = rects[p];
    if (R.n + 4 > R.a.length) { const b = new Float32Array(R.a.length * 2); b.set(R.a); R.a = b; }
    R.a[R.n++] = x; R.a[R.n++] = y; R.a[R.n++] = w; R.a[R.n++] = hh;
  }

  function paint() {
    rafId = 0;
    if (disposed || !vw || !vh) return;
    const t0 = performance.now();
    if (!colours) readColours();
    const W = Math.round(vw * dpr), H = Math.round(vh * dpr);
    if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, W, H);
    if (!L || !S.n) { root.dataset.drawn = "0"; return; }
    const C = colours, c = S.c, xs = L.xs;
    const left = labelW * dpr, right = W - 8 * dpr, top = AXIS_H * dpr, rowH = ROW_H * dpr;
    const k = V.k * dpr;                      // device px per second
    const tA = V.t0, tB = V.t0 + (right - left) / k;
    const firstRow = Math.floor(V.sy / ROW_H), lastRow = Math.min(L.names.length, Math.ceil((V.sy + rowsH()) / ROW_H));
    const yOf = (r) => Math.round(top + r * rowH - V.sy * dpr);

    // row stripes
    ctx.fillStyle = C.stripe;
    for (let r = firstRow; r < lastRow; r++) if (r % 2 === 1) ctx.fillRect(0, yOf(r), W, Math.round(rowH));

    // time grid and axis (time within the compressed axis; labels in ms/µs)
    const step = niceStep(90 * dpr / k);
    ctx.font = `${11 * dpr}px ${C.font}`;
    ctx.textBaseline = "middle";
    ctx.fillStyle = C.grid;
    const j0 = Math.ceil(tA / step), j1 = Math.floor(tB / step);
    for (let j = j0; j <= j1; j++) {
      ctx.fillRect(Math.round(left + (j * step - tA) * k), top, Math.max(1, Math.round(dpr)), H - top);
    }
    ctx.fillStyle = C.fg2;
    ctx.textAlign = "center";
    for (let j = j0; j <= j1; j++) {
      const x = left + (j * step - tA) * k;
      if (x > left + 20 * dpr && x < right - 20 * dpr) ctx.fillText(fmtTick(j, step), x, top - 7 * dpr);
    }

    // bars, clipped to the plot area
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, right - left, H - top);
    ctx.clip();
    for (const R of rects) R.n = 0;
    let drawn = 0, visible = 0;
    const pad = Math.round(BAR_PAD * dpr), barH = Math.max(1, Math.round(rowH) - 2 * pad);
    // Bars at least 1.5 device px wide are drawn as they are; narrower ones fall into the device pixel where they
    // start, and each such pixel is one bar in the colour of the phase with the most time in it. Neighbouring bars
    // of one colour that touch are merged into one rectangle (a run), so a frame issues at most a few rectangles
    // per pixel column and row, however many launches are in view.
    const acc = new Float64Array(4);
    let runA = 0, runB = 0, runP = -1, bPix = -1, y = 0;
    const endRun = () => { if (runP >= 0) { pushRect(runP, runA, y, runB - runA, barH); drawn++; } runP = -1; };
    const addRun = (p, x0, x1) => {
      if (p === runP && x0 <= runB) { if (x1 > runB) runB = x1; return; }
      endRun();
      runA = x0; runB = x1; runP = p;
    };
    const endPixel = () => {
      if (bPix < 0) return;
      let p = 0;
      for (let q = 1; q < 4; q++) if (acc[q] > acc[p]) p = q;
      acc[0] = acc[1] = acc[2] = acc[3] = 0;
      addRun(p, bPix, bPix + 1);
      bPix = -1;
    };
    for (let r = firstRow; r < lastRow; r++) {
      y = yOf(r) + pad;
      const a = L.rowStart[r], b = L.rowStart[r + 1];
      // first launch that may reach into view: start >= tA - the row's longest launch
      let lo = a, hi = b;
      const from = tA - L.maxDur[r];
      while (lo < hi) { const m = (lo + hi) >> 1; if (xs[L.idx[m]] < from) lo = m + 1; else hi = m; }
      for (let q = lo; q < b; q++) {
        const i = L.idx[q], x = xs[i];
        if (x > tB) break;
        const d = c.dur[i];
        if (x + d < tA) continue;
        visible++;
        const f0 = left + (x - tA) * k, f1 = f0 + d * k;
        if (f1 - f0 >= 1.5) {
          endPixel();
          const x0 = Math.round(f0);
          addRun(c.phase[i], x0, Math.max(x0 + 1, Math.round(f1)));
        } else {
          const px = Math.floor(f0);
          if (px !== bPix) { endPixel(); bPix = px; }
          acc[c.phase[i]] += d + 1e-12;  // (zero-length launches count too)
        }
      }
      endPixel();
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
    // cell boundaries: a dashed line and the cell's label at the top
    ctx.strokeStyle = C.cellLine;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    ctx.setLineDash([3 * dpr, 3 * dpr]);
    ctx.beginPath();
    for (const cx of L.cellX) {
      if (cx.x0 === 0) continue;
      const x = Math.round(left + (cx.x0 - tA) * k) + 0.5;
      if (x >= left && x <= right) { ctx.moveTo(x, top); ctx.lineTo(x, H); }
    }
    ctx.stroke();
    ctx.setLineDash([]);
    // the selected and hovered launches: an outline around the bar (at least 3 px wide so it is seen)
    for (const [i, style, lw] of [[hover, C.fg2, 1], [selectedSeq - S.first, C.sel, 2]]) {
      if (i < 0 || i >= S.n) continue;
      const r = L.rowOf[c.name[i]];
      if (r < firstRow || r >= lastRow) continue;
      const x0 = left + (xs[i] - tA) * k, x1 = Math.max(x0 + 3 * dpr, left + (xs[i] + c.dur[i] - tA) * k);
      ctx.strokeStyle = style;
      ctx.lineWidth = lw * dpr;
      ctx.strokeRect(Math.round(x0) - lw * dpr / 2, yOf(r) + pad - lw * dpr / 2 - dpr, Math.round(x1 - x0) + lw * dpr,
                     barH + lw * dpr + 2 * dpr);
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
      const track = H - top, th = Math.max(20 * dpr, track * rowsH() / (L.names.length * ROW_H));
      ctx.fillStyle = C.grid;
      ctx.fillRect(W - 5 * dpr, top + (track - th) * (V.sy / maxSy), 3 * dpr, th);
    }
    root.dataset.zoom = String(+(V.k / fitK()).toPrecision(6));  // 1 = fit
    root.dataset.drawn = String(drawn);
    root.dataset.inview = String(visible);
    frameMs = performance.now() - t0;
    root.dataset.paintMs = frameMs.toFixed(2);
  }

  // ---- hover and click -----------------------------------------------------------------------------------
  function areaPoint(ev) {
    const r = area.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }
  /** The launch (row index) under CSS point (px, py): the nearest bar within 3 px in that kernel's row. */
  function hitTest(px, py) {
    if (!L || px < labelW || py < AXIS_H) return [-1, 0];
    const r = Math.floor((py - AXIS_H + V.sy) / ROW_H);
    if (r < 0 || r >= L.names.length) return [-1, 0];
    const t = V.t0 + (px - labelW) / V.k, tol = 3 / V.k;
    const a = L.rowStart[r], b = L.rowStart[r + 1], xs = L.xs, dur = S.c.dur;
    let lo = a, hi = b;
    const from = t - tol - L.maxDur[r];
    while (lo < hi) { const m = (lo + hi) >> 1; if (xs[L.idx[m]] < from) lo = m + 1; else hi = m; }
    let best = -1, bestD = Infinity, near = 0;
    for (let q = lo; q < b; q++) {
      const i = L.idx[q], x = xs[i];
      if (x > t + tol) break;
      const d = t < x ? x - t : t > x + dur[i] ? t - x - dur[i] : 0;
      if (d <= tol) { near++; if (d < bestD || (d === bestD && dur[i] > dur[best])) { bestD = d; best = i; } }
    }
    return [best, near];
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
    const ar = area.getBoundingClientRect(), rr = root.getBoundingClientRect();
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

  const ro = new ResizeObserver(() => {
    const r = area.getBoundingClientRect();
    const newDpr = window.devicePixelRatio || 1;
    if (!r.width || !r.height) return;
    const oldPlot = plotW();
    vw = r.width; vh = r.height; dpr = newDpr;
    canvas.style.width = vw + "px";
    canvas.style.height = vh + "px";
    colours = null;
    readColours();
    if (L) labelW = measureLabels();
    if (autoFit) fit(); else { V.k *= plotW() / oldPlot; schedule(); }
  });
  ro.observe(area);
  // devicePixelRatio changes (browser zoom, another screen) without a resize of the element in CSS px
  let dprQuery = null;
  function watchDpr() {
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    dprQuery = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    dprQuery.addEventListener("change", onDpr);
  }
  function onDpr() { dpr = window.devicePixelRatio || 1; watchDpr(); schedule(); }
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
    if (!L || i < 0 || i >= S.n) return null;
    const r = L.rowOf[S.c.name[i]], ar = area.getBoundingClientRect();
    const x0 = labelW + (L.xs[i] - V.t0) * V.k, x1 = x0 + Math.max(S.c.dur[i] * V.k, 1);
    const y = AXIS_H + r * ROW_H - V.sy + ROW_H / 2;
    if (x1 < labelW || x0 > labelW + plotW() || y < AXIS_H || y > vh) return null;
    return [ar.left + clamp((x0 + x1) / 2, labelW + 1, labelW + plotW() - 1), ar.top + y];
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
    themeObs.disconnect();
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    root.remove();
  };
}

export default { render };

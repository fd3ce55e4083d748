// timeline_paint.js -- KernelTimeline's canvas: the time axis, the rows and their bars, and which launch is
// painted where (the hit test). One of the parts of the timeline's ES module (see timeline_store.js).
//
// Everything is drawn on one <canvas> whose backing store has one pixel per device pixel. Only what is in view is
// drawn: each row is searched for the visible time range (binary search over its launches sorted by start), and its
// launches are binned per device-pixel column, each column painted in the one legend colour of the phase with the
// most time in it (see "painting" below), so a frame costs O(visible launches + pixel columns), never O(all) draw
// calls, and no column shows a blend of two phases' colours however narrow the bars.

const ROW_H = 18;         // CSS px per kernel row
const AXIS_H = 24;        // CSS px of the time axis above the rows
const BAR_PAD = 3;        // CSS px between a bar and its row's edges
const NARROW_EPS = 1e-9;  // px added to a narrow launch's width: zero-length launches count too

/** A "nice" tick step (1, 2 or 5 times a power of ten) near `raw`. */
function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw)), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}
/** Tick `j * step` (seconds) in the unit of the step, with just the decimals the step needs: "1.5 ms". A step of a
 *  tenth of a unit or more already counts in that unit ("7.5 ms", not "7500 µs"). */
function fmtTick(j, step) {
  const [u, name] = step >= 0.1 ? [1, "s"] : step >= 1e-4 ? [1e-3, "ms"] : step >= 1e-7 ? [1e-6, "µs"] : [1e-9, "ns"];
  const digits = Math.max(0, -Math.floor(Math.log10(step / u) + 1e-9));
  return (j * step / u).toFixed(digits) + " " + name;
}

/**
 * The painter of one timeline. `view` is the state the parts share (timeline.js makes it): the DOM (`root`,
 * `canvas`, `ctx`), the launches `S` (a Store), their layout `L` (layoutRows), the time axis `V` (world time t, in
 * compressed seconds, is at CSS px x = labelW + (t - V.t0) * V.k; `V.sy` scrolls the rows), the drawing area's CSS
 * size `vw` x `vh`, `dpr`, the canvas's device-pixel size `devW` x `devH` where the browser reports it, the row-label
 * gutter `labelW`, the theme's `colours`, the `hover`ed row index and the `selectedSeq`uence number.
 */
function timelinePainter(view) {
  const { root, canvas, ctx, S, V } = view;
  let rafId = 0;
  let frameMs = 0;

  const plotW = () => Math.max(view.vw - view.labelW - 8, 10);
  const rowsH = () => Math.max(view.vh - AXIS_H, ROW_H);
  /** The zoom (px per second) that shows every launch, with 1% of margin each side. */
  const fitK = () => plotW() / ((view.L ? view.L.total : 1) * 1.02);

  // ---- colours and fonts from the theme ---------------------------------------------------------------
  function readColours() {
    const cs = getComputedStyle(root);
    const v = (name, fb) => (cs.getPropertyValue(name) || "").trim() || fb;
    view.colours = {
      phase: PHASES.map((p) => v("--tl-phase-" + p, "#888")),
      fg: v("--tl-fg", "#333"), fg2: v("--tl-fg2", "#666"), fg3: v("--tl-fg3", "#999"),
      grid: v("--tl-grid", "rgba(128,128,128,0.25)"), stripe: v("--tl-stripe", "rgba(128,128,128,0.06)"),
      bg: v("--tl-bg", "transparent"), sel: v("--tl-sel", "#000"), cellLine: v("--tl-cell-line", "#888"),
      font: cs.fontFamily || "system-ui, sans-serif",
    };
  }
  /** The row-label gutter's width (CSS px) the kernel names need. */
  function measureLabels() {
    const L = view.L;
    if (!L) return 120;
    if (!view.colours) readColours();
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.font = `12px ${view.colours.font}`;
    let w = 40;
    for (const k of L.names) w = Math.max(w, ctx.measureText(S.strs[k]).width);
    ctx.restore();
    return Math.ceil(Math.min(w, 220) + 16);
  }
  /** `text` cut with an ellipsis to fit `maxW` px in the canvas's current font. */
  function fitLabel(text, maxW) {
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
  // column shows exactly one legend colour (with 100,000 launches most bars are narrower than a pixel, and
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
  // canvas itself is shown at its device-pixel size (the ResizeObserver in timeline.js) and with `image-rendering:
  // pixelated` (timeline.css): where the page puts it at a fractional device-pixel offset, or for the moment its
  // backing store lags a change of devicePixelRatio, the browser then shows whole pixels, never blends them.
  function schedule() { if (!rafId && !view.disposed) rafId = requestAnimationFrame(paint); }
  function cancel() { if (rafId) cancelAnimationFrame(rafId); }
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
    const W = canvas.width, H = canvas.height, dpr = view.dpr;
    const left = Math.round(view.labelW * dpr), right = Math.max(left + 1, Math.round(W - 8 * dpr));
    return { W, H, left, right, nc: right - left, top: Math.round(AXIS_H * dpr), rowH: ROW_H * dpr, k: V.k * dpr,
             tA: V.t0 };
  }
  /** Row r's first launch (index into L.idx) that may reach time t or later: start >= t - the row's longest. */
  function firstFrom(r, t) {
    const L = view.L, xs = L.xs, idx = L.idx;
    let lo = L.rowStart[r], hi = L.rowStart[r + 1];
    const from = t - L.maxDur[r];
    while (lo < hi) { const m = (lo + hi) >> 1; if (xs[idx[m]] < from) lo = m + 1; else hi = m; }
    return lo;
  }

  function paint() {
    rafId = 0;
    const { vw, vh, dpr, devW, devH } = view;
    if (view.disposed || !vw || !vh) return;
    const started = performance.now();
    if (!view.colours) readColours();
    // the backing store: the canvas's exact size in device pixels where the browser reports it (devW, devH: see the
    // ResizeObserver), else the CSS size times devicePixelRatio. (A report more than a pixel away from that is not
    // believed: Chromium's emulated device scale factors, as in its headless tests, report the unscaled size.)
    let cw = Math.round(vw * dpr), ch = Math.round(vh * dpr);
    if (devW && Math.abs(devW - vw * dpr) <= 1 && Math.abs(devH - vh * dpr) <= 1) { cw = devW; ch = devH; }
    if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.imageSmoothingEnabled = false;  // (nothing is scaled here; said anyway, in case an image is ever drawn)
    ctx.clearRect(0, 0, cw, ch);
    const L = view.L;
    if (!L || !S.n) { root.dataset.drawn = "0"; return; }
    const C = view.colours, c = S.c, xs = L.xs;
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
    for (const [i, style, lw] of [[view.hover, C.fg2, lineW], [view.selectedSeq - S.first, C.sel, 2 * lineW]]) {
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
      ctx.fillText(fitLabel(S.strs[L.names[r]], left - 14 * dpr), left - 8 * dpr, yOf(r) + rowH / 2);
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

  // ---- what is painted where -------------------------------------------------------------------------------
  /** The launch (row index) under CSS point (px, py), and how many launches share its pixel column: in that
   *  kernel's row, the device-pixel column under the pointer, or the nearest painted one within 3 CSS px, and in it
   *  the launch that paint() drew it for (columnHit). [-1, 0] if none. */
  function hitTest(px, py) {
    const L = view.L;
    if (!L || !S.n || py < AXIS_H) return [-1, 0];
    const r = Math.floor((py - AXIS_H + V.sy) / ROW_H);
    if (r < 0 || r >= L.names.length) return [-1, 0];
    const G = geom(), dpr = view.dpr;
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
    const L = view.L;
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
  /** Where launch `seq` is drawn, in client px, or null when it is not in view (for tests: root.tlLaunchPoint). */
  function launchPoint(seq) {
    const L = view.L, i = seq - S.first;
    if (!L || i < 0 || i >= S.n || !canvas.width) return null;
    const G = geom(), r = L.rowOf[S.c.name[i]], cr = canvas.getBoundingClientRect();
    // the device-pixel columns paint() gives it: a narrow launch the column of its middle, a wide one those it covers
    const f0 = (L.xs[i] - G.tA) * G.k, f1 = f0 + S.c.dur[i] * G.k;
    const c0 = f1 - f0 < 1 ? Math.floor((f0 + f1) / 2) : Math.floor(f0), c1 = f1 - f0 < 1 ? c0 + 1 : Math.ceil(f1);
    const y = AXIS_H + r * ROW_H - V.sy + ROW_H / 2;
    if (c1 <= 0 || c0 >= G.nc || y < AXIS_H || y > view.vh) return null;
    const mid = (Math.max(c0, 0) + Math.min(c1, G.nc)) / 2;  // (device px from the plot's left edge)
    return [cr.left + (G.left + mid) / view.dpr, cr.top + y];
  }

  return { schedule, cancel, readColours, measureLabels, plotW, rowsH, fitK, hitTest, launchPoint };
}

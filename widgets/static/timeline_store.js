// timeline_store.js -- the launches KernelTimeline draws, and where each goes on the time axis and in the rows.
// One of the parts of the timeline's ES module (widgets/kernel_widget.py puts common.js, this file,
// timeline_paint.js, timeline_interact.js and timeline.js together, in that order: see widgets/_static.py).
//
// Python (widgets/kernel_model.py) sends the launches as typed columns: a snapshot in the `data` traitlet
// ({meta, buffers}: one binary buffer per column) and, after it, only the new launches as custom "append" messages
// with the same layout. The Store keeps the rows in growable typed arrays; layoutRows() lays them out: one row per
// kernel name, most total time on top; x = time within each cell, cells side by side with the idle time between them
// cut out. No DOM here.

const PHASES = ["forward", "backward", "optimizer", "transfer"];
const COLS = ["start", "dur", "name", "dev", "shape", "node", "cell", "phase", "nbytes"];
const NODE_COLS = ["node_op", "node_line"];
const TYPED = { d: Float64Array, f: Float32Array, I: Uint32Array, i: Int32Array, H: Uint16Array, B: Uint8Array };

/** A DataView from ipywidgets as a typed array of `code` (copied: the view's offset may be unaligned). */
function typed(dv, code) {
  const T = TYPED[code];
  if (!dv) return new T(0);
  const bytes = dv instanceof ArrayBuffer ? new Uint8Array(dv) : new Uint8Array(dv.buffer, dv.byteOffset, dv.byteLength);
  return new T(bytes.slice().buffer);
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
  /** How many of the kept launches are in each phase (in PHASES order). */
  phaseCounts() {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < this.n; i++) counts[this.c.phase[i]]++;
    return counts;
  }
}

// -- the layout ------------------------------------------------------------------------------------------------
/** The store's rows (kernel names by total time), compressed x per launch, per-row launch lists sorted by x:
 *  `{ xs, names, rowOf, rowStart, idx, maxDur, total, cellX, totals }` (timeline.js keeps it as `view.L`). */
function layoutRows(S) {
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
  // cells side by side in order, a small gap between them: idle time between cells is cut out (and within a cell
  // after a long idle stretch: Python files the launches after it as a new, unlabelled part of the cell). The gaps
  // together take at most a fifth of the axis, however many there are
  let span = 0, used = 0;
  for (let k = 0; k < nCells; k++) if (hi[k] > lo[k] || hi[k] === lo[k]) { span += Math.max(hi[k] - lo[k], 0); used++; }
  const gap = used > 1 ? Math.max(span * Math.min(0.02, 0.2 / used), 1e-6) : 0;
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
  return { xs, names, rowOf, rowStart, idx, maxDur, total, cellX, totals };
}

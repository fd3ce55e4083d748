// launch.js -- the browser half of LaunchView (widgets/launch_view.py): one traced kernel launch on cuda-emu.
// Python computes the payload (widgets/launch_model.py); this file only draws it on canvases, answers hovers from
// what it holds (an output element) or by asking Python (a thread, a block), and steps through barrier phases.
// Canvases are sized in device pixels (crisp at any zoom and pixel density) and drawn again when the theme, the
// width or the pixel ratio changes. Contract: static/CONTRACT.md, section "LaunchWidget".

const LANES = 32;

/** A colour for owner `id` (block, warp or thread index): golden-angle hues, so neighbours differ. */
function ownerColour(id, dark) {
  if (id < 0) return null;
  const hue = (id * 137.508) % 360;
  const light = dark ? 60 + (id % 3) * 6 : 44 + (id % 3) * 7;
  return `hsl(${hue.toFixed(1)}, ${dark ? 55 : 62}%, ${light}%)`;
}

/** A typed array view of a buffer that arrived as a DataView (copied: its offset may be unaligned). */
function typed(dv, Type) {
  if (!dv) return new Type(0);
  const buf = dv.buffer.slice(dv.byteOffset, dv.byteOffset + dv.byteLength);
  return new Type(buf);
}

/** A canvas whose backing store is `w` x `h` CSS px times the device pixel ratio; returns its 2-D context scaled
 *  to CSS px. */
function sizeCanvas(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = w + "px";
  canvas.style.height = h + "px";
  canvas.width = Math.max(1, Math.round(w * dpr));
  canvas.height = Math.max(1, Math.round(h * dpr));
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.imageSmoothingEnabled = false;
  return ctx;
}

function render({ model, el }) {
  const root = h("div", "tl-launch");
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "one kernel launch: its blocks, threads, outputs, barrier phases and memory accesses");
  root.tabIndex = 0;

  // ---- toolbar ---------------------------------------------------------------------------------------
  const toolbar = h("div", "tl-toolbar");
  const launchSel = h("select", "tl-la-launch");
  launchSel.setAttribute("aria-label", "Launch");
  const outSel = h("select", "tl-la-output");
  outSel.setAttribute("aria-label", "Output shown");
  const colourBox = h("div", "tl-la-colour");
  colourBox.setAttribute("role", "radiogroup");
  colourBox.setAttribute("aria-label", "Colour elements by");
  colourBox.append(h("span", "tl-la-muted", "colour by"));
  const colourBtns = {};
  for (const by of ["block", "warp", "thread"]) {
    const b = button(by, null, () => { model.send({ type: "color", by }); }, `Colour each element by the ${by} that wrote it`);
    b.setAttribute("role", "radio");
    b.dataset.by = by;
    colourBtns[by] = b;
    colourBox.append(b);
  }
  const closeBtn = button("Close", null, () => model.send({ type: "close" }), "Close this view and free the trace it holds");
  closeBtn.classList.add("tl-la-close");
  toolbar.append(launchSel, outSel, colourBox, h("div", "tl-spacer"), closeBtn);
  launchSel.addEventListener("change", () => model.send({ type: "launch", index: Number(launchSel.value) }));
  outSel.addEventListener("change", () => model.send({ type: "output", name: outSel.value }));

  const header = h("div", "tl-la-header");
  const raceEl = h("div", "tl-la-race");
  raceEl.setAttribute("role", "alert");
  const notesEl = h("div", "tl-notes");

  // ---- panels ---------------------------------------------------------------------------------------
  function panel(cls, title, hint) {
    const p = h("section", "tl-la-panel " + cls);
    const t = h("div", "tl-la-title", title);
    const sub = h("div", "tl-la-sub", hint);
    p.append(t, sub);
    return p;
  }
  const outPanel = panel("tl-la-out", "Who wrote each element", "");
  const outCanvas = h("canvas", "tl-la-outcanvas");
  outCanvas.setAttribute("aria-label", "the output's elements, coloured by the block, warp or thread that wrote them");
  const outLegend = h("div", "tl-la-legend");
  outPanel.append(outCanvas, outLegend);

  const structPanel = panel("tl-la-struct", "Blocks and threads", "hover a block or a thread; click a block to show its threads");
  const blockCanvas = h("canvas", "tl-la-blocks");
  blockCanvas.setAttribute("aria-label", "the grid of blocks");
  const threadTitle = h("div", "tl-la-sub");
  const threadCanvas = h("canvas", "tl-la-threads");
  threadCanvas.setAttribute("aria-label", "the threads of one block: one row per warp, one column per lane");
  structPanel.append(blockCanvas, threadTitle, threadCanvas);

  const barPanel = panel("tl-la-bar", "Barrier phases (shared memory)", "");
  const barTools = h("div", "tl-la-bartools");
  const backBtn = button("◀ Back", "Back", () => stepTo(phase - 1), "The previous phase (ArrowLeft)");
  backBtn.classList.add("tl-la-back");
  const stepBtn = button("Step ▶", "Step", () => stepTo(phase + 1), "The next phase: up to the next __syncthreads() (ArrowRight)");
  stepBtn.classList.add("tl-la-step");
  const phaseEl = h("span", "tl-la-phase");
  phaseEl.setAttribute("aria-live", "polite");
  barTools.append(backBtn, stepBtn, phaseEl);
  const sharedCanvas = h("canvas", "tl-la-shared");
  sharedCanvas.setAttribute("aria-label", "shared memory: 32 columns, one per bank; each cell a 4-byte word");
  const barLegend = h("div", "tl-la-legend");
  barPanel.append(barTools, sharedCanvas, barLegend);

  const memPanel = panel("tl-la-mem", "Memory accesses, per line of the kernel", "");
  const memTable = h("div", "tl-la-memtable");
  memPanel.append(memTable);

  const panels = h("div", "tl-la-panels");
  panels.append(outPanel, structPanel, barPanel, memPanel);
  const tooltip = h("div", "tl-tooltip");
  tooltip.hidden = true;
  root.append(toolbar, header, raceEl, notesEl, panels, tooltip);
  el.append(root);

  // ---- state ---------------------------------------------------------------------------------------------
  let P = null;            // the payload
  let owners = new Uint32Array(0), writers = new Int16Array(0), reads = new Uint16Array(0);
  let phase = 0;
  let selBlock = 0;        // the block whose threads are drawn
  let highlight = null;    // {name, set: Set of elements} written by the hovered thread
  let hoverTimer = 0, lastAsk = "";
  let dark = false;
  let geo = {};            // geometry of the last drawing, for hit tests

  const NONE = 0xFFFFFFFF;
  function ownerOf(gid, by) {
    if (gid === NONE) return -1;
    const tpb = P.tpb;
    if (by === "thread") return gid;
    const b = Math.floor(gid / tpb);
    if (by === "block") return b;
    return b * P.warps_per_block + Math.floor((gid % tpb) / LANES);
  }

  // ---- drawing --------------------------------------------------------------------------------------------
  /** The drawing width a panel offers (CSS px): its content box, within 200 and 720. */
  function width(panel) { return Math.max(200, Math.min(720, (panel.clientWidth || 720) - 20)); }

  function drawOutput() {
    const o = P.output;
    if (!o) {
      outPanel.querySelector(".tl-la-sub").textContent = "no thread wrote any pointer argument";
      sizeCanvas(outCanvas, 1, 1);
      return;
    }
    const w = width(outPanel);
    const cell = Math.max(1, Math.min(16, Math.floor(w / o.cols)));
    const cw = cell * o.cols, ch = cell * o.rows;
    const ctx = sizeCanvas(outCanvas, cw, ch);
    const by = P.color_by;
    const palette = new Map();
    for (let i = 0; i < o.shown; i++) {
      const id = ownerOf(owners[i], by);
      let c = palette.get(id);
      if (c === undefined) { c = ownerColour(id, dark); palette.set(id, c); }
      const x = (i % o.cols) * cell, y = Math.floor(i / o.cols) * cell;
      if (c === null) {
        ctx.fillStyle = dark ? "rgba(255,255,255,0.08)" : "rgba(0,0,0,0.06)";
        ctx.fillRect(x, y, cell, cell);
      } else {
        ctx.fillStyle = c;
        ctx.fillRect(x, y, cell, cell);
      }
    }
    if (cell >= 6) {  // cell borders, so single elements read as cells
      ctx.strokeStyle = dark ? "rgba(0,0,0,0.35)" : "rgba(255,255,255,0.55)";
      ctx.lineWidth = 1 / (window.devicePixelRatio || 1);
      ctx.beginPath();
      for (let c = 0; c <= o.cols; c++) { ctx.moveTo(c * cell, 0); ctx.lineTo(c * cell, ch); }
      for (let r = 0; r <= o.rows; r++) { ctx.moveTo(0, r * cell); ctx.lineTo(cw, r * cell); }
      ctx.stroke();
    }
    if (highlight && highlight.name === o.name) {
      ctx.strokeStyle = getComputedStyle(root).getPropertyValue("--tl-fg0") || "#000";
      ctx.lineWidth = Math.max(1.5, cell / 5);
      for (const i of highlight.set) {
        if (i >= o.shown) continue;
        ctx.strokeRect((i % o.cols) * cell + 0.5, Math.floor(i / o.cols) * cell + 0.5, cell - 1, cell - 1);
      }
    }
    geo.out = { cell, cols: o.cols, shown: o.shown };
    const shape = "(" + o.shape.join(", ") + ")";
    outPanel.querySelector(".tl-la-sub").textContent =
      `${o.name}: ${o.dtype} ${shape}, ${o.numel.toLocaleString()} elements` +
      (o.shown < o.numel ? `; the first ${o.shown.toLocaleString()} drawn, ${o.cols} to a row` : `, ${o.cols} to a row`) +
      (o.written < o.numel ? `; ${(o.numel - o.written).toLocaleString()} written by no thread (grey)` : "");
    outLegend.replaceChildren(h("span", null, `colour = the ${by} that wrote the element (hover for which)`));
  }

  function drawBlocks() {
    const B = P.blocks;
    const w = width(structPanel);
    const sq = Math.max(3, Math.min(22, Math.floor(w / B.cols)));
    const ctx = sizeCanvas(blockCanvas, sq * B.cols, sq * B.rows);
    for (let i = 0; i < B.squares; i++) {
      const id = P.color_by === "block" ? i * B.per : -1;
      ctx.fillStyle = id >= 0 ? ownerColour(id, dark) : (dark ? "#5a6b7d" : "#8aa0b6");
      const x = (i % B.cols) * sq, y = Math.floor(i / B.cols) * sq;
      ctx.fillRect(x + 0.5, y + 0.5, sq - 1, sq - 1);
      if (Math.floor(selBlock / B.per) === i) {
        ctx.strokeStyle = dark ? "#fff" : "#000";
        ctx.lineWidth = 2;
        ctx.strokeRect(x + 1, y + 1, sq - 2, sq - 2);
      }
    }
    geo.blocks = { sq, cols: B.cols, squares: B.squares, per: B.per };
    structPanel.querySelector(".tl-la-sub").textContent =
      `grid (${P.grid.join(", ")}): ${B.count.toLocaleString()} blocks` + (B.per > 1 ? `, ${B.per} to a square` : "") +
      ` of (${P.block.join(", ")}) = ${P.tpb} threads in ${P.warps_per_block} warps; hover for details, click to choose`;
    drawThreads();
  }

  function drawThreads() {
    const warps = P.warps_per_block;
    const w = width(structPanel);
    const cell = Math.max(4, Math.min(18, Math.floor((w - 40) / LANES)));
    const ctx = sizeCanvas(threadCanvas, 40 + cell * LANES, cell * warps + 14);
    ctx.font = "10px " + getComputedStyle(root).fontFamily;
    const fg = getComputedStyle(root).color;
    ctx.textBaseline = "middle";
    for (let wp = 0; wp < warps; wp++) {
      ctx.fillStyle = fg;
      if (cell >= 10 || wp % 4 === 0) ctx.fillText(`warp ${wp}`, 0, 14 + wp * cell + cell / 2);
      for (let l = 0; l < LANES; l++) {
        const t = wp * LANES + l;
        if (t >= P.tpb) break;
        const gid = selBlock * P.tpb + t;
        ctx.fillStyle = ownerColour(ownerOf(gid, P.color_by), dark);
        ctx.fillRect(40 + l * cell + 0.5, 14 + wp * cell + 0.5, cell - 1, cell - 1);
      }
    }
    ctx.fillStyle = fg;
    for (let l = 0; l < LANES; l += 8) ctx.fillText(`lane ${l}`, 40 + l * cell, 6);
    geo.threads = { cell, warps };
    threadTitle.textContent = `threads of block ${selBlock.toLocaleString()}` +
      ` (blockIdx ${blockIdx(selBlock)}): one row per warp of 32 lanes`;
  }

  function blockIdx(b) {
    const [gx, gy] = P.grid;
    return `(${b % gx}, ${Math.floor(b / gx) % gy}, ${Math.floor(b / (gx * gy))})`;
  }

  function drawShared() {
    const M = P.barrier;
    const words = M.words;
    if (!words) {
      barPanel.querySelector(".tl-la-sub").textContent = "this kernel uses no shared memory";
      barTools.hidden = true;
      sizeCanvas(sharedCanvas, 1, 1);
      barLegend.replaceChildren();
      return;
    }
    barTools.hidden = false;
    const rows = words / LANES;
    const w = width(barPanel);
    const labelW = 84;
    const cell = Math.max(3, Math.min(16, Math.floor((w - labelW) / LANES)));
    const shownRows = Math.min(rows, Math.floor(2400 / cell));
    const ctx = sizeCanvas(sharedCanvas, labelW + cell * LANES, cell * shownRows + 14);
    const font = getComputedStyle(root).fontFamily;
    ctx.font = "10px " + font;
    ctx.textBaseline = "middle";
    const fg = getComputedStyle(root).color;
    ctx.fillStyle = fg;
    for (let b = 0; b < LANES; b += 8) ctx.fillText(`bank ${b}`, labelW + b * cell, 6);
    const base = phase * words;
    const accent = getComputedStyle(root).getPropertyValue("--tl-brand").trim() || "#1976d2";
    for (let r = 0; r < shownRows; r++) {
      for (let b = 0; b < LANES; b++) {
        const wd = r * LANES + b;
        const t = writers[base + wd];
        const x = labelW + b * cell, y = 14 + r * cell;
        if (t >= 0) {
          ctx.fillStyle = ownerColour(P.color_by === "thread" ? t : Math.floor(t / LANES), dark);
          ctx.fillRect(x + 0.5, y + 0.5, cell - 1, cell - 1);
        } else {
          ctx.fillStyle = dark ? "rgba(255,255,255,0.07)" : "rgba(0,0,0,0.05)";
          ctx.fillRect(x + 0.5, y + 0.5, cell - 1, cell - 1);
        }
        if (reads[base + wd] > 0 && cell >= 5) {
          ctx.strokeStyle = accent;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 1.25, y + 1.25, cell - 2.5, cell - 2.5);
        }
      }
    }
    ctx.fillStyle = fg;
    for (const [name, off] of M.layout) {
      const r = Math.floor(off / 4 / LANES);
      if (r < shownRows) ctx.fillText(fitText(name, labelW - 6, "10px " + font), 0, 14 + r * cell + cell / 2);
    }
    geo.shared = { cell, labelW, rows: shownRows };
    const st = P.steps[phase] || {};
    const where = phase === 0 ? "before the first __syncthreads()" :
      (phase === M.phases - 1 ? `after the last __syncthreads() (number ${phase})` :
        `between __syncthreads() number ${phase} and ${phase + 1}`);
    phaseEl.textContent = `phase ${phase + 1} of ${M.phases}: ${where}; ` +
      `${(st.writes || 0).toLocaleString()} shared writes, ${(st.reads || 0).toLocaleString()} shared reads, ` +
      `${(st.global_reads || 0).toLocaleString()} global reads, ${(st.global_writes || 0).toLocaleString()} global writes` +
      (st.lines && st.lines.length ? `; lines ${st.lines.join(", ")}` : "");
    backBtn.disabled = phase <= 0;
    stepBtn.disabled = phase >= M.sent - 1;
    barPanel.querySelector(".tl-la-sub").textContent =
      `block ${blockIdx(P.traced_block)} (the traced block): ${words * 4} bytes of shared memory in rows of 32 banks` +
      (shownRows < rows ? ` (the first ${shownRows} rows drawn)` : "") +
      (M.sent < M.phases ? `; the first ${M.sent} of ${M.phases} phases` : "") +
      (M.truncated ? "; its accesses were too many to record them all" : "");
    barLegend.replaceChildren(
      h("span", null, `fill = written in this phase, by the ${P.color_by === "thread" ? "thread" : "warp"}'s colour`),
      h("span", "tl-la-readkey", "outline = read in this phase"));
  }

  function drawMemory() {
    const table = h("table", "tl-la-table");
    const head = h("tr");
    for (const c of ["line", "access", "of", "verdict", "per warp"]) head.append(h("th", null, c));
    table.append(head);
    for (const r of P.memory) {
      const tr = h("tr", r.bad ? "tl-la-bad" : null);
      tr.dataset.line = r.line;
      tr.append(h("td", "tl-la-line", `${r.file}:${r.line}`), h("td", null, `${r.space} ${r.kind}`),
                h("td", null, r.buffer), h("td", "tl-la-verdict", r.verdict), h("td", null, r.metric));
      const ex = h("tr", "tl-la-explain" + (r.bad ? " tl-la-bad" : ""));
      const td = h("td");
      td.colSpan = 5;
      const code = h("code", null, r.code);
      td.append(code, h("div", null, r.explanation));
      ex.append(td);
      table.append(tr, ex);
    }
    memTable.replaceChildren(table);
    memPanel.querySelector(".tl-la-sub").textContent = P.memory.length ?
      "worst first; every warp instruction counted" : "no memory access was traced";
  }

  function build() {
    P = model.get("payload");
    if (!P || !P.kernel) return;
    dark = isDark(root);
    root.classList.toggle("tl-la-dark", dark);
    owners = typed(P.owners, Uint32Array);
    writers = typed(P.writers, Int16Array);
    reads = typed(P.reads, Uint16Array);
    phase = Math.min(phase, Math.max(0, P.barrier.sent - 1));
    if (selBlock >= P.blocks.count) selBlock = 0;
    launchSel.replaceChildren(...P.launches.map((txt, i) => {
      const o = h("option", null, txt); o.value = String(i); return o;
    }));
    launchSel.value = String(P.index);
    launchSel.hidden = P.launches.length < 2;
    outSel.replaceChildren(...P.outputs.map((n) => { const o = h("option", null, n); o.value = n; return o; }));
    if (P.output) outSel.value = P.output.name;
    outSel.hidden = P.outputs.length < 2;
    for (const [by, b] of Object.entries(colourBtns)) {
      b.setAttribute("aria-checked", String(by === P.color_by));
      b.classList.toggle("tl-on", by === P.color_by);
    }
    header.textContent = `${P.kernel}: grid (${P.grid.join(", ")}) × block (${P.block.join(", ")}) = ` +
      `${P.threads.toLocaleString()} threads; ${P.ms} ms on the emulator (a CPU: says nothing of a GPU's speed)`;
    raceEl.textContent = P.race || "";
    raceEl.hidden = !P.race;
    notesEl.replaceChildren(...P.notes.map((n) => h("div", "tl-note", n)));
    redraw();
  }

  function redraw() {
    if (!P || !P.kernel) return;
    dark = isDark(root);
    root.classList.toggle("tl-la-dark", dark);
    drawOutput();
    drawBlocks();
    drawShared();
    drawMemory();
    root.dataset.phase = String(phase);
    root.dataset.block = String(selBlock);
    root.dataset.colour = P.color_by;
    root.dataset.kernel = P.kernel;
    root.dataset.drawn = String(++drawn);
    if (P.output) { root.dataset.cols = String(P.output.cols); root.dataset.shown = String(P.output.shown); }
  }
  let drawn = 0;

  function stepTo(p) {
    if (!P) return;
    phase = clamp(p, 0, P.barrier.sent - 1);
    drawShared();
    root.dataset.phase = String(phase);
  }

  // ---- hover and click ------------------------------------------------------------------------------
  function showTip(rows, ev) {
    tooltip.replaceChildren(rowsTable(rows));
    tooltip.hidden = false;
    const r = root.getBoundingClientRect();
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 16;
    if (x + tw > r.width) x = Math.max(0, ev.clientX - r.left - tw - 10);
    if (y + th > r.height) y = Math.max(0, ev.clientY - r.top - th - 10);
    tooltip.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px)`;
  }
  function hideTip() { tooltip.hidden = true; }
  function local(ev, canvas) {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }
  function ask(msg, ev) {  // a hover Python answers (details on demand), at most every 60 ms
    const key = JSON.stringify(msg);
    lastEv = ev;
    if (key === lastAsk) return;
    lastAsk = key;
    asked = msg;
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(() => model.send(msg), 60);
  }
  function stopAsking() {  // the pointer left: an answer still on its way is not shown
    clearTimeout(hoverTimer);
    lastEv = null;
    lastAsk = "";
    asked = null;
  }
  let lastEv = null, asked = null;

  outCanvas.addEventListener("pointermove", (ev) => {
    const g = geo.out;
    if (!g) return;
    const [x, y] = local(ev, outCanvas);
    const i = Math.floor(y / g.cell) * g.cols + Math.floor(x / g.cell);
    if (i < 0 || i >= g.shown || x >= g.cell * g.cols) { hideTip(); return; }
    const gid = owners[i];
    const o = P.output;
    const rows = [["element", `${o.name}[${i.toLocaleString()}]`]];
    if (gid === NONE) rows.push(["written by", "no thread"]);
    else {
      const b = Math.floor(gid / P.tpb), t = gid % P.tpb;
      rows.push(["blockIdx", blockIdx(b)], ["thread", `${t} (warp ${Math.floor(t / LANES)}, lane ${t % LANES})`]);
    }
    showTip(rows, ev);
  });
  outCanvas.addEventListener("pointerleave", hideTip);

  blockCanvas.addEventListener("pointermove", (ev) => {
    const g = geo.blocks;
    if (!g) return;
    const [x, y] = local(ev, blockCanvas);
    const i = Math.floor(y / g.sq) * g.cols + Math.floor(x / g.sq);
    if (i < 0 || i >= g.squares || x >= g.sq * g.cols) { hideTip(); return; }
    showTip([["block", `${(i * g.per).toLocaleString()}` + (g.per > 1 ? ` to ${((i + 1) * g.per - 1).toLocaleString()}` : "")]], ev);
    ask({ type: "hover_block", square: i }, ev);
  });
  blockCanvas.addEventListener("pointerleave", () => { hideTip(); stopAsking(); });
  blockCanvas.addEventListener("click", (ev) => {
    const g = geo.blocks;
    const [x, y] = local(ev, blockCanvas);
    const i = Math.floor(y / g.sq) * g.cols + Math.floor(x / g.sq);
    if (i < 0 || i >= g.squares) return;
    selBlock = i * g.per;
    drawBlocks();
    root.dataset.block = String(selBlock);
  });

  threadCanvas.addEventListener("pointermove", (ev) => {
    const g = geo.threads;
    if (!g) return;
    const [x, y] = local(ev, threadCanvas);
    const lane = Math.floor((x - 40) / g.cell), wp = Math.floor((y - 14) / g.cell);
    const t = wp * LANES + lane;
    if (x < 40 || lane >= LANES || wp < 0 || wp >= g.warps || t >= P.tpb) { hideTip(); return; }
    showTip([["thread", `${t} (warp ${wp}, lane ${lane})`], ["block", String(selBlock)]], ev);
    ask({ type: "hover_thread", block: selBlock, thread: t }, ev);
  });
  threadCanvas.addEventListener("pointerleave", () => {
    hideTip();
    stopAsking();
    if (highlight) { highlight = null; drawOutput(); }
  });

  sharedCanvas.addEventListener("pointermove", (ev) => {
    const g = geo.shared;
    if (!g || !P.barrier.words) return;
    const [x, y] = local(ev, sharedCanvas);
    const bank = Math.floor((x - g.labelW) / g.cell), row = Math.floor((y - 14) / g.cell);
    if (x < g.labelW || bank >= LANES || row < 0 || row >= g.rows) { hideTip(); return; }
    const wd = row * LANES + bank;
    let v = null;
    for (const [name, off, nb] of P.barrier.layout) if (wd * 4 >= off && wd * 4 < off + nb) v = [name, (wd * 4 - off) / 4];
    const t = writers[phase * P.barrier.words + wd];
    showTip([["word", `${wd} (byte ${wd * 4}), bank ${bank}`], ["variable", v ? `${v[0]}, word ${v[1]}` : "(padding)"],
             ["written by", t >= 0 ? `thread ${t} (warp ${Math.floor(t / LANES)})` : "no thread in this phase"],
             ["read", `${reads[phase * P.barrier.words + wd]} times in this phase`]], ev);
  });
  sharedCanvas.addEventListener("pointerleave", hideTip);

  // keyboard: arrows step through the phases while the view has focus
  root.addEventListener("keydown", (ev) => {
    if (ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowRight") { stepTo(phase + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { stepTo(phase - 1); ev.preventDefault(); }
  });

  // answers from Python: a hovered thread's or block's details
  function onMsg(msg) {
    if (!msg || typeof msg !== "object" || !asked || !lastEv) return;
    // (only the answer to what is hovered now: a late answer for a thread or block left behind is dropped)
    const current = msg.type === "thread_info"
      ? asked.type === "hover_thread" && asked.block === msg.block && asked.thread === msg.thread
      : msg.type === "block_info" && asked.type === "hover_block" && asked.square === msg.square;
    if (current) {
      showTip(msg.rows, lastEv);
      if (msg.type === "thread_info" && P.output) {
        const els = msg.elements[P.output.name] || [];
        highlight = { name: P.output.name, set: new Set(els) };
        drawOutput();
      }
    }
  }
  model.on("msg:custom", onMsg);

  // ---- redraw on width, pixel ratio and theme changes ---------------------------------------------
  const stopRedrawing = watchRedraw(root, panels, redraw, () => dark);

  const stopWatching = watchVisibility(model, root, () => root.isConnected);
  model.on("change:payload", build);
  build();
  return () => {
    model.off("change:payload", build);
    model.off("msg:custom", onMsg);
    stopRedrawing();
    clearTimeout(hoverTimer);
    stopWatching();
  };
}

export default { render };

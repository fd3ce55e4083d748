// memory.js -- the browser half of MemoryTimelineView (widgets/memory_view.py): bytes alive over a span of code,
// stacked by what they are for, on a canvas. Python computes the payload (widgets/memory_model.py); this file draws
// it (phases shaded behind, the peak marked), answers a hover from what it holds (bytes per category at that
// event) and asks Python for the storages alive there (details on demand); a click on one selects its graph node
// in an open GraphView. Canvases are sized in device pixels and drawn again on width, pixel-ratio and theme changes.
// Contract: static/CONTRACT.md, section "MemoryWidget".

// one colour per category, in CATEGORIES order (light theme; the dark theme lightens them)
const CATEGORY_RGB = {
  "parameters": [76, 120, 168], "optimizer state": [84, 162, 75], "gradients": [228, 87, 86],
  "saved for backward": [245, 133, 24], "outputs": [178, 121, 162], "temporaries": [157, 117, 93],
  "inputs and data": [114, 183, 178], "host copies": [237, 201, 72], "pool cache (free)": [186, 176, 172],
};
const PHASE_RGB = { forward: [76, 120, 168], backward: [245, 133, 24], optimizer: [84, 162, 75] };

function rgb(c, a, dark) {
  const k = dark ? 0.25 : 0;  // (lighter on a dark page)
  const v = c.map((x) => Math.round(x + (255 - x) * k));
  return a == null ? `rgb(${v[0]}, ${v[1]}, ${v[2]})` : `rgba(${v[0]}, ${v[1]}, ${v[2]}, ${a})`;
}

function fmtBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let u = 0;
  while (Math.abs(n) >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return u === 0 ? `${Math.round(n)} B` : `${n.toFixed(n >= 100 ? 0 : 1)} ${units[u]}`;
}

/** Round tick steps for an axis up to `max` bytes. */
function byteTicks(max) {
  if (max <= 0) return [0];
  const raw = max / 4;
  const p = Math.pow(2, Math.floor(Math.log2(raw)));
  const step = [1, 2, 4, 8].map((m) => m * p).find((s) => s >= raw) || p * 8;
  const out = [];
  for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
  return out;
}

function render({ model, el }) {
  const root = h("div", "tl-memory");
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "memory timeline: bytes alive over time, by what they are for");
  root.tabIndex = 0;
  const toolbar = h("div", "tl-toolbar");
  const pauseBtn = button("Pause", null, () => { model.set("paused", !model.get("paused")); model.save_changes(); },
                          "Stop (or resume) live updates of this view");
  pauseBtn.classList.add("tl-me-pause");
  const closeBtn = button("Close", null, () => model.send({ type: "close" }), "Close this view and free what it holds");
  closeBtn.classList.add("tl-me-close");
  const legend = h("div", "tl-me-legend");
  // the device drawn, when the recording has more than one (the host's memory holds the device tensors' host copies)
  const deviceSel = h("select", "tl-me-device");
  deviceSel.setAttribute("aria-label", "Device drawn");
  deviceSel.title = "The device whose memory is drawn (cpu: the host, with the host copies of device tensors)";
  deviceSel.addEventListener("change", () => model.send({ type: "device", device: deviceSel.value }));
  toolbar.append(legend, h("div", "tl-spacer"), deviceSel, pauseBtn, closeBtn);
  const runsEl = h("div", "tl-me-runs");
  const tooltip = h("div", "tl-tooltip");
  tooltip.hidden = true;
  root.append(toolbar, runsEl, tooltip);
  el.append(root);

  let P = null, dark = false, drawn = 0;
  let panels = [];   // per run: {run, canvas, geo, details, pinned, shown}
  const pins = new Map();  // run index -> the event clicked (kept across payloads: a live view redraws often)
  let hoverTimer = 0, asked = null, lastEv = null;

  function build() {
    P = model.get("payload");
    if (!P || !P.runs) return;
    runsEl.replaceChildren();
    panels = P.runs.map((run, ri) => {
      const panel = h("section", "tl-me-panel");
      panel.dataset.run = String(ri);
      const title = h("div", "tl-me-title");
      const sub = h("div", "tl-me-sub");
      const canvas = h("canvas", "tl-me-canvas");
      canvas.setAttribute("aria-label", `bytes alive on ${run.device}, stacked by category, one column per event`);
      const details = h("div", "tl-me-details");
      details.setAttribute("aria-live", "polite");
      panel.append(title, sub, canvas, details);
      runsEl.append(panel);
      const entry = { run, canvas, details, title, sub, geo: null, panel, pinned: pins.has(ri) ? pins.get(ri) : null,
                      shown: null };
      canvas.addEventListener("pointermove", (ev) => hover(entry, ri, ev));
      canvas.addEventListener("pointerleave", () => { tooltip.hidden = true; stopAsking(); redrawOne(entry); });
      canvas.addEventListener("click", (ev) => pin(entry, ri, ev));
      return entry;
    });
    const devices = P.runs[0].devices || [];
    deviceSel.hidden = devices.length < 2;
    if (deviceSel.dataset.devices !== devices.join("\n")) {  // (rebuilt only when they change: an open menu stays open)
      deviceSel.dataset.devices = devices.join("\n");
      deviceSel.replaceChildren(...devices.map((d) => {
        const o = h("option", null, d);
        o.value = d;
        return o;
      }));
    }
    deviceSel.value = P.runs[0].device;
    pauseBtn.hidden = !P.runs.some((r) => r.recording);
    tooltip.hidden = true;
    stopAsking();
    redraw();
    panels.forEach((e, ri) => {  // (a kept event: asked again of the new payload's recording)
      if (e.pinned !== null) model.send({ type: "alive", run: ri, index: e.pinned, pin: true });
    });
  }

  function redraw() {
    if (!P) return;
    const t0 = performance.now();
    dark = isDark(root);
    root.classList.toggle("tl-me-dark", dark);
    const used = new Set();
    for (const e of panels) { e.run.series.categories.forEach((c) => used.add(c)); redrawOne(e); }
    legend.replaceChildren(...P.categories.filter((c) => used.has(c)).map((c) => {
      const item = h("span", "tl-me-key", c);
      item.style.setProperty("--key", rgb(CATEGORY_RGB[c], null, dark));
      return item;
    }));
    root.dataset.drawn = String(++drawn);
    root.dataset.runs = String(panels.length);
    root.dataset.drawMs = (performance.now() - t0).toFixed(1);  // (what the last full drawing took: a benchmark reads it)
  }

  function redrawOne(e, cursor) {
    const run = e.run, S = run.series;
    const n = S.x.length;
    const width = Math.max(320, Math.min(1100, (runsEl.clientWidth || 800) / (panels.length > 1 ? 2 : 1) - 24));
    const height = 260;
    const left = 70, right = 12, top = 18, bottom = 26;
    const dpr = window.devicePixelRatio || 1;
    const c = e.canvas;
    c.style.width = width + "px";
    c.style.height = height + "px";
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fg = getComputedStyle(root).color;
    const font = "11px " + getComputedStyle(root).fontFamily;
    const maxY = Math.max(1, ...P.runs.map((r) => r.series.max));   // (a shared y scale: runs compare)
    const lastX = Math.max(1, S.x[n - 1] || 1);
    const X = (x) => left + (width - left - right) * (x / lastX);
    const Y = (v) => top + (height - top - bottom) * (1 - v / maxY);
    // phases, shaded behind
    for (const [lo, hi, ph] of run.phases) {
      const col = PHASE_RGB[ph];
      if (!col) continue;
      ctx.fillStyle = rgb(col, dark ? 0.12 : 0.08, false);
      ctx.fillRect(X(lo - 0.5), top, Math.max(1, X(hi + 0.5) - X(lo - 0.5)), height - top - bottom);
      ctx.fillStyle = rgb(col, 1, dark);
      ctx.font = font;
      if (X(hi) - X(lo) > 60) ctx.fillText(ph, X(lo) + 4, top - 5);
    }
    // the stacked areas (bottom category first)
    const base = new Float64Array(n);
    S.categories.forEach((cat, ci) => {
      const vals = S.values[ci];
      ctx.beginPath();
      for (let i = 0; i < n; i++) {
        const x = X(S.x[i]);
        const y = Y(base[i] + vals[i]);
        if (i === 0) ctx.moveTo(x, y); else { ctx.lineTo(x, Y(base[i - 1] + S.values[ci][i - 1])); ctx.lineTo(x, y); }
      }
      for (let i = n - 1; i >= 0; i--) {
        ctx.lineTo(X(S.x[i]), Y(base[i]));
        if (i > 0) ctx.lineTo(X(S.x[i]), Y(base[i - 1]));
      }
      ctx.closePath();
      ctx.fillStyle = rgb(CATEGORY_RGB[cat], null, dark);
      ctx.fill();
      for (let i = 0; i < n; i++) base[i] += vals[i];
    });
    // axes and ticks
    ctx.strokeStyle = fg;
    ctx.globalAlpha = 0.35;
    ctx.lineWidth = 1 / dpr;
    ctx.beginPath();
    ctx.moveTo(left, top); ctx.lineTo(left, height - bottom); ctx.lineTo(width - right, height - bottom);
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.fillStyle = fg;
    ctx.font = font;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const v of byteTicks(maxY)) ctx.fillText(fmtBytes(v), left - 6, Y(v));
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillText(`event (allocation, free or copy) 0 to ${lastX - 1}`, (left + width - right) / 2, height - bottom + 6);
    // the peak
    const pk = run.peak;
    const px = X(pk.index + 1);
    ctx.strokeStyle = dark ? "#fff" : "#000";
    ctx.setLineDash([4, 3]);
    ctx.beginPath(); ctx.moveTo(px, top); ctx.lineTo(px, height - bottom); ctx.stroke();
    ctx.setLineDash([]);
    ctx.textAlign = px > width / 2 ? "right" : "left";
    ctx.textBaseline = "top";
    ctx.fillText(`peak ${pk.size}`, px + (px > width / 2 ? -4 : 4), top + 2);
    // copies between a device and the host: small triangles on the x axis (up: to the device, down: to the host)
    const tr = run.transfers || { marks: [], count: 0, d2h: [0, 0], h2d: [0, 0] };
    ctx.fillStyle = fg;
    for (const [x, dir] of tr.marks) {
      const mx = X(x), yb = height - bottom;
      ctx.beginPath();
      if (dir === "h2d") { ctx.moveTo(mx - 3.5, yb); ctx.lineTo(mx + 3.5, yb); ctx.lineTo(mx, yb - 7); }
      else { ctx.moveTo(mx - 3.5, yb - 7); ctx.lineTo(mx + 3.5, yb - 7); ctx.lineTo(mx, yb); }
      ctx.fill();
    }
    if (cursor != null) {
      ctx.strokeStyle = fg;
      ctx.globalAlpha = 0.6;
      ctx.beginPath(); ctx.moveTo(X(cursor), top); ctx.lineTo(X(cursor), height - bottom); ctx.stroke();
      ctx.globalAlpha = 1;
    }
    e.geo = { X, left, right, width, lastX, n };
    e.title.textContent = (run.name ? run.name + ": " : "") + `peak ${pk.size} on ${run.device}` +
      ` after event ${pk.index}; ${run.storages.toLocaleString()} storages, ${S.events.toLocaleString()} events`;
    const copies = [];
    if (tr.d2h[0]) copies.push(`▼ ${tr.d2h[0].toLocaleString()} to the host (${fmtBytes(tr.d2h[1])})`);
    if (tr.h2d[0]) copies.push(`▲ ${tr.h2d[0].toLocaleString()} to the device (${fmtBytes(tr.h2d[1])})`);
    e.panel.dataset.transfers = String(tr.count);
    e.sub.textContent = "hover for what was alive; click to keep it below" +
      (copies.length ? `; copies between host and device: ${copies.join(", ")}` : "");
    if (e.pinned === null) {
      if (e.shown) showDetails(e, e.shown.d, e.shown.label);  // (the last hover's answer stays until a new one)
      else showDetails(e, pk, "at the peak");
    }
  }

  function showDetails(e, d, label) {
    const box = h("div");
    if (e.pinned === null) e.shown = { d, label };
    box.append(h("div", "tl-me-dtitle", `${label}: ${fmtBytes(d.total)} in ${d.count.toLocaleString()} storages`));
    const cats = h("div", "tl-me-cats");
    for (const [c, , s] of d.categories) {
      const k = h("span", "tl-me-key", `${c} ${s}`);
      k.style.setProperty("--key", rgb(CATEGORY_RGB[c], null, dark));
      cats.append(k);
    }
    box.append(cats);
    const table = h("table", "tl-me-table");
    const head = h("tr");
    for (const t of ["bytes", "category", "what", "made by", "line"]) head.append(h("th", null, t));
    table.append(head);
    for (const r of d.rows) {
      const tr = h("tr");
      tr.dataset.storage = String(r.id);
      tr.append(h("td", null, r.size), h("td", null, r.category), h("td", null, r.what || ""),
                h("td", null, r.op && r.module ? `${r.op} in ${r.module}` : (r.op || (r.module ? `module ${r.module}` : ""))),
                h("td", null, r.line || ""));
      tr.classList.add("tl-me-node");
      tr.title = "select this storage in an open storage view" + (r.seq != null ? ", and its op's node in a graph view" : "");
      tr.addEventListener("click", () => model.send({ type: "select", storage: r.id }));
      table.append(tr);
    }
    box.append(table);
    if (d.more) box.append(h("div", "tl-me-more", `and ${d.more.toLocaleString()} smaller`));
    e.details.replaceChildren(box);
  }

  function at(e, ev) {
    const g = e.geo;
    const r = e.canvas.getBoundingClientRect();
    const x = ev.clientX - r.left;
    const xi = Math.round(((x - g.left) / (g.width - g.left - g.right)) * g.lastX);
    // the nearest drawn column
    const S = e.run.series;
    let best = 0;
    for (let i = 0; i < S.x.length; i++) if (Math.abs(S.x[i] - xi) < Math.abs(S.x[best] - xi)) best = i;
    return best;
  }

  function hover(e, ri, ev) {
    if (!e.geo) return;
    const col = at(e, ev);
    const S = e.run.series;
    redrawOne(e, S.x[col]);
    const rows = [["event", String(S.x[col] - 1)], ["alive", fmtBytes(S.total[col])]];
    S.categories.forEach((c, ci) => { if (S.values[ci][col]) rows.push([c, fmtBytes(S.values[ci][col])]); });
    const prevX = col > 0 ? S.x[col - 1] : -1;  // (the copies this column stands for)
    const here = ((e.run.transfers || {}).marks || []).filter(([x]) => x > prevX && x <= S.x[col]);
    if (here.length === 1) rows.push(["copy", `${here[0][1] === "d2h" ? "to the host" : "to the device"} ` +
                                              `${fmtBytes(here[0][2])} (${here[0][3]})`]);
    else if (here.length) rows.push(["copies", `${here.length}, ${fmtBytes(here.reduce((t, m) => t + m[2], 0))}`]);
    tooltip.replaceChildren(rowsTable(rows));
    tooltip.hidden = false;
    const r = root.getBoundingClientRect();
    const tw = tooltip.offsetWidth;
    let x = ev.clientX - r.left + 14;
    if (x + tw > r.width) x = Math.max(0, ev.clientX - r.left - tw - 10);
    tooltip.style.transform = `translate(${Math.round(x)}px, ${Math.round(ev.clientY - r.top + 16)}px)`;
    lastEv = ev;
    const msg = { type: "alive", run: ri, index: S.x[col] - 1 };
    if (!asked || asked.index !== msg.index || asked.run !== ri) {
      asked = msg;
      clearTimeout(hoverTimer);
      hoverTimer = setTimeout(() => model.send(msg), 80);
    }
  }
  function stopAsking() { clearTimeout(hoverTimer); asked = null; lastEv = null; }

  function pin(e, ri, ev) {
    if (!e.geo) return;
    const col = at(e, ev);
    e.pinned = e.run.series.x[col] - 1;
    pins.set(ri, e.pinned);
    model.send({ type: "alive", run: ri, index: e.pinned, pin: true });
  }

  function onMsg(msg) {
    if (!msg || msg.type !== "alive_info") return;
    const e = panels[msg.run];
    if (!e) return;
    if (msg.pin) {
      if (e.pinned !== msg.index) return;  // (an answer for an older click)
      showDetails(e, msg, `after event ${msg.index} (clicked)`);
      root.dataset.pinned = String(msg.index);
    } else if (asked && asked.run === msg.run && asked.index === msg.index && e.pinned === null) {
      showDetails(e, msg, `after event ${msg.index}`);
    }
  }

  function applyPaused() {
    const p = model.get("paused");
    pauseBtn.textContent = p ? "Resume" : "Pause";
    root.classList.toggle("tl-me-paused", p);
  }

  const stopRedrawing = watchRedraw(root, runsEl, redraw, () => dark);
  const stopWatching = watchVisibility(model, root, () => root.isConnected);
  model.on("change:payload", build);
  model.on("change:paused", applyPaused);
  model.on("msg:custom", onMsg);
  applyPaused();
  build();
  return () => {
    model.off("change:payload", build);
    model.off("change:paused", applyPaused);
    model.off("msg:custom", onMsg);
    stopRedrawing();
    clearTimeout(hoverTimer);
    stopWatching();
  };
}

export default { render };

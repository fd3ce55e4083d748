// storage.js: the browser side of StorageView (an anywidget ES module).
//
// The Python side (widgets/storage_model.py, storage_payload) computes every coordinate; this file draws the
// payload described in CONTRACT.md ("StorageWidget"): per storage a strip of its elements in one lane per copy
// (host, device), the views laid over it as tracks (visit order in each touched element), transfer arrows
// between the lanes and a version badge that flashes when the version moves and shows the write site on hover.
// It reports filters, "other (N)", Pause/Resume, Close and its own visibility back. No build step, no imports.
//
// Crisp at any zoom / DPR: rectangles sit on whole CSS px with 1 px strokes offset by 0.5, text is in CSS px,
// and the SVG is redrawn, never scaled up. Readable at any size: the picture is only as wide as what it draws (not
// the whole column Python reserves right of the strips), and it scales down to the output's width only as far as
// MIN_SCALE; a narrower output scrolls it sideways instead, so no text is drawn under 10 CSS px (storage.css: 11 px
// and up). On a real model (hundreds of 176-element parameters) the 980 px layout scaled to 0.85 in an 850 px Lab
// output put indices and names at 8.5-9.4 px.

const FLASH_MS = 1200;
const MIN_SCALE = 10 / 11;   // the smallest text (11 px) stays at 10 CSS px or more
const GAP_PAD = 6;           // at least this between an elided count and the indices either side of it

// (h, s, button, textWidth, fitText, watchVisibility: common.js, put in front of this module)
function text(x, y, str, cls, anchor) {
  const t = s("text", { x, y }, cls);
  if (anchor) t.setAttribute("text-anchor", anchor);
  t.textContent = str;
  return t;
}
const px = (v) => Math.round(v) + 0.5;   // a 1 px stroke centred on a pixel row

// A name too long for `maxW` px, cut in its middle rather than at its end: its head, "…", and the longest tail that
// starts after a dot and fits ("transformer.h.3…c_attn.weight"), so names that differ only at the end stay apart.
function fitMiddle(str, maxW, font) {
  str = String(str ?? "");
  if (maxW <= 0 || textWidth(str, font) <= maxW) return str;
  const headFor = (room) => {   // the longest head that fits in `room` px
    let lo = 0, hi = str.length;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (textWidth(str.slice(0, mid), font) <= room) lo = mid; else hi = mid - 1; }
    return str.slice(0, lo);
  };
  const ell = textWidth("…", font), minHead = textWidth(str.slice(0, 3), font);
  for (let d = str.indexOf("."); d >= 0; d = str.indexOf(".", d + 1)) {   // longest tail first
    const tail = str.slice(d + 1), tw = textWidth(tail, font);
    if (tail && tw + ell + minHead <= maxW) return headFor(maxW - ell - tw) + "…" + tail;
  }
  // no dot-tail fits: characters, two thirds of the room for the tail
  let lo = 0, hi = str.length;
  const room = (maxW - ell) * 2 / 3;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (textWidth(str.slice(str.length - mid), font) <= room) lo = mid; else hi = mid - 1; }
  const tail = str.slice(str.length - lo);
  return headFor(maxW - ell - textWidth(tail, font)) + "…" + tail;
}

// A count too wide for its gap, shortened: 1,234,567 -> 1.2M
function shortCount(n) {
  for (const [v, u] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]]) if (n >= v) return (n / v).toFixed(n >= 10 * v ? 0 : 1) + u;
  return String(n);
}

function render({ model, el }) {
  // ---- skeleton ----------------------------------------------------------------------------------
  const root = h("div", "tl-storage");
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "storages: strips of elements, host and device copies, views, versions");

  const toolbar = h("div", "tl-toolbar");
  const filter = h("input", "tl-st-filter");
  filter.type = "search";
  filter.placeholder = "filter names…";
  // the syntax, on hover: every word must match; a|b matches either (the input is 14em: too narrow to say it)
  filter.title = "Words that must all match a name, a view or #id; a|b matches either";
  filter.setAttribute("aria-label", "Filter by name");
  filter.spellcheck = false;
  const devSel = h("select", "tl-st-device");
  devSel.setAttribute("aria-label", "Filter by device");
  const dtSel = h("select", "tl-st-dtype");
  dtSel.setAttribute("aria-label", "Filter by dtype");
  const otherBtn = button("other (0)", null, () => { model.set("show_other", !model.get("show_other")); model.save_changes(); },
                          "Show or hide the storages no name points to");
  otherBtn.classList.add("tl-st-other");
  const pauseBtn = button("Pause", null, () => { model.set("paused", !model.get("paused")); model.save_changes(); },
                          "Stop (or resume) live updates of this view");
  pauseBtn.classList.add("tl-st-pause");
  const closeBtn = button("Close", null, () => model.send({ type: "close" }), "Close this view and stop its updates");
  closeBtn.classList.add("tl-st-close");
  const foldBtn = button("Fold all", null, () => model.send({ type: "fold_all" }),
                         "Fold every module group: one row per top-level module");
  foldBtn.classList.add("tl-st-foldall");
  const legend = h("div", "tl-st-legend");
  toolbar.append(filter, devSel, dtSel, otherBtn, foldBtn, legend, h("div", "tl-spacer"), pauseBtn, closeBtn);

  const statusEl = h("div", "tl-status");
  statusEl.setAttribute("aria-live", "polite");
  const totalsEl = h("div", "tl-st-totals");
  const notesEl = h("div", "tl-notes");
  const view = h("div", "tl-st-canvas");
  const svg = s("svg", { width: 1, height: 1 }, "tl-st-svg");
  const defs = s("defs");
  const arrowId = "tl-st-arrow-" + Math.random().toString(36).slice(2, 9);
  const marker = s("marker", { id: arrowId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
                               markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, "tl-st-arrowhead");
  marker.append(s("path", { d: "M0 0 L10 5 L0 10 z" }));
  const hatchId = "tl-st-hatch-" + Math.random().toString(36).slice(2, 9);
  const hatch = s("pattern", { id: hatchId, width: 6, height: 6, patternUnits: "userSpaceOnUse",
                               patternTransform: "rotate(45)" });
  hatch.append(s("line", { x1: 0, y1: 0, x2: 0, y2: 6 }, "tl-st-hatch-line"));
  defs.append(marker, hatch);
  const scene = s("g", {}, "tl-st-scene");
  svg.append(defs, scene);
  view.append(svg);
  const tableWrap = h("details", "tl-st-tablewrap");
  tableWrap.append(h("summary", null, "as a table"));
  const tooltip = h("div", "tl-tooltip");
  tooltip.hidden = true;
  root.append(toolbar, statusEl, totalsEl, notesEl, view, tableWrap, tooltip);
  el.appendChild(root);

  // ---- state -------------------------------------------------------------------------------------
  let lastVersions = new Map();   // storage id -> version drawn last time (flash when it moves)
  let lastArrows = new Map();     // "id:dir" -> count drawn last time
  let disposed = false;
  let refocus = null;             // the group row to focus after the next drawing (toggled from the keyboard)

  function font(cls) {
    const fam = (root.isConnected && getComputedStyle(root).fontFamily) || "system-ui, sans-serif";
    return { label: `600 12px ${fam}`, small: `11px ${fam}`, cell: `11px ${fam}` }[cls];
  }

  function fillSelect(sel, values, current, anyText) {
    const want = [["", anyText], ...values.map((v) => [v, v])];
    const have = [...sel.options].map((o) => o.value);
    if (have.join("\u0000") !== want.map((w) => w[0]).join("\u0000")) {
      sel.replaceChildren(...want.map(([v, t]) => { const o = h("option", null, t); o.value = v; return o; }));
    }
    sel.value = current;
  }

  // ---- drawing ----------------------------------------------------------------------------------
  function build() {
    const P = model.get("payload") || {};
    const blocks = P.blocks || [];
    const g = s("g");
    const fLabel = font("label"), fSmall = font("small");
    // how wide the drawing may be to fit the box at MIN_SCALE (drawing px; unknown before the box is laid out): the
    // transfer texts, the one thing reaching into the last ~70 px of the layout, are cut to it (whole in their tooltip)
    const cs = getComputedStyle(view);
    const inner = view.clientWidth - (parseFloat(cs.paddingLeft) || 0) - (parseFloat(cs.paddingRight) || 0);
    const fits = inner > 0 ? inner / MIN_SCALE - 2 : Infinity;
    const seenV = new Map(), seenA = new Map();
    const rules = [];   // the sections' rules: as wide as the picture, known once everything else is drawn
    for (const sec of P.sections || []) {
      g.append(text(0, sec.y + 14, sec.label, "tl-st-section"));
      const rule = s("line", { x1: 0, x2: P.width, y1: px(sec.y + 19), y2: px(sec.y + 19) }, "tl-st-rule");
      rules.push(rule);
    }
    // module groups: a row each (toggle, path, what it holds); a click or Enter/Space opens or folds it
    for (const gr of P.groups || []) {
      const gg = s("g", { "data-group": gr.id, "data-open": gr.open ? "true" : "false", tabindex: 0, role: "button",
                          "aria-expanded": gr.open ? "true" : "false",
                          "aria-label": `${gr.open ? "fold" : "open"} ${gr.label}: ${gr.text}` }, "tl-st-group");
      const right = gr.x + (gr.w || P.width - gr.x);
      gg.append(s("rect", { x: gr.x, y: gr.y + 1, width: Math.max(1, right - gr.x), height: gr.h - 2, rx: 3 },
                  "tl-st-group-bg"));
      gg.append(text(gr.x + 4, gr.y + 16, gr.open ? "▾" : "▸", "tl-st-group-toggle"));
      const name = fitMiddle(gr.label, Math.min(right - gr.x - 60, 420), fLabel);
      gg.append(text(gr.x + 18, gr.y + 16, name, "tl-st-group-name"));
      const nx = gr.x + 18 + textWidth(name, fLabel) + 10;
      gg.append(text(nx, gr.y + 16, fitText(gr.text, right - nx - 6, fSmall), "tl-st-group-text"));
      gg.__tip = [["module", gr.label], ["holds", gr.text], ["", gr.open ? "click to fold" : "click to open"]];
      g.append(gg);
    }
    for (const b of blocks) {
      const bg = s("g", { "data-storage-id": b.id, "data-state": b.state, "data-kind": b.kind, "data-group": b.group },
                   "tl-st-block");
      // header: name (bold) and details (muted), fitted into the space left of the badge column
      const x0 = b.x || 0;
      const maxHeader = b.badge.x - 10 - x0;
      const label = fitMiddle(b.label, Math.min(maxHeader, 360), fLabel);
      const lt = text(x0, b.y + 15, label, "tl-st-name");
      lt.__tip = b.tip;
      bg.append(lt);
      const lw = x0 + textWidth(label, fLabel) + 10;
      bg.append(text(lw, b.y + 15, fitText(b.sub, b.badge.x - 10 - lw, fSmall), "tl-st-sub"));
      // the lanes: one strip of element cells per copy of the bytes
      for (const lane of b.lanes) {
        const cls = "tl-st-lane" + (lane.present ? "" : " tl-st-absent") + (lane.stale ? " tl-st-stale" : "") +
          (lane.newer ? " tl-st-newer" : "");
        const lg = s("g", { "data-lane": lane.id }, cls);
        lg.append(text(8, lane.y + lane.h - 6, fitText(lane.label, b.strip.x - 14, fSmall), "tl-st-lane-label"));
        for (const c of b.cells) {
          if (c.gap) continue;
          lg.append(s("rect", { x: px(c.x), y: px(lane.y), width: c.w, height: lane.h },
                      "tl-st-cell tl-st-" + (lane.present ? b.state : "absent")));
          if (lane.stale) lg.append(s("rect", { x: px(c.x), y: px(lane.y), width: c.w, height: lane.h,
                                                fill: `url(#${hatchId})` }, "tl-st-hatch"));
        }
        for (const c of b.cells) if (c.gap) {
          lg.append(text(c.x + c.w / 2, lane.y + lane.h - 6, "…", "tl-st-gap", "middle"));
        }
        if (!lane.present) {
          // centred in the strip when it fits there; right of a short strip, so no cell border crosses it
          const words = lane.id === "host" ? "no host copy" : "no device copy";
          const inside = textWidth(words, fSmall) + 8 <= b.strip.w;
          lg.append(text(inside ? b.strip.x + b.strip.w / 2 : b.strip.x + b.strip.w + 6, lane.y + lane.h - 6,
                         words, "tl-st-absent-text", inside ? "middle" : "start"));
        }
        bg.append(lg);
      }
      // element indices under the strip (short ones under every cell; long ones at the ends of each run)
      for (let i = 0; i < b.cells.length; i++) {
        const c = b.cells[i];
        if (c.gap) {
          // the elided count, centred in its gap, clear of the indices either side (shortened if it would not be)
          const n = c.last - c.first + 1;
          let str = c.count || n.toLocaleString("en");
          if (textWidth(str, fSmall) + 2 * GAP_PAD > c.w) str = shortCount(n);
          const gt = text(c.x + c.w / 2, b.index_y, str, "tl-st-index tl-st-gaptext", "middle");
          gt.__tip = [["elided", c.tip || `${n.toLocaleString("en")} elements not drawn`]];
          bg.append(gt);
          continue;
        }
        const prev = b.cells[i - 1], next = b.cells[i + 1];
        if (c.i < 1000) bg.append(text(c.x + c.w / 2, b.index_y, c.i, "tl-st-index", "middle"));
        else if (!next || next.gap) bg.append(text(c.x + c.w, b.index_y, c.i.toLocaleString("en"), "tl-st-index", "end"));
        else if (!prev || prev.gap) bg.append(text(c.x, b.index_y, c.i.toLocaleString("en"), "tl-st-index", "start"));
      }
      // the views: which elements each touches, in what order (first visit), ×n where several read one
      for (const t of b.tracks) {
        const tg = s("g", { "data-view": t.label }, "tl-st-track");
        // relative to the block's group (whose row is above), cut in the middle if still too long: the whole
        // label is in the tooltip
        const tl = text(8, t.y + t.h - 4, fitMiddle(t.rel || t.label, b.strip.x - 14, fSmall),
                        "tl-st-track-label" + (t.named ? "" : " tl-st-unnamed"));
        tl.__tip = [["view", t.label], ["layout", t.detail]];
        tg.append(tl);
        tg.append(s("line", { x1: b.strip.x, x2: b.strip.x + b.strip.w, y1: px(t.y + t.h / 2), y2: px(t.y + t.h / 2) },
                    "tl-st-track-base"));
        for (const [col, idx, first, reads] of t.marks) {
          const c = b.cells[col];
          const m = s("rect", { x: px(c.x + 1), y: px(t.y), width: c.w - 2, height: t.h, rx: 2 }, "tl-st-mark");
          m.__tip = [["view", t.label], ["storage element", String(idx)], ["visit", String(first)],
                     ["read by", reads + " element" + (reads > 1 ? "s" : "")]];
          tg.append(m);
          let label = reads > 1 ? (first < 10 ? `${first}×${reads}` : `×${reads}`) : String(first);
          if (textWidth(label, font("cell")) > c.w - 3) label = reads > 1 ? `×${reads}` : "·";
          tg.append(text(c.x + c.w / 2, t.y + t.h - 4, label, "tl-st-mark-text", "middle"));
        }
        // the layout, short, right of the strip (the whole of it is in the label's tooltip)
        tg.append(text(b.badge.x, t.y + t.h - 4, fitText(t.short || t.detail, (P.width - b.badge.x) - 4, fSmall),
                       "tl-st-detail"));
        bg.append(tg);
      }
      if (b.note) bg.append(text(8, b.note_y, b.note, "tl-st-sub"));
      // transfer arrows between the lanes, with their totals; an arrow whose count moved flashes
      for (const a of b.arrows) {
        const key = b.id + ":" + a.dir;
        seenA.set(key, a.count);
        const ag = s("g", { "data-dir": a.dir }, "tl-st-arrow tl-st-" + a.dir);
        ag.append(s("line", { x1: px(a.x), x2: px(a.x), y1: a.y0, y2: a.y1, "marker-end": `url(#${arrowId})` },
                    "tl-st-arrow-line"));
        ag.append(text(a.tx, a.ty, fitText(a.text, Math.max(48, fits - a.tx), fSmall), "tl-st-arrow-text"));
        ag.__tip = [["transfers", a.text]];
        if (lastArrows.has(key) && lastArrows.get(key) !== a.count) ag.classList.add("tl-st-flash");
        bg.append(ag);
      }
      // the version badge: flashes when the version moved since the last drawing; hover: the write site
      const bw = Math.max(30, Math.ceil(textWidth(b.badge.text, fSmall)) + 14);
      const badge = s("g", { "data-storage-id": b.id, "data-version": b.version, tabindex: 0 }, "tl-st-badge");
      badge.append(s("rect", { x: px(b.badge.x), y: px(b.badge.y), width: bw, height: b.badge.h, rx: 9 }, "tl-st-badge-bg"));
      badge.append(text(b.badge.x + bw / 2, b.badge.y + b.badge.h - 5, b.badge.text, "tl-st-badge-text", "middle"));
      const earlier = b.badge.writes.slice(0, -1);   // the last one is the "last write" row
      badge.__tip = [["version", String(b.version)], ["last write", b.badge.site || "none yet"],
                     ...earlier.map((w, i) => [i ? "" : "earlier", w])];
      if (lastVersions.has(b.id) && lastVersions.get(b.id) !== b.version) badge.classList.add("tl-st-flash");
      seenV.set(b.id, b.version);
      bg.append(badge);
      g.append(bg);
    }
    scene.replaceChildren(g);
    if (refocus !== null) {
      const again = [...g.querySelectorAll("g.tl-st-group")].find((e) => e.dataset.group === refocus);
      if (again) again.focus();
      refocus = null;
    }
    lastVersions = seenV;
    lastArrows = seenA;
    size(g, rules, P);

    // around the drawing: status, totals per device, notes, filters
    statusEl.textContent = P.status || "";
    totalsEl.replaceChildren(...(P.devices || []).map((d) => {
      const card = h("div", "tl-st-card");
      card.dataset.device = d.device;
      card.append(h("div", "tl-st-card-title", d.device), ...d.lines.map((l) => h("div", "tl-st-card-line", l)));
      return card;
    }));
    const tx = h("div", "tl-st-card tl-st-transfers");
    tx.append(h("div", "tl-st-card-title", "transfers"), ...(P.transfers || []).map((l) => h("div", "tl-st-card-line", l)));
    if (P.pool_note) tx.append(h("div", "tl-st-card-line tl-st-pool-note", P.pool_note));
    totalsEl.append(tx);
    notesEl.replaceChildren(...(P.notes || []).map((n) => h("div", "tl-note tl-note-" + n.level, n.text)));
    const F = P.filters || { devices: [], dtypes: [] };
    fillSelect(devSel, F.devices, model.get("filter_device"), "any device");
    fillSelect(dtSel, F.dtypes, model.get("filter_dtype"), "any dtype");
    if (document.activeElement !== filter) filter.value = model.get("filter_text");
    const O = P.other || { text: "other (0)", shown: false };
    otherBtn.textContent = (O.shown ? "▾ " : "▸ ") + O.text;
    otherBtn.setAttribute("aria-pressed", O.shown ? "true" : "false");
    legend.replaceChildren(...(P.legend || []).map(([k, t]) => {
      const item = h("span", "tl-st-legend-item");
      item.append(h("span", "tl-st-swatch tl-st-" + k), document.createTextNode(t));
      return item;
    }));
    buildTable(P.table_columns || [], P.table || []);
    root.dataset.blocks = String(blocks.length);
    root.dataset.groups = String((P.groups || []).length);
    root.dataset.height = String(Math.ceil(P.height || 0));
    if (typeof applySelected === "function") applySelected();  // (the selection survives a redraw)
  }

  /** The picture's size: as wide as what was drawn (its bounding box, where the browser lays it out; Python's full
   *  width where it cannot, e.g. in a hidden output) and as tall as the payload says; shown at that size, or scaled
   *  down to the output's width but never below MIN_SCALE (storage.css: the box scrolls beyond that). */
  let unsized = null;   // [g, rules, P] of a drawing made before the page laid it out (measured once it is)
  function size(g, rules, P) {
    let w = Math.ceil(P.width || 1), measured = 0;
    const hgt = Math.ceil(P.height || 1);
    for (const r of rules) r.remove();   // (not part of what is measured)
    try {
      const bb = g.getBBox();
      measured = bb.width;
      if (bb.width > 0) w = Math.min(w, Math.ceil(bb.x + bb.width) + 4);
    } catch (e) { /* not rendered: keep Python's width */ }
    unsized = measured > 0 ? null : [g, rules, P];
    for (const r of rules) { r.setAttribute("x2", w); g.append(r); }
    svg.setAttribute("width", w);
    svg.setAttribute("height", hgt);
    svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
    svg.style.minWidth = Math.ceil(w * MIN_SCALE) + "px";
    root.dataset.width = String(w);
  }

  // The same storages as a table (for screen readers and for copying numbers out).
  function buildTable(columns, rows) {
    const table = h("table", "tl-storage-table");
    const head = h("tr");
    for (const c of columns) head.append(h("th", null, c));
    table.append(head);
    for (const r of rows) {   // [id, owner, dtype, device, copies, version, last write]
      const tr = h("tr");
      tr.dataset.storageId = r[0];
      tr.dataset.version = r[5];
      tr.dataset.residency = r[4];
      for (const c of r) tr.append(h("td", null, String(c)));
      table.append(tr);
    }
    const old = tableWrap.querySelector("table");
    if (old) old.replaceWith(table); else tableWrap.append(table);
  }

  // A storage another view selected (a memory timeline's row): outlined, and scrolled into view once.
  let outlined = null;
  function applySelected() {
    const id = model.get("selected");
    for (const g of svg.querySelectorAll("g.tl-st-block.tl-st-selected")) g.classList.remove("tl-st-selected");
    if (id == null || id < 0) { outlined = null; root.dataset.selected = ""; return; }
    const g = svg.querySelector(`g.tl-st-block[data-storage-id="${id}"]`);
    root.dataset.selected = g ? String(id) : "";
    if (!g) return;
    g.classList.add("tl-st-selected");
    if (outlined !== id) {
      outlined = id;
      const r = g.getBoundingClientRect(), v = view.getBoundingClientRect();
      if (r.top < v.top || r.bottom > v.bottom) view.scrollTop += r.top - v.top - 24;
    }
  }
  function applyPaused() {
    const p = model.get("paused");
    pauseBtn.textContent = p ? "Resume" : "Pause";
    root.classList.toggle("tl-st-paused", p);
  }
  function applyHeight() { view.style.maxHeight = model.get("height") + "px"; }

  // ---- tooltip -----------------------------------------------------------------------------------
  function onHover(ev) {
    let t = ev.target;
    while (t && t !== svg && !t.__tip) t = t.parentNode;
    if (!t || !t.__tip) { tooltip.hidden = true; return; }
    const table = h("table");
    for (const [k, v] of t.__tip) {
      const tr = h("tr");
      tr.append(h("th", null, k), h("td", null, v));
      table.append(tr);
    }
    tooltip.replaceChildren(table);
    tooltip.hidden = false;
    const r = root.getBoundingClientRect();
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 16;
    if (x + tw > r.width) x = Math.max(0, ev.clientX - r.left - tw - 10);
    if (y + th > r.height + 40) y = Math.max(0, ev.clientY - r.top - th - 10);
    tooltip.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px)`;
  }
  svg.addEventListener("pointermove", onHover);
  svg.addEventListener("pointerleave", () => { tooltip.hidden = true; });
  svg.addEventListener("focusin", (ev) => {
    const r = ev.target.getBoundingClientRect();
    onHover({ target: ev.target, clientX: r.right, clientY: r.bottom });
  });
  svg.addEventListener("focusout", () => { tooltip.hidden = true; });

  // ---- folding: a group row toggles on click, Enter or Space ---------------------------------------
  function toggleFrom(ev) {
    const gg = ev.target.closest && ev.target.closest("g.tl-st-group");
    if (!gg) return false;
    model.send({ type: "toggle", group: gg.dataset.group, open: gg.dataset.open !== "true" });
    refocus = ev.type === "keydown" ? gg.dataset.group : null;   // the redrawn row gets the keyboard back
    return true;
  }
  svg.addEventListener("click", toggleFrom);
  svg.addEventListener("keydown", (ev) => {
    if ((ev.key === "Enter" || ev.key === " ") && toggleFrom(ev)) { ev.preventDefault(); ev.stopPropagation(); }
  });

  // ---- filters -----------------------------------------------------------------------------------
  let typing = 0;
  filter.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { model.set("filter_text", filter.value); model.save_changes(); }, 150);
  });
  filter.addEventListener("keydown", (ev) => ev.stopPropagation());   // keep Lab's shortcuts away while typing
  devSel.addEventListener("change", () => { model.set("filter_device", devSel.value); model.save_changes(); });
  dtSel.addEventListener("change", () => { model.set("filter_dtype", dtSel.value); model.save_changes(); });

  // a view drawn before it was in the page (anywidget renders into a detached element) is measured when it shows
  const sizer = new ResizeObserver(() => { if (unsized && view.clientWidth) size(...unsized); });
  sizer.observe(view);

  // ---- visibility: report it so Python skips redraws nobody can see ------------------------------
  const stopWatching = watchVisibility(model, root, () => root.isConnected);

  // ---- wiring ------------------------------------------------------------------------------------
  const handlers = {
    "change:payload": build, "change:paused": applyPaused, "change:height": applyHeight, "change:selected": applySelected,
    "change:filter_text": build, "change:filter_device": build, "change:filter_dtype": build,
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);
  applyPaused();
  applyHeight();
  build();
  applySelected();
  return () => {
    disposed = true;
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    stopWatching();
    sizer.disconnect();
    clearTimeout(typing);
    return disposed;
  };
}

export default { render };

// common.js -- the small helpers every view module shares. Python puts this file in front of each view's own
// module (widgets/_static.py: one ES module per view, as anywidget loads it, with no bundler and no imports).

const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element with a class and text. */
function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = String(text);
  return e;
}
/** An SVG element with attributes and a class. */
function s(tag, attrs, cls) {
  const e = document.createElementNS(SVG_NS, tag);
  if (cls) e.setAttribute("class", cls);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function setAttrs(e, attrs) {
  for (const k in attrs) e.setAttribute(k, attrs[k]);
}
/** A toolbar button: `text` is also its accessible name unless `label` is given; `hint` is a tooltip. */
function button(text, label, onClick, hint) {
  const b = h("button", "tl-btn", text);
  b.type = "button";
  if (label) b.setAttribute("aria-label", label);
  b.title = hint || label || text;
  b.addEventListener("click", onClick);
  return b;
}
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

// Text measuring (for ellipses) with one shared canvas context: far cheaper than asking SVG layout.
const measureCtx = document.createElement("canvas").getContext("2d");
function textWidth(str, font) { measureCtx.font = font; return measureCtx.measureText(str).width; }
/** The longest prefix of `str` that fits in `maxW` px in `font`, with an ellipsis when cut. */
function fitText(str, maxW, font) {
  str = String(str ?? "");
  if (maxW <= 0 || textWidth(str, font) <= maxW) return str;
  let lo = 0, hi = str.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(str.slice(0, mid) + "…", font) <= maxW) lo = mid; else hi = mid - 1;
  }
  return str.slice(0, lo) + "…";
}

/**
 * Keep the model's `visible` trait true exactly while `target` can be seen: it intersects the viewport (a hidden
 * Lab tab, a collapsed output or a view scrolled away intersects nothing) and the page is not hidden, and
 * `extra()` agrees. Python skips live redraws of a view nobody can see. `onChange(v)`, if given, hears every
 * report. Returns the function that stops watching.
 */
function watchVisibility(model, target, extra, onChange) {
  let inView = true;
  function report() {
    const v = inView && document.visibilityState !== "hidden" && (!extra || extra());
    if (onChange) onChange(v);
    if (model.get("visible") !== v) { model.set("visible", v); model.save_changes(); }
  }
  let io = null;
  if (typeof IntersectionObserver !== "undefined") {
    io = new IntersectionObserver((entries) => {
      for (const e of entries) inView = e.isIntersecting;
      report();
    });
    io.observe(target);
  }
  document.addEventListener("visibilitychange", report);
  return () => {
    document.removeEventListener("visibilitychange", report);
    if (io) io.disconnect();
  };
}


/** A two-column table of `[name, value]` rows (a tooltip's body). */
function rowsTable(rows) {
  const table = h("table");
  for (const [k, v] of rows) {
    const tr = h("tr");
    tr.append(h("th", null, k), h("td", null, v));
    table.append(tr);
  }
  return table;
}

/** Whether the page's text is light (a dark theme) where `elem` is. */
function isDark(elem) {
  const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(getComputedStyle(elem).color || "");
  return m ? 0.2126 * m[1] + 0.7152 * m[2] + 0.0722 * m[3] > 140 : false;
}

/**
 * Call `redraw()` whenever a canvas view must be drawn again: `target`'s width changed (by more than 8 px), the
 * device pixel ratio changed (zoom, another screen), or the theme changed: `isDark(root)` differs from `drawnDark()`.
 * JupyterLab sets <body>'s attributes before the theme's style sheet applies, so a change is looked for again for
 * three seconds. Returns the function that stops watching.
 */
function watchRedraw(root, target, redraw, drawnDark) {
  let lastW = 0;
  const sizer = new ResizeObserver(() => {
    const w = target.clientWidth;
    if (w && Math.abs(w - lastW) > 8) { lastW = w; redraw(); }
  });
  sizer.observe(target);
  let dprQuery = null;
  function watchDpr() {
    if (dprQuery) dprQuery.removeEventListener("change", onDpr);
    dprQuery = window.matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    dprQuery.addEventListener("change", onDpr);
  }
  function onDpr() { watchDpr(); redraw(); }
  watchDpr();
  let themeTimer = 0;
  const themeWatch = new MutationObserver(() => {
    clearInterval(themeTimer);
    let tries = 0;
    themeTimer = setInterval(() => {
      if (isDark(root) !== drawnDark()) { redraw(); clearInterval(themeTimer); }
      else if (++tries > 20) clearInterval(themeTimer);
    }, 150);
  });
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light", "class"] });
  return () => {
    sizer.disconnect();
    themeWatch.disconnect();
    clearInterval(themeTimer);
    dprQuery.removeEventListener("change", onDpr);
  };
}

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


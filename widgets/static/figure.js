// figure.js -- the browser half of widgets/figure_widget.py (FigureWidget): shows a matplotlib figure Python drew as
// SVG, outlines the selected cells, reports clicks and the page's theme. (static/common.js is in front of this.)
//
// Python does all the geometry: a click is sent as fractions of the picture, {type: "click", x, y}, and Python finds
// the axes and the data cell under it. `figure.regions` (where the clickable axes are) only sets the cursor here.
// The theme (light or dark) is sent as {type: "theme", theme} when the view appears and whenever it changes;
// Python draws the figure again in it. Until the new picture arrives, a picture drawn for the other theme gets
// that theme's page colour behind it (figure.css), so it stays readable.

/** "dark" or "light": JupyterLab's flag on <body> (Lab, Notebook 7, Voila), else the text colour around `el`. */
function pageTheme(el) {
  const flag = document.body && document.body.dataset.jpThemeLight;
  if (flag === "true") return "light";
  if (flag === "false") return "dark";
  // no JupyterLab theme: light text around the view means a dark page
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)/.exec(getComputedStyle(el).color || "");
  if (!m) return "light";
  const [r, g, b] = m.slice(1, 4).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255 > 0.5 ? "dark" : "light";
}

function render({ model, el }) {
  const root = h("div", "tl-figure");
  const frame = h("div", "tl-fig-frame"); // the picture and the marks over it, positioned in its fractions
  const img = h("img", "tl-fig-img");
  img.draggable = false;
  const layer = h("div", "tl-fig-regions"); // where the clickable axes are (invisible: for tests and tools)
  const marks = h("div", "tl-fig-marks");
  frame.append(img, layer, marks);
  root.append(frame);
  el.append(root);

  let url = null; // the blob URL of the current SVG (revoked when replaced or when the view goes)
  let regions = [];

  function paint() {
    const f = model.get("figure") || {};
    if (url) URL.revokeObjectURL(url);
    url = null;
    if (!f.svg) {
      img.removeAttribute("src");
      root.dataset.rendered = "";
      root.classList.add("tl-fig-empty");
      return;
    }
    root.classList.remove("tl-fig-empty");
    url = URL.createObjectURL(new Blob([f.svg], { type: "image/svg+xml" }));
    img.src = url;
    // its size at the figure's dpi, never wider than the output (the height follows the picture's ratio)
    img.style.width = `${f.width}px`;
    img.style.aspectRatio = `${f.width} / ${f.height}`;
    regions = f.regions || [];
    layer.replaceChildren(...regions.map(({ id, box }) => {
      const r = place(h("div", "tl-fig-region"), box);
      r.dataset.id = String(id);
      return r;
    }));
    root.dataset.rendered = f.theme || "light";
    root.dataset.ink = f.ink || "";
    root.dataset.regions = String(regions.length);
    root.classList.toggle("tl-fig-clickable", regions.length > 0);
    root.dataset.draws = String(Number(root.dataset.draws || 0) + 1);
  }

  function paintAlt() {
    img.alt = model.get("alt") || "figure";
    img.title = regions.length ? `${img.alt} (click a cell for its details)` : img.alt;
  }

  /** Position `e` over the picture at box [left, top, right, bottom] (fractions), in % so it follows any width. */
  function place(e, [x0, y0, x1, y1]) {
    e.style.left = `${100 * x0}%`;
    e.style.top = `${100 * y0}%`;
    e.style.width = `${100 * (x1 - x0)}%`;
    e.style.height = `${100 * (y1 - y0)}%`;
    return e;
  }

  function paintMarks() {
    marks.replaceChildren(...(model.get("marks") || []).map((box) => place(h("div", "tl-fig-mark"), box)));
    root.dataset.marks = String(marks.childElementCount);
  }

  /** The pointer's position in fractions of the picture. */
  function at(e) {
    const r = img.getBoundingClientRect();
    return [(e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height];
  }
  const inRegion = ([x, y]) => regions.some(({ box: [l, t, r, b] }) => x >= l && x <= r && y >= t && y <= b);

  function onClick(e) {
    const [x, y] = at(e);
    if (!inRegion([x, y])) return; // Python would find nothing there either
    model.send({ type: "click", x, y });
  }
  function onMove(e) {
    img.style.cursor = inRegion(at(e)) ? "crosshair" : "";
  }
  img.addEventListener("click", onClick);
  img.addEventListener("mousemove", onMove);

  // the page's theme: now, and whenever JupyterLab switches it
  let sent = null;
  function reportTheme() {
    const t = pageTheme(root);
    root.dataset.page = t;
    if (t !== sent) {
      sent = t;
      if (model.get("theme") !== t) model.send({ type: "theme", theme: t });
    }
  }
  const observer = new MutationObserver(reportTheme);
  observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
  const first = requestAnimationFrame(reportTheme); // (once attached: the fallback reads the colour around the view)
  reportTheme();

  paint();
  paintAlt();
  paintMarks();
  const handlers = {
    "change:figure": () => { paint(); paintAlt(); },
    "change:marks": paintMarks,
    "change:alt": paintAlt,
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);

  return () => {
    cancelAnimationFrame(first);
    observer.disconnect();
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    if (url) URL.revokeObjectURL(url);
  };
}

export default { render };

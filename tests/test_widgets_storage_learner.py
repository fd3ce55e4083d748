"""``StorageView`` on a learner's own model: nanoGPT (``learner_models.make("gpt")``) after one AdamW step, 311
storages (parameters, gradients, Adam's two moments, the attention masks, the loss).

What is checked, without a browser (``tests/browser/test_storage_view.py`` checks the same on screen):

- the storages fold into module groups: the first drawing stays within the box's height budget, and every storage
  can be reached by opening the groups above it (none is "not drawn");
- each colour of the picture has one meaning, and the legend lists every meaning drawn (colours computed from
  JupyterLab's light and dark theme variables);
- the elided count of a long strip fits its gap with room to the indices either side;
- the track labels of one group stay distinct (relative to the group, distinguishing tails kept);
- every text of the view has a contrast of at least 4.5:1 in both themes, computed from the theme's colours.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

import learner_models  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import storage_model as sm  # noqa: E402
from tinygrad_like.widgets import storage_view as sv  # noqa: E402
from tinygrad_like.widgets.storage_groups import group_tree  # noqa: E402

STATIC = Path(sm.__file__).parent / "static"
BOX = 560  # StorageView's default box height


@pytest.fixture(scope="module")
def gpt():
    """nanoGPT after one AdamW step, and a StorageView of it (not live: the tests refresh it)."""
    model, loss = learner_models.make("gpt")
    opt = tl.optim.AdamW(model.parameters(), lr=1e-3)
    loss.backward()
    opt.step()
    view = sv.StorageView(model=model, optimizer=opt, user_ns={"loss": loss}, live=False)
    yield view, model, opt, loss
    view.close()


def _named(view) -> list[dict]:
    return [r for r in view.rows if r["names"]]


# ---- navigation -------------------------------------------------------------------------------------------------
def test_gpt_starts_as_an_overview_within_the_box_and_every_storage_is_reachable(gpt):
    view = gpt[0]
    view.fold_all()
    view._toggled.clear()
    view.refresh()
    p = view.widget.payload
    named = _named(view)
    assert len(named) >= 300, len(named)
    assert p["height"] <= 1.5 * BOX, f"the first drawing is {p['height']} px tall"
    assert not [n for n in p["notes"] if "not drawn" in n["text"]], p["notes"]
    assert [g["label"] for g in p["groups"] if g["depth"] == 1] == ["transformer.wte", "transformer.wpe",
                                                                    "transformer.h", "transformer.ln_f"]
    assert len(p["table"]) == len(named), "the table lists every storage, drawn or folded"
    # without the loss (no notebook variable): the model alone fits too
    alone = sm.storage_payload([r for r in view.rows if r["kind"] != "var"], budget=1.5 * BOX)
    assert alone["height"] <= 1.5 * BOX and "transformer.h.0" in [g["label"] for g in alone["groups"]], alone["height"]
    # every storage is drawn once the groups above it are open, and each group opened alone stays short
    tree = group_tree(sorted(named, key=lambda r: (r["sort"], r["id"])))
    reached, tallest = set(), 0.0
    for g in tree.walk():
        parts = g.path.split(".")
        opened = {".".join(parts[:i]): True for i in range(1, len(parts) + 1)}
        q = sm.storage_payload(view.rows, toggled=opened)
        reached |= {b["id"] for b in q["blocks"]}
        tallest = max(tallest, q["height"])
    reached |= {b["id"] for b in p["blocks"]}
    assert reached == {r["id"] for r in named}, f"{len(named) - len(reached)} storages cannot be reached"
    assert tallest <= 4000, f"opening one group makes a {tallest} px drawing"


def test_groups_open_and_fold_from_the_browser_and_from_python(gpt):
    view = gpt[0]
    view._toggled.clear()
    view.on_message({"type": "toggle", "group": "transformer.h", "open": True})
    labels = [g["label"] for g in view.widget.payload["groups"]]
    assert [f"transformer.h.{i}" for i in range(6)] == [x for x in labels if re.fullmatch(r"transformer\.h\.\d", x)]
    view.expand("transformer.h.3.attn.c_attn")
    drawn = {b["label"] for b in view.widget.payload["blocks"]}
    for p in ("weight", "bias"):
        for s in ("", ".grad", ".exp_avg", ".exp_avg_sq"):
            assert f"transformer.h.3.attn.c_attn.{p}{s}" in drawn, sorted(drawn)
    view.toggle("transformer.h.3.attn.c_attn")  # flips it: folded again
    assert not any(b["label"].startswith("transformer.h.3.attn.c_attn") for b in view.widget.payload["blocks"])
    view.on_message({"type": "fold_all"})
    assert [g["label"] for g in view.widget.payload["groups"]] == ["transformer"]
    with pytest.raises(ValueError, match="no group 'nope' is drawn"):
        view.toggle("nope")
    with pytest.raises(TypeError, match="module path"):
        view.toggle(3)
    view._toggled.clear()
    view.refresh()


def test_a_filter_with_few_matches_opens_their_groups(gpt):
    view = gpt[0]
    view._toggled.clear()
    view.set_filter(text="h.3.attn.c_attn")
    try:
        assert len(view.widget.payload["blocks"]) == 8, [b["label"] for b in view.widget.payload["blocks"]]
    finally:
        view.set_filter(text="")


def test_a_small_model_starts_open():
    net = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.ReLU(), tl.nn.Linear(8, 3))
    opt = tl.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(tl.randn(2, 4)).sum().backward()
    opt.step()
    p = sm.storage_payload(sm.storage_model(model=net, optimizers=[opt]))
    assert {b["label"] for b in p["blocks"]} >= {"0.weight", "0.weight.grad", "0.weight.momentum_buffer", "2.bias"}
    assert all(g["open"] for g in p["groups"]) and {g["label"] for g in p["groups"]} == {"0", "2"}


# ---- labels and elided counts ------------------------------------------------------------------------------------
def test_track_labels_are_relative_to_their_group_and_distinct(gpt):
    view = gpt[0]
    view._toggled.clear()
    view.expand("transformer.h.3.attn.c_attn", "transformer.h.4.attn.c_attn")
    blocks = view.widget.payload["blocks"]
    by_group: dict[str, list[str]] = {}
    for b in blocks:
        for t in b["tracks"]:
            by_group.setdefault(b["group"], []).append(t["rel"])
            assert t["label"].endswith(t["rel"]) and len(t["rel"]) <= len(t["label"])
    rel = by_group["transformer.h.3.attn.c_attn"]
    suffixes = ("", ".grad", ".exp_avg", ".exp_avg_sq")
    assert sorted(rel) == sorted(f"{p}{s}" for p in ("weight", "bias") for s in suffixes)
    for g, labels in by_group.items():
        assert len(set(labels)) == len(labels), (g, labels)
    view._toggled.clear()
    view.refresh()


@pytest.mark.parametrize("numel", [12_480, 147_456, 1_000_000, 123_456_789])
def test_the_elided_count_fits_its_gap(numel):
    """At 11 px a digit is at most 7.0 px (DejaVu Sans 0.636 em; narrower in most UI fonts) and a comma 3.5 px: the
    gap holds the count and 6 px to each neighbouring index."""
    n = numel - sm.HEAD - sm.TAIL
    text = f"{n:,}"
    need = 7.0 * sum(c.isdigit() for c in text) + 3.5 * text.count(",") + 2 * 6
    assert sm.gap_width([numel]) >= need, (numel, sm.gap_width([numel]), need)
    row = {"numel": numel, "views": [], "device": "cpu", "residency": "cpu", "dirty": None, "shapes": [], "id": 1,
           "dtype": "float32", "nbytes": 4 * numel, "fence": False, "last_write": None, "version": 0, "writes": [],
           "names": ["w"], "kind": "var", "simulated": False, "name": "w"}
    b = sm._block(row, 0, sm.LEFT, 800, None, gap_w=sm.gap_width([numel]))
    (gap,) = [c for c in b["cells"] if c.get("gap")]
    assert gap["count"] == text and gap["w"] >= need


# ---- colours: one meaning each, listed; text contrast -------------------------------------------------------------
def _theme_vars(theme: str) -> dict[str, str]:
    spec = importlib.util.find_spec("jupyterlab")
    if spec is None or spec.origin is None:
        pytest.skip("jupyterlab is not installed: no theme to compute colours from")
    css = Path(spec.origin).parent / "themes" / "@jupyterlab" / f"theme-{theme}-extension" / "index.css"
    if not css.exists():
        pytest.skip(f"no {css}")
    return dict(re.findall(r"(--[\w-]+):([^;}]+)", css.read_text()))


def _rules(css: str) -> list[tuple[list[str], dict[str, str]]]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@keyframes[^{]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", "", css)
    out = []
    for sel, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        decls = {k.strip(): v.replace("!important", "").strip() for k, v in re.findall(r"([\w-]+)\s*:\s*([^;]+)", body)}
        out.append(([x.strip() for x in sel.split(",")], decls))
    return out


class Theme:
    """CSS colours as JupyterLab's theme resolves them: var(), #hex, rgb(a)(), named, color-mix(in srgb, ...)."""

    NAMED = {"white": (255, 255, 255, 1.0), "black": (0, 0, 0, 1.0), "transparent": (0, 0, 0, 0.0)}

    def __init__(self, theme: str):
        self.vars = _theme_vars(theme)
        rules = _rules((STATIC / "common.css").read_text()) + _rules((STATIC / "storage.css").read_text())
        self.rules = rules
        for sels, decls in rules:
            if any(s in (".tl-storage", ".tl-graph") for s in sels):
                self.vars.update({k: v for k, v in decls.items() if k.startswith("--")})

    def color(self, expr: str) -> tuple[float, float, float, float]:
        expr = expr.strip()
        m = re.fullmatch(r"var\(\s*(--[\w-]+)\s*(?:,\s*(.*))?\)", expr, re.S)
        if m:
            name, fallback = m.groups()
            if name in self.vars:
                return self.color(self.vars[name])
            assert fallback is not None, f"{name} is not defined and has no fallback"
            return self.color(fallback)
        if expr in self.NAMED:
            return self.NAMED[expr]
        if expr.startswith("#"):
            h = expr[1:]
            if len(h) in (3, 4):
                h = "".join(c * 2 for c in h)
            vals = [int(h[i:i + 2], 16) for i in range(0, len(h), 2)]
            return (*vals[:3], vals[3] / 255 if len(vals) == 4 else 1.0)
        m = re.fullmatch(r"rgba?\((.*)\)", expr)
        if m:
            vals = [float(v) for v in m.group(1).split(",")]
            return (*vals[:3], vals[3] if len(vals) == 4 else 1.0)
        m = re.fullmatch(r"color-mix\(in srgb,\s*(.*)\)", expr, re.S)
        if m:
            a, b = _split_args(m.group(1))
            (ca, pa), (cb, pb) = _weighted(a), _weighted(b)
            if pa is None and pb is None:
                pa = pb = 50.0
            pa = 100 - pb if pa is None else pa
            pb = 100 - pa if pb is None else pb
            A, B = self.color(ca), self.color(cb)
            wa, wb = pa / (pa + pb), pb / (pa + pb)
            alpha = A[3] * wa + B[3] * wb
            if alpha == 0:
                return (0, 0, 0, 0.0)
            rgb = [(A[i] * A[3] * wa + B[i] * B[3] * wb) / alpha for i in range(3)]  # premultiplied, as CSS mixes
            return (*rgb, alpha)
        raise AssertionError(f"cannot compute the colour {expr!r}")

    def rule(self, selector_end: str, prop: str) -> str:
        """The value of ``prop`` in the last rule of storage.css (or common.css) whose selector ends with
        ``selector_end``."""
        state = ":" in selector_end  # a :hover rule only when asked for one
        found = [d[prop] for sels, d in self.rules
                 if prop in d and any(s.endswith(selector_end) and (state or ":" not in s) for s in sels)]
        assert found, f"no rule for {selector_end} sets {prop}"
        return found[-1]


def _split_args(s: str) -> list[str]:
    depth, cur, out = 0, "", []
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return [*out, cur]


def _weighted(arg: str) -> tuple[str, float | None]:
    m = re.fullmatch(r"\s*(.*?)\s+([\d.]+)%\s*", arg, re.S)
    return (m.group(1), float(m.group(2))) if m else (arg.strip(), None)


def _over(fg, bg):
    """fg composited over an opaque bg."""
    a = fg[3]
    return tuple(fg[i] * a + bg[i] * (1 - a) for i in range(3)) + (1.0,)


def _lum(c) -> float:
    f = [(v / 255) / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c[:3]]
    return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2]


def _contrast(a, b) -> float:
    la, lb = sorted((_lum(a), _lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


#: every text of the view and what it sits on (a storage.css fill/colour, or a --tl-* token)
TEXTS = {  # selector end -> (property, background)
    ".tl-st-svg text": ("fill", "var(--tl-bg)"),
    ".tl-st-name": ("fill", "var(--tl-bg)"),
    ".tl-st-sub": ("fill", "var(--tl-bg)"),
    ".tl-st-detail": ("fill", "var(--tl-bg)"),
    ".tl-st-section": ("fill", "var(--tl-bg)"),
    ".tl-st-lane-label": ("fill", "var(--tl-bg)"),
    ".tl-st-track-label": ("fill", "var(--tl-bg)"),
    ".tl-st-index": ("fill", "var(--tl-bg)"),
    ".tl-st-gaptext": ("fill", "var(--tl-bg)"),
    ".tl-st-gap": ("fill", "var(--tl-bg)"),
    ".tl-st-absent-text": ("fill", "var(--tl-bg)"),
    ".tl-st-arrow-text": ("fill", "var(--tl-bg)"),
    ".tl-st-mark-text": ("fill", (".tl-st-mark", "fill")),
    ".tl-st-badge-text": ("fill", (".tl-st-badge-bg", "fill")),
    ".tl-st-group-toggle": ("fill", (".tl-st-group-bg", "fill")),
    ".tl-st-group-name": ("fill", (".tl-st-group-bg", "fill")),
    ".tl-st-group-text": ("fill", (".tl-st-group-bg", "fill")),
    ".tl-st-group:hover .tl-st-group-bg": ("fill", None),  # (a background: checked under the text below)
    ".tl-status": ("color", "var(--tl-bg)"),
    ".tl-st-legend": ("color", "var(--tl-bg)"),
    ".tl-st-card-title": ("color", (".tl-st-card", "background")),
    ".tl-st-card-line": ("color", (".tl-st-card", "background")),
    ".tl-btn": ("color", (".tl-btn", "background")),
    ".tl-st-filter": ("color", (".tl-st-filter", "background")),
    ".tl-tooltip th": ("color", (".tl-tooltip", "background")),
    ".tl-tooltip": ("color", (".tl-tooltip", "background")),
    ".tl-st-tablewrap": ("color", "var(--tl-bg)"),
    ".tl-storage-table": ("color", "var(--tl-bg)"),
}


def _text_classes_in_js() -> set[str]:
    js = (STATIC / "storage.js").read_text()
    calls = re.findall(r"\btext\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)", js)
    return {c for call in calls for c in re.findall(r'"(tl-st-[a-z-]+)', call)}


def test_every_text_class_of_the_picture_is_checked():
    covered = {re.search(r"\.(tl-st-[a-z-]+)", k).group(1) for k in TEXTS if re.search(r"\.(tl-st-[a-z-]+)", k)}
    missing = _text_classes_in_js() - covered
    assert not missing, f"text drawn with classes the contrast test does not check: {missing}"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_reaches_4_5_to_1_in_both_themes(theme):
    th = Theme(theme)
    page = th.color("var(--tl-bg)")
    low = {}
    for sel, (prop, bg_of) in TEXTS.items():
        if bg_of is None:
            continue
        fg = th.color(th.rule(sel, prop))
        bg = _over(th.color(bg_of if isinstance(bg_of, str) else th.rule(*bg_of)), page)
        c = _contrast(_over(fg, bg), bg)
        if c < 4.5:
            low[sel] = round(c, 2)
    # a group row's summary, on the row's hover background too
    hover = _over(th.color(th.rule(".tl-st-group:hover .tl-st-group-bg", "fill")), page)
    c = _contrast(_over(th.color(th.rule(".tl-st-group-text", "fill")), hover), hover)
    if c < 4.5:
        low["group text on hover"] = round(c, 2)
    assert not low, f"{theme}: text under 4.5:1: {low}"
    # and the JupyterLab colour the index text used before (--jp-ui-font-color3) is under it: the test can fail
    assert _contrast(_over(th.color("var(--jp-ui-font-color3)"), page), page) < 4.5


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_colour_has_one_meaning_and_the_legend_lists_it(theme):
    th = Theme(theme)
    page = th.color("var(--tl-bg)")
    # what the picture paints, per meaning: the lanes by the state of the copies, the marks of a view's reads
    paint = {k: _over(th.color(th.rule(f".tl-st-cell.tl-st-{k}", "fill")), page)
             for k in ("cpu", "sync", "host-newer", "device-newer")}
    paint["view"] = _over(th.color(th.rule(".tl-st-mark", "fill")), page)
    paint["view-edge"] = _over(th.color(th.rule(".tl-st-mark", "stroke")), page)
    # the ink of the transfer arrows is no state's colour
    arrow = _over(th.color(th.rule(".tl-st-arrow-line", "stroke")), page)
    meanings = list(paint.items())
    for i, (a, ca) in enumerate(meanings):
        for b, cb in meanings[i + 1:]:
            if {a, b} == {"view", "view-edge"}:
                continue
            d = sum((x - y) ** 2 for x, y in zip(ca[:3], cb[:3])) ** 0.5
            assert d > 30, f"{theme}: {a} and {b} are painted alike: {ca[:3]} vs {cb[:3]}"
    for k in ("sync", "host-newer", "device-newer", "view"):
        d = sum((x - y) ** 2 for x, y in zip(arrow[:3], paint[k][:3])) ** 0.5
        assert d > 30, f"{theme}: the transfer arrows are painted like {k}"
    # the legend's swatch of each meaning is painted in the picture's colour (mixed alike)
    for k in ("sync", "host-newer", "device-newer"):
        sw = _over(th.color(th.rule(f".tl-st-swatch.tl-st-{k}", "background")), page)
        cell = paint[k]
        assert abs(_lum(sw) - _lum(cell)) < 0.2, (k, sw, cell)
        assert max(abs(x - y) for x, y in zip(sw[:3], cell[:3])) < 60, (k, sw, cell)
    assert th.rule(".tl-st-swatch.tl-st-view", "background") and th.rule(".tl-st-swatch.tl-st-cpu", "background")


def test_the_legend_lists_every_meaning_drawn():
    sim_t = tl.arange(6, dtype=tl.float32).to("sim")
    x = tl.arange(12, dtype=tl.float32).reshape(3, 4)
    p = sm.storage_payload(sm.storage_model(user_ns={"sim_t": sim_t, "x": x, "xT": x.T}))
    keys = [k for k, _ in p["legend"]]
    # x: its only copy (host) and views; sim_t before any download: no host copy, the device's only copy
    assert {"cpu", "absent", "view"} <= set(keys), keys
    assert keys == [k for k, _ in sm.LEGEND if k in keys], "the legend keeps one order"
    sim_t.numpy()  # both copies, in sync
    p = sm.storage_payload(sm.storage_model(user_ns={"sim_t": sim_t}))
    assert "sync" in [k for k, _ in p["legend"]] and "absent" not in [k for k, _ in p["legend"]]
    # every key the legend may list has a swatch rule (storage.css)
    css = (STATIC / "storage.css").read_text()
    for k, _ in sm.LEGEND:
        assert f".tl-st-swatch.tl-st-{k}" in css, k

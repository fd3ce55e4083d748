"""The storage picture's model and payload (``widgets/storage_model.py``, ``widgets/layouts.py``), without a browser:
names (parameters and optimizer state by module path, notebook variables), "other (N)", filters, the strips and
the views laid over them (transpose, slice with a step, expand with stride 0, elided long storages), host/device
lanes on the simulated device, transfer arrows from events, and ``draw_layouts``.
"""

from __future__ import annotations

import gc

import pytest

pytest.importorskip("anywidget")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import tinygrad_like as tl  # noqa: E402
from tinygrad_like import events  # noqa: E402
from tinygrad_like.widgets import layouts  # noqa: E402
from tinygrad_like.widgets import storage_view as sv  # noqa: E402

nn = tl.nn


@pytest.fixture
def views():
    opened = []

    def make(*args, **kwargs):
        v = sv.StorageView(*args, **kwargs)
        opened.append(v)
        return v

    yield make
    for v in opened:
        v.close()


def block_of(payload, t):
    found = [b for b in payload["blocks"] if b["id"] == t.storage.id]
    assert len(found) == 1, f"storage {t.storage.id}: {len(found)} blocks"
    return found[0]


def row_of(rows, t):
    (r,) = [r for r in rows if r["id"] == t.storage.id]
    return r


# ---- naming ----------------------------------------------------------------------------------------------------
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


class Net(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(n)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def _train_step(model, opt, device="cpu"):
    x = tl.randn(2, 3, device=device)
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


def test_parameters_and_optimizer_state_by_module_path():
    model = Net()
    opt = tl.optim.Adam(model.parameters(), lr=0.1)
    _train_step(model, opt)
    rows = sv.storage_model(model=model, optimizers=[opt])
    w = model.blocks[3].fc1.weight
    assert row_of(rows, w)["name"] == "blocks.3.fc1.weight" and row_of(rows, w)["kind"] == "param"
    assert row_of(rows, w.grad)["name"] == "blocks.3.fc1.weight.grad"
    st = opt.state[w]
    assert row_of(rows, st["exp_avg"])["name"] == "blocks.3.fc1.weight.exp_avg"
    assert row_of(rows, st["exp_avg_sq"])["kind"] == "state"
    # a parameter, its gradient and its state sort together, in the model's order
    named = sorted((r for r in rows if r["names"]), key=lambda r: r["sort"])
    names = [r["name"] for r in named]
    i = names.index("blocks.3.fc1.weight")
    assert names[i:i + 4] == ["blocks.3.fc1.weight", "blocks.3.fc1.weight.grad", "blocks.3.fc1.weight.exp_avg",
                              "blocks.3.fc1.weight.exp_avg_sq"]


def test_momentum_buffers_and_variables_from_a_namespace():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    _train_step(model, opt)
    x = tl.arange(6, dtype=tl.float32).reshape(2, 3)
    ns = {"model": model, "opt": opt, "x": x, "xt": x.T, "_hidden": tl.zeros(2), "Out": {}, "n": 3}
    rows = sv.storage_model(user_ns=ns)
    assert row_of(rows, model[0].weight)["name"] == "model.0.weight"
    assert row_of(rows, opt.state[model[2].bias]["momentum_buffer"])["name"] == "model.2.bias.momentum_buffer"
    r = row_of(rows, x)
    assert r["names"] == ["x", "xt"] and r["kind"] == "var"
    assert not row_of(rows, ns["_hidden"])["names"], "underscore names are IPython's, not the user's"
    # model= wins over a namespace module: bare paths, no duplicate
    rows = sv.storage_model(model=model, user_ns=ns)
    assert row_of(rows, model[0].weight)["names"] == ["0.weight"]


def test_ipython_namespace_is_read_only_from_a_loaded_ipython(monkeypatch):
    import sys
    import types

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert sv.ipython_namespace() is None, "IPython not loaded: no namespace (and no import)"
    assert "IPython" not in sys.modules
    fake = types.ModuleType("IPython")
    shell = types.SimpleNamespace(user_ns={"w": tl.zeros(2)})
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert sv.ipython_namespace() is shell.user_ns
    view = sv.StorageView(live=False)  # user_ns=True: the shell's namespace names w
    try:
        assert [b["label"] for b in view.widget.payload["blocks"]] == ["w"]
    finally:
        view.close()


def test_other_group_and_filters(views):
    gc.collect()
    a = tl.zeros(4, dtype=tl.float32)
    b = tl.zeros(5, dtype=tl.int64)
    s = tl.ones(3, device="sim")
    anon = tl.zeros(7)  # noqa: F841 - alive, named by nobody
    view = views(user_ns={"alpha": a, "beta": b, "sim_t": s}, live=False)
    p = view.widget.payload
    named = {blk["label"] for blk in p["blocks"]}
    assert named == {"alpha", "beta", "sim_t"}, named
    n_other = sum(1 for r in view.rows if not r["names"])
    assert n_other >= 1 and p["other"]["count"] == n_other and p["other"]["text"] == f"other ({n_other})"
    assert [sec["label"] for sec in p["sections"]] == ["named (3)"]
    view.show_other = True  # the browser's "other (N)" button sets the same trait
    p = view.widget.payload
    assert [sec["label"] for sec in p["sections"]] == ["named (3)", f"other ({n_other})"]
    assert anon.storage.id in {blk["id"] for blk in p["blocks"]}
    view.show_other = False
    view.set_filter(text="ALP")
    assert [blk["label"] for blk in view.widget.payload["blocks"]] == ["alpha"]
    view.set_filter(text="alp|bet")  # alternatives
    assert sorted(blk["label"] for blk in view.widget.payload["blocks"]) == ["alpha", "beta"]
    view.set_filter(text="a ph")  # every word must match: only alpha has both
    assert [blk["label"] for blk in view.widget.payload["blocks"]] == ["alpha"]
    view.set_filter(text="alp zzz")
    assert view.widget.payload["blocks"] == []
    view.set_filter(text="", dtype="int64")
    assert [blk["label"] for blk in view.widget.payload["blocks"]] == ["beta"]
    view.set_filter(dtype="", device="sim:0")
    assert [blk["label"] for blk in view.widget.payload["blocks"]] == ["sim_t"]
    assert "sim:0" in view.widget.payload["filters"]["devices"] and "int64" in view.widget.payload["filters"]["dtypes"]


# ---- strips and views over them ------------------------------------------------------------------------------------
def _track(block, label):
    (t,) = [t for t in block["tracks"] if t["label"] == label]
    return {m[1]: (m[2], m[3]) for m in t["marks"]}  # storage index -> (first visit, reads)


def test_strip_and_tracks_for_transpose_step_slice_and_expand():
    x = tl.arange(12, dtype=tl.float32).reshape(3, 4)
    col = tl.tensor([10.0, 20.0, 30.0]).unsqueeze(1)
    ns = {"x": x, "xT": x.T, "v": x[1:, ::2], "wide": col.expand(3, 4)}
    p = sv.storage_payload(sv.storage_model(user_ns=ns))
    b = block_of(p, x)
    assert [c["i"] for c in b["cells"]] == list(range(12)) and b["strip"]["w"] == 12 * sv.CELL
    assert [c["x"] for c in b["cells"][:3]] == [sv.LEFT, sv.LEFT + sv.CELL, sv.LEFT + 2 * sv.CELL]
    assert _track(b, "x") == {k: (k, 1) for k in range(12)}
    assert _track(b, "xT") == {0: (0, 1), 4: (1, 1), 8: (2, 1), 1: (3, 1), 5: (4, 1), 9: (5, 1), 2: (6, 1),
                               6: (7, 1), 10: (8, 1), 3: (9, 1), 7: (10, 1), 11: (11, 1)}
    assert _track(b, "v") == {4: (0, 1), 6: (1, 1), 8: (2, 1), 10: (3, 1)}
    (tv,) = [t for t in b["tracks"] if t["label"] == "v"]
    assert tv["detail"] == "(2, 2) · stride (4, 2) · offset 4 · 4 of 12 read"
    w = block_of(p, col)
    assert _track(w, "wide") == {0: (0, 4), 1: (4, 4), 2: (8, 4)}, "stride 0: every element read 4 times"
    # tracks sit below the lanes, one after another
    ys = [t["y"] for t in b["tracks"]]
    assert ys == sorted(ys) and ys[0] > b["lanes"][-1]["y"] + b["lanes"][-1]["h"]


def test_long_storages_are_elided_with_counts():
    big = tl.zeros(1000, 1000)
    sl = big[:, ::500]  # two columns: elements 0, 500, 1000, ...
    p = sv.storage_payload(sv.storage_model(user_ns={"big": big, "sl": sl}))
    b = block_of(p, big)
    gaps = [c for c in b["cells"] if c.get("gap")]
    assert len(gaps) == 1 and gaps[0]["text"] == f"… {1_000_000 - sv.HEAD - sv.TAIL:,} …"
    idx = [c["i"] for c in b["cells"] if not c.get("gap")]
    assert idx == list(range(sv.HEAD)) + list(range(1_000_000 - sv.TAIL, 1_000_000))
    # the gap holds its count ("999,976": 7 characters of at most 7 px at 11 px) with room to the indices either side
    assert b["strip"]["w"] == (sv.HEAD + sv.TAIL) * sv.CELL + gaps[0]["w"] and gaps[0]["w"] >= 7 * 7 + 2 * 6
    marks = _track(b, "sl")
    assert marks[0] == (0, 1) and 999_500 not in marks or marks[999_500][0] == 1999
    assert all(k in (0, 999_500) for k in marks)
    assert layouts.strip_columns(5, max_cells=4, head=2, tail=1) == [0, 1, (2, 3), 4]


# ---- lanes and transfers on the simulated device -------------------------------------------------------------
def test_residency_lanes_on_sim_and_transfer_arrows(views):
    t = tl.arange(6, dtype=tl.float32).to("sim")
    view = views(user_ns={"t": t})
    b = block_of(view.widget.payload, t)
    assert [lane["id"] for lane in b["lanes"]] == ["host", "device"]
    assert b["lanes"][1]["label"] == "sim:0 (sim)" and b["state"] == "device-only"
    assert not b["lanes"][0]["present"] and b["arrows"] == []
    t.numpy()  # d2h: both copies, in sync
    view.refresh()
    b = block_of(view.widget.payload, t)
    assert b["state"] == "sync" and all(lane["present"] for lane in b["lanes"])
    (a,) = b["arrows"]
    assert a["dir"] == "d2h" and a["y0"] > a["y1"], "d2h points up, from the device lane to the host lane"
    assert a["text"].startswith("↑ d2h 1× · 24 B")
    t.mul_(2)  # a device write: the device copy is newer
    view.refresh()
    b = block_of(view.widget.payload, t)
    assert b["state"] == "device-newer" and b["lanes"][0]["stale"] and b["lanes"][1]["newer"]
    t.numpy()  # downloads again (the mirror was stale)
    t.copy_(tl.ones(6))  # a host write into the current mirror: the host copy is newer
    view.refresh()
    b = block_of(view.widget.payload, t)
    assert b["state"] == "host-newer" and b["lanes"][1]["stale"] and b["lanes"][0]["newer"]
    _ = t + 1  # the device's next op uploads: h2d
    view.refresh()
    dirs = {a["dir"]: a for a in block_of(view.widget.payload, t)["arrows"]}
    assert set(dirs) == {"h2d", "d2h"} and dirs["h2d"]["y0"] < dirs["h2d"]["y1"]
    assert view.transfer_totals()["h2d"]["count"] == 1
    sim_card = [d for d in view.widget.payload["devices"] if d["device"].startswith("sim:0")][0]
    assert sim_card["device"] == "sim:0 (simulated)"
    assert any(line.startswith("pool: in use") for line in sim_card["lines"])


def test_version_badge_carries_the_write_site(views):
    model = nn.Sequential(nn.Linear(3, 2))
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    view = views(model=model, optimizer=opt, user_ns=False)
    _train_step(model, opt)
    view.refresh()
    b = block_of(view.widget.payload, model[0].weight)
    assert b["badge"]["text"] == f"v{model[0].weight.storage.version}"
    assert "by SGD.step()" in " ".join(b["badge"]["writes"])


def test_updates_only_when_something_shown_changed(views):
    t = tl.zeros(3)
    view = views(user_ns={"t": t}, live=False)
    n = view.updates
    view.refresh()
    view.refresh()
    assert view.updates == n, "nothing changed: no payload sent"
    t.add_(1)
    view.refresh()
    assert view.updates == n + 1


def test_paused_or_hidden_views_do_not_redraw(views):
    t = tl.zeros(3)
    view = views(user_ns={"t": t})
    view.widget.paused = True
    before = view.redraws
    t.add_(1)
    view.after_cell()
    assert view.redraws == before and view._stale
    view.widget.paused = False  # resumed: catches up once
    assert view.redraws == before + 1 and block_of(view.widget.payload, t)["version"] == 1
    view.widget.visible = False
    t.add_(1)
    view.after_cell()
    assert block_of(view.widget.payload, t)["version"] == 1
    view.widget.visible = True
    assert block_of(view.widget.payload, t)["version"] == 2


def test_close_message_closes_the_view():
    from tinygrad_like.widgets import _base

    view = sv.StorageView(user_ns=False)
    widget = view.widget  # (a closed view keeps no widget: hold it to check it was closed)
    assert events.ACTIVE and view in _base._OPEN
    view.on_message({"type": "close"})
    assert view not in _base._OPEN and widget.comm is None
    assert "closed" in view._repr_mimebundle_()["text/plain"]


# ---- draw_layouts ------------------------------------------------------------------------------------------------
def test_draw_layouts_returns_a_figure_with_two_axes_per_view():
    x = tl.arange(12, dtype=tl.float32).reshape(3, 4)
    fig = layouts.draw_layouts(("x", x), ("x.T", x.T), ("big", tl.zeros(100, 50)[:, ::3]))
    assert len(fig.axes) == 6
    assert fig.axes[1].get_title() == "storage (12 elements): stride (4, 1), offset 0"
    texts = [t.get_text() for t in fig.axes[5].texts]
    assert any(t.startswith("…") for t in texts), "a long storage is elided"
    with pytest.raises(ValueError):
        layouts.draw_layouts()


def test_after_a_cell_that_changed_nothing_it_does_not_look_again():
    """``1 + 1``: no event, no storage died, no variable rebound -- no redraw. Each of the three brings one."""
    ns = {}
    keep = tl.ones(4)
    ns["keep"] = keep
    view = sv.StorageView(user_ns=ns)
    view.after_cell()
    n = view.redraws
    _ = 1 + 1
    view.after_cell()
    assert view.redraws == n  # nothing changed
    gone = tl.ones(2)  # an allocation (an event) ...
    view.after_cell()
    assert view.redraws == n + 1
    del gone  # ... and a storage that died without one
    gc.collect()
    view.after_cell()
    assert view.redraws == n + 2
    ns["alias"] = keep  # a new name for an existing storage: no core event
    view.after_cell()
    assert view.redraws == n + 3 and any("alias" in r["names"] for r in view.rows)
    view.after_cell()
    assert view.redraws == n + 3
    view.close()


def test_a_saved_notebook_gets_a_static_picture_of_the_view(views):
    """Where the widget cannot run (nbconvert, GitHub), the mimebundle's PNG shows the strips and the names."""
    import base64
    import struct

    model = Net(1)
    view = views(model=model, user_ns=False)
    data = view._repr_mimebundle_()
    assert data["text/plain"] == "<StorageView>"
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    payload = view.widget.payload
    assert width == round(payload["width"]) and height > 24 * min(len(payload["blocks"]), sv.STATIC_BLOCKS)

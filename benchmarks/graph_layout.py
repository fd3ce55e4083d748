"""How long the graph views' Python side takes on large graphs: building the model, folding it, and the layered
layout (python-igraph's Sugiyama) of the default view and of the whole graph expanded, and how clean the latter is
(``graph_checks``: edges through boxes or frame labels, overlapping boxes; all three should be 0).

    python benchmarks/graph_layout.py [--blocks 500]

Prints JSON. The residual MLP (``_resmlp.py``) has 4 ops per block, so 500 blocks is just over 2,000 ops.
There is no peer in the same run: the number to compare with is the browser-side budget in
``benchmarks/graph_browser.py`` (first draw of a 2,000-op graph <= 1 s) and the layout libraries' own times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import _env
from _resmlp import make

from tinygrad_like.widgets import graph_checks as checks
from tinygrad_like.widgets import graph_model as gm


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=500)
    args = ap.parse_args()
    model, loss = make(args.blocks)
    gm.layout(*(lambda g: (g, set(g.groups)))(gm.build_graph(loss, model)))  # warm-up: imports igraph
    build_s, g = timed(lambda: gm.build_graph(loss, model))
    default = gm.default_expanded(g)
    payload_s, payload = timed(lambda: gm.graph_payload(g, default))
    full_s, full = timed(lambda: gm.layout(g, set(g.groups)), repeat=3)
    run = next(gid for gid in g.groups if gid.startswith("run:"))
    expand_s, expanded = timed(lambda: gm.graph_payload(g, default | {run}))
    whole = gm.graph_payload(g, set(g.groups))
    print(json.dumps({
        "benchmark": "graph_layout", "machine": _env.machine_info("igraph"),
        "graph": {"blocks": args.blocks, "nodes": len(g.nodes), "ops": len(g.ops), "groups": len(g.groups)},
        "build_graph_ms": round(build_s * 1e3, 2),
        "default_view": {"boxes": len(payload["boxes"]), "payload_ms": round(payload_s * 1e3, 2)},
        "expand_run": {"boxes": len(expanded["boxes"]), "payload_ms": round(expand_s * 1e3, 2)},
        "everything_expanded": {"boxes": len(full["boxes"]), "layout_ms": round(full_s * 1e3, 2),
                                "width": whole["width"], "height": whole["height"],
                                "edge_box_crossings": len(checks.edge_box_crossings(whole)),
                                "edge_label_crossings": len(checks.edge_label_crossings(whole)),
                                "box_overlaps": len(checks.box_overlaps(whole))},
    }, indent=2))


if __name__ == "__main__":
    main()

"""Are the learner's core's speed-ups worth their lines? An in-process A/B of each against its plain form.

The learner's core (``tools/sz.py``) keeps a speed-up only where it is worth more than 5% (issue "Core 2.1"); each
one is marked ``# perf:`` with the figure this script prints. Two are measured, each against the readable code it
replaces, in the same process, round robin (so the machine's drift hits every variant alike):

- ``Function.apply`` written out flat, against the same steps through ``_edge`` and ``_attach`` (what ``record``
  uses);
- ``save_for_backward``'s path for two tensors, against one generator over ``t._version``.

    .venv/bin/python benchmarks/core_speedups.py [--rounds 8] [--out results.json]

Prints one JSON document: per variant, the best time of ``a * b`` on 4x4 tensors that require grad (one node
recorded) and of a 10-op chain with its backward, and each one's ratio to the code as it is.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from _env import git_state, machine_info, report  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like import events  # noqa: E402
from tinygrad_like.autograd import function  # noqa: E402
from tinygrad_like.autograd.function import Function  # noqa: E402
from tinygrad_like.tensor_base import TensorBase  # noqa: E402

FLAT_APPLY = Function.__dict__["apply"]
FAST_SAVE = Function.save_for_backward


@classmethod
def plain_apply(cls, x, *args):
    """``Function.apply`` as a reader would first write it: the same steps, through the helpers."""
    node = function._new(cls)
    node.saved = None
    r = function._forward_watched(node, x, args) if events.ACTIVE else node.forward(x, *args)
    if isinstance(r, TensorBase):
        out = r if cls.returns_fresh else function._own(r)
    else:
        out = x._wrap(r, x._dev)
    if not function._grad_mode.enabled or not out.dtype.is_floating_point:
        return out
    edges = (function._edge(x), *(function._edge(a) if isinstance(a, TensorBase) else None for a in args))
    if all(e is None for e in edges):
        return out
    if cls.save_output:
        alias = function._alias(out)
        saved, versions = node.saved or (), node.saved_versions if node.saved else ()
        node.saved, node.saved_versions = (*saved, alias), (*versions, alias._st.version)
    function._attach(node, edges, out, x, args)
    return out


def plain_save(self, *tensors) -> None:
    """``save_for_backward`` without its two-tensor path."""
    self.saved = tensors
    self.saved_versions = tuple(-1 if t is None else t._version for t in tensors)


VARIANTS = {"as it is": (FLAT_APPLY, FAST_SAVE), "apply through the helpers": (plain_apply, FAST_SAVE),
            "save_for_backward without its 2-tensor path": (FLAT_APPLY, plain_save)}


def best_us(fn, number: int) -> float:
    gc.disable()  # (as timeit does)
    try:
        return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6
    finally:
        gc.enable()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=8, help="round-robin rounds over the variants (best is kept)")
    p.add_argument("--out", help="also write the JSON to this file")
    args = p.parse_args()
    tl.manual_seed(0)
    a, b = tl.randn(4, 4, requires_grad=True), tl.randn(4, 4, requires_grad=True)

    def op():
        return a * b

    def chain():
        y = a
        for _ in range(2):
            y = ((y * b + a).tanh() @ b).relu()
        y.sum().backward()

    times = {name: {"a * b": [], "chain10 + backward": []} for name in VARIANTS}
    try:
        for _ in range(args.rounds):
            for name, (apply, save) in VARIANTS.items():
                Function.apply, Function.save_for_backward = apply, save
                times[name]["a * b"].append(best_us(op, 20000))
                times[name]["chain10 + backward"].append(best_us(chain, 500))
    finally:
        Function.apply, Function.save_for_backward = FLAT_APPLY, FAST_SAVE
    base = {case: min(v) for case, v in times["as it is"].items()}
    rows = [{"variant": name, **{case: {"best_us": round(min(v), 3), "ratio_to_as_it_is": round(min(v) / base[case], 3)}
                                 for case, v in cases.items()}} for name, cases in times.items()]
    report({"benchmark": "core_speedups", "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": " ".join(sys.argv), "machine": machine_info("numpy"), "git": git_state(),
            "rounds": args.rounds, "rows": rows}, args.out)


if __name__ == "__main__":
    main()

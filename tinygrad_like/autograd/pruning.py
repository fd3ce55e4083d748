"""Which nodes ``tl.autograd.grad`` runs: only those on a path from the outputs to an input, as torch's engine.

``grad(z, y)`` for an intermediate ``y`` needs the gradient that reaches ``y``'s node; it must not run that node's
own backward, nor anything below it that leads to no other input. Running them would be wasted work, and without
``retain_graph`` it would free saved tensors that a later ``backward`` through ``y`` still needs (torch keeps them).
"""

from __future__ import annotations

__all__ = ["prune"]


def prune(nodes: list, wanted) -> tuple[list, set]:
    """(the nodes to run, in ``nodes``' order; the wanted nodes whose own backward is not run, since no other wanted
    node or leaf lies below them). ``nodes`` is the pass's plan, parents before their inputs (``engine._plan``);
    ``wanted`` the inputs' nodes and leaves."""
    below = {}  # node -> whether a wanted node or leaf lies below it
    for node in reversed(nodes):  # (inputs before the nodes that use them)
        below[node] = any(p is not None and (p in wanted or below.get(p, False)) for p in node.next)
    return [n for n in nodes if below[n] or n in wanted], {n for n in nodes if n in wanted and not below[n]}

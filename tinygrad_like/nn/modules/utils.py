"""``torch.nn.modules.utils``: the tuple helpers layers use for int-or-tuple arguments."""

from ...ops._nn_args import _ntuple as _ntuple_checked


def _ntuple(n: int, name: str = "parse"):
    """torch's helper: a function turning an int (or an iterable) into an ``n``-tuple."""
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple([x] * n)
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``(1, 2)`` with n=2 -> ``(2, 2, 1, 1)``: the padding order F.pad takes."""
    return tuple(x for x in reversed(t) for _ in range(n))


_ = _ntuple_checked

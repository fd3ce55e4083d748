"""Conformance rows of the shaping and indexing family (issue 17): values and gradients against torch.

roll, rot90, tile, repeat_interleave, unfold, diff, the stacking functions, take, take_along_dim, meshgrid,
select, tensor_split, masked_select, scatter and scatter_reduce (every reduction, with and without ``self``),
index_add/copy/fill/put, masked_scatter, their in-place spellings on non-leaves, and fancy indexing (lists,
tuples, ranges, bool lists, mixed with ints, slices and None) for reading and for ``__setitem__``.
"""

from __future__ import annotations

from . import C, S, k

T34, STEP, E03 = S((3, 4), view="T"), S((3, 4), view="step"), S((0, 3))


def _i(m, *rows):
    return m.tensor(list(rows) if len(rows) != 1 else rows[0])


def _ip(m, name, x, *args, **kw):
    """An in-place op on a non-leaf copy of ``x`` (returns the written tensor)."""
    y = x * 1
    getattr(y, name)(*args, **kw)
    return y


ROLL = [
    C("roll-flat", lambda m, x: x.roll(5), S((3, 4))),
    C("roll-dim0", lambda m, x: x.roll(1, 0), S((3, 4))),
    C("roll-neg-dim", lambda m, x: x.roll(-1, dims=-1), T34),
    C("roll-two-dims", lambda m, x: m.roll(x, (1, -2), (0, 1)), S((2, 3, 4))),
    C("roll-big-shift", lambda m, x: x.roll(7, 1), STEP),
    C("roll-0d", lambda m, x: x.roll(1), S(())),
    C("roll-empty", lambda m, x: x.roll(1, 0), E03),
    C("rot90", lambda m, x: x.rot90(), S((3, 4))),
    C("rot90-k2", lambda m, x: m.rot90(x, 2), T34),
    C("rot90-k3-dims", lambda m, x: x.rot90(3, (1, 2)), S((2, 3, 4))),
    C("rot90-k-1-rev", lambda m, x: x.rot90(-1, [1, 0]), S((3, 4))),
    C("rot90-k0", lambda m, x: x.rot90(0), S((3, 4))),
    C("fliplr", lambda m, x: m.fliplr(x), STEP),
    C("flipud", lambda m, x: x.flipud(), S((3, 4))),
    C("tile-short", lambda m, x: x.tile((2,)), S((3, 4))),
    C("tile-long", lambda m, x: m.tile(x, (2, 1, 2)), T34),
    C("tile-0d", lambda m, x: x.tile(3), S(())),
    C("tile-varargs", lambda m, x: x.tile(1, 2), E03),
]

REPEAT_INTERLEAVE = [
    C("repeat_interleave-flat", lambda m, x: x.repeat_interleave(2), S((3, 4))),
    C("repeat_interleave-dim0", lambda m, x: x.repeat_interleave(3, dim=0), T34),
    C("repeat_interleave-dim-1", lambda m, x: m.repeat_interleave(x, 2, -1), S((2, 3, 4))),
    C("repeat_interleave-once", lambda m, x: x.repeat_interleave(1, 0), S((3, 4))),
    C("repeat_interleave-zero", lambda m, x: x.repeat_interleave(0, 1), S((3, 4))),
    C("repeat_interleave-tensor", lambda m, x: x.repeat_interleave(m.tensor([1, 0, 3]), dim=0), S((3, 4))),
    C("repeat_interleave-tensor-1", lambda m, x: x.repeat_interleave(m.tensor([2, 1, 1, 0]), dim=1), STEP),
    C("repeat_interleave-tensor-one", lambda m, x: x.repeat_interleave(m.tensor([2]), dim=1), S((3, 4))),
    C("repeat_interleave-output_size", lambda m, x: x.repeat_interleave(2, 0, output_size=6), S((3, 4))),
    C("repeat_interleave-0d", lambda m, x: x.repeat_interleave(3), S(())),
]

UNFOLD = [
    C("unfold-overlap", lambda m, x: x.unfold(1, 2, 1), S((3, 4))),
    C("unfold-step2", lambda m, x: x.unfold(0, 2, 2), S((5, 3))),
    C("unfold-gap", lambda m, x: x.unfold(-1, 2, 3), S((2, 3, 7))),
    C("unfold-whole", lambda m, x: x.unfold(1, 4, 1), S((3, 4))),
    C("unfold-T", lambda m, x: x.unfold(0, 2, 1), T34),
    C("unfold-step-view", lambda m, x: x.unfold(1, 3, 1), STEP),
    C("unfold-twice", lambda m, x: x.unfold(0, 2, 1).unfold(1, 3, 1), S((4, 5))),
    C("unfold-size0", lambda m, x: x.unfold(1, 0, 1), S((3, 4))),
    C("unfold-0d", lambda m, x: x.unfold(0, 1, 1), S(())),
    C("unfold-empty", lambda m, x: x.unfold(1, 2, 1), E03),
    C("unfold-then-reduce", lambda m, x: x.unfold(0, 3, 1).sum(-1) * x[1:-1], S((6,))),
]

DIFF = [
    C("diff", lambda m, x: x.diff(), S((3, 4))),
    C("diff-n2-dim0", lambda m, x: m.diff(x, n=2, dim=0), S((4, 3))),
    C("diff-n-big", lambda m, x: x.diff(5, 0), S((3, 4))),
    C("diff-n0", lambda m, x: x.diff(0), S((3, 4))),
    C("diff-T", lambda m, x: x.diff(dim=1), T34),
    C("diff-prepend-append", lambda m, x, p, a: x.diff(prepend=p, append=a), S((3, 4)), S((3, 1)), S((3, 2))),
    C("diff-append-n2", lambda m, x, a: m.diff(x, 2, 0, append=a), S((3, 4)), S((2, 4))),
    C("diff-empty", lambda m, x: x.diff(dim=0), E03),
]

STACKS = [
    C("hstack-1d", lambda m, a, b: m.hstack([a, b]), S((3,)), S((2,))),
    C("hstack-2d", lambda m, a, b: m.hstack((a, b)), S((3, 4)), T34),
    C("hstack-0d", lambda m, a, b: m.hstack([a, b]), S(()), S((2,))),
    C("vstack-1d", lambda m, a, b: m.vstack([a, b]), S((3,)), S((3,))),
    C("vstack-2d", lambda m, a, b: m.vstack([a, b]), S((3, 4)), S((1, 4))),
    C("row_stack", lambda m, a, b: m.row_stack([a, b]), S(()), S((1,))),
    C("dstack", lambda m, a, b: m.dstack([a, b]), S((3, 4)), STEP),
    C("dstack-1d", lambda m, a, b: m.dstack([a, b]), S((3,)), S((3,))),
    C("column_stack", lambda m, a, b: m.column_stack([a, b]), S((3,)), S((3, 2))),
    C("atleast_3d-tuple", lambda m, a, b, c: m.atleast_3d(a, b, c), S(()), S((3,)), S((2, 3))),
    C("atleast_2d-list", lambda m, a, b: m.atleast_2d([a, b]), S(()), S((3,))),
    C("atleast_1d", lambda m, a: m.atleast_1d(a), S(())),
]

ALIASES = [
    C("swapdims", lambda m, x: x.swapdims(0, 2), S((2, 3, 4))),
    C("swapaxes-fn", lambda m, x: m.swapaxes(x, 0, 1), T34),
    C("moveaxis", lambda m, x: x.moveaxis(0, -1), S((2, 3, 4))),
    C("movedim-fn", lambda m, x: m.movedim(x, (0, 1), (2, 0)), S((2, 3, 4))),
    C("t-fn", lambda m, x: m.t(x), S((3, 4))),
    C("view_as", lambda m, x, o: x.view_as(o), S((3, 4)), S((2, 6))),
    C("reshape_as", lambda m, x, o: x.reshape_as(o), T34, S((12,))),
    C("type_as", lambda m, x: x.type_as(m.zeros(1, dtype=m.float64)), S((3, 4))),
    C("select", lambda m, x: x.select(1, -1), S((3, 4))),
    C("select-fn", lambda m, x: m.select(x, 0, 1), T34),
    C("narrow-tensor-start", lambda m, x: x.narrow(1, m.tensor(1), 2), S((3, 4))),
    C("tensor_split-sections", lambda m, x: x.tensor_split(3, dim=1), S((3, 4))),
    C("tensor_split-indices", lambda m, x: m.tensor_split(x, (1, 5, 2), 1), S((3, 4))),
    C("tensor_split-tensor", lambda m, x: x.tensor_split(m.tensor([1, 2])), S((4, 3))),
]

TAKE = [
    C("take", lambda m, x: x.take(m.tensor([[0, 11], [3, -1]])), S((3, 4))),
    C("take-dups-T", lambda m, x: m.take(x, m.tensor([1, 1, 5])), T34),
    C("take-0d-index", lambda m, x: x.take(m.tensor(2)), S((3,))),
    C("take_along_dim", lambda m, x: x.take_along_dim(m.tensor([[0], [1], [3]]), 1), S((3, 4))),
    C("take_along_dim-bcast", lambda m, x: m.take_along_dim(x, m.tensor([[0], [2]]), dim=0), S((3, 4))),
    C("take_along_dim-flat", lambda m, x: x.take_along_dim(m.tensor([[0, 11], [5, 5]])), S((3, 4))),
    C("masked_select", lambda m, x: x.masked_select(x > 0), S((3, 4))),
    C("masked_select-bcast", lambda m, x, y: m.masked_select(x, y > 0), S((3, 4)), S((4,))),
    C("masked_select-bcast-self", lambda m, x, y: x.masked_select(y > 0), S((4,)), S((3, 4))),
    C("masked_select-0d", lambda m, x: x.masked_select(m.tensor(True)), S(())),
    C("meshgrid-ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), S((3,)), S((2,))),
    C("meshgrid-xy", lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"), S((3,)), S((2,)), S((4,))),
    C("meshgrid-0d", lambda m, a, b: m.meshgrid(a, b, indexing="xy"), S(()), S((2,))),
    C("meshgrid-one", lambda m, a: m.meshgrid(a, indexing="xy"), S((3,))),
]

I3 = [[0, 1, 1], [2, 0, 0], [3, 3, 1]]
SCATTER = [
    C("scatter-src", lambda m, x, s: x.scatter(1, m.tensor([[0, 1], [2, 3], [3, 0]]), s), S((3, 4)), S((3, 2))),
    # a src larger than the index: torch's backward refuses (its gradient has the index's shape), so values only
    C("scatter-src-bigger", lambda m, x, s: x.scatter(0, m.tensor([[0, 2, 1, 0]]), s), S((3, 4)), S((2, 4)),
      grad=False),
    C("scatter-value", lambda m, x: x.scatter(1, m.tensor([[0], [2], [3]]), 1.5), S((3, 4))),
    C("scatter-value-kw", lambda m, x: m.scatter(x, 0, m.tensor([[1, 0, 2, 1]]), value=-2.0), T34),
    C("scatter-0d", lambda m, x, s: x.scatter(0, m.tensor(0), s), S(()), S(())),
    C("scatter_-nonleaf", lambda m, x, s: _ip(m, "scatter_", x, 1, m.tensor([[0, 1], [2, 3], [3, 0]]), s),
      S((3, 4)), S((3, 2))),
    C("scatter_add_-nonleaf", lambda m, x, s: _ip(m, "scatter_add_", x, 1, m.tensor(I3), s), S((3, 4)), S((3, 3))),
    C("scatter_add-fn", lambda m, x, s: m.scatter_add(x, 0, m.tensor([[0, 1, 2, 0], [0, 0, 0, 1]]), s),
      S((3, 4)), S((2, 4))),
]
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        _tag = f"{_red}{'' if _inc else '-noself'}"
        SCATTER += [
            C(f"scatter_reduce-{_tag}",
              lambda m, x, s, r=_red, i=_inc: x.scatter_reduce(1, m.tensor(I3), s, r, include_self=i),
              S((3, 4)), S((3, 3))),
            C(f"scatter_reduce-{_tag}-ties",
              lambda m, x, s, r=_red, i=_inc: m.scatter_reduce(x, 0, m.tensor([[0, 1, 2, 0], [0, 1, 0, 0],
                                                                               [2, 1, 0, 0]]), s, r, include_self=i),
              k((3, 4), "tie"), k((3, 4), "tie")),
        ]
SCATTER += [
    C("scatter_reduce-prod-zeros", lambda m, x, s: x.scatter_reduce(
        0, m.tensor([[0, 0, 1, 1], [0, 0, 1, 2]]), s * (s.abs() > 0.4), "prod"), S((3, 4)), S((2, 4))),
    C("scatter_reduce-amax-T", lambda m, x, s: x.scatter_reduce(1, m.tensor(I3), s, "amax"), T34, S((3, 3))),
    C("scatter_reduce-mean-src-bigger", lambda m, x, s: x.scatter_reduce(0, m.tensor([[1, 1, 0]]), s, "mean",
                                                                          include_self=False), S((2, 3)), S((3, 3)),
      grad=False),
    C("scatter_reduce_-nonleaf", lambda m, x, s: _ip(m, "scatter_reduce_", x, 1, m.tensor(I3), s, "amin"),
      S((3, 4)), S((3, 3))),
    # torch accepts 'max' in the forward only (its backward refuses the spelling); the values are checked here
    C("scatter_reduce-max-alias", lambda m, x, s: x.scatter_reduce(1, m.tensor(I3), s, "max"), S((3, 4)),
      S((3, 3)), grad=False),
]

INDEX_DIM = [
    C("index_add", lambda m, x, s: x.index_add(0, m.tensor([2, 0, 2]), s), S((3, 4)), S((3, 4))),
    C("index_add-alpha", lambda m, x, s: m.index_add(x, 1, m.tensor([1, 1]), s, alpha=-2.5), T34, S((3, 2))),
    C("index_add-0d", lambda m, x, s: x.index_add(0, m.tensor([0]), s), S(()), S(())),
    C("index_add_-nonleaf", lambda m, x, s: _ip(m, "index_add_", x, 1, m.tensor([3, 0]), s, alpha=2), S((3, 4)),
      S((3, 2))),
    C("index_copy", lambda m, x, s: x.index_copy(0, m.tensor([2, 0]), s), S((3, 4)), S((2, 4))),
    C("index_copy-dim1", lambda m, x, s: m.index_copy(x, -1, m.tensor([3, 1, 0]), s), STEP, S((3, 3))),
    C("index_copy_-nonleaf", lambda m, x, s: _ip(m, "index_copy_", x, 1, m.tensor([1]), s), S((3, 4)), S((3, 1))),
    C("index_fill", lambda m, x: x.index_fill(1, m.tensor([0, 2]), -1.5), S((3, 4))),
    C("index_fill-0d-index", lambda m, x: m.index_fill(x, 0, m.tensor(1), 2), T34),
    C("index_fill-tensor-value", lambda m, x, v: x.index_fill(1, m.tensor([3, 1, 3]), v), S((3, 4)), S(())),
    C("index_fill_-nonleaf", lambda m, x: _ip(m, "index_fill_", x, 0, m.tensor([1]), 0.25), S((3, 4))),
    C("index_put", lambda m, x, v: x.index_put((m.tensor([0, 2]), m.tensor([1, 3])), v), S((3, 4)), S((2,))),
    C("index_put-bcast", lambda m, x, v: m.index_put(x, (m.tensor([0, 2]),), v), S((3, 4)), S((4,))),
    C("index_put-accumulate", lambda m, x, v: x.index_put([m.tensor([0, 0, 2])], v, accumulate=True), S((3, 4)),
      S((3, 4))),
    C("index_put-acc-bcast", lambda m, x, v: x.index_put((m.tensor([1, 1]), m.tensor([0, 0])), v, True), T34,
      S(())),
    C("index_put-mask", lambda m, x, v: x.index_put((x > 0,), v), S((3, 4)), S(())),
    C("index_put_-nonleaf", lambda m, x, v: _ip(m, "index_put_", x, (m.tensor([1, 0]),), v, accumulate=True),
      S((3, 4)), S((2, 4))),
    C("masked_scatter", lambda m, x, s: x.masked_scatter(x > 0, s), S((3, 4)), S((14,))),
    C("masked_scatter-bcast", lambda m, x, s: m.masked_scatter(x, m.tensor([True, False, True]), s), S((2, 3)),
      S((2, 3))),
    C("masked_scatter_-nonleaf", lambda m, x, s: _ip(m, "masked_scatter_", x, x > 0.5, s), T34, S((12,))),
    C("masked_fill_-nonleaf", lambda m, x: _ip(m, "masked_fill_", x, x < 0, 0.5), S((3, 4))),
    C("masked_fill_-bcast", lambda m, x, y: _ip(m, "masked_fill_", x, y > 0, -1.0), S((3, 4)), S((4,))),
]


def _set(m, x, index, v):
    y = x * 1
    y[index] = v
    return y


FANCY = [
    C("fancy-list", lambda m, x: x[[0, 2]], S((3, 4))),
    C("fancy-two-lists", lambda m, x: x[[0, 1], [1, 2]], S((3, 4))),
    C("fancy-range", lambda m, x: x[range(3)], T34),
    C("fancy-range-step", lambda m, x: x[:, range(0, 4, 2)], S((3, 4))),
    C("fancy-bool-list", lambda m, x: x[:, [True, False, True, False]], S((3, 4))),
    C("fancy-bool-list-rows", lambda m, x: x[[True, False, True]], STEP),
    C("fancy-tuple-inside", lambda m, x: x[(0, 2), 1:], S((3, 4))),
    C("fancy-nested-list", lambda m, x: x[[[0], [2]], [1, 3]], S((3, 4))),
    C("fancy-int-then-list", lambda m, x: x[0, :, [1, 2]], S((2, 3, 4))),
    C("fancy-list-int", lambda m, x: x[[0, 1], 0], S((2, 3, 4))),
    C("fancy-split-by-int", lambda m, x: x[:, [0, 1], 0, [1, 2]], S((2, 3, 4, 5))),
    C("fancy-split-by-slice", lambda m, x: x[[0, 1], :, [1, 2]], S((2, 3, 4))),
    C("fancy-None", lambda m, x: x[None, [0, 2]], S((3, 4))),
    C("fancy-None-between", lambda m, x: x[[0, 1], None, [1, 2]], S((2, 3, 4))),
    C("fancy-ellipsis", lambda m, x: x[..., [0, 0, 3]], S((2, 3, 4))),
    C("fancy-ellipsis-mid", lambda m, x: x[[1], ..., [0, 1]], S((2, 3, 4))),
    C("fancy-True", lambda m, x: x[True], S((3, 4))),
    C("fancy-False", lambda m, x: x[:, False], S((3, 4))),
    C("fancy-True-list", lambda m, x: x[0, True, [0, 1]], S((2, 3, 4))),
    C("fancy-0d-tensor", lambda m, x: x[m.tensor(1), [0, 1]], S((2, 3, 4))),
    C("fancy-mask-and-list", lambda m, x: x[m.tensor([[True, False, True], [False, True, True]]), 1:3],
      S((2, 3, 4))),
    C("fancy-empty-list", lambda m, x: x[[]], S((3, 4))),
    C("fancy-slice-then-list", lambda m, x: x[1:, [0, 0, 2]][:, ::2], S((3, 4))),
    C("setitem-list", lambda m, x, v: _set(m, x, [0, 2], v), S((3, 4)), S((4,))),
    C("setitem-int-then-list", lambda m, x, v: _set(m, x, (0, slice(None), [1, 2]), v), S((2, 3, 4)), S((3, 2))),
    C("setitem-split", lambda m, x, v: _set(m, x, ([0, 1], slice(None), [1, 2]), v), S((2, 3, 4)), S((2, 3))),
    C("setitem-range", lambda m, x, v: _set(m, x, (slice(None), range(2)), v), S((3, 4)), S((2,))),
    C("setitem-bool-list", lambda m, x, v: _set(m, x, [True, False, True], v), T34, S(())),
    C("setitem-two-lists", lambda m, x, v: _set(m, x, ([0, 2], [1, 3]), v * 2), S((3, 4)), S((2,))),
    C("setitem-list-int", lambda m, x, v: _set(m, x, ([0, 1], 0), v), S((2, 3, 4)), S((2, 4))),
    C("setitem-True", lambda m, x, v: _set(m, x, True, v), S((3, 4)), S((4,))),
    C("setitem-mixed-number", lambda m, x: _set(m, x, (1, [0, 2]), 7.0), S((3, 4))),
]

CASES = ROLL + REPEAT_INTERLEAVE + UNFOLD + DIFF + STACKS + ALIASES + TAKE + SCATTER + INDEX_DIM + FANCY

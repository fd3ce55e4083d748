"""The second witness over the whole conformance table: every differentiable row against float64 finite differences.

``tests/test_ops_vs_torch.py`` holds each row of the table (``tests/conformance``) to PyTorch; this module holds every
row with ``grad=True`` to central finite differences through ``tl.autograd.gradcheck`` (PyTorch's gradcheck semantics:
eps 1e-6, atol 1e-5, rtol 1e-3), and needs no torch, so it runs in ``tests/run_without_torch.py`` too. A row is built
as ``run_case`` builds it: the same seeded arrays (``_arrays``, in float64), the same views (a transposed or strided
leaf) between the leaves and the op. Its differentiable outputs are checked together: the full Jacobian of each
against each leaf when they hold at most ``PROJECT_ABOVE`` elements, otherwise the Jacobian of one scalar, the sum of
each output times a fixed random weight (the upstream gradients ``run_case`` draws), which keeps the big
convolution and pooling rows to one backward pass.

Finite differences cannot witness a few rows; ``EXCLUDED`` lists them, by row-id pattern, with the reason, and the
tests below keep that list honest: each pattern names existing differentiable rows, and at least one of the rows it
names still fails the check (so an exclusion that is no longer needed is noticed). Rows with ties on purpose are
checked with their ties broken (``TIE_BROKEN``). ``python tests/test_ops_gradcheck.py`` prints the counts.
"""

from __future__ import annotations

import re
import zlib

import conformance
import numpy as np
import pytest
from conformance import Case, S, _arrays, _flat
from conftest import WrongSquare, make_array

import tinygrad_like as tl
from tinygrad_like.autograd import GradcheckError

ROWS = conformance.collect()  # the whole table (tests/conformance/rows_*.py)
DIFFERENTIABLE = [c for c in ROWS if c.grad]

# Rows whose data has ties on purpose (values in {-1, 0, 1}, to compare with torch which element gets the gradient
# at a tie): the op is not differentiable there (a central difference splits a tie its own way), so these rows are
# checked on their data with the ties broken (see ``_break_ties``); row-id patterns, matched in full.
TIE_BROKEN = (
    r"amax_ties-.*", r"max_ties_(all|dim)-.*", r"min_ties_dim-.*", r"aminmax-(None|0|-1)-(False|True)",
    r"norm-inf-ties", r"clamp_(min|max|tensors)_ties-.*", r"max_pool3d-ties", r"median_all_ties-.*", r"mode_ties-.*",
    r"cum(max|min)_ties-.*", r"index_reduce_?-am(ax|in)(-noself)?-ties", r"scatter_reduce-am(ax|in)(-noself)?-ties",
)

# Rows whose gradient finite differences cannot witness: row-id patterns (matched in full), grouped by the reason.
EXCLUDED: dict[str, tuple[str, ...]] = {
    # the value is NaN (or an infinity) at the sampled points by design (NaN propagation, inf handling): a finite
    # difference of NaN is NaN
    "NaN or inf at the sampled points by design": (
        r"logit-[0-9].*",  # data in (-0.9, 0.9): logit is NaN below 0 (logit-eps clamps, and is checked)
        r"median_(all|dim)_nan-.*", r"nan_to_num_infs-.*",
    ),
    # the row differentiates through ``.detach()``: the gradient ignores a path that a finite difference of the
    # leaf also moves (the detached tensor shares the leaf's storage)
    "the row detaches part of a leaf": (r"mse_weight-.*", r"cdist-self-zero"),
    # the gradient PyTorch defines (and we match) is not the derivative
    "PyTorch defines the gradient to differ from the derivative": (
        r"embedding-padding_idx",  # the padding row gets no gradient
        r"embedding-freq",  # scale_grad_by_freq divides each row's gradient by its count
        # full_matrices with m != n: the extra singular vectors' gradient is ignored (only their span is defined),
        # so the projector onto them has a zero gradient though it moves with A; linalg.svd-reduced is checked
        r"linalg\.svd-(3x4|4x3|2x3x4|2x4x3T|3x4s2)",
        # overlapping windows (kernel 3, stride 2) pick one element twice: unpool writes it once, its backward
        # gathers the gradient for both windows (torch's too)
        r"max_unpool1d",
    ),
}

# A smaller step for rows with a sample within 1e-6 of a step of a piecewise-constant op (the default is 1e-6).
EPS = {"round_d2-2x3x4": 1e-7}  # round(10 x, 2): one sample lies 8.3e-7 from a rounding boundary

PROJECT_ABOVE = 256  # rows with more output elements are checked through one random projection of their outputs


def _reason(case_id: str) -> str | None:
    for reason, patterns in EXCLUDED.items():
        if any(re.fullmatch(p, case_id) for p in patterns):
            return reason
    return None


def _ties_broken(case_id: str) -> bool:
    return any(re.fullmatch(p, case_id) for p in TIE_BROKEN)


CHECKED = [c for c in DIFFERENTIABLE if _reason(c.id) is None]


def _break_ties(case: Case, arrays: list) -> list:
    """The row's arrays with each element of its 'tie' leaves moved up by its own offset in (0, 0.5): a value in
    {-1, 0, 1} stays nearest its tie value and keeps its order against the other tie values, and no two elements of
    the row's tie leaves are closer than 0.5 / (n + 1) (n: how many there are), far more than the step of 1e-6."""
    tied = [i for i, s in enumerate(case.specs) if s.kind == "tie"]
    n = sum(arrays[i].size for i in tied)
    offsets = (np.random.default_rng(zlib.crc32(case.id.encode())).permutation(n) + 1) * (0.5 / (n + 1))
    out, start = list(arrays), 0
    for i in tied:
        out[i] = np.asarray(arrays[i] + offsets[start:start + arrays[i].size].reshape(arrays[i].shape))
        start += arrays[i].size
    return out


def _gradcheck(case: Case, raise_exception: bool = True) -> bool:
    """``tl.autograd.gradcheck`` on the row's differentiable outputs, as functions of its float64 leaves."""
    rng, arrays = _arrays(case, "float64")
    if _ties_broken(case.id):
        arrays = _break_ties(case, arrays)
    leaves = [tl.tensor(a, requires_grad=True) for a in arrays]

    def outputs(*ls):
        return _flat(case.fn(tl, *(s.apply_view(t) for s, t in zip(case.specs, ls))))

    probe = outputs(*leaves)
    keep = [i for i, o in enumerate(probe) if isinstance(o, tl.Tensor) and o.requires_grad]
    assert keep, "no differentiable output"
    if sum(probe[i].numel() for i in keep) <= PROJECT_ABOVE:
        def fn(*ls):
            outs = outputs(*ls)
            return tuple(outs[i] for i in keep)
    else:  # (the upstream gradients run_case draws from the same generator, in the same order)
        weights = [tl.tensor(make_array(probe[i].shape, "n", rng, "float64")) for i in keep]

        def fn(*ls):
            outs = outputs(*ls)
            return sum(((outs[i] * w).sum() for i, w in zip(keep, weights)), tl.tensor(0.0, dtype=tl.float64))
    return tl.autograd.gradcheck(fn, leaves, eps=EPS.get(case.id, 1e-6), raise_exception=raise_exception)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (rows that divide by zero or take logs of 0 on purpose)
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # (kl_div's deprecation note)
@pytest.mark.parametrize("case", CHECKED, ids=[c.id for c in CHECKED])
def test_gradcheck_row(case: Case) -> None:
    assert _gradcheck(case)


def test_counts() -> None:
    """Every differentiable row is either checked or excluded, and the exclusions stay few."""
    excluded = [c for c in DIFFERENTIABLE if _reason(c.id) is not None]
    assert len(CHECKED) + len(excluded) == len(DIFFERENTIABLE)
    assert len(ROWS) == len({c.id for c in ROWS})
    assert len(excluded) <= 0.06 * len(DIFFERENTIABLE), f"{len(excluded)} of {len(DIFFERENTIABLE)} rows excluded"


_PATTERNS = [(reason, p) for reason, ps in EXCLUDED.items() for p in ps]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("reason,pattern", _PATTERNS, ids=[p for _, p in _PATTERNS])
def test_exclusion_names_rows_that_still_fail(reason: str, pattern: str) -> None:
    """An exclusion names existing differentiable rows, and at least one of them fails the check (or it goes)."""
    named = [c for c in DIFFERENTIABLE if re.fullmatch(pattern, c.id)]
    assert named, f"{pattern!r} names no differentiable row of the table"
    for case in named:
        try:
            if not _gradcheck(case, raise_exception=False):
                return
        except (GradcheckError, FloatingPointError):
            return
    pytest.fail(f"every row {pattern!r} names passes the finite-difference check now: drop the exclusion")


@pytest.mark.parametrize("pattern", TIE_BROKEN)
def test_tie_broken_patterns_name_rows_with_ties(pattern: str) -> None:
    named = [c for c in CHECKED if re.fullmatch(pattern, c.id)]
    assert named, f"{pattern!r} names no checked row of the table"
    assert all(any(s.kind == "tie" for s in c.specs) for c in named), f"{pattern!r} names a row without ties"


def test_eps_overrides_name_checked_rows() -> None:
    assert set(EPS) <= {c.id for c in CHECKED}


@pytest.mark.parametrize("shape", [(3, 4), (20, 20)], ids=["jacobian", "projection"])
def test_the_check_catches_a_wrong_gradient(shape) -> None:
    """The witness can fail, on a viewed leaf, whether it checks the Jacobian or a projection of the outputs."""
    spec = S(shape, view="T")
    assert _gradcheck(Case("square", lambda m, x: (x * x + x, x.sum()), (spec,)))
    assert not _gradcheck(Case("wrong-square", lambda m, x: (WrongSquare.apply(x) + x, x.sum()), (spec,)),
                          raise_exception=False)


def summary() -> str:
    excluded = {reason: [c.id for c in DIFFERENTIABLE if _reason(c.id) == reason] for reason in EXCLUDED}
    tie_broken = sum(_ties_broken(c.id) for c in CHECKED)
    lines = [f"{len(ROWS)} rows, {len(DIFFERENTIABLE)} differentiable: {len(CHECKED)} checked by finite differences "
             f"({len(CHECKED) - tie_broken} on the row's data, {tie_broken} with its ties broken), "
             f"{sum(map(len, excluded.values()))} excluded"]
    lines += [f"  {len(ids):3d}  {reason}" for reason, ids in excluded.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    np.seterr(all="ignore")
    print(summary())

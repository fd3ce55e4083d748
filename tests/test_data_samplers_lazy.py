"""Samplers draw lazily, as torch's: a sampler over 1e10 samples costs nothing to build, to measure, or to start
reading; and their signatures, lengths, ranges, counts and errors are torch's (the values differ: other RNGs)."""

from __future__ import annotations

import inspect
import itertools
import time
import tracemalloc

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.utils.data as tld

torch = pytest.importorskip("torch")
td = pytest.importorskip("torch.utils.data")

BIG = int(1e10)
NAMES = ("Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
         "BatchSampler")


def _params(obj) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(obj).parameters.values()]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "Sampler"])
def test_constructor_parameters_are_torchs(name):
    assert _params(getattr(tld, name)) == _params(getattr(td, name))


class Sized:
    """A data source whose length is all there is (len 10, as a huge dataset would look to a sampler)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n


def _huge(mod, gen):
    """Each library's samplers over 1e10 samples, as makemore and minGPT build them."""
    return {
        "random-replacement": mod.RandomSampler(Sized(10), replacement=True, num_samples=BIG, generator=gen),
        "random-permutations": mod.RandomSampler(Sized(10), num_samples=BIG, generator=gen),
        "sequential": mod.SequentialSampler(Sized(BIG)),
        "weighted": mod.WeightedRandomSampler([1.0, 0.0, 3.0], BIG, generator=gen),
        "batch": mod.BatchSampler(mod.RandomSampler(Sized(10), True, BIG, generator=gen), 4, False),
    }


@pytest.mark.parametrize("kind", ["random-replacement", "random-permutations", "sequential", "weighted", "batch"])
def test_a_sampler_over_1e10_samples_is_built_measured_and_read_at_once(kind):
    tracemalloc.start()
    t0 = time.perf_counter()
    ours = _huge(tld, tl.Generator(0))[kind]
    n = len(ours)
    first = list(itertools.islice(ours, 100))
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 0.5 and peak < 10 * 2**20, (elapsed, peak)
    theirs = _huge(td, torch.Generator().manual_seed(0))[kind]
    assert n == len(theirs)
    if kind == "weighted":  # (torch's draws all 1e10 at its first read: read 100 of a smaller one)
        theirs = td.WeightedRandomSampler([1.0, 0.0, 3.0], 100, generator=torch.Generator().manual_seed(0))
    torch_first = list(itertools.islice(theirs, 100))
    assert len(first) == len(torch_first) == 100
    if kind == "batch":
        assert all(len(b) == 4 for b in first)
        first, torch_first = [i for b in first for i in b], [i for b in torch_first for i in b]
    assert all(isinstance(i, int) for i in first)
    lo, hi = min(torch_first), max(torch_first)  # (torch's range, and ours, over the same sampler)
    if kind == "sequential":
        assert first == torch_first == list(range(100))
    elif kind == "weighted":
        assert set(first) == set(torch_first) == {0, 2}
    else:
        assert 0 <= min(first) and max(first) <= 9 and 0 <= lo and hi <= 9


def test_a_loader_over_1e10_samples_yields_its_first_batches_at_once():
    ds = tld.TensorDataset(tl.arange(10))
    t0 = time.perf_counter()
    loader = tld.DataLoader(ds, sampler=tld.RandomSampler(ds, replacement=True, num_samples=BIG), batch_size=4)
    batches = [b.tolist() for (b,) in itertools.islice(loader, 3)]
    assert time.perf_counter() - t0 < 0.5
    assert len(loader) == BIG // 4 and [len(b) for b in batches] == [4, 4, 4]
    assert all(0 <= i < 10 for b in batches for i in b)


@pytest.mark.parametrize("n, k, replacement", [(7, 7, False), (7, 20, False), (7, 21, False), (7, 3, False),
                                               (7, 100, True), (3, 33, True), (5, 31, True)])
def test_random_sampler_counts_and_coverage_as_torchs(n, k, replacement):
    ours = list(tld.RandomSampler(range(n), replacement, k, generator=tl.Generator(1)))
    theirs = list(td.RandomSampler(range(n), replacement, k, generator=torch.Generator().manual_seed(1)))
    assert len(ours) == len(theirs) == k
    assert set(ours) <= set(range(n))
    if not replacement:  # each full pass is a permutation; the last one, cut short, has no repeats
        for lib in (ours, theirs):
            passes = [lib[i:i + n] for i in range(0, k, n)]
            assert all(sorted(p) == list(range(n)) for p in passes if len(p) == n)
            assert all(len(set(p)) == len(p) for p in passes)


def test_weighted_without_replacement_reaches_zero_weights_last_as_torchs():
    for mod, gen in ((tld, tl.Generator(2)), (td, torch.Generator().manual_seed(2))):
        got = list(mod.WeightedRandomSampler([1.0, 0.0, 2.0, 0.0], 4, replacement=False, generator=gen))
        assert sorted(got[:2]) == [0, 2] and sorted(got[2:]) == [1, 3]


def test_nothing_is_drawn_before_reading_and_each_epoch_draws_anew():
    g = tl.Generator(5)
    sampler = tld.RandomSampler(range(10), replacement=True, num_samples=BIG, generator=g)
    state = g.get_state()
    len(sampler)
    it = iter(sampler)
    assert repr(g.get_state()) == repr(state)  # (iter alone draws nothing: torch's __iter__ is a generator too)
    a = list(itertools.islice(it, 40))
    b = list(itertools.islice(iter(sampler), 40))
    assert a != b and repr(g.get_state()) != repr(state)
    g2 = tl.Generator(5)
    assert list(itertools.islice(tld.RandomSampler(range(10), True, BIG, generator=g2), 40)) == a


def test_default_generator_is_read_once_per_epoch_as_torchs():
    """With no generator, an epoch takes one seed off the default generator (torch draws one int64): reading more
    indices later does not move the default stream, so a training loop's own draws stay as they were."""
    tl.manual_seed(0)
    sampler = tld.RandomSampler(range(10), replacement=True, num_samples=BIG)
    it = iter(sampler)
    first = list(itertools.islice(it, 100))
    after_first = repr(tl.get_rng_state())
    list(itertools.islice(it, 1000))
    assert repr(tl.get_rng_state()) == after_first
    tl.manual_seed(0)
    assert list(itertools.islice(sampler, 100)) == first  # (and manual_seed replays the epoch)


def test_a_subclass_that_reorders_in_its_own_iter_is_respected_by_the_loader():
    class Reversed(tld.SequentialSampler):
        def __iter__(self):
            return iter(range(len(self.data_source) - 1, -1, -1))

    ds = tld.TensorDataset(tl.arange(5))
    got = [b.tolist() for (b,) in tld.DataLoader(ds, sampler=Reversed(ds), batch_size=2)]
    assert got == [[4, 3], [2, 1], [0]]


@pytest.mark.parametrize("n, bs, drop_last", [(10, 4, False), (10, 4, True), (64, 32, True), (70, 33, False)])
def test_loader_batches_cut_from_chunks_match_batch_sampler(n, bs, drop_last):
    ds = tld.TensorDataset(tl.arange(n))
    sampler = tld.RandomSampler(ds, replacement=True, num_samples=3 * n, generator=tl.Generator(4))
    fast = [b.tolist() for (b,) in tld.DataLoader(ds, sampler=sampler, batch_size=bs, drop_last=drop_last)]
    sampler.generator = tl.Generator(4)
    plain = list(tld.BatchSampler(sampler, bs, drop_last))
    assert fast == plain
    assert len(fast) == len(td.BatchSampler(range(3 * n), bs, drop_last))


def _error(make) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        make()
    return info.type, str(info.value)


@pytest.mark.parametrize("call", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.RandomSampler(range(3), num_samples=2.5),
    lambda m: m.RandomSampler([]),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
    lambda m: m.WeightedRandomSampler([1.0], 0),
    lambda m: m.WeightedRandomSampler([1.0], 1, replacement=1),
    lambda m: m.WeightedRandomSampler([[1.0]], 2),
], ids=["replacement", "num_samples", "float-num_samples", "empty", "batch_size", "drop_last", "w-num_samples",
        "w-replacement", "w-shape"])
def test_argument_errors_are_torchs(call):
    assert _error(lambda: call(tld)) == _error(lambda: call(td))


@pytest.mark.parametrize("weights, k, replacement", [([-1.0, 1.0], 2, True), ([0.0, 0.0], 2, True),
                                                     ([float("inf"), 1.0], 2, True), ([1.0, 1.0], 3, False)])
def test_bad_weights_raise_torchs_error(weights, k, replacement):
    """torch refuses them at the first read, we when the sampler is built: the same type and words."""
    kind, words = _error(lambda: list(td.WeightedRandomSampler(weights, k, replacement)))
    assert _error(lambda: tld.WeightedRandomSampler(weights, k, replacement)) == (kind, words)


@pytest.mark.parametrize("replacement, kind", [(True, RuntimeError), (False, ZeroDivisionError)])
def test_an_empty_source_with_num_samples_fails_when_read_as_torchs(replacement, kind):
    for mod in (tld, td):
        sampler = mod.RandomSampler([], replacement=replacement, num_samples=3)
        assert len(sampler) == 3
        with pytest.raises(kind):
            list(sampler)


def test_subset_random_sampler_permutes_its_indices():
    for mod, gen in ((tld, tl.Generator(0)), (td, torch.Generator().manual_seed(0))):
        s = mod.SubsetRandomSampler([10, 20, 30, 40], generator=gen)
        assert len(s) == 4 and sorted(s) == [10, 20, 30, 40]


def test_sampler_chunks_are_int64_arrays():
    chunks = list(itertools.islice(tld.RandomSampler(range(5), True, 100, tl.Generator(0))._index_chunks(), 4))
    assert [len(c) for c in chunks] == [32, 32, 32, 4] and all(c.dtype == np.int64 for c in chunks)


# ---- the DataLoader around them ------------------------------------------------------------------------------
@pytest.mark.parametrize("num_workers, prefetch_factor", [(0, None), (2, None), (2, 4)])
def test_prefetch_factor_defaults_as_torchs(num_workers, prefetch_factor):
    got = [mod.DataLoader(list(range(4)), num_workers=num_workers, prefetch_factor=prefetch_factor).prefetch_factor
           for mod in (tld, td)]
    assert got[0] == got[1]


@pytest.mark.parametrize("n, bs, drop_last", [(10, 4, False), (10, 4, True), (8, 4, True), (3, 5, True)])
def test_len_reiteration_and_drop_last_as_torchs(n, bs, drop_last):
    def epochs(mod):
        loader = mod.DataLoader(list(range(n)), batch_size=bs, drop_last=drop_last)
        return len(loader), [[b.tolist() for b in loader] for _ in range(2)]
    assert epochs(tld) == epochs(td)

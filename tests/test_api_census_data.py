"""torch.utils.data against PyTorch: DataLoader's iterator and worker semantics (ours run in-process, torch's are
processes: what a program observes must agree), StackDataset, DistributedSampler and the DataPipes."""

from __future__ import annotations

import inspect
import math
import random
import warnings

import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

LIBS = ("tl", "torch")


def _mod(lib):
    return tl.utils.data if lib == "tl" else torch.utils.data


def _plain(x):
    """Batches as plain Python values, whichever library made them."""
    if isinstance(x, (tl.Tensor, torch.Tensor)):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _both(make):
    """``make(lib)`` run for both libraries, as plain values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns that 3 workers exceed this machine's suggested 2)
        return {lib: _plain(make(lib)) for lib in LIBS}


# ---- datasets shared by both libraries (plain classes mixed into each library's base) -------------------------
def _info(lib):
    return _mod(lib).get_worker_info()


class RangeBase:
    """torch's documented IterableDataset: [start, end) split between workers by get_worker_info()."""

    lib = "tl"

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = _info(self.lib)
        if info is None:
            return iter(range(self.start, self.end))
        per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


class Unsplit:
    lib = "tl"

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class Counting:
    """Map-style: each sample says which worker read it and how many samples that worker's copy has read."""

    lib = "tl"

    def __init__(self, n=6):
        self.n, self.seen, self.inits = n, 0, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = _info(self.lib)
        self.seen += 1
        return [i, -1 if info is None else info.id, self.seen, self.inits]


def _ds(lib, base, *args, iterable=False):
    parent = _mod(lib).IterableDataset if iterable else _mod(lib).Dataset
    cls = type(base.__name__, (base, parent), {"lib": lib})
    return cls(*args)


def _loader(lib, ds, **kw):
    return _mod(lib).DataLoader(ds, **kw)


# ---- IterableDataset split by worker: torch's round-robin order ----------------------------------------------------
@pytest.mark.parametrize("start, end, workers, kw, want", [
    (3, 7, 2, dict(batch_size=None), [3, 5, 4, 6]),  # torch's documentation example
    (0, 7, 2, dict(batch_size=2), [[0, 1], [4, 5], [2, 3], [6]]),
    (0, 7, 3, dict(batch_size=2, drop_last=True), [[0, 1], [3, 4]]),
    (0, 10, 3, dict(batch_size=3), [[0, 1, 2], [4, 5, 6], [8, 9], [3], [7]]),
])
def test_iterable_dataset_split_by_worker_interleaves_as_torch(start, end, workers, kw, want):
    got = _both(lambda lib: list(_loader(lib, _ds(lib, RangeBase, start, end, iterable=True), num_workers=workers,
                                         **kw)))
    assert got["tl"] == got["torch"] == want


def test_an_unsplit_iterable_dataset_is_read_whole_by_every_worker_as_torch():
    got = _both(lambda lib: list(_loader(lib, _ds(lib, Unsplit, 3, iterable=True), num_workers=2,
                                         batch_size=None)))
    assert got["tl"] == got["torch"] == [0, 0, 1, 1, 2, 2]


# ---- len, re-iteration, persistent workers, per-worker copies ------------------------------------------------------
class SizedRange(RangeBase):
    def __len__(self):
        return self.end - self.start


@pytest.mark.parametrize("kw", [dict(batch_size=2), dict(batch_size=2, drop_last=True), dict(batch_size=None),
                                dict(batch_size=3, num_workers=2)])
def test_len_of_loader_and_of_its_iterator_as_torch(kw):
    for lib in LIBS:
        m = _mod(lib)
        mapped = m.DataLoader(list(range(7)), **kw)
        stream = m.DataLoader(_ds(lib, SizedRange, 0, 7, iterable=True), **kw)
        want = torch.utils.data.DataLoader(list(range(7)), **kw)
        assert len(mapped) == len(iter(mapped)) == len(want), lib
        assert len(stream) == len(torch.utils.data.DataLoader(_ds("torch", SizedRange, 0, 7, iterable=True), **kw))
        with pytest.raises(TypeError, match="has no len"):
            len(iter(stream))


def test_reiteration_gives_a_fresh_epoch_each_time():
    for lib in LIBS:
        loader = _loader(lib, list(range(5)), batch_size=2)
        assert _plain(list(loader)) == _plain(list(loader)) == [[0, 1], [2, 3], [4]]
        it = iter(loader)
        next(it)
        assert _plain(list(iter(loader))) == [[0, 1], [2, 3], [4]]  # (a new iterator starts over)


@pytest.mark.parametrize("persistent", [False, True])
def test_workers_read_their_own_copies_batch_by_batch_as_torch(persistent):
    def epochs(lib):
        ds = _ds(lib, Counting, 6)
        loader = _loader(lib, ds, batch_size=2, num_workers=2, persistent_workers=persistent)
        out = [list(loader), list(loader)]
        assert ds.seen == 0  # the main process's dataset is never read or changed
        return out
    got = _both(epochs)
    assert got["tl"] == got["torch"]
    # batch k read by worker k % 2; a persistent worker's copy keeps counting into the second epoch
    assert [b[1] for b in got["tl"][0]] == [[0, 0], [1, 1], [0, 0]]
    assert got["tl"][1][2][2] == ([7, 8] if persistent else [3, 4])


def test_persistent_workers_reuse_the_iterator_object_as_torch():
    for lib in LIBS:
        loader = _loader(lib, list(range(4)), batch_size=2, num_workers=2, persistent_workers=True)
        assert iter(loader) is iter(loader), lib
        plain = _loader(lib, list(range(4)), batch_size=2, num_workers=2)
        assert iter(plain) is not iter(plain), lib
        single = _loader(lib, list(range(4)), batch_size=2)
        assert iter(single) is not iter(single), lib


def _count_init(worker_id):
    info = tl.utils.data.get_worker_info() or torch.utils.data.get_worker_info()
    info.dataset.inits += 1


@pytest.mark.parametrize("persistent", [False, True])
def test_worker_init_fn_runs_once_per_worker_start_as_torch(persistent):
    def epochs(lib):
        loader = _loader(lib, _ds(lib, Counting, 4), batch_size=2, num_workers=2, persistent_workers=persistent,
                         worker_init_fn=_count_init)
        return [list(loader), list(loader)]
    got = _both(epochs)
    assert got["tl"] == got["torch"]
    assert {b[3][0] for epoch in got["tl"] for b in epoch} == {1}  # (each worker's copy saw exactly one init)


class Seeds:
    lib = "tl"

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = _info(self.lib)
        # torch's worker calls random.seed(seed): Python's random stream in the worker starts from the worker's seed
        first = random.random() == random.Random(info.seed).random() if self.draws == 0 else None
        self.draws += 1
        return [info.id, info.seed, first]

    draws = 0


@pytest.mark.parametrize("persistent", [False, True])
def test_worker_seeds_are_base_plus_id_and_seed_pythons_random_as_torch(persistent):
    def epochs(lib):
        loader = _loader(lib, _ds(lib, Seeds), batch_size=None, num_workers=2, persistent_workers=persistent)
        return [list(loader), list(loader)]
    for lib, (e1, e2) in _both(epochs).items():
        ids, seeds = [s[0] for s in e1], [s[1] for s in e1]
        assert ids == [0, 1, 0, 1], lib
        assert seeds[1] - seeds[0] == 1 and seeds[2] == seeds[0], lib  # base + id
        assert [s[2] for s in e1][:2] == [True, True], lib
        assert (e2[0][1] == e1[0][1]) == persistent, lib  # a new base seed when the workers restart


def test_worker_rng_is_its_own_and_leaves_the_main_stream_alone():
    class Draws(tl.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return tl.rand(1).item()

    tl.manual_seed(0)
    first = [b.item() for b in tl.utils.data.DataLoader(Draws(), num_workers=2)]
    after = tl.rand(1).item()
    tl.manual_seed(0)
    again = [b.item() for b in tl.utils.data.DataLoader(Draws(), num_workers=2)]
    assert first == again  # reproducible from manual_seed
    assert first[0] != first[1]  # workers 0 and 1 draw from differently seeded streams
    tl.manual_seed(0)
    assert tl.rand(1).item() == after  # the workers' draws did not advance the main process's stream


def test_collate_fn_runs_in_the_worker_as_torch():
    got = _both(lambda lib: list(_loader(lib, list(range(6)), batch_size=2, num_workers=3,
                                         collate_fn=lambda b: (b, _info(lib).id))))
    assert got["tl"] == got["torch"] == [[[0, 1], 0], [[2, 3], 1], [[4, 5], 2]]


def test_get_worker_info_is_none_in_the_main_process():
    for lib in LIBS:
        loader = _loader(lib, _ds(lib, Counting, 2), batch_size=None)
        assert _plain(list(loader)) == [[0, -1, 1, 0], [1, -1, 2, 0]]
        assert _mod(lib).get_worker_info() is None


# ---- argument checks: torch's errors and warnings -------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(prefetch_factor=2), dict(persistent_workers=True), dict(multiprocessing_context="spawn"),
    dict(num_workers=2, multiprocessing_context="bogus"), dict(num_workers=2, multiprocessing_context=3),
    dict(num_workers=2, prefetch_factor=-1), dict(timeout=-1), dict(num_workers=-1),
])
def test_bad_worker_options_raise_torchs_errors(kw):
    errors = {}
    for lib in LIBS:
        with pytest.raises(Exception) as e:
            _loader(lib, list(range(4)), **kw)
        errors[lib] = (type(e.value), str(e.value))
    assert errors["tl"] == errors["torch"]


def test_accepted_worker_options():
    for lib in LIBS:
        loader = _loader(lib, list(range(6)), batch_size=2, num_workers=2, prefetch_factor=4, timeout=30,
                         multiprocessing_context="spawn", in_order=False, pin_memory_device="")
        assert sorted(i for b in _plain(list(loader)) for i in b) == list(range(6))


@pytest.mark.skipif(tl.cuda.is_available(), reason="pin_memory pins on a machine with CUDA")
def test_pin_memory_without_an_accelerator_warns_as_torch():
    messages = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            list(_loader(lib, list(range(4)), batch_size=2, pin_memory=True))
        messages[lib] = [str(x.message) for x in w if "pin_memory" in str(x.message)]
    assert messages["tl"] == messages["torch"] and len(messages["tl"]) == 1


def test_a_slow_batch_past_the_timeout_raises_as_torch():
    import time

    class Slow(tl.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(0.3)
            return i

    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.1 seconds"):
        list(tl.utils.data.DataLoader(Slow(), num_workers=1, timeout=0.1))
    assert len(list(tl.utils.data.DataLoader(Slow(), num_workers=1, timeout=5))) == 2


def test_an_iterable_dataset_longer_than_its_len_warns_as_torch():
    class Liar(RangeBase):
        def __len__(self):
            return 2

    for lib in LIBS:
        loader = _loader(lib, _ds(lib, Liar, 0, 4, iterable=True), batch_size=None)
        len(loader)
        with pytest.warns(UserWarning, match="was reported to be 2"):
            list(loader)


# ---- StackDataset ---------------------------------------------------------------------------------------------------
def test_stack_dataset_as_torch():
    for lib in LIBS:
        m = _mod(lib)
        t = tl if lib == "tl" else torch
        s = m.StackDataset(t.arange(4), [10, 11, 12, 13])
        assert len(s) == 4 and _plain(s[2]) == [2, 12]
        d = m.StackDataset(x=t.arange(3), y=["a", "b", "c"])
        assert _plain(d[1]) == {"x": 1, "y": "b"}
        assert _plain(d.__getitems__([0, 2])) == [{"x": 0, "y": "a"}, {"x": 2, "y": "c"}]
        assert _plain(list(m.DataLoader(d, batch_size=2))) == [{"x": [0, 1], "y": ["a", "b"]},
                                                              {"x": [2], "y": ["c"]}]
    for args, kwargs in [(([1], [2, 3]), {}), (([1],), {"a": [1]}), ((), {})]:
        msgs = []
        for lib in LIBS:
            with pytest.raises(ValueError) as e:
                _mod(lib).StackDataset(*args, **kwargs)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


# ---- DistributedSampler ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 4, False), (12, 4, False),
                                                    (7, 2, True), (5, 1, False)])
def test_distributed_sampler_indices_equal_torchs_without_shuffle(n, replicas, drop_last):
    for rank in range(replicas):
        ours = tl.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (9, 3, False)])
def test_distributed_sampler_shuffle_has_torchs_structure(n, replicas, drop_last):
    def shares(mod, epoch):
        out = []
        for rank in range(replicas):
            s = mod.DistributedSampler(range(n), replicas, rank, seed=3, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    for mod in (tl.utils.data, torch.utils.data):
        a, b, c = shares(mod, 0), shares(mod, 0), shares(mod, 1)
        assert a == b and a != c  # the same order on every replica for an epoch; another after set_epoch
        flat = [i for share in a for i in share]
        assert {len(s) for s in a} == {len(shares(torch.utils.data, 0)[0])}
        if drop_last:
            assert len(set(flat)) == len(flat)
        else:
            assert set(flat) == set(range(n)) and len(flat) - n == (-n) % replicas  # padded with repeats


def test_distributed_sampler_world_defaults_as_torch(monkeypatch):
    for mod in (tl.utils.data, torch.utils.data):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            mod.DistributedSampler(range(4))
        with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
            mod.DistributedSampler(range(4), num_replicas=3, rank=3)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    tl.distributed.init_process_group("gloo", rank=0, world_size=1)
    try:
        s = tl.utils.data.DistributedSampler(range(5), shuffle=False)
        assert (s.num_replicas, s.rank, list(s)) == (1, 0, [0, 1, 2, 3, 4])
    finally:
        tl.distributed.destroy_process_group()


# ---- DataPipes ---------------------------------------------------------------------------------------------------
class _NumbersBase:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class TlNumbers(_NumbersBase, tl.utils.data.IterDataPipe):
    pass


class TorchNumbers(_NumbersBase, torch.utils.data.IterDataPipe):  # (module level: torch pickles the pipe's graph)
    pass


def _pipe(lib, n):
    return (TlNumbers if lib == "tl" else TorchNumbers)(n)


def _squares(lib):
    class Squares(_mod(lib).MapDataPipe):
        def __getitem__(self, i):
            if i >= 3:
                raise IndexError(i)
            return i * i

        def __len__(self):
            return 3
    return Squares()


def _is_odd(x):
    return x % 2 == 1


def _times10(x):
    return x * 10


def test_iter_datapipes_chain_as_torch():
    got = _both(lambda lib: [
        list(_pipe(lib, 5).filter(_is_odd)), list(_pipe(lib, 2).concat(_pipe(lib, 2))),
        list(_pipe(lib, 3).zip(_pipe(lib, 2))), list(_pipe(lib, 7).batch(3)), list(_pipe(lib, 7).batch(3, True)),
        list(_pipe(lib, 7).batch(3).unbatch()), list(_pipe(lib, 4).map(_times10)),
        list(_pipe(lib, 4).batch(2).collate()), list(_pipe(lib, 6).sharding_filter()),
        sorted(_pipe(lib, 6).shuffle()), list(_mod(lib).DataLoader(_pipe(lib, 5), batch_size=2)),
        list(_mod(lib).DataLoader(_pipe(lib, 6).shuffle(), shuffle=False, batch_size=None)),
        list(_mod(lib).DataLoader(_pipe(lib, 6).sharding_filter(), batch_size=None, num_workers=2)),
    ])
    assert got["tl"] == got["torch"]
    assert type(list(_pipe("tl", 3).batch(2))[0]).__name__ == "DataChunk"


def test_map_datapipes_as_torch():
    got = _both(lambda lib: [
        list(_squares(lib)), _squares(lib).map(_times10)[2], len(_squares(lib).map(_times10)),
        list(_squares(lib).batch(2)), list(_squares(lib).concat(_squares(lib))), list(_squares(lib).zip(_squares(lib))),
        sorted(_squares(lib).shuffle()),
    ])
    assert got["tl"] == got["torch"]


def test_functional_datapipe_registers_a_method_once_as_torch():
    for lib in LIBS:
        m = _mod(lib)
        name = f"twice_{lib}"

        @m.functional_datapipe(name)
        class Twice(m.IterDataPipe):
            def __init__(self, source):
                self.source = source

            def __iter__(self):
                for x in self.source:
                    yield 2 * x

        assert list(getattr(_pipe(lib, 3), name)()) == [0, 2, 4]
        with pytest.raises(Exception, match=f"Unable to add DataPipe function name {name} as it is already taken"):
            m.functional_datapipe(name)(Twice)
        with pytest.raises(AttributeError):
            _pipe(lib, 1).no_such_function  # noqa: B018 (the lookup is what raises)


def test_data_chunk_and_the_other_names_as_torch():
    for lib in LIBS:
        m = _mod(lib)
        c = m.DataChunk([1, 2])
        assert (c, c.as_str(), list(c.raw_iterator()), isinstance(c, list)) == ([1, 2], "[1, 2]", [1, 2], True)
        assert issubclass(m.DFIterDataPipe, m.IterDataPipe) and issubclass(m.IterDataPipe, m.IterableDataset)

        class Noisy(m.IterDataPipe):
            def __iter__(self):
                return iter([1])
        noisy = m.non_deterministic(Noisy)
        assert list(noisy()) == [1]
        with m.guaranteed_datapipes_determinism():
            with pytest.raises(TypeError, match="non-deterministic"):
                noisy()
        with m.runtime_validation_disabled():
            pass
        assert callable(m.argument_validation(lambda self: None))
        assert callable(m.runtime_validation(Noisy.__iter__))


# ---- signatures ------------------------------------------------------------------------------------------------------
def test_collate_and_sampler_signatures_as_torch():
    for name in ("default_collate", "default_convert", "StackDataset", "DistributedSampler", "get_worker_info"):
        assert list(inspect.signature(getattr(tl.utils.data, name)).parameters) == list(
            inspect.signature(getattr(torch.utils.data, name)).parameters), name
    for m in (tl.utils.data, torch.utils.data):
        class Old(m.Sampler):
            def __init__(self, ds):
                super().__init__(ds)  # (torch 2.13's Sampler has no __init__: this is a TypeError there)
        with pytest.raises(TypeError):
            Old([1])


class Transformed:
    """A dataset with a lambda transform (pickle cannot save it) and Python state it changes as it reads."""

    lib = "tl"

    def __init__(self):
        self.transform = lambda x: x * 10
        self.log = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        self.log.append(i)
        return [self.transform(i), len(self.log)]


def test_a_dataset_with_a_lambda_transform_gets_a_worker_copy_as_under_fork():
    def run(lib):
        ds = _ds(lib, Transformed)
        out = list(_loader(lib, ds, batch_size=None, num_workers=2))
        assert ds.log == []  # (the workers appended to their own copies' lists)
        return out
    got = _both(run)
    assert got["tl"] == got["torch"] == [[0, 1], [10, 1], [20, 2], [30, 2]]
    big = tl.utils.data.TensorDataset(tl.zeros(3, 2))
    copy = tl.utils.data.dataloader._copy_of(big)
    assert copy is not big and copy.tensors[0] is big.tensors[0]  # (the data itself is shared, never copied)


class Failing:
    lib = "tl"

    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise (KeyError if i else ValueError)(f"bad sample {i}")


@pytest.mark.parametrize("sampler, kind", [([0], ValueError), ([1], KeyError)])
def test_an_error_in_a_worker_is_reraised_as_torch_reraises_it(sampler, kind):
    for lib in LIBS:
        loader = _loader(lib, _ds(lib, Failing), num_workers=1, sampler=sampler)
        with pytest.raises(kind) as e:
            list(loader)
        assert str(e.value).startswith("Caught " + kind.__name__ + " in DataLoader worker process 0.\nOriginal "
                                       "Traceback (most recent call last):"), lib
        assert f"bad sample {sampler[0]}" in str(e.value), lib
    with pytest.raises(ValueError, match="^bad sample 0$"):
        list(tl.utils.data.DataLoader(_ds("tl", Failing), sampler=[0]))  # (no workers: the error itself, as torch)

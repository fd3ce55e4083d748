"""torch.utils.data's API on tinygrad_like: datasets, samplers, DataLoader arguments and batches vs torch."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.utils.data as tld

torch = pytest.importorskip("torch")
import torch.utils.data as td  # noqa: E402


@pytest.fixture(autouse=True)
def _keep_default_rng():
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)


def _same(a, b):
    """Batches equal as torch's: structure, types (list/dict/namedtuple/str), values and dtype names."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, tl.Tensor), type(a)
        assert a.dtype.name == str(b.dtype).replace("torch.", ""), (a.dtype, b.dtype)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            _same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


class Squares:
    """A plain map-style dataset returning mixed samples."""

    def __init__(self, lib, n=7):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        P = namedtuple("P", "a b")
        return {"x": self.lib.tensor([float(i), float(i * i)]), "y": i, "w": 0.5 * i, "name": f"s{i}",
                "np": np.full((2,), i, np.float32), "pair": (i, P(i, float(i)))}


def test_module_paths_as_torch():
    assert tl.utils.data.dataloader.DataLoader is tld.DataLoader
    assert tl.utils.data.dataset.Dataset is tld.Dataset
    assert tl.utils.data.sampler.BatchSampler is tld.BatchSampler
    for name in ("Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
                 "RandomSampler", "SequentialSampler", "BatchSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "DataLoader", "default_collate", "default_convert", "get_worker_info"):
        assert hasattr(tld, name) and hasattr(td, name), name


def test_dataloader_signature_matches_torch():
    import inspect
    ours = list(inspect.signature(tld.DataLoader).parameters)
    theirs = list(inspect.signature(td.DataLoader).parameters)
    assert ours[:len(theirs)] == theirs


@pytest.mark.parametrize("bs, drop_last", [(1, False), (3, False), (3, True), (7, False), (10, True)])
def test_generic_batches_equal_torch(bs, drop_last):
    ours = list(tld.DataLoader(Squares(tl), batch_size=bs, drop_last=drop_last))
    theirs = list(td.DataLoader(Squares(torch), batch_size=bs, drop_last=drop_last))
    assert len(ours) == len(theirs) == len(tld.DataLoader(Squares(tl), batch_size=bs, drop_last=drop_last))
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_tensor_dataset_batches_equal_torch_and_batch_size_none():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    ours = list(tld.DataLoader(tld.TensorDataset(tl.tensor(x), tl.tensor(y)), batch_size=4))
    theirs = list(td.DataLoader(td.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4))
    for a, b in zip(ours, theirs):
        _same(a, b)
    ours = list(tld.DataLoader(Squares(tl, 3), batch_size=None))
    theirs = list(td.DataLoader(Squares(torch, 3), batch_size=None))
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_explicit_samplers_give_torch_orders():
    order = [5, 1, 4, 0, 3, 2, 6]
    for lib, mod in ((tl, tld), (torch, td)):
        ds = Squares(lib)
        bs = mod.BatchSampler(order, batch_size=3, drop_last=False)
        got = [b["y"].tolist() for b in mod.DataLoader(ds, batch_sampler=bs)]
        assert got == [[5, 1, 4], [0, 3, 2], [6]]
        got = [b["y"].tolist() for b in mod.DataLoader(ds, batch_size=2, sampler=order)]
        assert got == [[5, 1], [4, 0], [3, 2], [6]]
    assert list(tld.BatchSampler(tld.SequentialSampler(range(5)), 2, True)) == \
        list(td.BatchSampler(td.SequentialSampler(range(5)), 2, True))
    assert len(tld.BatchSampler(range(5), 2, False)) == len(td.BatchSampler(range(5), 2, False)) == 3


def test_random_samplers():
    g = tl.Generator(3)
    r = list(tld.RandomSampler(range(10), generator=g))
    assert sorted(r) == list(range(10)) and r != list(range(10))
    assert list(tld.RandomSampler(range(10), generator=tl.Generator(3))) == r  # reproducible
    rr = list(tld.RandomSampler(range(4), replacement=True, num_samples=50, generator=g))
    assert len(rr) == 50 and set(rr) <= set(range(4))
    many = list(tld.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(many) == 10 and sorted(many[:4]) == [0, 1, 2, 3] and sorted(many[4:8]) == [0, 1, 2, 3]
    s = list(tld.SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(s) == [10, 20, 30]
    w = list(tld.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 100, generator=g))
    assert set(w) == {1, 3} and w.count(3) > w.count(1)
    assert len(tld.WeightedRandomSampler([1, 2], 5)) == 5
    tl.manual_seed(0)
    a = [b[0].tolist() for b in tld.DataLoader(tld.TensorDataset(tl.arange(9)), batch_size=4, shuffle=True)]
    tl.manual_seed(0)
    b = [b[0].tolist() for b in tld.DataLoader(tld.TensorDataset(tl.arange(9)), batch_size=4, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(9))


def test_subset_concat_random_split():
    base = list(range(10))
    s = tld.Subset(base, [9, 0, 3])
    assert [s[i] for i in range(len(s))] == [9, 0, 3]
    c = tld.ConcatDataset([range(3), range(10, 12)])
    assert len(c) == 5 and [c[i] for i in range(5)] == [0, 1, 2, 10, 11] and c[-1] == 11
    assert c.cumulative_sizes == td.ConcatDataset([range(3), range(10, 12)]).cumulative_sizes
    for lengths in ([3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5]):
        ours = tld.random_split(base, lengths, generator=tl.Generator(1))
        theirs = td.random_split(base, lengths, generator=torch.Generator().manual_seed(1))
        assert [len(p) for p in ours] == [len(p) for p in theirs]
        assert sorted(i for p in ours for i in p) == base
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        tld.random_split(base, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        tld.random_split(base, [1.5, -0.5])


def test_iterable_dataset():
    class Stream(tld.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class TStream(td.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    for kw in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}):
        ours = list(tld.DataLoader(Stream(), **kw))
        theirs = list(td.DataLoader(TStream(), **kw))
        assert [o.tolist() if hasattr(o, "tolist") else o for o in ours] == \
            [t.tolist() if hasattr(t, "tolist") else t for t in theirs]
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        tld.DataLoader(Stream(), shuffle=True)


def test_default_collate_as_torch():
    samples = [(1.5, 2, True, np.float32(1.0), "a"), (2.5, 3, False, np.float32(2.0), "b")]
    _same(tld.default_collate(samples), td.default_collate(samples))
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        tld.default_collate([[1, 2], [1]])
    _same(tld.default_convert([np.zeros(2, np.float32), 3]), td.default_convert([np.zeros(2, np.float32), 3]))


@pytest.mark.parametrize("kw, match", [
    ({"num_workers": -1}, "num_workers option should be non-negative"),
    ({"timeout": -1}, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multiprocessing"),
    ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
    ({"sampler": [0, 1], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive with batch_size"),
    ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
    ({"batch_size": 0}, "batch_size should be a positive integer value, but got batch_size=0"),
])
def test_argument_errors_as_torch(kw, match):
    for mod, ds in ((tld, Squares(tl)), (td, Squares(torch))):
        with pytest.raises(ValueError, match=match):
            mod.DataLoader(ds, **kw)


def test_sampler_argument_errors_as_torch():
    for mod in (tld, td):
        with pytest.raises(TypeError, match="replacement should be a boolean value"):
            mod.RandomSampler(range(3), replacement=1)
        with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
            mod.RandomSampler(range(3), num_samples=0)
        with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
            mod.BatchSampler(range(3), 0, False)
        with pytest.raises(ValueError, match="drop_last should be a boolean value"):
            mod.BatchSampler(range(3), 2, 1)
        with pytest.raises(ValueError, match="weights should be a 1d sequence"):
            mod.WeightedRandomSampler([[1.0]], 2)


def test_workers_and_pin_memory_run_in_process():
    started = []
    loader = tld.DataLoader(Squares(tl), batch_size=4, num_workers=2, pin_memory=True, prefetch_factor=2,
                            persistent_workers=True, timeout=5, worker_init_fn=started.append)
    for _ in range(2):  # (persistent workers start once)
        assert [b["y"].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6]]
    assert started == [0, 1]
    assert tld.get_worker_info() is None

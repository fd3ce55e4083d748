"""DataLoader / TensorDataset batching and seeded shuffles, and the bundled datasets."""

from __future__ import annotations

import math
import sys
from collections import namedtuple

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import datasets
from tinygrad_like.tensor import Tensor
from tinygrad_like.utils.data import DataLoader, Dataset, TensorDataset, default_collate


@pytest.fixture(autouse=True)
def _keep_default_rng():
    """These tests reseed the default generator; leave it as other tests expect to find it."""
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)


def _epoch_order(loader) -> list[int]:
    """The sample ids of one epoch, read from a dataset whose last field is the sample's index."""
    return [i for batch in loader for i in batch[-1].tolist()]


class ListDataset(Dataset):
    """A plain map-style dataset (so the per-sample path is exercised)."""

    def __init__(self, n: int):
        self.n = n
        self.calls = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        self.calls += 1
        return tl.full((2,), float(i)), i


# ---- TensorDataset ---------------------------------------------------------------------------------------
def test_tensor_dataset_items_and_len():
    x, y = tl.arange(12).reshape(4, 3), tl.tensor([5, 6, 7, 8])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6, 7, 8] and b.item() == 7
    assert ds.tensors[0] is x


def test_tensor_dataset_errors():
    with pytest.raises(ValueError, match=r"got 4, 3 \(shapes \(4, 2\), \(3,\)\)"):
        TensorDataset(tl.zeros(4, 2), tl.zeros(3))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()
    with pytest.raises(TypeError, match="argument 1 is a ndarray"):
        TensorDataset(tl.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="argument 0 is 0-d"):
        TensorDataset(tl.tensor(1.0))


def test_dataset_base_says_what_is_missing():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(Dataset())


# ---- batching -----------------------------------------------------------------------------------------------
def test_batches_in_order_cover_the_data():
    x = tl.arange(20, dtype=tl.float32).reshape(10, 2)
    y = tl.arange(10) * 10
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4))
    assert [tuple(b[0].shape) for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert all(isinstance(b, list) and len(b) == 2 for b in batches)  # (a list, as torch's default_collate)
    assert batches[0][0].dtype is tl.float32 and batches[0][1].dtype is tl.int64
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x.numpy())
    assert [v for b in batches for v in b[1].tolist()] == list(range(0, 100, 10))


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11])
@pytest.mark.parametrize("bs", [1, 3, 10, 20])
@pytest.mark.parametrize("drop_last", [False, True])
def test_len_matches_iteration(n, bs, drop_last):
    ds = TensorDataset(tl.arange(n))
    loader = DataLoader(ds, batch_size=bs, drop_last=drop_last)
    want = n // bs if drop_last else math.ceil(n / bs)
    batches = list(loader)
    assert len(loader) == want == len(batches)
    assert all(len(b[0]) == bs for b in (batches if drop_last else batches[:-1]))
    assert sum(len(b[0]) for b in batches) == (want * bs if drop_last else n)


def test_drop_last_drops_only_the_short_batch():
    ds = TensorDataset(tl.arange(10))
    assert _epoch_order(DataLoader(ds, batch_size=4, drop_last=True)) == list(range(8))
    assert _epoch_order(DataLoader(ds, batch_size=5, drop_last=True)) == list(range(10))


def test_batches_are_copies_not_views(tmp_path):
    x = tl.zeros(6, 2)
    for shuffle in (False, True):
        for (xb,) in DataLoader(TensorDataset(x), batch_size=3, shuffle=shuffle):
            xb += 1.0
            xb[0] = 99.0
    assert x.numpy().sum() == 0.0


def test_tensor_dataset_is_batched_without_a_per_sample_loop(monkeypatch):
    calls = {"index_select": 0}
    real = Tensor.index_select

    def counting(self, dim, index):
        calls["index_select"] += 1
        return real(self, dim, index)

    def no_per_sample(self, index):
        raise AssertionError("per-sample __getitem__ used for a TensorDataset")

    monkeypatch.setattr(Tensor, "index_select", counting)
    monkeypatch.setattr(TensorDataset, "__getitem__", no_per_sample)
    ds = TensorDataset(tl.zeros(100, 3), tl.arange(100), tl.ones(100, 2, 2))
    for shuffle in (False, True):
        calls["index_select"] = 0
        batches = list(DataLoader(ds, batch_size=32, shuffle=shuffle, generator=tl.Generator(1)))
        assert len(batches) == 4
        assert calls["index_select"] == 3 * 4  # one per tensor per batch


def test_subclass_overriding_getitem_is_respected():
    class Doubled(TensorDataset):
        def __getitem__(self, i):
            (x,) = super().__getitem__(i)
            return (x * 2,)

    ds = Doubled(tl.arange(5))
    assert _epoch_order(DataLoader(ds, batch_size=2)) == [0, 2, 4, 6, 8]


def test_generic_dataset_is_collated():
    ds = ListDataset(5)
    batches = list(DataLoader(ds, batch_size=2))
    assert ds.calls == 5
    xb, yb = batches[0]
    assert tuple(xb.shape) == (2, 2) and xb.dtype is tl.float32
    assert yb.tolist() == [0, 1] and yb.dtype is tl.int64
    assert tuple(batches[-1][0].shape) == (1, 2)


def test_a_plain_list_works_as_a_dataset():
    data = [(tl.tensor([float(i)]), i % 2 == 0) for i in range(4)]
    (xb, yb), = list(DataLoader(data, batch_size=4))
    assert xb.tolist() == [[0.0], [1.0], [2.0], [3.0]] and yb.dtype is tl.bool and yb.tolist() == [True, False] * 2


def test_collate_fn_is_used():
    seen = []
    loader = DataLoader(TensorDataset(tl.arange(5)), batch_size=2, collate_fn=lambda s: seen.append(len(s)) or s)
    assert len(list(loader)) == 3 and seen == [2, 2, 1]


# ---- default_collate ---------------------------------------------------------------------------------------
def test_default_collate_structures():
    Pair = namedtuple("Pair", "x y")
    b = default_collate([Pair(tl.zeros(3), 1.5), Pair(tl.ones(3), 2.5)])
    assert isinstance(b, Pair) and tuple(b.x.shape) == (2, 3) and b.y.tolist() == [1.5, 2.5]
    d = default_collate([{"img": np.zeros((2, 2), np.float16), "label": 3}, {"img": np.ones((2, 2), np.float16),
                                                                             "label": 4}])
    assert d["img"].dtype is tl.float16 and tuple(d["img"].shape) == (2, 2, 2) and d["label"].tolist() == [3, 4]
    assert default_collate([np.int64(3), np.int64(4)]).tolist() == [3, 4]
    assert default_collate([[tl.zeros(1), 0]]) [1].tolist() == [0]


def test_default_collate_errors():
    with pytest.raises(ValueError, match="empty"):
        default_collate([])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([(1, 2), (1,)])
    with pytest.raises(TypeError, match="mix Tensor and int"):
        default_collate([tl.zeros(1), 3])
    assert default_collate(["a", "b"]) == ["a", "b"]  # (strings stay a list, as in torch)
    with pytest.raises(TypeError, match="found object"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([tl.zeros(2), tl.zeros(3)])


# ---- shuffling ---------------------------------------------------------------------------------------------
def _epochs(loader, k: int) -> list[list[int]]:
    return [_epoch_order(loader) for _ in range(k)]


@pytest.mark.parametrize("make", [lambda n: TensorDataset(tl.arange(n)), ListDataset], ids=["tensor", "generic"])
def test_seeded_shuffle_is_reproducible_and_fresh_each_epoch(make):
    n = 50
    loader = DataLoader(make(n), batch_size=8, shuffle=True)
    tl.manual_seed(123)
    run1 = _epochs(loader, 3)
    tl.manual_seed(123)
    run2 = _epochs(loader, 3)
    tl.manual_seed(124)
    run3 = _epochs(loader, 3)
    assert run1 == run2
    assert run1 != run3
    assert len({tuple(e) for e in run1}) == 3  # each epoch a new order
    for epoch in run1 + run3:
        assert sorted(epoch) == list(range(n))  # every index exactly once
    assert run1[0] != list(range(n))


def test_generic_dataset_values_follow_the_order():
    loader = DataLoader(ListDataset(20), batch_size=6, shuffle=True, generator=tl.Generator(3))
    for xb, yb in loader:
        np.testing.assert_array_equal(xb.numpy()[:, 0], yb.numpy().astype(np.float32))


def test_explicit_generator_is_used_and_default_left_alone():
    ds = TensorDataset(tl.arange(30))
    g1 = _epochs(DataLoader(ds, batch_size=7, shuffle=True, generator=tl.Generator(9)), 2)
    tl.manual_seed(555)  # the default generator's state must not matter ...
    g2 = _epochs(DataLoader(ds, batch_size=7, shuffle=True, generator=tl.Generator(9)), 2)
    assert g1 == g2
    after = tl.rand(4).tolist()
    tl.manual_seed(555)
    assert after == tl.rand(4).tolist()  # ... and is not advanced by drawing from g


def test_shuffle_with_drop_last_drops_a_different_tail():
    loader = DataLoader(TensorDataset(tl.arange(10)), batch_size=4, shuffle=True, drop_last=True,
                        generator=tl.Generator(0))
    e1, e2 = _epochs(loader, 2)
    assert len(e1) == len(e2) == 8 and len(set(e1)) == 8 and set(e1) != set(e2)


def test_unshuffled_order_ignores_the_generator():
    tl.manual_seed(1)
    assert _epoch_order(DataLoader(TensorDataset(tl.arange(9)), batch_size=4)) == list(range(9))


# ---- progress bar ---------------------------------------------------------------------------------------------
def test_progress_bar_smoke(capsys):
    pytest.importorskip("tqdm")
    loader = DataLoader(TensorDataset(tl.arange(10)), batch_size=4, progress=True, desc="epoch 1")
    assert _epoch_order(loader) == list(range(10))
    err = capsys.readouterr().err
    assert "epoch 1" in err and "3/3" in err


def test_progress_bar_closes_when_loop_breaks(capsys):
    pytest.importorskip("tqdm")
    loader = DataLoader(TensorDataset(tl.arange(10)), batch_size=2, progress=True, desc="early")
    it = iter(loader)
    next(it)
    it.close()
    assert "early" in capsys.readouterr().err


def test_progress_without_tqdm_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match="pip install tqdm"):
        DataLoader(TensorDataset(tl.arange(3)), progress=True)
    DataLoader(TensorDataset(tl.arange(3)))  # without progress tqdm is not needed


# ---- argument errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bs", [0, -1, 1.5, True, "2"])  # (None: no batching, as in torch)
def test_batch_size_must_be_positive_int(bs):
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(TensorDataset(tl.arange(3)), batch_size=bs)


def test_numpy_int_batch_size_is_fine():
    assert len(DataLoader(TensorDataset(tl.arange(10)), batch_size=np.int64(5))) == 2


@pytest.mark.parametrize("kw, match", [
    ({"shuffle": "yes"}, "shuffle must be True or False"),
    ({"drop_last": 1}, "drop_last must be True or False"),
    ({"progress": None}, "progress must be True or False"),
    ({"generator": np.random.default_rng(0)}, "NumPy Generator won't do"),
    ({"generator": 0}, "generator must be a tinygrad_like Generator"),
    ({"desc": 3}, "desc must be a string"),
    ({"collate_fn": "stack"}, "collate_fn must be callable"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(TypeError, match=match):
        DataLoader(TensorDataset(tl.arange(3)), **kw)


def test_dataset_must_be_map_style():
    with pytest.raises(TypeError, match="map-style dataset"):
        DataLoader(iter(range(3)))


# ---- datasets ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits_raw():
    sk = pytest.importorskip("sklearn.datasets")
    d = sk.load_digits()
    return d.data, d.target


def test_digits_shapes_dtypes_ranges(digits_raw):
    d = datasets.digits()
    assert isinstance(d, datasets.Split)
    n = len(digits_raw[1])
    assert d.x_train.shape[1:] == (64,) and d.x_test.shape[1:] == (64,)
    assert d.x_train.shape[0] + d.x_test.shape[0] == n == 1797
    assert d.x_test.shape[0] == math.ceil(0.2 * n)
    assert d.x_train.dtype is tl.float32 and d.y_train.dtype is tl.int64 and d.y_test.dtype is tl.int64
    x = np.concatenate([d.x_train.numpy(), d.x_test.numpy()])
    assert x.min() == 0.0 and x.max() == 1.0
    y = np.concatenate([d.y_train.numpy(), d.y_test.numpy()])
    assert set(y.tolist()) == set(range(10))


def test_digits_is_a_stratified_permutation_of_the_data(digits_raw):
    raw_x, raw_y = digits_raw
    d = datasets.digits(test_fraction=0.25, seed=4)
    x = np.concatenate([d.x_train.numpy(), d.x_test.numpy()])
    y = np.concatenate([d.y_train.numpy(), d.y_test.numpy()])
    key = lambda xs, ys: sorted(zip(ys.tolist(), map(bytes, xs.round().astype(np.uint8))))
    assert key(x * 16, y) == key(raw_x, raw_y)  # the same samples, each once, labels kept with their images
    train, test = d.y_train.numpy(), d.y_test.numpy()
    for c in range(10):
        n_c = int((raw_y == c).sum())
        assert (train == c).any() and (test == c).any(), c
        assert abs((test == c).sum() - 0.25 * n_c) <= 1, c
    assert not np.array_equal(train, np.sort(train))  # shuffled, not grouped by class


def test_digits_images_and_determinism():
    flat, img = datasets.digits(seed=3), datasets.digits(seed=3, images=True)
    assert img.x_train.shape[1:] == (1, 8, 8) and img.x_test.shape[1:] == (1, 8, 8)
    np.testing.assert_array_equal(img.x_train.numpy().reshape(-1, 64), flat.x_train.numpy())
    np.testing.assert_array_equal(img.y_test.numpy(), flat.y_test.numpy())
    again, other = datasets.digits(seed=3), datasets.digits(seed=4)
    np.testing.assert_array_equal(again.x_train.numpy(), flat.x_train.numpy())
    np.testing.assert_array_equal(again.y_train.numpy(), flat.y_train.numpy())
    assert not np.array_equal(other.y_train.numpy(), flat.y_train.numpy())


@pytest.mark.parametrize("frac", [0, 1, -0.1, 1.5, "0.2", True])
def test_digits_bad_fraction(frac):
    with pytest.raises(ValueError, match="test_fraction"):
        datasets.digits(test_fraction=frac)


def test_digits_without_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match="pip install scikit-learn"):
        datasets.digits()


def test_moons():
    x, y = datasets.moons(n_samples=101, noise=0.1, seed=2)
    assert tuple(x.shape) == (101, 2) and x.dtype is tl.float32
    assert tuple(y.shape) == (101,) and y.dtype is tl.int64
    assert (y.numpy() == 0).sum() == 50 and (y.numpy() == 1).sum() == 51
    x2, y2 = datasets.moons(n_samples=101, noise=0.1, seed=2)
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    assert not np.array_equal(datasets.moons(n_samples=101, seed=3)[0].numpy(), x.numpy())
    assert not np.array_equal(y.numpy(), np.sort(y.numpy()))  # shuffled


def test_moons_shape_without_noise():
    x, y = datasets.moons(n_samples=40, noise=0.0)
    x, y = x.numpy().astype(np.float64), y.numpy()
    top, bottom = x[y == 0], x[y == 1]
    np.testing.assert_allclose(np.hypot(top[:, 0], top[:, 1]), 1.0, atol=1e-6)
    assert (top[:, 1] >= -1e-6).all()
    np.testing.assert_allclose(np.hypot(bottom[:, 0] - 1, bottom[:, 1] - 0.5), 1.0, atol=1e-6)
    assert (bottom[:, 1] <= 0.5 + 1e-6).all()


def test_spirals():
    x, y = datasets.spirals(n_per_class=30, classes=4, noise=0.2, seed=1)
    assert tuple(x.shape) == (120, 2) and x.dtype is tl.float32 and y.dtype is tl.int64
    assert np.bincount(y.numpy()).tolist() == [30] * 4
    assert np.abs(x.numpy()).max() <= 1.0 + 1e-6
    x2, _ = datasets.spirals(n_per_class=30, classes=4, noise=0.2, seed=1)
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    assert not np.array_equal(datasets.spirals(n_per_class=30, classes=4, seed=2)[0].numpy(), x.numpy())


def test_spirals_shape_without_noise():
    x, y = datasets.spirals(n_per_class=50, classes=3, noise=0.0)
    x, y = x.numpy().astype(np.float64), y.numpy()
    for c in range(3):
        pts = x[y == c]
        r = np.hypot(pts[:, 0], pts[:, 1])
        np.testing.assert_allclose(np.sort(r), np.linspace(0, 1, 50), atol=1e-6)
        theta = np.arctan2(pts[:, 0], pts[:, 1])  # x = r sin(t), y = r cos(t)
        far = r > 0.1
        want = np.linspace(4.0 * c, 4.0 * (c + 1), 50)[np.argsort(np.argsort(r))][far]
        np.testing.assert_allclose(np.angle(np.exp(1j * (theta[far] - want))), 0.0, atol=1e-5)


@pytest.mark.parametrize("call, match", [
    (lambda: datasets.moons(n_samples=1), "n_samples"),
    (lambda: datasets.moons(noise=-0.1), "noise"),
    (lambda: datasets.moons(noise=float("nan")), "noise"),
    (lambda: datasets.moons(seed=-1), "seed"),
    (lambda: datasets.spirals(n_per_class=0), "n_per_class"),
    (lambda: datasets.spirals(classes=2.0), "classes"),
    (lambda: datasets.digits(seed="a"), "seed"),
])
def test_dataset_argument_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_datasets_train_through_the_loader():
    x, y = datasets.spirals(n_per_class=10, classes=3)
    seen = np.concatenate([yb.numpy() for _, yb in DataLoader(TensorDataset(x, y), batch_size=7, shuffle=True)])
    assert np.bincount(seen).tolist() == [10, 10, 10]

"""Small datasets to train real models on, with no download: sklearn's 8x8 digits, moons and spirals.

Why these: they fit in memory, load in milliseconds on a CPU-only machine, and are hard enough that a
model visibly learns (digits: a 10-class image task; moons and spirals: 2-d sets whose decision
boundaries you can draw). Every split and every sample is a deterministic function of ``seed``.

>>> from tinygrad_like import datasets
>>> x, y = datasets.moons(n_samples=10)
>>> tuple(x.shape), x.dtype, y.dtype
((10, 2), tinygrad_like.float32, tinygrad_like.int64)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .creation import tensor
from .dtypes import float32, int64
from .tensor import Tensor

__all__ = ["Split", "digits", "moons", "spirals"]


class Split(NamedTuple):
    """A train/test split: features ``x_*`` (float32) and integer class labels ``y_*`` (int64)."""

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_noise(noise: object) -> float:
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.floating, np.integer)) \
            or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    return float(noise)


def _stratified_split(y: np.ndarray, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Shuffled (train, test) indices with each class in both, in proportion to its size.

    The test set gets ``ceil(test_fraction * n)`` samples (as scikit-learn's ``train_test_split``), shared out
    between classes by largest remainder, with at least one sample of every class on each side.
    """
    classes, counts = np.unique(y, return_counts=True)
    want = min(max(int(np.ceil(test_fraction * len(y))), len(classes)), len(y) - len(classes))
    quota = test_fraction * counts
    n_test = np.floor(quota).astype(np.int64)
    extra = want - int(n_test.sum())
    if extra > 0:
        n_test[np.argsort(-(quota - n_test), kind="stable")[:extra]] += 1
    n_test = np.clip(n_test, 1, counts - 1)
    train, test = [], []
    for c, k in zip(classes, n_test):
        idx = rng.permutation(np.flatnonzero(y == c))
        test.append(idx[:k])
        train.append(idx[k:])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


def digits(test_fraction: float = 0.2, seed: int = 0, images: bool = False) -> Split:
    """The 1,797 8x8 handwritten digits bundled with scikit-learn, split into train and test sets.

    Features are float32 in [0, 1] (pixel counts 0..16 divided by 16), shaped (N, 64), or (N, 1, 8, 8)
    with ``images=True`` for convolutional models; labels are int64 in 0..9. The split is stratified (each
    digit appears in both sets in proportion) and shuffled by ``np.random.default_rng(seed)``, so it is
    the same on every machine. Needs scikit-learn (no network access: the data ships inside it).

    >>> d = digits(images=True)
    >>> tuple(d.x_train.shape), tuple(d.x_test.shape), d.y_train.dtype
    ((1437, 1, 8, 8), (360, 1, 8, 8), tinygrad_like.int64)
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (float, int, np.floating)) \
            or not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be a number strictly between 0 and 1, got {test_fraction!r}")
    seed = _check_int("seed", seed, 0)
    try:
        from sklearn.datasets import load_digits  # (an optional dependency: imported only where it is used)
    except ImportError as e:
        raise ImportError("tinygrad_like.datasets.digits() needs scikit-learn (the digits ship inside it, no "
                          "download): pip install scikit-learn") from e
    raw = load_digits()
    x = (np.asarray(raw.data, dtype=np.float64) / 16.0).astype(np.float32)
    y = np.asarray(raw.target, dtype=np.int64)
    if images:
        x = x.reshape(-1, 1, 8, 8)
    tr, te = _stratified_split(y, float(test_fraction), np.random.default_rng(seed))
    return Split(tensor(x[tr], dtype=float32), tensor(y[tr], dtype=int64),
                 tensor(x[te], dtype=float32), tensor(y[te], dtype=int64))


def moons(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Two interleaving half circles (class 0 on top, class 1 below), as ``sklearn.datasets.make_moons``.

    Returns ``(x, y)``: float32 points (n_samples, 2) and int64 labels (n_samples,), in a shuffled order,
    with Gaussian noise of standard deviation ``noise`` added to the points. Not linearly separable: a
    classic first test for a small MLP.

    >>> x, y = moons(n_samples=7, noise=0.0)
    >>> tuple(x.shape), sorted(y.tolist())
    ((7, 2), [0, 0, 0, 1, 1, 1, 1])
    """
    n = _check_int("n_samples", n_samples, 2)
    noise = _check_noise(noise)
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    n_out = n // 2
    n_in = n - n_out
    t_out, t_in = np.linspace(0, np.pi, n_out), np.linspace(0, np.pi, n_in)
    outer = np.stack([np.cos(t_out), np.sin(t_out)], axis=1)
    inner = np.stack([1 - np.cos(t_in), 0.5 - np.sin(t_in)], axis=1)
    x = np.concatenate([outer, inner])
    y = np.concatenate([np.zeros(n_out, np.int64), np.ones(n_in, np.int64)])
    order = rng.permutation(n)
    x = x[order] + noise * rng.standard_normal((n, 2))
    return tensor(x.astype(np.float32), dtype=float32), tensor(y[order], dtype=int64)


def spirals(n_per_class: int = 100, classes: int = 3, noise: float = 0.2, seed: int = 0) -> tuple[Tensor, Tensor]:
    """``classes`` interleaved spiral arms in the plane (the CS231n toy set), ``n_per_class`` points each.

    Arm ``k`` sweeps radius 0 -> 1 while its angle turns through 4 radians starting at ``4k``; the angle
    gets Gaussian noise of standard deviation ``noise``. Returns ``(x, y)``: float32 (n, 2) in [-1, 1] and
    int64 labels, shuffled, n = n_per_class * classes.

    >>> x, y = spirals(n_per_class=5, classes=2)
    >>> tuple(x.shape), sorted(y.tolist())
    ((10, 2), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    """
    n_per = _check_int("n_per_class", n_per_class, 1)
    k = _check_int("classes", classes, 1)
    noise = _check_noise(noise)
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    r = np.tile(np.linspace(0.0, 1.0, n_per), k)
    y = np.repeat(np.arange(k, dtype=np.int64), n_per)
    theta = np.concatenate([np.linspace(4.0 * c, 4.0 * (c + 1), n_per) for c in range(k)])
    theta = theta + noise * rng.standard_normal(n_per * k)
    x = np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1)
    order = rng.permutation(n_per * k)
    return tensor(x[order].astype(np.float32), dtype=float32), tensor(y[order], dtype=int64)

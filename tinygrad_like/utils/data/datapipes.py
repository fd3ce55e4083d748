"""DataPipes, as ``torch.utils.data.datapipes``: composable datasets built by chaining functional calls.

torch 2.13 still ships them (no deprecation warning): ``IterDataPipe`` (an IterableDataset) and ``MapDataPipe``
(a map-style Dataset) are base classes to subclass; ``@functional_datapipe("name")`` registers a DataPipe class as
the method ``.name(...)`` of every pipe of its kind. The functional forms torch registers for the pipes a program
chains by hand are here: ``map``, ``filter``, ``batch``, ``unbatch``, ``collate``, ``concat``, ``zip``,
``shuffle`` and ``sharding_filter`` on IterDataPipe; ``map``, ``batch``, ``concat``, ``zip`` and ``shuffle`` on
MapDataPipe. torch's file-reading and DataFrame pipes (``open_files``, ``list_files``, ``_dataframes_*``,
``demux``, ``mux``, ``fork``, ``groupby``, ...) are not. ``sharding_filter`` splits the stream between
DataLoader workers by ``get_worker_info()``, so ``DataLoader(pipe.sharding_filter(), num_workers=2)`` yields each
item once, as torch's. ``shuffle`` draws from the default generator (not torch's numbers).

>>> class Numbers(IterDataPipe):
...     def __init__(self, n):
...         self.n = n
...     def __iter__(self):
...         return iter(range(self.n))
>>> list(Numbers(7).map(lambda x: x * 10).filter(lambda x: x > 20).batch(2))
[[30, 40], [50, 60]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ... import random as _random
from ._collate import default_collate
from ._worker import get_worker_info
from .dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled", "argument_validation"]


class DataChunk(list):
    """A batch made by ``.batch()``: a list that prints its items (``as_str``) and iterates them raw."""

    def __init__(self, items: Iterable[Any]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self) -> Iterator[Any]:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator[Any]:
        yield from self.items


class _Functional:
    """The registry behind ``pipe.name(...)``: a class attribute ``functions`` per kind of pipe."""

    functions: dict[str, Callable[..., Any]]

    def __getattr__(self, name: str) -> Any:
        fn = type(self).functions.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return functools.partial(fn, self)

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type,
                                      enable_df_api_tracing: bool = False) -> None:
        if function_name in cls.functions:
            raise Exception(  # noqa: TRY002 (torch's type)
                f"Unable to add DataPipe function name {function_name} as it is already taken")
        cls.functions[function_name] = lambda source, *args, **kwargs: cls_to_register(source, *args, **kwargs)

    def __repr__(self) -> str:
        return type(self).__qualname__

    def __str__(self) -> str:
        return type(self).__qualname__

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *type(self).functions]


class IterDataPipe(_Functional, IterableDataset):
    """Base of the iterable DataPipes: subclass it and define ``__iter__``; chain with ``.map(fn)``, ``.batch(n)``...
    """

    functions: dict[str, Callable[..., Any]] = {}

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__() to yield samples")


class DFIterDataPipe(IterDataPipe):
    """torch's base of the DataFrame pipes; an IterDataPipe (the DataFrame functions are not provided)."""

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_Functional, Dataset):
    """Base of the map-style DataPipes: subclass it and define ``__getitem__`` and ``__len__``."""

    functions: dict[str, Callable[..., Any]] = {}


class functional_datapipe:  # noqa: N801 (torch's name)
    """``@functional_datapipe("name")`` on a DataPipe class makes ``pipe.name(*args)`` build ``cls(pipe, *args)``."""

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls: type) -> type:
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe or MapDataPipe")
        return cls


class guaranteed_datapipes_determinism:  # noqa: N801 (torch's name)
    """``with guaranteed_datapipes_determinism():``: building a pipe marked ``@non_deterministic`` raises."""

    prev: bool

    def __init__(self) -> None:
        self.prev = _determinism[0]

    def __enter__(self) -> None:
        _determinism[0] = True

    def __exit__(self, *exc: Any) -> None:
        _determinism[0] = self.prev


_determinism = [False]


class non_deterministic:  # noqa: N801 (torch's name)
    """Mark a DataPipe class (or, given a function, the classes for which it answers True) as non-deterministic:
    constructing it inside ``guaranteed_datapipes_determinism()`` is a TypeError, as torch's."""

    def __init__(self, arg: Any) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but {arg.__name__} "
                                f"is found")
            self.cls: type | None = arg
            self.deterministic_fn = None
        elif callable(arg):
            self.cls = None
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.cls is not None:
            if _determinism[0]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                f"'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                f"DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        cls = args[0]
        if not (isinstance(cls, type) and issubclass(cls, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {cls.__name__} is found")
        fn = self.deterministic_fn

        def build(*a: Any, **kw: Any) -> Any:
            if fn(*a, **kw) and _determinism[0]:
                raise TypeError(f"{cls.__name__} is non-deterministic with the inputs, but you set "
                                f"'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                f"DataPipe if that is acceptable for your application")
            return cls(*a, **kw)
        return build


_validation = [True]


def argument_validation(f: Callable) -> Callable:
    """torch checks arguments against the annotations of a DataPipe's ``__init__``; here the decorator is accepted
    and the call passes through (annotations are not checked at run time)."""
    return f


def runtime_validation(f: Callable) -> Callable:
    """torch checks the type of each item an ``__iter__`` yields against the pipe's declared type; here the
    decorator is accepted and the items pass through unchecked."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")
    return f


class runtime_validation_disabled:  # noqa: N801 (torch's name)
    """``with runtime_validation_disabled():`` as torch's (validation is never on here, so it changes nothing)."""

    def __enter__(self) -> None:
        self.prev = _validation[0]
        _validation[0] = False

    def __exit__(self, *exc: Any) -> None:
        _validation[0] = self.prev


# ---- the functional forms ------------------------------------------------------------------------------------
@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    def __init__(self, datapipe: IterDataPipe, fn: Callable) -> None:
        self.datapipe, self.fn = datapipe, fn

    def __iter__(self) -> Iterator[Any]:
        for x in self.datapipe:
            yield self.fn(x)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    def __init__(self, datapipe: IterDataPipe, filter_fn: Callable) -> None:
        self.datapipe, self.filter_fn = datapipe, filter_fn

    def __iter__(self) -> Iterator[Any]:
        for x in self.datapipe:
            keep = self.filter_fn(x)
            if not isinstance(keep, (bool, np.bool_)):
                raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got",
                                 type(keep))
            if keep:
                yield x


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe: IterDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = datapipe, batch_size, drop_last, \
            wrapper_class

    def __iter__(self) -> Iterator[Any]:
        batch: list[Any] = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe: IterDataPipe, unbatch_level: int = 1) -> None:
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self) -> Iterator[Any]:
        def flat(x: Any, level: int) -> Iterator[Any]:
            if level == 0:
                yield x
                return
            for y in x:
                yield from flat(y, level - 1)
        for batch in self.datapipe:
            yield from flat(batch, self.unbatch_level)


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    def __init__(self, datapipe: IterDataPipe, conversion: Callable | None = default_collate,
                 collate_fn: Callable | None = None) -> None:
        super().__init__(datapipe, collate_fn or conversion or default_collate)


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes: IterDataPipe) -> None:
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        self.datapipes = datapipes

    def __iter__(self) -> Iterator[Any]:
        for dp in self.datapipes:
            yield from dp


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes: IterDataPipe) -> None:
        self.datapipes = datapipes

    def __iter__(self) -> Iterator[Any]:
        yield from zip(*self.datapipes)


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """A buffer of ``buffer_size`` items, each yielded from a random slot (as torch's); ``set_shuffle(False)``
    (what ``DataLoader(shuffle=False)`` does) passes the items through in order."""

    def __init__(self, datapipe: IterDataPipe, *, buffer_size: int = 10000, unbatch_level: int = 0) -> None:
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe.unbatch(unbatch_level) if unbatch_level else datapipe
        self.buffer_size = buffer_size
        self._enabled = True

    def set_shuffle(self, shuffle: bool = True) -> ShufflerIterDataPipe:
        self._enabled = shuffle
        return self

    def __iter__(self) -> Iterator[Any]:
        if not self._enabled:
            yield from self.datapipe
            return
        rng = _random.default_generator.np_generator()
        buf: list[Any] = []
        for x in self.datapipe:
            if len(buf) == self.buffer_size:
                i = int(rng.integers(len(buf)))
                buf[i], x = x, buf[i]
                yield x
            else:
                buf.append(x)
        while buf:
            i = int(rng.integers(len(buf)))
            buf[i], buf[-1] = buf[-1], buf[i]
            yield buf.pop()


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Every ``num_workers``-th item from the worker's id, inside a DataLoader worker; everything elsewhere."""

    def __init__(self, source_datapipe: IterDataPipe, sharding_group_filter: Any = None) -> None:
        self.source_datapipe = source_datapipe
        self.num_of_instances, self.instance_id = 1, 0

    def apply_sharding(self, num_of_instances: int, instance_id: int, sharding_group: Any = None) -> None:
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        n, k = (info.num_workers, info.id) if info is not None and self.num_of_instances == 1 else (
            self.num_of_instances, self.instance_id)
        for i, x in enumerate(self.source_datapipe):
            if i % n == k:
                yield x


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    def __init__(self, datapipe: MapDataPipe, fn: Callable) -> None:
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index: Any) -> Any:
        return self.fn(self.datapipe[index])

    def __len__(self) -> int:
        return len(self.datapipe)


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    def __init__(self, datapipe: MapDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = datapipe, batch_size, drop_last, \
            wrapper_class

    def __getitem__(self, index: int) -> Any:
        if index >= len(self):
            raise IndexError(f"Index {index} is out of bound.")
        start = index * self.batch_size
        stop = min(start + self.batch_size, len(self.datapipe))
        return self.wrapper_class([self.datapipe[i] for i in range(start, stop)])

    def __len__(self) -> int:
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes: MapDataPipe) -> None:
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        self.datapipes = datapipes

    def __getitem__(self, index: int) -> Any:
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self) -> int:
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes: MapDataPipe) -> None:
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        self.datapipes = datapipes

    def __getitem__(self, index: int) -> tuple:
        if index >= len(self):
            raise IndexError(f"Index {index} is out of range.")
        return tuple(dp[index] for dp in self.datapipes)

    def __len__(self) -> int:
        return min(len(dp) for dp in self.datapipes)


class ShufflerMapDataPipe(IterDataPipe):
    """torch's ``MapDataPipe.shuffle()`` gives an IterDataPipe over the items in a random order."""

    def __init__(self, datapipe: MapDataPipe, *, indices: list | None = None) -> None:
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True

    def set_shuffle(self, shuffle: bool = True) -> ShufflerMapDataPipe:
        self._enabled = shuffle
        return self

    def __iter__(self) -> Iterator[Any]:
        order = (_random.default_generator.np_generator().permutation(len(self.indices)).tolist()
                 if self._enabled else range(len(self.indices)))
        for i in order:
            yield self.datapipe[self.indices[i]]

    def __len__(self) -> int:
        return len(self.indices)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerMapDataPipe)  # (an IterDataPipe made from a map one)


def apply_shuffle_settings(datapipe: Any, shuffle: bool | None = None) -> Any:
    """Turn every shuffle in the pipe's graph on or off (``DataLoader(pipe, shuffle=...)`` does), as torch's
    ``graph_settings.apply_shuffle_settings``; a pipe without one gets one appended when ``shuffle`` is True."""
    if shuffle is None:
        return datapipe
    found = []
    seen: set[int] = set()

    def walk(dp: Any) -> None:
        if id(dp) in seen:
            return
        seen.add(id(dp))
        if isinstance(dp, (ShufflerIterDataPipe, ShufflerMapDataPipe)):
            found.append(dp)
        for v in vars(dp).values() if hasattr(dp, "__dict__") else ():
            for item in (v if isinstance(v, (list, tuple)) else (v,)):
                if isinstance(item, (IterDataPipe, MapDataPipe)):
                    walk(item)
    walk(datapipe)
    if not found and shuffle:
        return ShufflerIterDataPipe(datapipe)
    for dp in found:
        dp.set_shuffle(shuffle)
    return datapipe

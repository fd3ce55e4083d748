"""torch.distributed's key-value stores that live in one process: :class:`HashStore` (in memory, shared by threads)
and :class:`PrefixStore` (a namespace in another store). Values are bytes, as torch returns them; a read of a key
that is not there waits for another thread to set it, up to the store's timeout, then raises ``DistStoreError``.
``TCPStore`` and ``FileStore`` exist to let processes meet, which a world of one does not need (see
``distributed_c10d``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import timedelta

from .distributed_c10d import DistStoreError, QueueEmptyError

__all__ = ["Store", "HashStore", "PrefixStore"]

_DEFAULT_TIMEOUT = timedelta(minutes=5)  # (torch's stores' default)


def _bytes(value: str | bytes | bytearray | Sequence[int]) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class Store:
    """The interface of a key-value store (torch's base class: it stores nothing itself)."""

    def __init__(self) -> None:
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def has_extended_api(self) -> bool:
        return False

    def _missing(self, method: str):
        raise NotImplementedError(f"Store.{method}(): the base class stores nothing; use HashStore or PrefixStore")

    def set(self, key: str, value: str | bytes) -> None:
        self._missing("set")

    def get(self, key: str) -> bytes:
        self._missing("get")

    def add(self, key: str, amount: int) -> int:
        self._missing("add")

    def compare_set(self, key: str, expected_value: str | bytes, desired_value: str | bytes) -> bytes:
        self._missing("compare_set")

    def delete_key(self, key: str) -> bool:
        self._missing("delete_key")

    def num_keys(self) -> int:
        self._missing("num_keys")

    def check(self, keys: Sequence[str]) -> bool:
        self._missing("check")

    def wait(self, keys: Sequence[str], timeout: timedelta | None = None) -> None:
        self._missing("wait")

    def append(self, key: str, value: str | bytes) -> None:
        self.set(key, (self.get(key) if self.check([key]) else b"") + _bytes(value))

    def multi_get(self, keys: Sequence[str]) -> list[bytes]:
        return [self.get(key) for key in keys]

    def multi_set(self, keys: Sequence[str], values: Sequence[str | bytes]) -> None:
        for key, value in zip(keys, values, strict=True):
            self.set(key, value)


class HashStore(Store):
    """A store in this process's memory, safe to share between threads."""

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, bytes] = {}
        self._queues: dict[str, list[bytes]] = {}
        self._changed = threading.Condition()

    def has_extended_api(self) -> bool:
        return True

    def set(self, key: str, value: str | bytes) -> None:
        with self._changed:
            self._data[key] = _bytes(value)
            self._changed.notify_all()

    def _wait_locked(self, keys: Sequence[str], timeout: timedelta | None) -> None:
        limit = (timeout or self._timeout).total_seconds()
        deadline = time.monotonic() + limit if limit > 0 else None
        while not all(k in self._data for k in keys):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise DistStoreError(f"Wait timeout: keys {[k for k in keys if k not in self._data]} were not set "
                                     f"within {limit} s")
            self._changed.wait(left)

    def get(self, key: str) -> bytes:
        with self._changed:
            self._wait_locked([key], None)
            return self._data[key]

    def wait(self, keys: Sequence[str], timeout: timedelta | None = None) -> None:
        with self._changed:
            self._wait_locked(keys, timeout)

    def add(self, key: str, amount: int) -> int:
        with self._changed:
            value = int(self._data.get(key, b"0")) + int(amount)
            self._data[key] = str(value).encode()
            self._changed.notify_all()
            return value

    def compare_set(self, key: str, expected_value: str | bytes, desired_value: str | bytes) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is absent and ``expected_value`` is
        empty); returns the value it then holds (``expected_value`` for an absent key left alone), as torch."""
        expected, desired = _bytes(expected_value), _bytes(desired_value)
        with self._changed:
            current = self._data.get(key)
            if (current is None and expected == b"") or current == expected:
                self._data[key] = desired
                self._changed.notify_all()
                return desired
            return expected if current is None else current

    def delete_key(self, key: str) -> bool:
        with self._changed:
            return self._data.pop(key, None) is not None

    def num_keys(self) -> int:
        with self._changed:
            return len(self._data)

    def check(self, keys: Sequence[str]) -> bool:
        with self._changed:
            return all(k in self._data for k in keys)

    def list_keys(self) -> list[str]:
        with self._changed:
            return list(self._data)

    def queue_push(self, key: str, value: str | bytes) -> None:
        with self._changed:
            self._queues.setdefault(key, []).append(_bytes(value))
            self._changed.notify_all()

    def queue_len(self, key: str) -> int:
        with self._changed:
            return len(self._queues.get(key, []))

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        with self._changed:
            limit = self._timeout.total_seconds()
            deadline = time.monotonic() + limit
            while not self._queues.get(key):
                if not block:
                    raise QueueEmptyError("queue is empty")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DistStoreError(f"Wait timeout: the queue {key!r} stayed empty for {limit} s")
                self._changed.wait(left)
            return self._queues[key].pop(0)


class PrefixStore(Store):
    """Every key of ``store`` under ``prefix + "/"``: a namespace shared with other users of the store."""

    def __init__(self, prefix: str, store: Store):
        super().__init__()
        self._prefix = prefix
        self.underlying_store = store

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    @property
    def timeout(self) -> timedelta:
        return self.underlying_store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self.underlying_store.set_timeout(timeout)

    def has_extended_api(self) -> bool:
        return self.underlying_store.has_extended_api()

    def set(self, key: str, value: str | bytes) -> None:
        self.underlying_store.set(self._key(key), value)

    def get(self, key: str) -> bytes:
        return self.underlying_store.get(self._key(key))

    def add(self, key: str, amount: int) -> int:
        return self.underlying_store.add(self._key(key), amount)

    def compare_set(self, key: str, expected_value: str | bytes, desired_value: str | bytes) -> bytes:
        return self.underlying_store.compare_set(self._key(key), expected_value, desired_value)

    def delete_key(self, key: str) -> bool:
        return self.underlying_store.delete_key(self._key(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()  # (torch counts the underlying store's keys too)

    def check(self, keys: Sequence[str]) -> bool:
        return self.underlying_store.check([self._key(k) for k in keys])

    def wait(self, keys: Sequence[str], timeout: timedelta | None = None) -> None:
        self.underlying_store.wait([self._key(k) for k in keys], timeout)

    def queue_push(self, key: str, value: str | bytes) -> None:
        self.underlying_store.queue_push(self._key(key), value)

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        return self.underlying_store.queue_pop(self._key(key), block)

    def queue_len(self, key: str) -> int:
        return self.underlying_store.queue_len(self._key(key))

"""A caching allocator for device memory: freed buffers are kept by size class and handed out again.

After a warm-up step a training loop asks the driver for nothing new: every buffer it frees comes
back to a free list of its size class and serves the next request of that class. Each handle carries
the *generation* of its block; freeing bumps it, so using a freed (or since recycled) buffer raises
:class:`StaleBufferError` instead of reading someone else's memory. When the driver is out of memory
the pool frees its cache and retries once, then raises :class:`CudaOutOfMemoryError` with bytes
requested, in use and cached.

The driver is two callables, ``alloc(nbytes) -> address`` and ``free(address)``, so the pool is tested
without a GPU (``tests/test_cuda_runtime.py``); the CUDA backend passes PyCUDA's ``mem_alloc``.
It is not thread-safe: one thread drives the GPU (the primary context is current on that thread only).

>>> fake = iter(range(1 << 20, 1 << 40, 1 << 20))
>>> pool = BufferPool(lambda n: next(fake), lambda addr: None)
>>> a = pool.alloc(1000); a.nbytes, a.capacity
(1000, 1024)
>>> addr = a.address; pool.free(a)
>>> b = pool.alloc(700); b.address == addr          # recycled: same block, no driver call
True
>>> try:
...     a.address
... except StaleBufferError as e:
...     print(e)
device buffer of 1000 bytes was freed (generation 0, block now at 1): it was used after free; keep the tensor alive \
instead of its buffer
"""

from __future__ import annotations

from collections.abc import Callable

MIN_BLOCK = 512                 # bytes: the smallest class (blocks are never split: each is one driver allocation)
SMALL_LIMIT = 1 << 20           # up to 1 MiB: power-of-two classes
LARGE_GRANULE = 2 << 20         # above: rounded up to 2 MiB multiples


class StaleBufferError(RuntimeError):
    """A buffer handle was used after it was freed (its block may hold another tensor now)."""


class CudaOutOfMemoryError(MemoryError):
    """The driver refused an allocation even after the pool released its cache."""

    def __init__(self, requested: int, in_use: int, cached: int, cause: BaseException | None = None):
        self.requested, self.in_use, self.cached = requested, in_use, cached
        super().__init__(f"CUDA out of memory: tried to allocate {_fmt(requested)}; {_fmt(in_use)} in use by "
                         f"tensors, {_fmt(cached)} cached by the pool (already released once and retried)"
                         + (f"; driver said: {cause}" if cause else ""))


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def size_class(nbytes: int) -> int:
    """The block size serving a request: powers of two from 512 B to 1 MiB, then multiples of 2 MiB."""
    if nbytes <= MIN_BLOCK:
        return MIN_BLOCK
    if nbytes <= SMALL_LIMIT:
        return 1 << (nbytes - 1).bit_length()
    return -(-nbytes // LARGE_GRANULE) * LARGE_GRANULE


class _Block:
    __slots__ = ("address", "capacity", "generation", "driver_handle")

    def __init__(self, address: int, capacity: int, driver_handle):
        self.address, self.capacity, self.generation, self.driver_handle = address, capacity, 0, driver_handle


class Buffer:
    """A handle on a pooled block: valid until freed (then every access raises)."""

    __slots__ = ("_block", "_generation", "nbytes")

    def __init__(self, block: _Block, nbytes: int):
        self._block, self._generation, self.nbytes = block, block.generation, nbytes

    def _check(self) -> _Block:
        b = self._block
        if b.generation != self._generation:
            raise StaleBufferError(f"device buffer of {self.nbytes} bytes was freed (generation {self._generation}, "
                                   f"block now at {b.generation}): it was used after free; keep the tensor alive "
                                   "instead of its buffer")
        return b

    @property
    def address(self) -> int:
        """The device address (an int for kernel arguments); raises if the buffer was freed."""
        return self._check().address

    @property
    def capacity(self) -> int:
        return self._check().capacity

    @property
    def alive(self) -> bool:
        return self._block.generation == self._generation

    def __int__(self) -> int:
        return self.address

    def __repr__(self) -> str:
        state = f"0x{self._block.address:x}" if self.alive else "freed"
        return f"Buffer({self.nbytes} bytes, {state})"


class BufferPool:
    """Size-classed free lists over a driver allocator; ``stats()`` is ``tl.cuda.memory_stats()``."""

    def __init__(self, driver_alloc: Callable[[int], object], driver_free: Callable[[object], None],
                 out_of_memory: tuple[type[BaseException], ...] = (MemoryError,)):
        self._driver_alloc, self._driver_free, self._oom = driver_alloc, driver_free, out_of_memory
        self._free: dict[int, list[_Block]] = {}
        self.in_use = 0             # bytes of blocks handed out (capacity)
        self.requested = 0          # bytes asked for by live buffers
        self.cached = 0             # bytes of blocks on the free lists
        self.peak_in_use = 0
        self.peak_requested = 0     # (the peaks torch.cuda.max_memory_allocated / _reserved report)
        self.peak_reserved = 0
        self.driver_allocs = 0
        self.driver_frees = 0
        self.hits = 0
        self.misses = 0
        self.oom_retries = 0
        self.live_requested: dict[int, int] = {}  # block address -> bytes asked for (a trace's buffer extents)

    def alloc(self, nbytes: int) -> Buffer:
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        cls = size_class(max(nbytes, 1))
        free = self._free.get(cls)
        if free:
            block = free.pop()
            self.cached -= cls
            self.hits += 1
        else:
            block = self._new_block(cls, nbytes)
            self.misses += 1
        self.in_use += cls
        self.requested += nbytes
        self.peak_in_use = max(self.peak_in_use, self.in_use)
        self.peak_requested = max(self.peak_requested, self.requested)
        self.peak_reserved = max(self.peak_reserved, self.in_use + self.cached)
        self.live_requested[block.address] = nbytes
        return Buffer(block, nbytes)

    def _new_block(self, cls: int, nbytes: int) -> _Block:
        try:
            handle = self._driver_alloc(cls)
        except self._oom as first:
            self.oom_retries += 1
            self.empty_cache()
            try:
                handle = self._driver_alloc(cls)
            except self._oom as second:
                raise CudaOutOfMemoryError(nbytes, self.in_use, self.cached, second) from first
        self.driver_allocs += 1
        return _Block(int(handle), cls, handle)

    def free(self, buf: Buffer) -> None:
        """Return ``buf``'s block to its free list; ``buf`` (and every copy of the handle) becomes stale."""
        block = buf._check()
        block.generation += 1
        self.in_use -= block.capacity
        self.requested -= buf.nbytes
        self.live_requested.pop(block.address, None)
        self._free.setdefault(block.capacity, []).append(block)
        self.cached += block.capacity

    def empty_cache(self) -> None:
        """Give every cached block back to the driver (``torch.cuda.empty_cache``)."""
        for blocks in self._free.values():
            for block in blocks:
                self._driver_free(block.driver_handle)
                self.driver_frees += 1
                block.generation += 1
        self._free.clear()
        self.cached = 0

    def stats(self) -> dict:
        return {"allocated_bytes": self.requested, "reserved_bytes": self.in_use + self.cached,
                "in_use_bytes": self.in_use, "cached_bytes": self.cached, "peak_in_use_bytes": self.peak_in_use,
                "driver_allocs": self.driver_allocs, "driver_frees": self.driver_frees, "pool_hits": self.hits,
                "pool_misses": self.misses, "oom_retries": self.oom_retries}

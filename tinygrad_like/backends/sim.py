"""The simulated device ``sim``: the host/device story of a GPU on a machine without one.

A tensor on ``sim`` lives in the device's own memory, apart from the host's, and the host sees its values only
through transfers, as with ``cuda``:

- the device memory is a pool of blocks with the CUDA pool's size classes (``BufferPool`` itself), so its
  numbers (in use, cached, driver allocations, hit rate) behave as on a GPU;
- a host read (``.numpy()``, ``.item()``, ``print``) downloads, a host write uploads at the device's next use,
  and each storage's residency, dirty side and version counter are the real ones of :class:`~tinygrad_like.storage.
  Storage`;
- every transfer is logged in ``backend.transfers`` (direction, bytes, seconds) and counted.

What is simulated is the compute: every primitive is the NumPy backend's, run on the device blocks' memory, and
a result is copied into a block of the pool (one copy more than a GPU makes). It is timed like any other kernel
while someone listens to ``events``. Its speed says nothing about a GPU's.

>>> import tinygrad_like as tl
>>> x = tl.ones(3, device="sim")
>>> x.storage.residency, x.device
('gpu', device(type='sim', index=0))
>>> float(x.sum())           # a host read: one download of the 4-byte result
3.0
>>> tl.device("sim").raw_backend.transfers[-1].direction
'd2h'
"""

from __future__ import annotations

import ctypes
import time
import weakref
from collections import deque
from typing import NamedTuple

import numpy as np

from .cuda.pool import BufferPool
from .numpy_backend import NumpyBackend

#: transfers kept in ``SimBackend.transfers`` (the counters count them all)
TRANSFER_LOG = 1000


class Transfer(NamedTuple):
    """One copy between host and device memory."""

    direction: str  # "h2d" or "d2h"
    nbytes: int
    seconds: float
    time: float  # time.perf_counter() at its start (the events clock)


class SimBuffer:
    """One device allocation: ``mem`` is a ctypes view of ``nbytes`` of a pooled block.

    Every NumPy array over this buffer is made from ``mem`` and keeps it alive, so the block goes back to the pool
    when the last of them is gone (not merely the storage): memory a live array can still read is never handed
    out again."""

    __slots__ = ("mem", "nbytes", "__weakref__")

    def __init__(self, mem, nbytes: int):
        self.mem, self.nbytes = mem, nbytes

    def __repr__(self) -> str:
        return f"SimBuffer({self.nbytes} bytes at 0x{ctypes.addressof(self.mem):x})"


class SimBackend(NumpyBackend):
    """NumPy compute over device memory of its own (a pool), reached from the host only by counted transfers."""

    name = "sim"
    is_host = False
    simulated = True  # (views and printouts say so)

    def __init__(self) -> None:
        self._blocks: dict[int, np.ndarray] = {}  # address -> the block's bytes: the simulated device memory
        self.pool = BufferPool(self._driver_alloc, self._driver_free)
        self._buffers: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(mem) -> its SimBuffer
        self.transfers: deque[Transfer] = deque(maxlen=TRANSFER_LOG)
        self.uploads = self.downloads = 0
        self.bytes_h2d = self.bytes_d2h = 0

    # ---- the simulated driver: blocks of device memory ----------------------------------------------
    def _driver_alloc(self, nbytes: int) -> int:
        block = np.empty(max(nbytes, 1), np.uint8)
        self._blocks[block.ctypes.data] = block
        return block.ctypes.data

    def _driver_free(self, address: int) -> None:
        del self._blocks[address]

    def _buffer(self, nbytes: int) -> SimBuffer:
        handle = self.pool.alloc(nbytes)
        mem = (ctypes.c_char * nbytes).from_buffer(self._blocks[handle.address])
        weakref.finalize(mem, self.pool.free, handle)  # when no array over it is left, the block is free again
        buf = SimBuffer(mem, nbytes)
        self._buffers[id(mem)] = buf
        return buf

    def _array(self, buf: SimBuffer, shape: tuple, dtype) -> np.ndarray:
        """A C-contiguous array of ``shape`` over the start of ``buf``."""
        return np.ndarray(shape, dtype, buf.mem)

    def _log(self, direction: str, nbytes: int, t0: float) -> None:
        self.transfers.append(Transfer(direction, nbytes, time.perf_counter() - t0, t0))
        if direction == "h2d":
            self.uploads += 1
            self.bytes_h2d += nbytes
        else:
            self.downloads += 1
            self.bytes_d2h += nbytes

    # ---- memory primitives ---------------------------------------------------------------------------
    def alloc(self, numel: int, dtype) -> SimBuffer:
        return self._buffer(numel * dtype.itemsize)

    @staticmethod
    def view(buf: SimBuffer, layout, dtype):
        return NumpyBackend.view(buf.mem, layout, dtype)

    def adopt(self, r):
        """A primitive's result -> (its device buffer, a C-contiguous array over it). A result that NumPy computed is
        copied into a block of the pool; an array ``from_numpy`` just put there is taken as it is."""
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        base = r.base
        if isinstance(base, ctypes.Array):
            buf = self._buffers.get(id(base))
            if buf is not None and buf.mem is base and r.flags.c_contiguous and r.nbytes == buf.nbytes \
                    and r.ctypes.data == ctypes.addressof(base):
                return buf, r
        buf = self._buffer(r.nbytes)
        out = self._array(buf, r.shape, r.dtype)
        np.copyto(out, r)
        return buf, out

    def upload(self, host) -> SimBuffer:
        """A new device buffer holding a copy of ``host`` (flattened)."""
        t0 = time.perf_counter()
        host = np.asarray(host, order="C")
        buf = self._buffer(host.nbytes)
        np.copyto(self._array(buf, (host.size,), host.dtype), host.reshape(-1))
        self._log("h2d", host.nbytes, t0)
        return buf

    def from_numpy(self, arr):
        """``arr`` copied to the device, as an array of its shape over a new buffer (0-d stays 0-d)."""
        t0 = time.perf_counter()
        arr = np.asarray(arr, order="C")
        out = self._array(self._buffer(arr.nbytes), arr.shape, arr.dtype)
        np.copyto(out, arr)
        self._log("h2d", arr.nbytes, t0)
        return out

    def upload_into(self, host, buf: SimBuffer) -> None:
        t0 = time.perf_counter()
        host = np.asarray(host, order="C")
        np.copyto(self._array(buf, (host.size,), host.dtype), host.reshape(-1))
        self._log("h2d", host.nbytes, t0)

    def download(self, buf: SimBuffer, numel: int, dtype):
        """A new flat host array with the buffer's first ``numel`` elements."""
        out = np.empty(numel, dtype.np)
        self.download_into(buf, out)
        return out

    def download_into(self, buf: SimBuffer, host) -> None:
        t0 = time.perf_counter()
        np.copyto(host, self._array(buf, (host.size,), host.dtype).reshape(host.shape))
        self._log("d2h", host.nbytes, t0)

    def to_numpy(self, x):
        """A host copy of ``x`` (any view of device memory), with its shape."""
        t0 = time.perf_counter()
        out = np.array(x, copy=True, order="C")
        self._log("d2h", out.nbytes, t0)
        return out

    # ---- what tl.cuda offers for its device --------------------------------------------------------
    def memory_stats(self) -> dict:
        """The pool's counters (as ``tl.cuda.memory_stats()``) and the transfer totals."""
        return {**self.pool.stats(), "uploads": self.uploads, "downloads": self.downloads,
                "bytes_h2d": self.bytes_h2d, "bytes_d2h": self.bytes_d2h, "simulated": True}

    def empty_cache(self) -> None:
        """Give the pool's cached blocks back (as ``tl.cuda.empty_cache()``)."""
        self.pool.empty_cache()

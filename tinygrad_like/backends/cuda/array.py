"""Device memory as the CUDA backend's native arrays.

``DeviceBuffer`` owns one block of the buffer pool and gives it back when the last reference goes
(a ``Storage`` holds it as its device copy; temporaries hold it while a primitive runs). Work on the
one stream is ordered, so a block freed while kernels that read it are still queued is only reused by
kernels queued after them. ``CudaArray`` is a strided view of a buffer: shape, strides and offset in
elements, and the NumPy dtype of its elements; it is what ``Tensor._x`` holds on ``cuda``.
"""

from __future__ import annotations

import numpy as np

from .pool import BufferPool


class DeviceBuffer:
    """One pooled device block of ``nbytes`` bytes, returned to the pool when this object dies."""

    __slots__ = ("mem", "pool", "nbytes", "__weakref__")

    def __init__(self, pool: BufferPool, nbytes: int):
        self.pool = pool
        self.nbytes = nbytes
        self.mem = pool.alloc(nbytes)

    @property
    def address(self) -> int:
        return self.mem.address  # raises StaleBufferError if the block was freed under us

    def __int__(self) -> int:
        return self.mem.address

    def __del__(self):
        mem = getattr(self, "mem", None)
        if mem is not None and mem.alive:
            self.pool.free(mem)

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.nbytes} bytes, {self.mem!r})"


class CudaArray:
    """A strided view (element strides, element offset) of a :class:`DeviceBuffer`."""

    __slots__ = ("buf", "shape", "strides", "offset", "dtype", "size")
    __array_priority__ = -1  # never let NumPy treat it as an array-like

    def __init__(self, buf: DeviceBuffer, shape: tuple, strides: tuple, offset: int, dtype):
        self.buf = buf
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.dtype = np.dtype(dtype)
        n = 1
        for s in shape:
            n *= s
        self.size = n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ptr(self) -> int:
        """The device address of element 0 (checked: raises if the buffer was freed)."""
        return self.buf.address + self.offset * self.dtype.itemsize

    @property
    def is_contiguous(self) -> bool:
        """Row-major contiguous (dims of size 1 may have any stride)."""
        acc = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != acc:
                return False
            acc *= n
        return True

    def with_layout(self, shape: tuple, strides: tuple, offset: int | None = None) -> CudaArray:
        return CudaArray(self.buf, tuple(shape), tuple(strides), self.offset if offset is None else offset,
                         self.dtype)

    def __repr__(self) -> str:
        return (f"CudaArray(shape={self.shape}, dtype={self.dtype.name}, strides={self.strides}, "
                f"offset={self.offset})")

    def __array__(self, *a, **k):
        raise TypeError("a CUDA tensor's data lives on the GPU: call .cpu() or .numpy() on the Tensor to copy it "
                        "to the host first")

"""A second memory space for tests: a "device" whose buffers are separate NumPy arrays.

``DevBackend`` computes with NumPy (it inherits every primitive from ``NumpyBackend``) but is not
the host: a tensor on it owns a device buffer (a flat NumPy array that only this backend touches),
and the host sees its values only through explicit ``download``/``upload`` calls, which are counted.
That is enough to drive the ``Storage`` residency state machine (cpu / gpu / both, dirty side)
without a GPU.

>>> import tinygrad_like as tl
>>> from tinygrad_like.device import register_device, unregister_device
>>> dev = register_device("testdev", DevBackend())
>>> tl.ones(3, device="testdev").storage.residency
'gpu'
>>> unregister_device("testdev")
"""

from __future__ import annotations

import numpy as np

from tinygrad_like.backends.numpy_backend import NumpyBackend


class DevBackend(NumpyBackend):
    """NumPy compute, but with device-side buffers and counted host <-> device copies."""

    name = "testdev"
    is_host = False

    def __init__(self):
        self.uploads = 0  # host -> device copies (upload, upload_into, from_numpy)
        self.downloads = 0  # device -> host copies (download, download_into)
        self.allocs = 0

    def reset_counts(self) -> None:
        self.uploads = self.downloads = self.allocs = 0

    # ---- memory: a device buffer is a flat NumPy array the host never aliases ------------
    def alloc(self, numel: int, dtype):
        self.allocs += 1
        return np.zeros(numel, dtype.np)

    def upload(self, host):
        """A new device buffer holding a copy of the flat host array ``host``."""
        self.uploads += 1
        return np.array(host, copy=True).reshape(-1)

    def from_numpy(self, arr):
        """A native device array holding a copy of ``arr`` (any shape, 0-d stays 0-d)."""
        self.uploads += 1
        return np.array(arr, copy=True, order="C")

    def upload_into(self, host, buf) -> None:
        self.uploads += 1
        np.copyto(buf, np.asarray(host).reshape(buf.shape))

    def download(self, buf, numel: int, dtype):
        """A new flat host array with the device buffer's first ``numel`` elements."""
        self.downloads += 1
        out = np.array(buf[:numel], dtype=dtype.np, copy=True)
        return out.reshape(-1)

    def download_into(self, buf, host) -> None:
        self.downloads += 1
        np.copyto(host, np.asarray(buf).reshape(host.shape))

    @staticmethod
    def adopt(r):
        """A primitive's result -> (flat device buffer, C-contiguous native array viewing it)."""
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        elif not r.flags.c_contiguous:
            r = np.ascontiguousarray(r)
        return r.reshape(-1), r

    # ``view(buf, layout, dtype)`` is NumpyBackend's: a strided NumPy view of the device buffer.

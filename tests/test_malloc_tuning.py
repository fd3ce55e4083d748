"""The NumPy backend keeps freed memory mapped for reuse (``backends/_malloc.py``); it can be switched off."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import json, os
import numpy as np
import tinygrad_like
from tinygrad_like.backends import _malloc

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

a = np.ones(16 * 2**20 // 8)  # 16 MB, touched
before_free = rss()
del a
print(json.dumps({"status": _malloc.status, "released": before_free - rss()}))
"""


def probe(**env) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **env}, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt tuning is glibc (Linux) only")
def test_freed_arrays_stay_mapped_for_reuse_unless_switched_off():
    tuned = probe(TINYGRAD_LIKE_TUNE_MALLOC="1")
    assert tuned["status"] == "tuned"
    assert tuned["released"] < 4 * 2**20, tuned      # the 16 MB stay in the heap for the next step
    # glibc's default with its threshold pinned (a 16 MB allocation during import could otherwise raise
    # the dynamic threshold and keep the array in the heap): anything over 128 KiB is mmapped
    off = probe(TINYGRAD_LIKE_TUNE_MALLOC="0", MALLOC_MMAP_THRESHOLD_="131072")
    assert off["status"] == "off (TINYGRAD_LIKE_TUNE_MALLOC=0)"
    assert off["released"] > 12 * 2**20, off          # glibc's default: unmapped at once

"""Where builds made at run time are kept between processes (the compiled CPU kernels; the CUDA emulator's)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def user_cache_dir(name: str, env: str) -> Path:
    """``$<env>``, else ``~/.cache/tinygrad_like/<name>`` (``$XDG_CACHE_HOME`` honoured), else, where that cannot be
    created or written, a folder in the system's temporary directory."""
    if os.environ.get(env):
        return Path(os.environ[env])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "tinygrad_like" / name
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / f"tinygrad_like_{name}-{os.getuid()}"

"""What every benchmark records beside its numbers (the machine, the library versions, the commit), and how it
hands them over (one JSON document on stdout, and in a file when asked).

Imported by the scripts in this folder (``python benchmarks/NAME.py`` puts the folder on sys.path).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine_info(*modules: str) -> dict:
    """Platform, CPU model and count, Python, and the version of each named module (None if absent)."""
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"platform": platform.platform(), "machine": platform.machine(), "cpu_model": model,
            "cpu_count": os.cpu_count(), "python": platform.python_version()}
    for mod in ("numpy", *modules, "tinygrad_like"):
        try:
            info[mod] = getattr(importlib.import_module(mod), "__version__", "?")
        except ImportError:
            info[mod] = None
    return info


def git_state(*paths: str) -> dict:
    """The commit measured, and whether ``paths`` had uncommitted edits when it ran."""
    def out(*args):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    dirty = out("status", "--porcelain", "--", *paths)
    return {"commit": out("rev-parse", "--short", "HEAD"), "dirty": None if dirty is None else bool(dirty),
            "dirty_paths": list(paths)}


@contextlib.contextmanager
def busy_cores(n: int):
    """Run ``n`` processes that spin on a core each for the duration (0: nothing): the load of a laptop with a
    browser and other work open, under which thread pools that spin at barriers lose most."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        if procs:
            time.sleep(0.5)  # let them reach the run queue
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def report(result: dict, out=None, indent: int = 2) -> None:
    """Print ``result`` as one JSON document on stdout and, with ``out`` (a path), write the same text there."""
    text = json.dumps(result, indent=indent)
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")

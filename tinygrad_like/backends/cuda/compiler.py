"""Compile ``kernel_src/*.cu`` to cubin with our own nvcc call, cached in memory and on disk.

Compiling is split from loading (``pycuda.driver.module_from_buffer``) so that this half runs, and is
tested, on any machine with nvcc, GPU or not. The cache key covers everything that changes the cubin:
the source and every ``.cuh`` it includes, the options, the arch and nvcc's version string. Every
compile or cache hit is a ``KernelCompiled`` event (``cache`` is ``"memory"``, ``"disk"`` or ``"miss"``).

>>> import shutil
>>> if shutil.which("nvcc"):
...     mod = compile_kernel_file("fill.cu", "sm_90")
...     assert mod.cubin[:4] == b"\\x7fELF" and mod.arch == "sm_90"
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ... import events

#: Options every kernel is compiled with; ``-lineinfo`` keeps source lines for compute-sanitizer and ncu.
DEFAULT_OPTIONS = ("-std=c++17", "-O3", "-lineinfo")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# nvcc/cicc: "path/file.cu(12): error: ..." ; ptxas: "ptxas fatal   : ..." ; gcc-style "file.cu:12:3: error"
ERROR_LOCATION_RE = re.compile(
    r"^(?P<file>[^\s:()]+\.cuh?)(?:\((?P<line>\d+)\)|:(?P<line2>\d+):\d+):\s*(?:error|fatal)", re.M)


class CudaCompileError(RuntimeError):
    """nvcc refused a source: carries nvcc's message, the file and the first error's line."""

    def __init__(self, source: str, line: int | None, message: str, command: list[str]):
        self.source, self.line, self.message, self.command = source, line, message, command
        where = f"{source}, line {line}" if line else source
        super().__init__(f"nvcc could not compile {where}:\n{message.strip()}\ncommand: {' '.join(command)}")


@dataclass(frozen=True)
class CompiledModule:
    """A cubin and where it came from. ``cache`` is "memory", "disk" or "miss" (just compiled)."""

    name: str
    arch: str
    cubin: bytes
    key: str
    cache: str
    seconds: float
    log: str = ""


def kernel_dir() -> Path:
    """The installed ``kernel_src`` folder (package data of ``tinygrad_like.kernel_src``)."""
    return Path(str(resources.files("tinygrad_like.kernel_src")))


def cache_dir() -> Path:
    """``$TINYGRAD_LIKE_CACHE_DIR`` or ``~/.cache/tinygrad_like``, plus ``cubin/``."""
    root = os.environ.get("TINYGRAD_LIKE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tinygrad_like")
    return Path(root) / "cubin"


_nvcc_versions: dict[str, str] = {}
_memory: dict[str, bytes] = {}


def find_nvcc() -> str | None:
    """``$NVCC`` if set (it must be an executable), else nvcc on PATH, else the usual CUDA install location."""
    explicit = os.environ.get("NVCC")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise RuntimeError(f"$NVCC is set to {explicit!r}, which is not an executable file: point it at the "
                               "CUDA toolkit's bin/nvcc, or unset it to use nvcc from PATH")
        return explicit
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.access(default, os.X_OK) else None


def nvcc_version(nvcc: str) -> str:
    """The last line of ``nvcc --version`` (e.g. "Build cuda_13.0.r13.0/compiler.36424714_0"), cached."""
    v = _nvcc_versions.get(nvcc)
    if v is None:
        out = _run([nvcc, "--version"], 60)
        lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
        v = _nvcc_versions[nvcc] = lines[-1] if lines else out.stderr.strip()
    return v


def _with_includes(path: Path, seen: set[Path] | None = None) -> list[tuple[str, str]]:
    """(name, text) of the source and, recursively, every local header it includes (for the cache key)."""
    seen = set() if seen is None else seen
    path = path.resolve()
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    text = path.read_text()
    parts = [(path.name, text)]
    for inc in INCLUDE_RE.findall(text):
        parts += _with_includes(path.parent / inc, seen)
    return parts


def cache_key(path: Path, arch: str, options: tuple[str, ...], version: str) -> str:
    h = hashlib.sha256()
    for name, text in _with_includes(path):
        h.update(f"{name}\0{len(text)}\0".encode())
        h.update(text.encode())
    h.update(("\0".join((arch, *options, version))).encode())
    return h.hexdigest()


def parse_error_location(log: str, source: Path) -> int | None:
    """The line of the first error nvcc reports in ``source`` (or any file, if none is in it)."""
    first = None
    for m in ERROR_LOCATION_RE.finditer(log):
        line = int(m.group("line") or m.group("line2"))
        if Path(m.group("file")).name == source.name:
            return line
        first = first or line
    return first


def compile_kernel_file(name_or_path: str | os.PathLike, arch: str, options: tuple[str, ...] = DEFAULT_OPTIONS,
                        *, use_disk: bool = True) -> CompiledModule:
    """Compile one ``.cu`` for ``arch`` (e.g. "sm_90"), cached: a bare name ("fill.cu") is a file of
    ``kernel_src``; anything with a folder in it is a path.

    Raises :class:`CudaCompileError` with nvcc's message, the file and line; ``FileNotFoundError`` for a
    missing source; ``RuntimeError`` naming what to install when nvcc is missing.
    """
    raw = os.fspath(name_or_path)
    path = Path(raw)
    if "/" not in raw and os.sep not in raw:  # a bare name is always one of ours, never a file of the cwd
        path = kernel_dir() / raw
    if not path.is_file():
        raise FileNotFoundError(f"no CUDA source {path} (kernel_src has: "
                                f"{', '.join(sorted(p.name for p in kernel_dir().glob('*.cu')))})")
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc was not found (set $NVCC or put the CUDA toolkit's bin/ on PATH): it compiles "
                           "kernel_src/*.cu for the GPU")
    t0 = time.perf_counter()
    key = cache_key(path, arch, tuple(options), nvcc_version(nvcc))
    cubin, cache, log = _memory.get(key), "memory", ""
    disk_file = cache_dir() / f"{path.stem}-{arch}-{key[:32]}.cubin"
    if cubin is None and use_disk and disk_file.is_file():
        data = disk_file.read_bytes()
        if data[:4] == b"\x7fELF":  # a truncated or foreign file is recompiled, not loaded
            cubin, cache = data, "disk"
            _memory[key] = cubin
    if cubin is None:
        cubin, log = _run_nvcc(nvcc, path, arch, options)
        cache = "miss"
        _memory[key] = cubin
        if use_disk:
            _store(disk_file, cubin)
    seconds = time.perf_counter() - t0
    if events.ACTIVE:
        events.emit(events.KernelCompiled(path.stem, str(path), seconds, cache != "miss", events.now(), arch=arch,
                                          cache=cache, key=key[:16]))
    return CompiledModule(path.stem, arch, cubin, key, cache, seconds, log)


def _run_nvcc(nvcc: str, path: Path, arch: str, options) -> tuple[bytes, str]:
    with tempfile.TemporaryDirectory(prefix="tl-nvcc-") as tmp:
        out = Path(tmp) / "out.cubin"
        cmd = [nvcc, "--cubin", f"-arch={arch}", *options, "-I", str(path.parent), "-o", str(out), str(path)]
        p = _run(cmd, 600)
        log = (p.stdout + p.stderr).strip()
        if p.returncode != 0 or not out.is_file():
            raise CudaCompileError(str(path), parse_error_location(log, path), log or f"exit {p.returncode}", cmd)
        return out.read_bytes(), log


def _run(cmd: list[str], timeout: int) -> subprocess.CompletedProcess:
    """Run nvcc; a missing, unrunnable or hanging nvcc is a RuntimeError that names the command."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"could not run nvcc ({cmd[0]}): {e}") from e


def _store(target: Path, data: bytes) -> None:
    """Write the cache file atomically; a cache that cannot be written is not an error (it is a cache)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except OSError:
        pass


def clear_memory_cache() -> None:
    _memory.clear()

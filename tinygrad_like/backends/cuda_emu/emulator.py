"""Run CUDA kernels on the CPU with CUDA's execution model: the ``cuda-emu`` device's engine.

Every ``kernel_src/<file>.cu`` (or a learner's own ``.cu`` file) is compiled as host C++ (the system's C++
compiler, with ``include/cuda_emu.h`` force-included, and ``include/cuda_fp16.h`` and ``include/mma.h`` standing in
for NVIDIA's headers: nothing from NVIDIA is needed) into a shared library that registers the file's
``extern "C" __global__`` kernels with a type-generic thunk (``include/cuda_emu_runtime.h``). A launch runs
the blocks one after the other and the threads of a block as cooperative fibers: ``__syncthreads`` and the
warp operations (``__shfl*_sync``, ``__syncwarp``, ``__ballot_sync``) are real rendezvous of the block's /
the warp's live threads, ``__shared__`` memory is one static copy (right, as blocks do not overlap) filled with
0xFF bytes before every block (GPU shared memory starts undefined; see :func:`rewrite_shared`), atomics
are plain read-modify-writes. A deadlock (a barrier some live thread never reaches) raises :class:`EmuError`.

Device addresses are host addresses: the argument buffer holds plain pointers to host memory (e.g. NumPy
arrays' ``ctypes.data``), packed as PyCUDA packs them for ``cuLaunchKernel``.

The libraries are built lazily (one per ``.cu``, only when one of its kernels is asked for; :meth:`Emulator.build`
builds several in parallel) and cached in ``cache_dir`` under a hash of the sources, the shim files and the
compiler command, so later sessions load them at once.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..cuda.compiler import kernel_dir

__all__ = ["CheckBuffer", "CheckRequest", "CheckResult", "EmuError", "EmuToolchainError", "Emulator", "EmuKernel",
           "parse_kernels", "rewrite_shared", "KERNEL_DIR"]

HERE = Path(__file__).resolve().parent
INCLUDE_DIR = HERE / "include"
KERNEL_DIR = kernel_dir()  # the project's kernels (kernel_src/, shipped inside the package)
SHIM_FILES = sorted(INCLUDE_DIR.glob("*.h"))

# Bump when the generated source or the build recipe changes in a way the hash would not see.
_GENERATOR_VERSION = "1"
_ERR_LEN = 4096
# One launch at a time in the whole process: each library's scheduler state and __shared__ variables are
# globals, and two libraries may be the same dlopen handle.
_LAUNCH_LOCK = threading.Lock()
_BUILD_LOCK = threading.Lock()


class EmuError(RuntimeError):
    """A launch the emulator refuses or cannot complete (bad arguments, deadlock), an unknown kernel, or a
    build failure (the compiler's output is in the message)."""


class EmuToolchainError(EmuError):
    """No C++ compiler that runs: the emulator cannot build kernels here (the message says what to install)."""


# ---- parsing the kernel sources --------------------------------------------------------------------------

_COMMENT_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_DECL_RE = re.compile(
    r'extern\s+"C"\s+__global__\s+'
    r"(?:__launch_bounds__\s*\((?P<lb>(?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)\s+)?"
    r"void\s+(?P<name>[A-Za-z_]\w*)\s*\("
)


def _strip_comments(text: str) -> str:
    return _COMMENT_RE.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def _first_arg(expr: str) -> str:
    depth = 0
    for i, ch in enumerate(expr):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            return expr[:i].strip()
    return expr.strip()


def parse_kernels(source: Path) -> list[tuple[str, str | None]]:
    """``[(name, max_threads_expression or None)]`` of the ``extern "C" __global__`` kernels of a ``.cu``,
    in file order (the expression is the first argument of ``__launch_bounds__``, evaluated by the
    compiler, so macros work)."""
    text = _strip_comments(Path(source).read_text())
    return [(m.group("name"), _first_arg(m.group("lb")) if m.group("lb") else None) for m in _DECL_RE.finditer(text)]


_SHARED_RE = re.compile(r"(?<![\w])(?P<ext>extern\s+)?__shared__\b(?P<body>[^;{}#]*);")
_ALIGN_RE = re.compile(r"__align__\s*\([^()]*\)")
_DECLARATOR_RE = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*(?:\[[^\[\]]*\]\s*)*$")


def _blank_comments(text: str) -> str:
    """``text`` with every comment character but newlines replaced by a space (offsets unchanged)."""
    return _COMMENT_RE.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else re.sub(r"[^\n]", " ", m.group(0)),
                           text)


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def rewrite_shared(text: str, uid: int = 0) -> str:
    """Instrument the ``__shared__`` declarations of a CUDA source for the emulator, on the same lines:
    ``__shared__ T a[N];`` gets ``CUDA_EMU_SHARED(a, id);`` appended (registers the static once, so that every
    block starts with it filled with 0xFF bytes) and ``extern __shared__ T a[];`` becomes
    ``CUDA_EMU_DYNAMIC_SHARED(T, a);`` (a pointer to the launch's dynamic shared memory). Declarations it
    cannot parse are left alone (then the variable is a plain zero-initialized static)."""
    blank = _blank_comments(text)
    out, pos, k = [], 0, 0
    for m in _SHARED_RE.finditer(blank):
        body = m.group("body")
        if m.group("ext"):
            d = re.fullmatch(r"(?P<type>.*?)\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\]\s*", body, re.S)
            if not d:
                continue
            typ = " ".join(_ALIGN_RE.sub(" ", d.group("type")).split())
            if not typ:
                continue
            out.append(text[pos:m.start()])
            out.append(f"CUDA_EMU_DYNAMIC_SHARED({typ}, {d.group('name')});" + "\n" * m.group(0).count("\n"))
            pos = m.end()
            continue
        names = []
        for piece in _split_top(_ALIGN_RE.sub(" ", body)):
            d = _DECLARATOR_RE.search(piece.strip())
            if not d or "=" in piece:
                names = []
                break
            names.append(d.group("name"))
        if not names:
            continue
        out.append(text[pos:m.end()])
        for name in names:
            out.append(f" CUDA_EMU_SHARED({name}, {uid}_{k});")
            k += 1
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


# ---- toolchain -------------------------------------------------------------------------------------------

_INSTALL_CXX = ("install one: on Debian or Ubuntu `sudo apt install g++`, on Fedora `sudo dnf install gcc-c++`, on "
                "macOS `xcode-select --install`, in a conda environment `conda install -c conda-forge cxx-compiler`; "
                "or set CUDA_EMU_CXX to a C++17 compiler's path")


def _find_cxx() -> str:
    cxx = os.environ.get("CUDA_EMU_CXX") or shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")
    if not cxx:
        raise EmuToolchainError("the CUDA emulator compiles kernels as C++ and found no C++ compiler (g++, clang++ "
                                "or c++ on PATH): " + _INSTALL_CXX)
    return cxx


def _default_cache_dir() -> Path:
    """``$CUDA_EMU_CACHE_DIR``, else ``~/.cache/tinygrad_like/cuda_emu`` (see ``tinygrad_like._cache``)."""
    from tinygrad_like._cache import user_cache_dir  # (the emulator module imports no part of the package at load)

    return user_cache_dir("cuda_emu", "CUDA_EMU_CACHE_DIR")


def _instrument_flags(version: str) -> list[str]:
    """Every load and store of the kernel as a call of ``__tsan_{read,write}N(address)`` (defined by
    ``cuda_emu_check.h``; the library is linked without the sanitizer's runtime): the thread sanitizer's
    instrumentation, without its function entry/exit calls."""
    if "clang" in version.lower():
        params = ["tsan-instrument-func-entry-exit=0", "tsan-instrument-read-before-write=1",
                  "tsan-distinguish-volatile=0"]
        return ["-fsanitize=thread", *(f for p in params for f in ("-mllvm", "-" + p))]
    params = ["tsan-instrument-func-entry-exit=0", "tsan-distinguish-volatile=0"]
    return ["-fsanitize=thread", *(f for p in params for f in ("--param", p))]


# ---- checked launches ------------------------------------------------------------------------------------

@dataclass
class CheckBuffer:
    """One range of device memory a checked launch knows: an ``argument`` buffer the kernel may touch
    (``writer``: a uint32 array, one per element of ``itemsize`` bytes, that receives each element's last
    writer: block * threads_per_block + thread), or a whole device allocation (padding included) it may not,
    unless through an argument."""

    lo: int
    nbytes: int
    argument: bool
    itemsize: int = 1
    writer: np.ndarray | None = None


@dataclass
class CheckRequest:
    """What a checked launch is told: its buffers, whether to trace (every access of ``block``, a linear block
    index, up to ``log_cap`` of them, and the warp-instruction statistics of all blocks), and whether to be
    ``strict`` (only its buffers, the fiber stacks and the library's own image may be touched)."""

    buffers: list[CheckBuffer]
    trace: bool = False
    block: int = 0
    log_cap: int = 1 << 21
    strict: bool = False  # a learner's launch: any address outside its buffers, the stacks and the library is OOB

    def rows(self) -> list[int]:
        out = []
        for i, b in enumerate(self.buffers):
            w = 0 if b.writer is None else b.writer.ctypes.data
            if b.writer is not None and (b.writer.dtype != np.uint32 or b.writer.size * b.itemsize < b.nbytes):
                raise ValueError("a writer map is one uint32 per element of the buffer")
            out += [b.lo, b.lo + b.nbytes, 0 if b.argument else 1, i, b.itemsize, w]
        return out


LOG_DTYPE = np.dtype([("phase", np.uint32), ("thread", np.uint32), ("site", np.uint32), ("buf", np.int32),
                      ("offset", np.uint64), ("size", np.uint16), ("kind", np.uint8), ("space", np.uint8),
                      ("pad", np.uint32)])
SITE_FIELDS = ("pc", "kind", "space", "buf", "requests", "lanes", "bytes", "sectors", "ideal_sectors",
               "wavefronts", "ideal_wavefronts", "mixed", "stride")
ACCESS_KINDS = ("read", "write", "atomic")


@dataclass
class CheckResult:
    """What a checked launch found, raw (instruction addresses ``pc`` are absolute; ``lib_base`` is the
    library's load address): ``fault`` (an out-of-bounds access: kind, space, block, thread, size, offset,
    address, pc) or None; ``races`` (how many) and ``race`` (the first: kind 0 read-after-write,
    1 write-after-read, 2 write-after-write; block, thread_a (earlier, -1 if several), thread_b, variable
    (-1: dynamic shared), byte offset, phase, pc_a, pc_b, size of the access); ``sites`` (one dict per
    instruction, SITE_FIELDS); ``log`` (the traced block's accesses, LOG_DTYPE); ``shared_vars`` [(name, bytes)]."""

    fault: dict | None
    races: int
    race: dict | None
    sites: list[dict]
    log: np.ndarray
    log_total: int
    shared_vars: list[tuple[str, int]]
    lib_base: int

    @classmethod
    def collect(cls, lib: ctypes.CDLL, request: CheckRequest) -> CheckResult:
        f = (ctypes.c_longlong * 8)()
        fault = None
        if lib.emu_check_fault(f):
            fault = dict(zip(("kind", "space", "block", "thread", "size", "offset", "address", "pc"), list(f)))
        r = (ctypes.c_longlong * 10)()
        races = int(lib.emu_check_race(r))
        race = dict(zip(("kind", "block", "thread_a", "thread_b", "var", "offset", "phase", "pc_a", "pc_b", "size"),
                        list(r))) if races else None
        n = lib.emu_check_sites(None, 0)
        rows = (ctypes.c_longlong * (13 * max(n, 1)))()
        lib.emu_check_sites(rows, n)
        sites = [dict(zip(SITE_FIELDS, rows[13 * i:13 * i + 13])) for i in range(n)]
        total = int(lib.emu_check_log(None, 0))
        log = np.zeros(min(total, request.log_cap), LOG_DTYPE)
        if len(log):
            lib.emu_check_log(log.ctypes.data, len(log))
        shared_vars, nbytes = [], ctypes.c_longlong()
        while (name := lib.emu_shared_var(len(shared_vars), ctypes.byref(nbytes))) is not None:
            shared_vars.append((name.decode(), int(nbytes.value)))
        return cls(fault, races, race, sites, log, total, shared_vars, int(lib.emu_lib_base()))


def _declare_check_api(lib: ctypes.CDLL) -> None:
    ll, p = ctypes.c_longlong, ctypes.c_void_p
    for name, res, args in (("emu_check_begin", None, [ctypes.c_int, p, ctypes.c_int, ll, ll]),
                            ("emu_check_end", None, []),
                            ("emu_check_lines", None, [ctypes.c_int, p, p]),
                            ("emu_check_fault", ctypes.c_int, [p]),
                            ("emu_check_race", ll, [p]),
                            ("emu_check_sites", ctypes.c_int, [p, ctypes.c_int]),
                            ("emu_check_log", ll, [p, ll]),
                            ("emu_shared_var", ctypes.c_char_p, [ctypes.c_int, ctypes.POINTER(ll)]),
                            ("emu_lib_base", ll, [])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


# ---- kernels -------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class EmuKernel:
    """One kernel of an emulator library. ``param_sizes`` / ``param_offsets`` / ``arg_bytes`` are the C++
    compiler's view of the parameter list (offsets by CUDA's rule: each parameter at the next multiple of
    its own alignment); ``max_threads`` is its ``__launch_bounds__`` (1024 without)."""

    name: str
    source: str
    param_sizes: tuple[int, ...]
    param_offsets: tuple[int, ...]
    arg_bytes: int
    max_threads: int
    checked: bool
    library: Path
    _lib: ctypes.CDLL = field(repr=False)
    _index: int = field(repr=False)

    def launch(self, grid: Sequence[int], block: Sequence[int], argbuf: bytes, shared: int = 0,
               check: CheckRequest | None = None) -> CheckResult | None:
        """Run the whole grid synchronously (one launch at a time per process). ``argbuf``: the parameters
        packed as for ``CU_LAUNCH_PARAM_BUFFER_POINTER`` (pointers = host addresses); ``grid`` / ``block``:
        1 to 3 dimensions (missing ones are 1); ``shared``: bytes of dynamic shared memory (``extern
        __shared__``; at most 227 KiB). Raises EmuError on a wrong buffer size, a zero or out-of-range grid
        or block dimension (CUDA's limits), a block larger than the kernel's ``__launch_bounds__``, a
        deadlock, or a warp operation whose mask names lanes that returned or do not exist.

        ``check`` (a kernel of a checked build only, see :class:`Emulator`) declares the launch's buffers: the
        accesses are then checked and, if ``check.trace``, recorded; the result is returned, and an EmuError
        carries it as ``.check`` (an out-of-bounds access is ``check.fault``)."""
        g, b = _dims(self.name, "grid", grid), _dims(self.name, "block", block)
        buf = bytes(argbuf)
        if len(buf) != self.arg_bytes:
            raise EmuError(
                f"{self.name}: got {len(buf)} bytes of arguments, expected {self.arg_bytes} "
                f"(parameter offsets {list(self.param_offsets)}, sizes {list(self.param_sizes)})"
            )
        if shared < 0:
            raise EmuError(f"{self.name}: negative dynamic shared memory size {shared}")
        err = ctypes.create_string_buffer(_ERR_LEN)
        result = None
        with _LAUNCH_LOCK:
            if check is None:
                rc = self._lib.emu_launch(self._index, *g, *b, buf, len(buf), int(shared), err, _ERR_LEN)
            else:
                if not self.checked:
                    raise EmuError(f"{self.name}: a checked launch needs the checked build (Emulator(checked=True))")
                rows = np.asarray(check.rows(), np.int64).reshape(-1, 6)
                if check.trace:
                    self._give_lines()
                flags = (1 if check.trace else 0) | (2 if check.strict else 0)
                self._lib.emu_check_begin(len(rows), rows.ctypes.data, flags, check.block,
                                          check.log_cap if check.trace else 0)
                try:
                    rc = self._lib.emu_launch(self._index, *g, *b, buf, len(buf), int(shared), err, _ERR_LEN)
                    result = CheckResult.collect(self._lib, check)
                finally:
                    self._lib.emu_check_end()
        if rc != 0:
            e = EmuError(err.value.decode(errors="replace"))
            e.check = result
            raise e
        return result

    def _give_lines(self) -> None:
        """Tell the library the source line of each of its loads and stores, once (a trace merges the pieces of
        one statement's vector copy into one access: see ``continues()`` in cuda_emu_check.h)."""
        if getattr(self._lib, "_lines_given", False):
            return
        from .checks import instruction_lines  # (checks imports this module)

        offsets, ids = instruction_lines(self.library)
        o = np.asarray(offsets, np.int64)
        i = np.asarray(ids, np.int32)
        self._lib.emu_check_lines(len(o), o.ctypes.data, i.ctypes.data)
        self._lib._lines_given = True


def _dims(name: str, what: str, dims: Sequence[int]) -> tuple[int, int, int]:
    d = tuple(int(v) for v in dims)
    if not 1 <= len(d) <= 3:
        raise EmuError(f"{name}: {what} must have 1 to 3 dimensions, got {dims!r}")
    d = d + (1,) * (3 - len(d))
    if any(v <= 0 for v in d):
        raise EmuError(f"{name}: {what} {d} has a zero or negative dimension")
    if any(v >= 2**32 for v in d):
        raise EmuError(f"{name}: {what} {d} has a dimension over 2**32 - 1")
    return d  # type: ignore[return-value]


# ---- the emulator --------------------------------------------------------------------------------------

class Emulator:
    """The kernels of ``kernel_dir`` (default ``kernel_src/``), built on demand into ``cache_dir`` (default
    ``$CUDA_EMU_CACHE_DIR`` or ``~/.cache/tinygrad_like/cuda_emu``). ``opt`` and ``extra_flags`` (plus
    ``$CUDA_EMU_CXXFLAGS``, e.g. ``-DCUDA_EMU_UCONTEXT`` for the portable fiber switch) go to the compiler
    (``$CUDA_EMU_CXX``, default g++).

    ``checked=True`` builds the kernels with every load and store instrumented (the compiler's thread-sanitizer
    instrumentation, answered by ``include/cuda_emu_check.h``; no sanitizer runtime is linked): its launches can
    check bounds and shared-memory races and record a trace (``EmuKernel.launch(check=...)``)."""

    def __init__(self, cache_dir: str | os.PathLike | None = None, *, kernel_dir: str | os.PathLike | None = None,
                 opt: str | None = None, extra_flags: Sequence[str] = (), checked: bool = False):
        self.kernel_dir = Path(kernel_dir) if kernel_dir is not None else KERNEL_DIR
        self.cache_dir = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
        self.checked = checked
        # (the checked build at -O1 -g: its instruction addresses map back to source lines)
        self.opt = opt if opt is not None else ("-O1" if checked else "-O2")
        self.extra_flags = (*extra_flags, *os.environ.get("CUDA_EMU_CXXFLAGS", "").split())
        self._sources = {p.name: p for p in sorted(self.kernel_dir.glob("*.cu"))}
        self._decls = {name: parse_kernels(p) for name, p in self._sources.items()}
        self._where: dict[str, str] = {}
        for src, decls in self._decls.items():
            for kname, _ in decls:
                self._where.setdefault(kname, src)
        self._libs: dict[str, ctypes.CDLL] = {}
        self._kernels: dict[str, EmuKernel] = {}
        self._toolchain: tuple[str, str] | None = None

    # -- discovery
    @property
    def sources(self) -> list[str]:
        """The ``.cu`` file names of ``kernel_dir``."""
        return list(self._sources)

    def kernels_in(self, source: str) -> list[str]:
        """Kernel names of one file, in file order (``"elementwise.cu"`` or ``"elementwise"``)."""
        return [name for name, _ in self._decls[self._source_name(source)]]

    def kernel_names(self) -> list[str]:
        return list(self._where)

    def _source_name(self, source: str) -> str:
        name = Path(source).name
        if not name.endswith(".cu"):
            name += ".cu"
        if name not in self._sources:
            raise EmuError(f"no {name} in {self.kernel_dir} (have: {', '.join(self._sources)})")
        return name

    # -- kernels
    def kernel(self, name: str) -> EmuKernel:
        """The kernel ``name`` (built with its file if needed). EmuError for an unknown name."""
        k = self._kernels.get(name)
        if k is not None:
            return k
        src = self._where.get(name)
        if src is None:
            raise EmuError(f"unknown kernel {name!r}: no extern \"C\" __global__ function of that name in "
                           f"{self.kernel_dir}/*.cu")
        self._load(src)
        return self._kernels[name]

    # -- building
    def build(self, sources: Iterable[str] | None = None, jobs: int | None = None) -> None:
        """Build (or load from the cache) the libraries of ``sources`` (default: every file), compiling the
        missing ones in parallel (``jobs`` at a time, default the CPU count)."""
        names = [self._source_name(s) for s in (self._sources if sources is None else sources)]
        with _BUILD_LOCK:
            todo = [(n, self.library_path(n)) for n in dict.fromkeys(names) if n not in self._libs]
            self._compile_all([(n, so) for n, so in todo if not so.is_file()], jobs or os.cpu_count() or 2)
            for n, so in todo:
                self._open(n, so)

    def library_path(self, source: str) -> Path:
        """Where the library of ``source`` is (or will be) cached: ``<stem>-<hash>.so`` in ``cache_dir``."""
        src = self._source_name(source)
        _, version = self._tools()
        h = hashlib.sha256()
        for part in (_GENERATOR_VERSION, " ".join(self._command(Path("SRC"), Path("OUT"))), version,
                     self._registry(src, Path("SRCDIR"))):
            h.update(part.encode() + b"\0")
        for f in [*self._local_sources(), *SHIM_FILES, Path(__file__)]:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        return self.cache_dir / f"{src[:-3]}{'-checked' if self.checked else ''}-{h.hexdigest()[:20]}.so"

    def _load(self, src: str) -> None:
        if src not in self._libs:
            self.build([src])

    def _local_sources(self) -> list[Path]:
        return sorted(p for ext in ("*.cu", "*.cuh", "*.h") for p in self.kernel_dir.glob(ext))

    def _tools(self) -> tuple[str, str]:
        if self._toolchain is None:
            cxx = _find_cxx()
            try:
                version = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
            except OSError as e:
                raise EmuToolchainError(f"cannot run the C++ compiler {cxx}: {e}; " + _INSTALL_CXX) from e
            self._toolchain = (cxx, version)
        return self._toolchain

    def _command(self, cpp: Path, out: Path) -> list[str]:
        cxx, _ = self._tools()
        # (include/ first: its cuda_fp16.h and mma.h stand in for NVIDIA's, installed or not, so every machine
        # compiles the kernels against the same definitions)
        cmd = [cxx, "-std=c++17", self.opt, "-fPIC", "-shared", "-fvisibility=hidden", "-ffp-contract=off",
               "-fno-strict-aliasing", "-fno-math-errno", "-fno-threadsafe-statics", "-include", "cuda_emu.h",
               "-I", str(INCLUDE_DIR), "-I", str(self.kernel_dir)]
        if os.uname().machine in ("x86_64", "AMD64"):
            cmd.append("-fcf-protection=none")  # the fiber switch is not shadow-stack aware
        if not self.checked:
            return [*cmd, *self.extra_flags, "-o", str(out), str(cpp)]
        # The checked build compiles with the sanitizer's instrumentation, then links without its runtime (which the
        # compiler driver would add to a one-step build). DWARF 4: binutils' addr2line misnames the file of #line'd
        # code in gcc 12's DWARF 5, and the line of an instruction is what a checked launch reports.
        obj = out.with_suffix(".o")
        compile_ = [*cmd, "-c", "-gdwarf-4", "-DCUDA_EMU_CHECKED", *_instrument_flags(self._tools()[1]),
                    *self.extra_flags, "-o", str(obj), str(cpp)]
        link = [cxx, "-shared", "-fPIC", *self.extra_flags, "-o", str(out), str(obj)]
        return ["sh", "-c", shlex.join(compile_) + " && " + shlex.join(link)]

    def _registry(self, src: str, srcdir: Path) -> str:
        """The generated translation unit: the (rewritten) source, the runtime, the kernel registry."""
        lines = [f"// generated by tinygrad_like/backends/cuda_emu/emulator.py from {src} -- do not edit",
                 f'#include "{srcdir / src}"',
                 '#include "cuda_emu_runtime.h"',
                 "CUDA_EMU_BEGIN_REGISTRY"]
        for name, bound in self._decls[src]:
            lines.append(f"CUDA_EMU_KERNEL({name}, ({bound if bound else '1024'}))")
        lines += ["CUDA_EMU_END_REGISTRY", ""]
        return "\n".join(lines)

    def _compile_all(self, todo: list[tuple[str, Path]], jobs: int) -> None:
        if not todo:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=self.cache_dir, prefix=".build-"))
        try:
            # the kernel folder's sources with their __shared__ declarations instrumented (see rewrite_shared)
            srcdir = work / "src"
            srcdir.mkdir()
            for i, f in enumerate(self._local_sources()):
                (srcdir / f.name).write_text(f'#line 1 "{f.resolve()}"\n' + rewrite_shared(f.read_text(), i))
            pending = list(todo)
            running: list[tuple[str, Path, list[str], subprocess.Popen, Path]] = []
            failures = []
            while pending or running:
                while pending and len(running) < jobs:
                    src, so = pending.pop(0)
                    cpp = work / f"{src[:-3]}_emu.cpp"
                    cpp.write_text(self._registry(src, srcdir))
                    tmp = work / so.name
                    cmd = self._command(cpp, tmp)
                    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    running.append((src, so, cmd, proc, tmp))
                src, so, cmd, proc, tmp = running.pop(0)
                log, _ = proc.communicate()
                if proc.returncode == 0:
                    os.replace(tmp, so)  # atomic: a concurrent session never loads a half-written library
                    self._prune(so)
                else:
                    failures.append((src, f"{src}: {' '.join(cmd)}\n{log}", log))
            if failures:
                full = "emulator build failed:\n" + "\n".join(f for _, f, _ in failures)
                if self.kernel_dir.resolve() != KERNEL_DIR.resolve():  # a learner's file: say it in their lines
                    from .checks import KernelCompileError, compile_error_message  # (checks imports this module)

                    src, _, log = failures[0]
                    e = KernelCompileError(compile_error_message(self.kernel_dir / src, log))
                    e.log = full
                    raise e
                raise EmuError(full)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _prune(self, so: Path, max_age_s: float = 7 * 86400) -> None:
        """Forget libraries of the same source built from other versions and unused for a week."""
        stem = so.name.rsplit("-", 1)[0]
        now = time.time()
        for old in self.cache_dir.glob(f"{stem}-*.so"):
            try:
                if old != so and old.name.rsplit("-", 1)[0] == stem and now - old.stat().st_mtime > max_age_s:
                    old.unlink()
                    old.with_name(old.name + ".lines.json").unlink(missing_ok=True)  # (checks.instruction_lines)
            except OSError:
                pass

    def _open(self, src: str, so: Path) -> None:
        try:
            os.utime(so)  # marks it used (see _prune)
        except OSError:
            pass
        lib = ctypes.CDLL(str(so))
        lib.emu_count.restype = ctypes.c_int
        lib.emu_name.restype = ctypes.c_char_p
        lib.emu_name.argtypes = [ctypes.c_int]
        lib.emu_nparams.restype = ctypes.c_int
        lib.emu_nparams.argtypes = [ctypes.c_int]
        lib.emu_max_threads.restype = ctypes.c_longlong
        lib.emu_max_threads.argtypes = [ctypes.c_int]
        lib.emu_params.restype = ctypes.c_longlong
        lib.emu_params.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(ctypes.c_longlong)]
        lib.emu_launch.restype = ctypes.c_int
        lib.emu_launch.argtypes = [ctypes.c_int, *([ctypes.c_uint] * 6), ctypes.c_char_p, ctypes.c_longlong,
                                   ctypes.c_longlong, ctypes.c_char_p, ctypes.c_int]
        if self.checked:
            _declare_check_api(lib)
        for i in range(lib.emu_count()):
            name = lib.emu_name(i).decode()
            n = lib.emu_nparams(i)
            sizes = (ctypes.c_longlong * max(n, 1))()
            offsets = (ctypes.c_longlong * max(n, 1))()
            total = lib.emu_params(i, sizes, offsets)
            self._kernels[name] = EmuKernel(name=name, source=src, param_sizes=tuple(sizes[:n]),
                                            param_offsets=tuple(offsets[:n]), arg_bytes=int(total),
                                            max_threads=int(lib.emu_max_threads(i)), checked=self.checked,
                                            library=so, _lib=lib, _index=i)
        self._libs[src] = lib

"""Our own CPU kernels: C sources in ``kernel_src/cpu/``, compiled at first use with the system's C compiler into a
cache on disk, loaded with ctypes. The CPU side of what the CUDA backend does with ``kernel_src/*.cu``.

Why: NumPy runs an expression such as an LSTM step's gates (three sigmoids, two tanh, four products, two sums) as
one pass over memory per operation, each with a few microseconds of call overhead; a recurrent layer runs such a
step 32 times per sequence. One C loop does it in one pass, vectorized by the compiler.

- **When**: a kernel file is compiled the first time one of its kernels is asked for (``kernel("lstm_cell_fwd_f32")``),
  about half a second with gcc -O3, then kept in ``$TL_CPU_KERNEL_CACHE`` (default
  ``~/.cache/tinygrad_like/cpu_kernels``) under a hash of the source, the compiler's version, the flags and this
  CPU's instruction sets (the code is built for the CPU it runs on, ``-march=native``). Later processes load it.
- **Without a compiler** (or with ``TL_CPU_KERNELS=off``), :func:`kernel` returns None and the callers run their
  NumPy code, which stays the reference the kernels are tested against; a note says so once.
- **Threads**: the kernels run on the calling thread. They start no thread pool, so they cannot fight PyTorch's
  OpenMP or NumPy's OpenBLAS in the same process.
- **Seen in the views**: a primitive that ran a compiled kernel is timed under the kernel's name on device
  ``cpu, compiled`` (:func:`launched`, read by ``device.TimedBackend``), as ``lstm_cell_fwd [cpu, compiled]``.

>>> k = kernel("lstm_cell_fwd_f32")
>>> k is None or callable(k)
True
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sysconfig
import threading
import time
import warnings
from importlib import resources
from pathlib import Path

from .. import events
from .._cache import user_cache_dir

__all__ = ["kernel", "typed_kernel", "suffix", "row_kernel", "chain_kernel", "available", "launched", "compile_file",
           "compile_all", "CompilerMissing", "cache_dir", "FLAGS"]

# -O3 vectorizes the loops; -march=native for this CPU's vector width (the cache key holds the CPU's instruction
# sets, so a cache shared between machines never loads code built for another CPU); no errno and no traps from
# math, so that the loops over expf-like code vectorize; -ffp-contract=fast lets the compiler use FMA (results
# then differ from NumPy's by a rounding or two: the tests compare within a stated ulp bound); -fopenmp-simd honours
# ``omp simd`` pragmas (a row sum vectorized in several partial sums) and links no OpenMP runtime, so no thread pool.
FLAGS = ("-O3", "-march=native", "-std=c11", "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math",
         "-ffp-contract=fast", "-fopenmp-simd")

# every kernel's C signature: name -> argument types (ctypes). Pointers are passed as addresses (ints).
_P, _I, _F, _D = ctypes.c_void_p, ctypes.c_long, ctypes.c_float, ctypes.c_double
SIGNATURES: dict[str, tuple[str, tuple]] = {}  # kernel name -> (source file, argtypes)


def _signatures(source: str, names: str, argtypes: tuple) -> None:
    for n in names.split():
        SIGNATURES[n] = (source, argtypes)


# recurrent.c: one time step of an LSTM, GRU or RNN layer, forward and backward (numpy_recurrent.py's loops)
_signatures("recurrent.c", "lstm_cell_fwd_f32 lstm_cell_fwd_f64", (_I, _I, _P, _P, _P, _P, _I, _P, _I, _P, _I))
_signatures("recurrent.c", "lstm_cell_bwd_f32 lstm_cell_bwd_f64", (_I, _I, _P, _P, _I, _P, _I, _P, _P, _I, _P, _P))
_signatures("recurrent.c", "gru_cell_fwd_f32 gru_cell_fwd_f64", (_I, _I, _P, _P, _P, _I, _P, _I, _P, _P))
_signatures("recurrent.c", "gru_cell_bwd_f32 gru_cell_bwd_f64", (_I, _I, _P, _P, _P, _I, _P, _P, _P, _P))
# optim.c: Adam / AdamW (numpy_nn.adam_step), y += x * alpha (NumpyBackend.axpy); embedding.c: the rows of an
# embedding's backward (numpy_backend)
_signatures("optim.c", "adam_step_f32", (_I, _P, _P, _P, _P, _P, *[_F] * 8, ctypes.c_int))
_signatures("optim.c", "adam_step_f64", (_I, _P, _P, _P, _P, _P, *[_D] * 8, ctypes.c_int))
_signatures("optim.c", "axpy_f32", (_I, _P, _P, _F))
_signatures("optim.c", "axpy_f64", (_I, _P, _P, _D))
_signatures("embedding.c", "index_add_rows_f32 index_add_rows_f64", (_I, _P, _I, _P, _P))
# rows.c: softmax, log-softmax and layer norm over the last axis, forward and backward
for _sfx, _T in (("f32", _F), ("f64", _D)):
    _signatures("rows.c", f"softmax_rows_{_sfx} log_softmax_rows_{_sfx}", (_I, _I, _P, _P))
    _signatures("rows.c", f"softmax_backward_rows_{_sfx} log_softmax_backward_rows_{_sfx}", (_I, _I, _P, _P, _P))
    _signatures("rows.c", f"layer_norm_rows_{_sfx}", (_I, _I, _P, _T, _P, _P, _P))
    _signatures("rows.c", f"layer_norm_backward_rows_{_sfx}", (_I, _I, _P, _P, _P, _P))
# gelu.c: GELU forward (exact and tanh) with its derivative, float32
_signatures("gelu.c", "gelu_exact_f32 gelu_tanh_f32", (_I, _P, _P, _P))
# cross_entropy.c: softmax cross-entropy against class indices, without label smoothing
_signatures("cross_entropy.c", "cross_entropy_fwd_f32", (_I, _I, _P, _P, _P, ctypes.c_longlong, _P, _P, _P))
_signatures("cross_entropy.c", "cross_entropy_fwd_f64", (_I, _I, _P, _P, _P, ctypes.c_longlong, _P, _P, _P))
_signatures("cross_entropy.c", "cross_entropy_bwd_f32 cross_entropy_bwd_f64", (_I, _I, _P, _P, _P, _P, _I, _P))
# conv.c: im2col / col2im (any stride, padding, dilation); pool.c: max-pooling with the argmax of each window
_signatures("conv.c", "im2col_f32 im2col_f64 col2im_f32 col2im_f64", (_P, _P, _P, _I, _I, _I))
# conv_direct.c: a direct stride-1 convolution with few taps per output (numpy_nn.conv2d and its input's gradient)
_signatures("conv_direct.c", "conv_direct_f32 conv_direct_f64", (_P, _P, _P, _P, _P))
_signatures("pool.c", "max_pool2d_fwd_f32 max_pool2d_fwd_f64", (_P, _P, _P, _P))
_signatures("pool.c", "max_pool2d_bwd_f32 max_pool2d_bwd_f64", (_I, _I, _I, _P, _P, _P))
_signatures("pool.c", "max_pool2x2_pairs_bwd_f32", (_I, _I, _I, _P, _P, _P, _P))
# activation.c: relu forward, the backward of relu / tanh / sigmoid from the output, the dropout mask
_signatures("activation.c", "relu_fwd_f32 relu_fwd_f64", (_I, _P, _P))
_signatures("activation.c", "relu_bwd_f32 relu_bwd_f64 tanh_bwd_f32 tanh_bwd_f64 sigmoid_bwd_f32 sigmoid_bwd_f64",
            (_I, _P, _P, _P))
_signatures("activation.c", "dropout_mask_f32", (_I, _P, _F, _F, _P))
_signatures("activation.c", "dropout_mask_f64", (_I, _P, _F, _D, _P))
_signatures("vmath_test.c", " ".join(f"v{f}_{s}" for f in ("exp", "tanh", "sigmoid", "log", "log1p", "softplus")
                                    for s in ("f32", "f64")), (_I, _P, _P))


class CompilerMissing(RuntimeError):
    """No C compiler here (``$CC``, Python's own ``CC``, ``cc``, ``gcc``, ``clang``)."""


def cache_dir() -> Path:
    """``$TL_CPU_KERNEL_CACHE``, else ``~/.cache/tinygrad_like/cpu_kernels`` (see ``_cache.user_cache_dir``)."""
    return user_cache_dir("cpu_kernels", "TL_CPU_KERNEL_CACHE")


def _compiler() -> str:
    for cand in (os.environ.get("CC"), (sysconfig.get_config_var("CC") or "").split(" ")[0], "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return shutil.which(cand)
    raise CompilerMissing("no C compiler found (tried $CC, Python's CC, cc, gcc, clang): install one (Debian/Ubuntu: "
                          "`apt-get install gcc`; macOS: `xcode-select --install`) to use the compiled CPU kernels")


def _cpu_features() -> str:
    """This CPU's instruction sets (the ``flags`` of /proc/cpuinfo; elsewhere the platform's name)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform  # (only where /proc/cpuinfo is missing: macOS, Windows)

    return platform.platform() + platform.processor()


_version_of: dict[str, str] = {}


def _compiler_version(cc: str) -> str:
    if cc not in _version_of:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
        _version_of[cc] = out.stdout.splitlines()[0] if out.stdout else cc
    return _version_of[cc]


def _source_dir():
    return resources.files("tinygrad_like.kernel_src").joinpath("cpu")


def compile_file(source: str, text: str | None = None) -> tuple[Path, bool, float]:
    """Build ``kernel_src/cpu/<source>`` (and the headers beside it) into the cache unless it is there: returns
    (the shared library's path, whether it was in the cache, seconds spent). With ``text``, build that C instead
    (a generated kernel, see :func:`chain_kernel`), named ``source``, with the same headers at hand."""
    t0 = time.perf_counter()
    cc = _compiler()
    folder = _source_dir()
    generated = text is not None
    text = text if generated else folder.joinpath(source).read_text()
    headers = sorted(p.name for p in folder.iterdir() if p.name.endswith(".h"))
    key = hashlib.sha256("\0".join([text, *(folder.joinpath(h).read_text() for h in headers),
                                    _compiler_version(cc), " ".join(FLAGS), _cpu_features()]).encode()).hexdigest()
    out = cache_dir() / f"{Path(source).stem}-{key[:20]}.so"
    if out.exists():
        return out, True, time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    with resources.as_file(folder) as src_dir:
        tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        src = Path(src_dir) / source
        if generated:  # (written beside its library in the cache, where a curious learner can read it)
            src = out.with_suffix(".c")
            src.write_text(text)
        cmd = [cc, *FLAGS, "-I", str(src_dir), str(src), "-o", str(tmp), "-lm"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise RuntimeError(f"compiling {'generated ' if generated else 'kernel_src/cpu/'}{source} failed "
                               f"({' '.join(cmd)}):\n{done.stderr}")
        os.replace(tmp, out)  # (atomic: another process building the same file at once is harmless)
    return out, False, time.perf_counter() - t0


# ---- loading, and the state the callers read ------------------------------------------------------------------
_WANTED = os.environ.get("TL_CPU_KERNELS", "on").lower() not in ("0", "off", "false", "no")
_libs: dict[str, ctypes.CDLL | None] = {}  # source file -> its library (None: it could not be built)
_kernels: dict[str, object] = {}  # kernel name -> ctypes function, or None
_lock = threading.Lock()
_noted = [False]
LAUNCHED: list = [None]  # the name of the compiled kernel the running primitive used (see launched())


def compile_all(sources=None) -> dict:
    """Build every kernel source (or ``sources``) into the cache at once, one compiler process per source on all
    cores: the first kernel a process asks for then costs the slowest file's build, not the sum of all. Returns
    {source: (path, was in the cache, seconds) or the exception that stopped its build}."""
    from concurrent.futures import ThreadPoolExecutor  # (once per process, at its first kernel: not on import)

    names = sources or sorted({src for src, _ in SIGNATURES.values()
                               if not src.endswith("_test.c") and src not in _generated})
    with ThreadPoolExecutor(max_workers=max(1, min(len(names), os.cpu_count() or 1))) as pool:
        futures = {name: pool.submit(compile_file, name) for name in names}
    return {name: f.exception() or f.result() for name, f in futures.items()}


_generated: dict[str, str] = {}  # source name -> the C generated for it (elementwise chains)
_built: dict = {}  # source -> compile_all's answer, from the first load of this process, until that source loads
_first_load = [True]


def _load(source: str) -> ctypes.CDLL | None:
    if source not in _libs:
        if _first_load[0]:  # the first kernel of this process: build all the sources at once (most hit the cache)
            _first_load[0] = False
            _built.update(compile_all())
        done = _built.pop(source, None)
        try:
            if isinstance(done, Exception):
                raise done
            path, hit, seconds = done if done is not None else compile_file(source, _generated.get(source))
            _libs[source] = ctypes.CDLL(str(path))
            if events.ACTIVE and events.wants(events.KernelCompiled):
                events.emit(events.KernelCompiled(source, source, seconds, hit, events.now(), "cpu",
                                                  "disk" if hit else "miss", path.stem.rsplit("-", 1)[-1][:12]))
        except (CompilerMissing, RuntimeError, OSError, subprocess.SubprocessError) as e:
            _libs[source] = None
            if not _noted[0]:
                _noted[0] = True
                warnings.warn(f"tinygrad_like runs its NumPy code instead of its compiled CPU kernels: {e}",
                              UserWarning, stacklevel=4)
    return _libs[source]


def kernel(name: str):
    """The compiled kernel ``name`` as a ctypes function (its source built at first use), or None where none can be
    had: no compiler, ``TL_CPU_KERNELS=off``, or :func:`enable`\\ ``(False)``."""
    k = _kernels.get(name, _kernels)
    if k is not _kernels:
        return k
    with _lock:
        if name not in _kernels:
            fn = None
            if _WANTED:
                source, argtypes = SIGNATURES[name]
                lib = _load(source)
                if lib is not None:
                    fn = getattr(lib, name)
                    fn.argtypes, fn.restype = list(argtypes), None
            _kernels[name] = fn
    return _kernels[name]


def chain_kernel(chain, sfx: str):
    """The compiled loop of an elementwise chain (``backends/chains.py``) for ``sfx`` ("f32" or "f64"): at its first
    use its generated C joins the table of sources, then it is built and loaded as any kernel (:func:`kernel`)."""
    name, source = f"{chain.name}_{sfx}", f"chain_{chain.name}_{chain.key}.c"
    known = SIGNATURES.get(name)
    if known is None:
        with _lock:
            _generated[source] = chain.c_source()
            _signatures(source, f"{chain.name}_f32 {chain.name}_f64", (_I, *[_P] * len(chain.inputs), _P, _P))
    elif known[0] != source:
        raise ValueError(f"two elementwise chains are named {chain.name!r}: {chain.text!r} and the one in {known[0]}")
    return kernel(name)


def available() -> bool:
    """Whether the compiled kernels run here (a compiler found and the first source built)."""
    return kernel("lstm_cell_fwd_f32") is not None


def enable(on: bool = True) -> bool:
    """Use the compiled kernels (True) or the NumPy code (False) from now on; returns whether they were wanted."""
    global _WANTED
    was = _WANTED
    _WANTED = bool(on)
    _kernels.clear()
    return was


def suffix(dtype) -> str | None:
    """The kernels' name suffix for a NumPy dtype: "f32", "f64", or None (no compiled kernel takes it)."""
    return {"f": "f32", "d": "f64"}.get(dtype.char)


def typed_kernel(name: str, dtype):
    """The compiled kernel ``<name>_f32`` or ``<name>_f64`` for ``dtype``, or None (another dtype, no compiler)."""
    sfx = suffix(dtype)
    return kernel(f"{name}_{sfx}") if sfx else None


def row_kernel(name: str, x, *same):
    """The compiled row kernel ``name`` for the array ``x`` (and arrays ``same`` of its shape and dtype), or None where
    it does not apply: only C-contiguous float32/float64 arrays of at least one dim that are not empty (the caller then
    runs NumPy)."""
    if not x.ndim or not x.size or not x.flags.c_contiguous or \
            any(a.shape != x.shape or a.dtype != x.dtype or not a.flags.c_contiguous for a in same):
        return None
    return typed_kernel(name, x.dtype)


def launched(name: str) -> None:
    """Called by a primitive that ran the compiled kernel ``name``: the timing wrapper then reports the primitive
    under that name, on device ``cpu, compiled``."""
    LAUNCHED[0] = name

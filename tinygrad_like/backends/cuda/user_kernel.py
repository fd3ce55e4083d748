"""``tl.cuda.Kernel``: a CUDA kernel you wrote in your own ``.cu`` file, launched on tensors.

The same machinery runs the project's own kernels: the signature is read from the source (so a wrong
argument list fails with the kernel's C parameters, before the driver sees it), nvcc compiles it into the
on-disk cubin cache, and launches are timed through CUDA events while someone listens (``tl.profile()``,
``KernelTimeline``). Tensors are passed for pointer parameters; after the launch every tensor passed for a
non-``const`` pointer counts as written on the device (its version goes up, a host mirror goes stale).

Parsing and compiling need no GPU (compiling needs nvcc); launching needs one, or tensors on the emulated device
``cuda-emu``, where the same file is compiled as C++ and runs on the CPU (a C++ compiler is all it needs).

>>> import tempfile, pathlib
>>> src = pathlib.Path(tempfile.mkdtemp()) / "scale.cu"
>>> _ = src.write_text('extern "C" __global__ __launch_bounds__(256) void scale_f32('
...                    'float* out, const float* x, float a, long long n) {}')
>>> k = Kernel(src, "scale_f32")
>>> k
Kernel scale_f32(float* out, const float* x, float a, long long n), at most 256 threads per block
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .compiler import DEFAULT_OPTIONS, CompiledModule, compile_kernel_file
from .kernels import Signature, check_block, kernel_names, parse_signatures

# pointer types -> the tensor dtype (name) they point at; other pointee types (void*, ...) are not checked
POINTEE_DTYPES = {"float*": "float32", "__half*": "float16", "half*": "float16", "double*": "float64",
                  "int*": "int32", "int32_t*": "int32", "long long*": "int64", "int64_t*": "int64", "bool*": "bool"}
DEFAULT_ARCH = "sm_80"  # compile target when no GPU is present to ask


def _dims(what: str, dims) -> tuple:
    """A grid or block as CUDA takes it: an int or up to three ints -> (x, y, z)."""
    t = (dims,) if isinstance(dims, int) else tuple(dims)
    if not 1 <= len(t) <= 3 or not all(isinstance(d, int) and d > 0 for d in t):
        raise ValueError(f"{what} must be a positive int or a tuple of 1 to 3 positive ints, got {dims!r}")
    return t + (1,) * (3 - len(t))


class Kernel:
    """One ``extern "C" __global__ __launch_bounds__(N) void name(...)`` kernel of the source file ``path``.

    ``kernel(grid, block, *args)`` launches it: a Tensor on ``cuda`` for each pointer parameter
    (contiguous, of the pointer's dtype), a Python number for each scalar one. ``compile(arch)`` only
    compiles (no GPU needed); ``signature`` is what was parsed from the source. Edit the file and the next
    launch reads and compiles it again.
    """

    def __init__(self, path: str | os.PathLike, name: str) -> None:
        self.path = Path(path).resolve()
        self.name = name
        self._stamp = None
        self._load()

    def _load(self) -> None:
        """(Re)read the source when it changed: its signature, and the revision the compiled module is cached by."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise FileNotFoundError(f"no CUDA source at {self.path}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        text = self.path.read_text()
        found = parse_signatures(text, str(self.path), only=self.name)
        if self.name not in found:
            names = sorted(kernel_names(text))
            raise LookupError(f"{self.path.name} has no kernel named {self.name!r}; it defines "
                              f"{names or 'none'}. A kernel is found by its declaration: "
                              f'extern "C" __global__ __launch_bounds__(N) void {self.name}(...)')
        self.signature: Signature = found[self.name]
        self._revision = hashlib.sha256(text.encode()).hexdigest()[:16]
        self._stamp = stamp

    def __repr__(self) -> str:
        params = ", ".join(("const " if p.const else "") + f"{p.ctype} {p.name}" for p in self.signature.params)
        return f"Kernel {self.name}({params}), at most {self.signature.max_threads} threads per block"

    def compile(self, arch: str | None = None, options: tuple[str, ...] = DEFAULT_OPTIONS) -> CompiledModule:
        """nvcc this file for ``arch`` (default: the GPU's, or ``sm_80`` without one), through the cubin cache."""
        self._load()
        return compile_kernel_file(self.path, arch or _default_arch(), options)

    def __call__(self, grid, block, *args, shared: int = 0) -> None:
        rt = _runtime_for(args)
        self._load()
        sig = self.signature
        grid, block = _dims("grid", grid), _dims("block", block)
        if len(args) != len(sig.params):
            raise TypeError(f"{self!r} takes {len(sig.params)} arguments, got {len(args)}")
        check_block(sig, block)
        flat, written, tensors = [], {}, {}
        for p, a in zip(sig.params, args):
            if p.is_pointer:
                tensors[p.name] = a
                if not p.const and hasattr(a, "storage"):
                    a._check_inplace(f"kernel {self.name}")  # a leaf that requires grad, an expanded tensor...
                    written[id(a.storage)] = a.storage  # once per storage, however many pointers name it
                flat.append(self._pointer(p, a, rt.device_type))
            elif hasattr(a, "storage"):
                raise TypeError(f"{self.name}: parameter `{p.ctype} {p.name}` is a scalar; pass a Python number, "
                                f"not a tensor (use .item() for a one-element tensor)")
            else:
                flat.append(a)
        fn = rt.function(str(self.path), self.name, self._revision)
        shapes = tuple(tuple(a.shape) for a in args if hasattr(a, "storage"))
        try:
            rt.launch_signature(sig, fn, grid, block, tuple(flat), shared=shared, shapes=shapes,
                                nbytes=sum(a.nbytes for a in args if hasattr(a, "storage")), tensors=tensors)
        finally:  # (a launch stopped by an error may have written part of its outputs: they count as written)
            for st in written.values():
                st.mark_device_write()
                st.bump(f"kernel {self.name}")

    def _pointer(self, p, t, device_type: str) -> int:
        where = f"{self.name}: parameter `{'const ' if p.const else ''}{p.ctype} {p.name}`"
        if not hasattr(t, "storage"):
            raise TypeError(f"{where} needs a tensor on {device_type}, got {type(t).__name__}")
        if t.device.type != device_type:
            raise ValueError(f"{where} needs a tensor on {device_type} (where this launch runs), got one on "
                             f"{t.device}: move it with .to('{device_type}')")
        want = POINTEE_DTYPES.get(p.ctype)
        if want is not None and t.dtype.name != want:
            raise TypeError(f"{where} points at {want}, got a {t.dtype.name} tensor: convert it with .to(tl.{want})")
        if not t.is_contiguous():
            raise ValueError(f"{where} needs a contiguous tensor (the kernel indexes it as a flat array); got "
                             f"shape {tuple(t.shape)} with strides {t.stride()}: pass t.contiguous()")
        t.storage.device_buffer()  # a newer host copy is uploaded first
        return t._x.ptr


def _runtime_for(args):
    """The runtime a launch runs on: the emulated device's when a tensor argument is on ``cuda-emu``, else the
    GPU's (started now, or an error that says why it cannot)."""
    if any(hasattr(a, "storage") and a.device.type == "cuda-emu" for a in args):
        from ...device import get_device  # (the device layer sits above the backends)

        return get_device("cuda-emu").raw_backend.rt
    from .runtime import get_runtime  # (starts CUDA only when a launch needs it)

    return get_runtime()


def _default_arch() -> str:
    from .probe import arch_of, probe  # (probing the GPU loads the driver: only when a kernel is built)

    status = probe()
    return arch_of(status.devices[0][1]) if status.available else DEFAULT_ARCH

"""Kernel signatures read from ``kernel_src/*.cu``, and the packing of launch arguments.

PyCUDA's ``Function._launch_kernel(grid, block, arg_buf, shared, stream)`` passes ``arg_buf`` to
``cuLaunchKernel`` as ``CU_LAUNCH_PARAM_BUFFER_POINTER``: every parameter at the next multiple of its
own alignment, in order. We build that buffer ourselves with one precompiled ``struct.Struct`` per
kernel (native ``@`` alignment is exactly that rule for the scalar types the kernels take), instead of
PyCUDA's per-call type inspection, which cannot align a by-value struct. The signatures come from
the sources, so a launcher passing the wrong number of arguments fails with the kernel's own
parameter list, and a block larger than the kernel's ``__launch_bounds__`` is refused before the
driver sees it.

>>> sig = signature("fill_f32")
>>> sig.max_threads, [p.ctype for p in sig.params]
(256, ['float*', 'float', 'long long'])
>>> len(sig.pack(0x1000, 1.5, 10))
24
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import cache

from .compiler import kernel_dir

# scalar parameter types -> struct codes (native alignment)
_SCALARS = {"long long": "q", "int": "i", "float": "f", "double": "d", "unsigned long long": "Q",
            "unsigned int": "I", "unsigned": "I", "int64_t": "q", "uint64_t": "Q", "int32_t": "i", "uint32_t": "I",
            "size_t": "Q", "bool": "?"}
# structs passed by value -> their fields as struct codes (their layouts are documented in the .cuh files)
STRUCTS = {"EwLayout": "8q8qii", "ConvGeom": "16q", "AttnGeom": "20q", "PhiloxState": "6Q", "IndexLayout": "27q",
           "MaskLayout": "17q", "adam::AdamScalars": "8fi"}

# (the block size is the first argument of __launch_bounds__; a second, the minimum of blocks per SM, is ptxas's)
_KERNEL_RE = re.compile(r'extern\s+"C"\s+__global__\s+__launch_bounds__\(\s*(\w+)\s*(?:,\s*\w+\s*)?\)\s+void\s+(\w+)\s*'
                        r'\(([^)]*)\)')
_DEFINE_RE = re.compile(r"^\s*#define\s+(\w+)\s+(\d+)\b", re.M)


@dataclass(frozen=True, slots=True)
class Param:
    ctype: str
    name: str
    code: str  # struct codes of this parameter
    const: bool = False  # a ``const T*``: the kernel only reads through it

    @property
    def is_pointer(self) -> bool:
        return self.ctype.endswith("*")


@dataclass(frozen=True, slots=True)
class Signature:
    name: str
    source: str
    max_threads: int
    params: tuple
    packer: struct.Struct

    def pack(self, *flat) -> bytes:
        """The argument buffer; pointers are ints, by-value structs are given as their fields, in order."""
        try:
            return self.packer.pack(*flat)
        except struct.error as e:
            want = ", ".join(f"{p.ctype} {p.name}" + (f" [{_fields(p.code)} fields]" if p.ctype in STRUCTS else "")
                             for p in self.params)
            raise TypeError(f"kernel {self.name}({want}): cannot pack {len(flat)} arguments: {e}") from None


def _fields(code: str) -> int:
    return sum(int(n or 1) for n, _ in re.findall(r"(\d*)([a-zA-Z])", code))


def _param(text: str) -> Param:
    """One C parameter: ``const float* __restrict__ x``, ``float const* x``, ``float* const x``, ``int n``..."""
    tokens = text.replace("*", " * ").split()
    name = tokens.pop()
    stars = [i for i, t in enumerate(tokens) if t == "*"]
    # const before the (last) star qualifies what the pointer points at: the kernel only reads through it
    const = bool(stars) and "const" in tokens[:stars[-1]]
    base = " ".join(t for t in tokens if t not in ("const", "volatile", "__restrict__", "*"))
    ctype = base + "*" * len(stars)
    if stars:
        code = "Q"  # a device address
    elif base in _SCALARS:
        code = _SCALARS[base]
    elif base in STRUCTS:
        code = STRUCTS[base]
    else:
        raise ValueError(f"parameter `{text.strip()}`: type {base!r} has no packing rule (scalars: "
                         f"{', '.join(_SCALARS)}; structs: {', '.join(STRUCTS)})")
    return Param(ctype, name, code, const)


@cache
def _defines() -> dict:
    out = {}
    for path in sorted(kernel_dir().glob("*.cu*")):
        out.update((k, int(v)) for k, v in _DEFINE_RE.findall(path.read_text()))
    return out


def parse_signatures(text: str, source: str, only: str | None = None) -> dict:
    """Every ``extern "C" __global__ __launch_bounds__(N) void name(...)`` kernel of a CUDA source text, by name
    (just ``only``, when given: another kernel's parameters are then not read).

    ``N`` is a number or a ``#define`` of this text or of ``kernel_src``; ``source`` is recorded as the place the
    kernel is compiled from."""
    out = {}
    local = {k: int(v) for k, v in _DEFINE_RE.findall(text)}
    for bound, name, params in _KERNEL_RE.findall(text):
        if only is not None and name != only:
            continue
        if bound.isdigit():
            threads = int(bound)
        elif bound in local or bound in _defines():
            threads = local.get(bound) or _defines()[bound]
        else:
            raise ValueError(f"kernel {name} in {source}: __launch_bounds__({bound}) is neither a number nor a "
                             "#define of that file")
        try:
            ps = tuple(_param(p) for p in params.split(",") if p.strip() not in ("", "void"))
        except ValueError as e:
            raise ValueError(f"kernel {name} in {source}: {e}") from None
        out[name] = Signature(name, source, threads, ps, struct.Struct("@" + "".join(p.code for p in ps)))
    return out


def kernel_names(text: str) -> list[str]:
    """The names of the kernels a CUDA source text declares, in file order (their parameters unread)."""
    return [name for _, name, _ in _KERNEL_RE.findall(text)]


@cache
def signatures_of(source: str) -> dict:
    """Every ``extern "C"`` kernel of ``kernel_src/<source>``, by name."""
    return parse_signatures((kernel_dir() / source).read_text(), source)


@cache
def _index() -> dict:
    return {name: sig for path in sorted(kernel_dir().glob("*.cu")) for name, sig in signatures_of(path.name).items()}


def signature(name: str) -> Signature:
    try:
        return _index()[name]
    except KeyError:
        raise KeyError(f"no kernel named {name!r} in kernel_src/*.cu") from None


def check_block(sig: Signature, block: tuple) -> None:
    """Refuse a block the kernel was not compiled for (more threads than its ``__launch_bounds__``)."""
    n = block[0] * block[1] * block[2]
    if n > sig.max_threads or n <= 0:
        raise ValueError(f"kernel {sig.name} is compiled for at most {sig.max_threads} threads per block "
                         f"(__launch_bounds__), got block {block}")

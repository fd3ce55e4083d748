"""What a checked launch on ``cuda-emu`` found, said in a learner's terms.

The checked build (``Emulator(checked=True)``) reports raw facts: an address, a linear thread index, an
instruction address. Here they become the kernel's own words: the parameter a bad address belongs to and the
element it names, ``threadIdx`` and ``blockIdx``, the ``__shared__`` variable and its element, and the line of
the ``.cu`` file (instruction addresses are mapped to lines with binutils' ``addr2line``, which comes with the
C++ compiler on Linux; without it messages name no line).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .emulator import INCLUDE_DIR, EmuError

__all__ = ["KernelError", "OutOfBoundsError", "SharedMemoryRaceError", "KernelDeadlockError", "KernelCompileError",
           "LaunchBuffer", "deadlock_message",
           "SourceLines", "thread_index", "block_index", "out_of_bounds_message", "race_message",
           "compile_error_message"]


class KernelError(EmuError):
    """A mistake in a kernel found by the emulator (``tl.cuda.KernelError``)."""


class OutOfBoundsError(KernelError):
    """A thread read or wrote outside every buffer it was given; the launch stopped before that access."""


class SharedMemoryRaceError(KernelError):
    """Two threads of a block touched one ``__shared__`` byte in the same phase, at least one writing, with no
    barrier between them: on a GPU the result depends on timing."""


class KernelDeadlockError(KernelError):
    """Some threads of a block wait at a ``__syncthreads()`` that others never reach."""


class KernelCompileError(KernelError):
    """The C++ compiler rejected a kernel file (the message shows the lines of your file it complained about)."""


@dataclass(frozen=True)
class LaunchBuffer:
    """One pointer argument of a launch: parameter ``name``, device address ``lo``, ``nbytes`` it may use (a
    tensor's bytes; for a kernel of ours, to the end of its allocation), element ``dtype`` / ``itemsize``, and
    ``shape`` (empty when not known)."""

    name: str
    lo: int
    nbytes: int
    dtype: str = "uint8"
    itemsize: int = 1
    shape: tuple = ()
    const: bool = False

    @property
    def numel(self) -> int:
        return self.nbytes // self.itemsize


def thread_index(linear: int, block: tuple) -> tuple[int, int, int]:
    bx, by = block[0], block[1]
    return linear % bx, (linear // bx) % by, linear // (bx * by)


def block_index(linear: int, grid: tuple) -> tuple[int, int, int]:
    gx, gy = grid[0], grid[1]
    return linear % gx, (linear // gx) % gy, linear // (gx * gy)


def _xyz(v: tuple) -> str:
    return "(" + ", ".join(str(int(c)) for c in v) + ")"


def who(thread: int, block_linear: int, grid: tuple, block: tuple) -> str:
    """``the thread threadIdx (232, 0, 0) of blockIdx (3, 0, 0)``, in CUDA's names."""
    t, b = _xyz(thread_index(thread, block)), _xyz(block_index(block_linear, grid))
    return f"the thread threadIdx {t} of blockIdx {b}"


class SourceLines:
    """Instruction addresses of one checked library -> ``(file, line)`` of the kernel source (addr2line)."""

    def __init__(self, library: Path, base: int):
        self.library, self.base = Path(library), base
        self._cache: dict[int, tuple[str, int] | None] = {}

    def lookup(self, pcs) -> dict[int, tuple[str, int] | None]:
        todo = sorted({int(p) for p in pcs if int(p) and int(p) not in self._cache})
        if todo:
            found = _addr2line(str(self.library), tuple(p - self.base - 1 for p in todo))  # (return addresses)
            self._cache.update(zip(todo, found))
        return {int(p): self._cache.get(int(p)) for p in pcs}

    def where(self, pc: int) -> str:
        """``k.cu:3: `out[i] = a * x[i];``` or "" when unknown."""
        loc = self.lookup([pc]).get(int(pc))
        if loc is None:
            return ""
        text = source_line(*loc)
        return f"{Path(loc[0]).name}:{loc[1]}" + (f": `{text}`" if text else "")


@functools.lru_cache(maxsize=256)
def _addr2line(library: str, offsets: tuple[int, ...]) -> list[tuple[str, int] | None]:
    """The source location of each offset: of the inline chain addr2line reports, the innermost frame that is
    not in the emulator's own headers (a kernel's line, not the line of ``__syncthreads`` in ``cuda_emu.h``)."""
    tool = shutil.which("addr2line")
    if tool is None or not offsets:
        return [None] * len(offsets)
    try:
        out = subprocess.run([tool, "-a", "-i", "-e", library, *(hex(o) for o in offsets)], capture_output=True,
                             text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return [None] * len(offsets)
    chains: list[list[tuple[str, int]]] = []
    for line in out:
        if re.fullmatch(r"0x[0-9a-f]+", line.strip()):
            chains.append([])
            continue
        m = re.match(r"(.*):(\d+)(?: \(discriminator \d+\))?$", line.strip())
        if chains and m and m.group(1) != "??" and int(m.group(2)) > 0:
            chains[-1].append((m.group(1), int(m.group(2))))
    ours = str(INCLUDE_DIR)
    found = [next((loc for loc in chain if not loc[0].startswith(ours)), chain[0] if chain else None)
             for chain in chains[:len(offsets)]]
    return found + [None] * (len(offsets) - len(found))


_CALL_RE = re.compile(r"^\s*([0-9a-f]+):\s.*\bcall\w*\s+[0-9a-f]+ <__tsan_(?:unaligned_|volatile_)?(?:read|write)"
                      r"(?:\d+|_range)(?:@plt)?>")
_INSN_RE = re.compile(r"^\s*([0-9a-f]+):")


def instruction_lines(library: Path) -> tuple[list[int], list[int]]:
    """For every load or store of a checked library (the return address of each call of a ``__tsan_`` hook, as an
    offset in the library), the id of its source line (ids number the distinct lines), sorted by offset. From
    binutils' ``objdump`` and ``addr2line``; empty where either is missing. Cached next to the library."""
    library = Path(library)
    cache = library.with_name(library.name + ".lines.json")
    try:
        data = json.loads(cache.read_text())
        return data["offsets"], data["ids"]
    except (OSError, ValueError, KeyError):
        pass
    tool = shutil.which("objdump")
    if tool is None:
        return [], []
    try:
        dump = subprocess.run([tool, "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True,
                              timeout=300).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return [], []
    pcs, after_call = [], False
    for line in dump:
        m = _INSN_RE.match(line)
        if not m:
            continue
        if after_call:
            pcs.append(int(m.group(1), 16))
        after_call = bool(_CALL_RE.match(line))
    locs = _addr2line(str(library), tuple(p - 1 for p in pcs))
    ids: dict[tuple[str, int], int] = {}
    out_ids = [ids.setdefault(loc, len(ids)) if loc is not None else -1 for loc in locs]
    try:
        tmp = cache.with_name(cache.name + f".{os.getpid()}")
        tmp.write_text(json.dumps({"offsets": pcs, "ids": out_ids}))
        os.replace(tmp, cache)
    except OSError:
        pass
    return pcs, out_ids


def source_line(path: str, line: int) -> str:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return ""
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ---- out of bounds -------------------------------------------------------------------------------------

def _nearest(buffers: list[LaunchBuffer], address: int) -> LaunchBuffer | None:
    def distance(b):
        return 0 if b.lo <= address < b.lo + b.nbytes else min(abs(address - b.lo), abs(address - b.lo - b.nbytes))
    return min(buffers, key=distance, default=None)


def out_of_bounds_message(kernel: str, fault: dict, buffers: list[LaunchBuffer], grid: tuple, block: tuple,
                          lines: SourceLines | None, dynamic_shared: int = 0) -> str:
    verb = "read" if fault["kind"] == 0 else "wrote"
    head = f"{kernel}: {who(fault['thread'], fault['block'], grid, block)} {verb} {fault['size']} bytes "
    where = lines.where(fault["pc"]) if lines is not None else ""
    at = f" at {where}" if where else ""
    if fault["space"] == 1:
        return (head + f"at byte {fault['offset']} of the dynamic shared memory{at}, but the launch gave it "
                f"{dynamic_shared} bytes (shared=...). The launch stopped before that access.")
    b = _nearest(buffers, fault["address"])
    if b is None:
        return head + f"at an address outside every buffer of the launch{at}. The launch stopped before that access."
    rel = fault["address"] - b.lo
    element, rest = divmod(rel, b.itemsize)
    shape = f", shape {tuple(b.shape)}" if b.shape else ""
    what = f"`{b.name}` ({b.dtype}, {b.numel:,} elements{shape}: valid indices 0 to {b.numel - 1:,})"
    if rel < 0:
        pos = f"at element {element:,} of {what}, {-element:,} before its start"
        hint = "An index below 0 usually comes from a subtraction (t - 1 at t = 0) or from an int that overflowed."
    elif element >= b.numel:
        past = element - (b.numel - 1)
        pos = f"at element {element:,} of {what}, " + ("just past its end" if past == 1 else
                                                       f"{past:,} elements past its last one")
        threads = int(np.prod(grid)) * int(np.prod(block))
        if past == 1:
            hint = ("The index reached the element count: the last valid index is one less. Guard the access "
                    "with `if (i < n)`, and check the index arithmetic (a `2 * i + 1` needs `2 * i + 1 < n`).")
        elif element < threads:
            hint = "The grid has more threads than the tensor has elements: guard the access with `if (i < n)`."
        else:
            hint = ("The index is far out: check how it is computed from blockIdx, blockDim and threadIdx, and the "
                    "row length (stride) of a 2-D index.")
        if past == 1 and "<=" in where:
            hint = "`<=` lets the thread with i == n through: the last valid index is n - 1, so guard with `<`."
    else:
        last = (rel + fault["size"] - 1) // b.itemsize
        pos = (f"at element {element:,} of {what}: it covers elements {element:,} to {last:,}, past the end"
               if not rest else f"at byte {rel} of {what}, not on an element boundary")
        hint = ("A wide access (a memcpy, a float4, a cast pointer) runs past the end: copy only the elements that "
                "exist, or handle the tail separately.")
    return (head + pos + at + ". The launch stopped before that access (nothing more was written). " + hint)


# ---- races -----------------------------------------------------------------------------------------------

_RACE_KINDS = {0: ("wrote", "read"), 1: ("read", "wrote"), 2: ("wrote", "wrote")}


def _shared_name(var: int, offset: int, size: int, shared_vars: list[tuple[str, int]]) -> str:
    name = "the dynamic shared memory (extern __shared__)" if var < 0 else f"`{shared_vars[var][0]}`"
    size = max(int(size), 1)
    return f"{name}[{offset // size}] (byte {offset}, counting {size}-byte elements)" if var >= 0 else \
        f"byte {offset} of {name}"


def race_message(kernel: str, race: dict, count: int, shared_vars: list[tuple[str, int]], grid: tuple,
                 block: tuple, lines: SourceLines | None) -> str:
    first, second = _RACE_KINDS[int(race["kind"])]
    cell = _shared_name(int(race["var"]), int(race["offset"]), int(race["size"]), shared_vars)
    blk = _xyz(block_index(int(race["block"]), grid))
    a = ("another thread" if race["thread_a"] < 0 else
         f"the thread threadIdx {_xyz(thread_index(int(race['thread_a']), block))}")
    b = f"the thread threadIdx {_xyz(thread_index(int(race['thread_b']), block))}"
    wa = lines.where(race["pc_a"]) if lines is not None else ""
    wb = lines.where(race["pc_b"]) if lines is not None else ""
    phase = int(race["phase"])
    between = ("before the first __syncthreads()" if phase == 0 else
               f"between __syncthreads() number {phase} and {phase + 1}")
    one_warp = race["thread_a"] >= 0 and race["thread_a"] // 32 == race["thread_b"] // 32
    fix = ("Put __syncthreads() between the writes and the reads of the other threads"
           + (" (both threads are in one warp: __syncwarp() is enough)" if one_warp else "")
           if first != second else "Let one thread write, or give each thread its own cell, or use an atomic")
    more = f" ({count:,} racing accesses in all.)" if count > 1 else ""
    return (f"{kernel}: shared-memory race in blockIdx {blk}: {a} {first} {cell}" + (f" at {wa}" if wa else "")
            + f", and {b} {second} it" + (f" at {wb}" if wb else "")
            + f", both {between}, with no barrier between them. On a GPU these threads run at the same time, "
            f"so the result depends on which comes first. {fix}.{more}")


# ---- deadlocks -----------------------------------------------------------------------------------------------

_PC_RE = re.compile(r" \[pc=0x([0-9a-f]+)\]")


def deadlock_message(message: str, lines: SourceLines | None) -> str:
    """The emulator's deadlock report with the barrier's line, and what usually causes it."""
    m = _PC_RE.search(message)
    where = lines.where(int(m.group(1), 16)) if m and lines is not None else ""
    message = _PC_RE.sub(f" at {where}" if where else "", message)
    return (message + ". A __syncthreads() that not every thread of the block reaches (inside `if (i < n)`, or "
            "after an early `return`) waits forever: call it where every thread of the block passes.")


# ---- compile errors ---------------------------------------------------------------------------------------

_DIAG_RE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>fatal error|error|warning|note): "
                      r"(?P<msg>.*)$")


def compile_error_message(source: Path, log: str) -> str:
    """The compiler's complaints about ``source`` first, each with its line of the file; the rest after."""
    source = Path(source).resolve()
    lines = log.splitlines()
    mine, others = [], []
    for line in lines:
        m = _DIAG_RE.match(line)
        if not m or m.group("kind") == "note":
            continue
        entry = f"{Path(m.group('path')).name}:{m.group('line')}:{m.group('col')}: {m.group('kind')}: {m.group('msg')}"
        try:
            is_mine = Path(m.group("path")).resolve() == source
        except OSError:
            is_mine = False
        if is_mine:
            text = source_line(str(source), int(m.group("line")))
            mine.append(entry + (f"\n    {m.group('line')} | {text}" if text else ""))
        elif m.group("kind") != "warning":
            others.append(entry)
    head = f"{source.name} did not compile (the C++ compiler of the CUDA emulator said):"
    if mine:
        return head + "\n" + "\n".join(mine[:10]) + (f"\n(and {len(mine) - 10} more)" if len(mine) > 10 else "")
    if others:
        return head + "\n" + "\n".join(others[:10])
    return head + "\n" + "\n".join(lines[-30:])

"""Traces of kernel launches on ``cuda-emu``: what each thread of one launch did.

``with tl.cuda.trace() as tr:`` records every launch on the emulated device inside the block (of our
kernels and of yours) with the checked build of its file; ``tr.launches`` then holds one
:class:`LaunchTrace` per launch. A trace knows

- the structure: grid, block, warps;
- who wrote each element of each pointer argument (block, warp and thread);
- every access of one block (``block=``, default the first) with its phase, the count of ``__syncthreads``
  passed, so that shared memory can be stepped through barrier by barrier;
- per instruction of the source, each warp's global accesses in 32-byte sectors (coalescing) and its shared
  accesses in bank wavefronts (bank conflicts), with a one-line explanation and the fix.

How exact it is: writers, phases and shared-memory cells are exact. The per-warp figures match the lanes of a
warp by the order of their accesses (the k-th access of each lane is one warp instruction), which is how a warp
runs when it does not diverge; instructions where the lanes disagree are counted apart (``mixed``) and left out.
Sectors and banks follow the hardware's documented model (32-byte sectors; 32 banks of 4 bytes, 8- and 16-byte
accesses served in 2 and 4 phases of lanes), not a measurement of a GPU.

``LaunchView`` (in ``widgets``) draws a trace.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .checks import LaunchBuffer, SourceLines, block_index, source_line, thread_index

__all__ = ["LaunchTrace", "MemorySite", "TraceRecorder", "active_recorder", "NO_WRITER"]

NO_WRITER = 0xFFFFFFFF  # an element no thread wrote
_local = threading.local()


def active_recorder() -> TraceRecorder | None:
    """The innermost ``tl.cuda.trace()`` open on this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


class TraceRecorder:
    """``with tl.cuda.trace(block=0, max_launches=16) as tr:`` -> ``tr.launches``: a :class:`LaunchTrace` per
    launch on ``cuda-emu`` inside the ``with`` (the first ``max_launches``; later ones run unrecorded)."""

    def __init__(self, block: int | tuple = 0, max_launches: int = 16):
        given = block
        if isinstance(block, int) and not isinstance(block, bool):
            block = (block,)
        block = tuple(block) if isinstance(block, (tuple, list)) else None
        if (block is None or not 1 <= len(block) <= 3
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in block)):
            raise ValueError(f"block must be a blockIdx: an int or up to 3 non-negative ints, got {given!r}")
        block = block + (0,) * (3 - len(block))
        if not isinstance(max_launches, int) or max_launches < 1:
            raise ValueError(f"max_launches must be a positive int, got {max_launches!r}")
        self.block = block
        self.max_launches = max_launches
        self.launches: list[LaunchTrace] = []
        self.skipped = 0

    def __enter__(self) -> TraceRecorder:
        _local.stack = [*getattr(_local, "stack", []), self]
        return self

    def __exit__(self, *exc) -> None:
        _local.stack = [r for r in _local.stack if r is not self]

    @property
    def wants_more(self) -> bool:
        return len(self.launches) < self.max_launches

    def block_linear(self, grid: tuple) -> int:
        """The chosen block's linear index in ``grid`` (a block outside the grid: the last block)."""
        x, y, z = (min(b, g - 1) for b, g in zip(self.block, grid))
        return x + grid[0] * (y + grid[1] * z)

    def __getitem__(self, i: int) -> LaunchTrace:
        return self.launches[i]

    def __len__(self) -> int:
        return len(self.launches)

    def __repr__(self) -> str:
        names = ", ".join(t.kernel for t in self.launches[:6]) + (", ..." if len(self.launches) > 6 else "")
        return f"TraceRecorder({len(self.launches)} launches: {names or 'none yet'})"


@dataclass
class MemorySite:
    """One line of the kernel that touches memory, with its warps' behaviour summed over the launch."""

    file: str
    line: int
    code: str
    kind: str          # "read", "write" or "atomic"
    space: str         # "global" or "shared"
    buffer: str        # the parameter or __shared__ variable it touched first
    requests: int      # warp instructions
    lanes: int         # thread accesses
    bytes: int
    sectors: int       # global: 32-byte sectors touched, summed over requests
    ideal_sectors: int
    wavefronts: int    # shared: bank wavefronts, summed over requests
    ideal_wavefronts: int
    mixed: int         # warp instructions whose lanes disagreed (left out)
    stride: int | None  # bytes between the addresses of neighbouring lanes (first request)

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def efficiency(self) -> float:
        """Share of the fetched sectors' bytes that were asked for (global), 1 / conflict degree (shared)."""
        if self.space == "shared":
            return self.ideal_wavefronts / self.wavefronts if self.wavefronts else 1.0
        return min(1.0, self.ideal_sectors / self.sectors) if self.sectors else 1.0

    @property
    def conflict_degree(self) -> float:
        return self.wavefronts / self.ideal_wavefronts if self.ideal_wavefronts else 1.0

    @property
    def verdict(self) -> str:
        """"coalesced", "uncoalesced", "misaligned", "broadcast", "no bank conflicts", "N-way bank conflict", or
        "not measured" (every warp instruction of the line diverged)."""
        if self.requests == 0:
            return "not measured"
        if self.space == "shared":
            d = self.conflict_degree
            return "no bank conflicts" if d < 1.05 else f"{d:.0f}-way bank conflict" if abs(d - round(d)) < 0.05 \
                else f"{d:.1f}-way bank conflict"
        if self.stride == 0:
            return "broadcast"
        if self.efficiency >= 0.85:
            return "coalesced"
        return "misaligned" if self.stride == self.access_size else "uncoalesced"

    @property
    def access_size(self) -> int:
        """Bytes of one thread's access (on average)."""
        return round(self.bytes / self.lanes) if self.lanes else 0

    @property
    def explanation(self) -> str:
        """One line: what the warps did, and the fix a learner would make."""
        step = "" if self.stride is None else f"neighbouring threads are {abs(self.stride):,} bytes apart"
        if self.requests == 0:
            return (f"The lanes of every warp took different paths here ({self.mixed:,} warp instructions), so the "
                    "trace cannot tell which accesses a warp made together.")
        if self.space == "shared":
            if self.conflict_degree < 1.05:
                return "Each warp's access is served in one pass: its lanes hit different banks, or share a word."
            words = f" ({abs(self.stride) // 4} words)" if self.stride else ""
            return (f"Lanes of a warp hit the same bank (32 banks of 4 bytes) at different addresses, so each access "
                    f"is served in {self.conflict_degree:.1f} passes instead of 1"
                    + (f"; {step}{words}" if step else "")
                    + ". Fix: pad the array so a row is not a multiple of 32 words (e.g. `tile[32][33]`), or let "
                    "threadIdx.x walk along a row.")
        if self.stride == 0:
            return "Every lane of a warp reads the same address: one sector serves the whole warp."
        per = self.sectors_per_request
        ideal = self.ideal_sectors / self.requests if self.requests else 0
        if self.efficiency >= 0.85:
            return (f"Each warp touches {per:.1f} sectors of 32 bytes per access, the fewest its {ideal * 32:.0f} "
                    "bytes fit in: neighbouring threads use neighbouring addresses.")
        if self.stride == self.access_size:
            return (f"Each warp touches {per:.1f} sectors where {ideal:.1f} would hold its bytes: the addresses "
                    "start in the middle of a sector (misaligned). Fix: align the buffer or the row start to 32 "
                    "bytes.")
        return (f"Each warp touches {per:.1f} sectors of 32 bytes per access where {ideal:.1f} would hold its bytes "
                f"({self.efficiency:.0%} of the bytes fetched are used)" + (f": {step}" if step else "") +
                ". Fix: let threadIdx.x index the contiguous (last) dimension, or stage a tile through shared "
                "memory and read it there.")


@dataclass
class LaunchTrace:
    """One traced launch (see the module's docstring); ``race`` is the shared-memory race found, as a message,
    or None."""

    kernel: str
    source: str
    grid: tuple
    block: tuple
    shared_bytes: int
    buffers: list[LaunchBuffer]
    writers: dict[str, np.ndarray]
    traced_block: int
    log: np.ndarray
    log_total: int
    shared_vars: list[tuple[str, int]]
    sites: list[MemorySite]
    site_of_log: np.ndarray  # per log entry: index into ``sites`` (-1: none)
    race: str | None = None
    seconds: float = 0.0
    _cache: dict = field(default_factory=dict, repr=False)

    # ---- structure
    @property
    def threads_per_block(self) -> int:
        return int(np.prod(self.block))

    @property
    def num_blocks(self) -> int:
        return int(np.prod(self.grid))

    @property
    def num_threads(self) -> int:
        return self.threads_per_block * self.num_blocks

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)

    def thread_index(self, linear: int) -> tuple[int, int, int]:
        return thread_index(linear, self.block)

    def block_index(self, linear: int) -> tuple[int, int, int]:
        return block_index(linear, self.grid)

    # ---- who wrote what
    def buffer(self, name: str) -> LaunchBuffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(f"{self.kernel} has no pointer argument {name!r}; it has {[b.name for b in self.buffers]}")

    @property
    def outputs(self) -> list[str]:
        """The arguments some thread wrote, in parameter order."""
        return [n for n, w in self.writers.items() if (w != NO_WRITER).any()]

    def owner(self, name: str, by: str = "block") -> np.ndarray:
        """Per element of ``name``: the linear block (``by="block"``), global warp (``"warp"``) or global thread
        (``"thread"``) that wrote it last; -1 where nobody did."""
        if by not in ("block", "warp", "thread"):
            raise ValueError(f"by must be 'block', 'warp' or 'thread', got {by!r}")
        if name not in self.writers:
            self.buffer(name)  # (an unknown name: the error lists the arguments)
            raise KeyError(f"{self.kernel}: the argument {name!r} is const (read only): nobody writes it; written "
                           f"ones: {list(self.writers)}")
        w = self.writers[name].astype(np.int64)
        none = w == NO_WRITER
        tpb = self.threads_per_block
        if by == "block":
            out = w // tpb
        elif by == "warp":
            out = (w // tpb) * self.warps_per_block + (w % tpb) // 32
        else:
            out = w
        out[none] = -1
        return out

    def written_by(self, block: int, thread: int) -> dict[str, np.ndarray]:
        """The element indices of each argument that the thread (linear indices) wrote last."""
        gid = block * self.threads_per_block + thread
        return {n: np.flatnonzero(w == gid) for n, w in self.writers.items() if (w == gid).any()}

    # ---- barrier phases of the traced block
    @property
    def phases(self) -> int:
        """Phases of the traced block: 1 + the number of ``__syncthreads()`` its threads passed."""
        return int(self.log["phase"].max()) + 1 if len(self.log) else 1

    @property
    def shared_layout(self) -> list[tuple[str, int, int]]:
        """``(name, offset, bytes)`` of the static ``__shared__`` variables the log names, then the dynamic
        shared memory, laid out one after the other (offsets 16-byte aligned) as the view draws them."""
        if "layout" not in self._cache:
            used = set(int(b) for b in np.unique(self.log["buf"][self.log["space"] == 1])) if len(self.log) else set()
            out, off = [], 0
            for k, (name, nbytes) in enumerate(self.shared_vars):
                if -2 - k in used:
                    out.append((name, off, nbytes))
                    off += -(-nbytes // 16) * 16
            if self.shared_bytes or -1 in used:
                out.append(("extern __shared__", off, self.shared_bytes))
            self._cache["layout"] = out
        return self._cache["layout"]

    def shared_offsets(self, entries: np.ndarray) -> np.ndarray:
        """The byte offset, in :attr:`shared_layout`, of each shared access of ``entries`` (log rows)."""
        base = {}
        for name, off, _ in self.shared_layout:
            base[name] = off
        starts = np.zeros(len(self.shared_vars) + 2, np.int64)
        for k, (name, _) in enumerate(self.shared_vars):
            starts[k + 2] = base.get(name, 0)
        starts[1] = base.get("extern __shared__", 0)
        return starts[np.where(entries["buf"] == -1, 1, -entries["buf"])] + entries["offset"].astype(np.int64)

    def phase_accesses(self, phase: int, space: str = "shared") -> np.ndarray:
        """The traced block's log rows of one phase in ``space`` ("shared" or "global")."""
        log = self.log
        return log[(log["phase"] == phase) & (log["space"] == (1 if space == "shared" else 0))]

    # ---- memory behaviour
    def memory_table(self) -> list[MemorySite]:
        """The lines that touch memory, worst first (lowest efficiency), then in source order."""
        return sorted(self.sites, key=lambda s: (round(s.efficiency, 3), s.line))

    def summary(self) -> str:
        # (no time here: the emulator's seconds change from run to run, and a notebook's saved output should not)
        head = (f"{self.kernel}: grid {self.grid}, block {self.block} = {self.num_threads:,} threads in "
                f"{self.num_blocks:,} blocks of {self.warps_per_block} warps")
        rows = [f"  line {s.line:>4} {s.space:<6} {s.kind:<6} {s.buffer:<12} {s.verdict:<22} "
                f"{s.sectors_per_request if s.space == 'global' else s.conflict_degree:5.1f}"
                f"{' sectors/request' if s.space == 'global' else ' passes/access'}" for s in self.memory_table()]
        race = [f"  RACE: {self.race}"] if self.race else []
        return "\n".join([head, *rows, *race])

    def __repr__(self) -> str:
        return f"<LaunchTrace {self.kernel} grid={self.grid} block={self.block}: {len(self.sites)} memory lines>"


def build_trace(kernel: str, source: str, grid: tuple, block: tuple, shared: int, buffers: list[LaunchBuffer],
                writers: dict[str, np.ndarray], traced_block: int, result, library: Path, race: str | None,
                seconds: float) -> LaunchTrace:
    """A LaunchTrace from a checked launch's raw ``CheckResult``: sites mapped to source lines and summed
    per line."""
    lines = SourceLines(library, result.lib_base)
    where = lines.lookup([s["pc"] for s in result.sites])
    names = [b.name for b in buffers]
    grouped: dict[tuple, dict] = {}
    site_row = []
    for s in result.sites:
        loc = where.get(int(s["pc"])) or ("?", 0)
        kind = ("read", "write", "atomic")[int(s["kind"])]
        space = "shared" if s["space"] else "global"
        buf = int(s["buf"])
        bname = names[buf] if 0 <= buf < len(names) else ("extern __shared__" if buf == -1 else
                                                          result.shared_vars[-2 - buf][0]
                                                          if -2 - buf < len(result.shared_vars) else "?")
        key = (loc[0], loc[1], kind, space, bname)
        g = grouped.setdefault(key, {"requests": 0, "lanes": 0, "bytes": 0, "sectors": 0, "ideal_sectors": 0,
                                     "wavefronts": 0, "ideal_wavefronts": 0, "mixed": 0, "stride": None})
        for f in ("requests", "lanes", "bytes", "sectors", "ideal_sectors", "wavefronts", "ideal_wavefronts",
                  "mixed"):
            g[f] += int(s[f])
        if g["stride"] is None and s["stride"] != -(2**63):
            g["stride"] = int(s["stride"])
        site_row.append(list(grouped).index(key))
    sites = [MemorySite(file=Path(f).name if f != "?" else "?", line=ln, code=source_line(f, ln) if ln else "",
                        kind=k, space=sp, buffer=b, **g) for (f, ln, k, sp, b), g in grouped.items()]
    site_row_arr = np.asarray(site_row + [-1], np.int64)
    log = result.log
    site_of_log = site_row_arr[np.minimum(log["site"].astype(np.int64), len(site_row))] if len(log) else \
        np.zeros(0, np.int64)
    return LaunchTrace(kernel=kernel, source=source, grid=grid, block=block, shared_bytes=shared, buffers=buffers,
                       writers=writers, traced_block=traced_block, log=log, log_total=result.log_total,
                       shared_vars=result.shared_vars, sites=sites, site_of_log=site_of_log, race=race,
                       seconds=seconds)

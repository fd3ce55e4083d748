"""The model of ``LaunchView``: what the browser draws of one traced launch (``tl.cuda.trace()``), as plain data.

Everything here is a pure function of a :class:`~tinygrad_like.backends.cuda_emu.trace.LaunchTrace`, so it is
tested without a browser. Sizes stay bounded whatever the launch: at most ``MAX_ELEMENTS`` elements of an output
are sent (the first ones, in rows), at most ``MAX_BLOCKS`` blocks are drawn one square each (more are binned), at
most ``MAX_PHASES`` barrier phases; what a learner hovers is asked for and answered on demand (:func:`thread_info`,
:func:`block_info`, :func:`element_info`), so a launch of a million threads draws as fast as one of a thousand.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_ELEMENTS", "MAX_BLOCKS", "MAX_PHASES", "output_grid", "launch_payload", "thread_info", "block_info",
           "element_info", "APPROXIMATE"]

MAX_ELEMENTS = 1 << 17   # elements of an output drawn (one cell each)
MAX_BLOCKS = 1 << 14     # blocks drawn as squares of their own
MAX_PHASES = 256         # barrier phases sent
MAX_LIST = 16            # elements listed by a hover

#: what the view says is modelled, not measured
APPROXIMATE = ("Sectors and banks follow the GPU's documented model (32-byte sectors; 32 banks of 4 bytes), counted "
               "per warp instruction; the lanes of a warp are matched by the order of their accesses, so lines where a "
               "warp's lanes took different paths are left out of the counts.")


def output_grid(numel: int, shape: tuple) -> tuple[int, int, int]:
    """``(columns, rows, shown)``: how an output's first ``shown`` elements are laid out in rows. A 2-D (or higher)
    tensor keeps its last dimension as the row when it is 4 to 1,024 long; otherwise rows of 32 (or fewer: an output
    of under 32 elements is one row), 64, 128 or 256 elements, the fewest that keep the picture from growing more
    than twice as tall as wide."""
    shown = min(numel, MAX_ELEMENTS)
    if len(shape) >= 2 and 4 <= shape[-1] <= 1024:
        cols = int(shape[-1])
    else:
        cols = 32
        while cols < 256 and shown / cols > 2 * cols:
            cols *= 2
        cols = max(1, min(cols, shown))  # (a short output is one row of its own length)
    rows = -(-shown // cols) if shown else 0
    return cols, rows, shown


def _owners(trace, name: str) -> tuple[np.ndarray, dict]:
    buf = trace.buffer(name)
    writer = trace.writers[name][:buf.numel]
    cols, rows, shown = output_grid(buf.numel, tuple(buf.shape))
    meta = {"name": name, "dtype": buf.dtype, "shape": list(buf.shape) if buf.shape else [buf.numel],
            "numel": int(buf.numel), "cols": cols, "rows": rows, "shown": shown,
            "written": int((writer != 0xFFFFFFFF).sum())}
    return np.ascontiguousarray(writer[:shown], np.uint32), meta


def _blocks(trace) -> dict:
    """The grid of blocks as squares: ``gx`` columns (gridDim.x, folded in rows of at most 128) and one row per
    further row of the grid; more than MAX_BLOCKS blocks are binned, ``per`` blocks a square."""
    n = trace.num_blocks
    per = max(1, -(-n // MAX_BLOCKS))
    squares = -(-n // per)
    gx = trace.grid[0]
    cols = min(128, max(1, -(-gx // per))) if trace.grid[1] * trace.grid[2] > 1 and per == 1 else \
        min(128, max(8, int(np.ceil(np.sqrt(squares)))))
    return {"count": n, "per": per, "squares": squares, "cols": cols, "rows": -(-squares // cols)}


def _phases(trace) -> tuple[dict, list]:
    """The traced block's shared memory per phase: the last writer (thread, -1 none) and the read count of every
    4-byte word, and each phase's lines and global traffic."""
    layout = trace.shared_layout
    words = -(-max((off + nbytes) for _, off, nbytes in layout) // 4) if layout else 0  # (a partial word counts)
    words = -(-words // 32) * 32 if words else 0
    phases = min(trace.phases, MAX_PHASES)
    writers = np.full((phases, max(words, 1)), -1, np.int16)
    reads = np.zeros((phases, max(words, 1)), np.uint16)
    steps = []
    log = trace.log
    is_shared = log["space"] == 1
    offsets = trace.shared_offsets(log[is_shared])
    shared, shared_phase = log[is_shared], log["phase"][is_shared]
    for p in range(phases):
        in_phase = log["phase"] == p
        sel = shared_phase == p
        entries, offs = shared[sel], offsets[sel]
        first = offs // 4
        last = (offs + entries["size"].astype(np.int64) - 1) // 4
        written = entries["kind"] != 0
        for k in range(int((last - first).max()) + 1 if len(entries) else 0):  # (8 or 16 bytes: 2 or 4 words)
            keep = (first + k <= last) & (first + k < words)
            w = keep & written
            writers[p, (first + k)[w]] = entries["thread"][w].astype(np.int16)
            r = keep & ~written
            np.add.at(reads[p], (first + k)[r], 1)
        glob = log[in_phase & ~is_shared]
        lines = sorted({trace.sites[i].line for i in np.unique(trace.site_of_log[in_phase]) if i >= 0})
        steps.append({"writes": int(written.sum()), "reads": int((~written).sum()),
                      "global_reads": int((glob["kind"] == 0).sum()), "global_writes": int((glob["kind"] != 0).sum()),
                      "lines": lines[:12]})
    meta = {"block": list(trace.block_index(trace.traced_block)), "phases": trace.phases, "sent": phases,
            "words": words, "layout": [[n, off, nb] for n, off, nb in layout], "truncated": trace.log_total > len(log)}
    return meta, [writers, reads, steps]


def _memory_rows(trace) -> list[dict]:
    rows = []
    for s in trace.memory_table():
        metric = (f"{s.sectors_per_request:.1f} sectors / request" if s.space == "global" else
                  f"{s.conflict_degree:.1f} passes / access")
        rows.append({"line": s.line, "file": s.file, "code": s.code, "kind": s.kind, "space": s.space,
                     "buffer": s.buffer, "verdict": s.verdict, "metric": metric, "requests": s.requests,
                     "efficiency": round(s.efficiency, 3), "explanation": s.explanation,
                     "bad": s.verdict not in ("coalesced", "broadcast", "no bank conflicts", "not measured")})
    return rows


def launch_payload(traces: list, index: int, output: str | None, color_by: str) -> dict:
    """Everything the browser draws of launch ``index`` of ``traces``: header, structure, the output ``output``
    (default: the first written) coloured by ``color_by`` ("block", "warp" or "thread"), barrier phases, memory
    table. Binary arrays (owners of the shown elements; per-phase writers and reads) travel as buffers."""
    t = traces[index]
    outputs = t.outputs
    name = output if output in t.writers else (outputs[0] if outputs else None)
    owners, out_meta = _owners(t, name) if name is not None else (np.zeros(0, np.uint32), None)
    phase_meta, (writers, reads, steps) = _phases(t)
    return {
        "launches": [f"{i}: {x.kernel} grid {tuple(x.grid)} block {tuple(x.block)}" for i, x in enumerate(traces)],
        "index": index,
        "kernel": t.kernel,
        "source": t.source,
        "grid": list(t.grid), "block": list(t.block), "tpb": t.threads_per_block,
        "warps_per_block": t.warps_per_block, "threads": t.num_threads, "ms": round(t.seconds * 1000, 1),
        "outputs": list(t.writers), "output": out_meta, "color_by": color_by,
        "owners": memoryview(owners.tobytes()),
        "blocks": _blocks(t),
        "traced_block": t.traced_block,
        "barrier": phase_meta, "steps": steps,
        "writers": memoryview(writers.tobytes()), "reads": memoryview(reads.tobytes()),
        "memory": _memory_rows(t),
        "race": t.race,
        "notes": [APPROXIMATE],
    }


def _list(ix: np.ndarray) -> str:
    if not len(ix):
        return "none"
    head = ", ".join(f"{int(i):,}" for i in ix[:MAX_LIST])
    return head + (f", … ({len(ix):,} in all)" if len(ix) > MAX_LIST else "")


def thread_info(trace, block: int, thread: int) -> dict:
    """What a hovered thread is and wrote: rows of (label, text), and the elements of the shown output it wrote."""
    b, t = int(block), int(thread)
    rows = [["blockIdx", str(trace.block_index(b))], ["threadIdx", str(trace.thread_index(t))],
            ["warp, lane", f"{t // 32}, {t % 32}"],
            ["global id", f"{b * trace.threads_per_block + t:,} (blockIdx.x * blockDim.x + threadIdx.x for 1-D)"]]
    wrote = trace.written_by(b, t)
    for name, ix in wrote.items():
        rows.append([f"wrote {name}", _list(ix)])
    if not wrote:
        rows.append(["wrote", "nothing"])
    return {"type": "thread_info", "block": b, "thread": t, "rows": rows,
            "elements": {n: [int(i) for i in ix[:4096]] for n, ix in wrote.items()}}


def block_info(trace, square: int, per: int) -> dict:
    """A hovered square of the block grid: the block(s) it stands for and the elements they wrote."""
    lo, hi = int(square) * per, min(int(square) * per + per, trace.num_blocks)
    rows = [["blockIdx", str(trace.block_index(lo)) + ("" if hi - lo == 1 else f" … {trace.block_index(hi - 1)}")],
            ["threads", f"{(hi - lo) * trace.threads_per_block:,} in {(hi - lo) * trace.warps_per_block} warps"]]
    for name in trace.outputs:
        owner = trace.owner(name, "block")
        ix = np.flatnonzero((owner >= lo) & (owner < hi))
        rows.append([f"wrote {name}", f"{len(ix):,} elements" + (f" ({_list(ix)})" if len(ix) else "")])
    return {"type": "block_info", "square": int(square), "rows": rows}


def element_info(trace, name: str, element: int) -> dict:
    owner = int(trace.writers[name][int(element)])
    rows = [["element", f"{name}[{int(element):,}]" + _index(trace.buffer(name).shape, int(element))]]
    if owner == 0xFFFFFFFF:
        rows.append(["written by", "no thread"])
    else:
        b, t = divmod(owner, trace.threads_per_block)
        rows += [["written by", f"blockIdx {trace.block_index(b)}, threadIdx {trace.thread_index(t)}"],
                 ["warp, lane", f"{t // 32}, {t % 32} (warp {b * trace.warps_per_block + t // 32:,} of the grid)"]]
    return {"type": "element_info", "name": name, "element": int(element), "rows": rows}


def _index(shape: tuple, flat: int) -> str:
    if len(shape) < 2:
        return ""
    return " = [" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"

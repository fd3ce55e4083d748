"""The conformance table's CUDA column: every row of ``tests/test_ops_vs_torch.py``, with our side on ``cuda``.

Each row runs as on the CPU (values, dtype, ``requires_grad`` and every leaf's gradient against torch on the CPU),
but our leaves, upstream gradients and everything the row makes with a factory live on ``cuda``
(``set_default_device``), so each primitive runs as a kernel or, where the backend has none for that dtype or
layout, as a host fallback that the backend counts in ``fallbacks``. float32 is the kernels' dtype; float64 has
none, so its rows exercise the fallback path (uploads, downloads, in-place write-backs) end to end.

Where there is no GPU, ``cuda`` is the emulator of ``tests/cuda_emu`` running the real ``kernel_src`` kernels; on
the lent GPU machine (``benchmarks/gpu_check.sh``) the same file runs on the GPU.

Which primitives fall back is counted, not hidden: ``test_host_fallbacks_are_the_listed_ones`` runs the float32
column once more (our side only, so it holds whatever torch the machine has), collects the primitives that fell back
in any row, and compares them with
``conformance/cuda_host_fallbacks.txt``. A primitive that starts falling back (a kernel lost, a layout no longer
handled) fails it, and so does one that gained a kernel and should leave the list. With ``TL_CUDA_COLUMN_REPORT``
set to a path, it also writes each row's fallbacks there as JSON.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest
from conformance import Case, run_case, run_ours
from emu_driver import cuda_device

import tinygrad_like as tl

torch = pytest.importorskip("torch")  # the oracle

from test_ops_vs_torch import ALL_CASES  # noqa: E402 - the one table (it needs torch too)

pytestmark = [pytest.mark.cuda,
              pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]  # torch's own warnings for some rows (as on the CPU)

LISTED = Path(__file__).parent / "conformance" / "cuda_host_fallbacks.txt"
_ON_GPU = [False]


@pytest.fixture(scope="module")
def cuda():
    """The ``cuda`` device (the GPU, else the emulator), made the default device for the module's rows."""
    _ON_GPU[0] = tl.cuda.is_available()  # (asked before the emulator, if any, stands in for the driver)
    gen = cuda_device()
    dev = next(gen)
    tl.set_default_device(dev)
    try:
        yield dev
    finally:
        tl.set_default_device(None)
        gen.close()


def _run(case: Case, dtype: str, be, run=run_case) -> collections.Counter:
    """Run one row on cuda; return how many times each primitive fell back to the host in it."""
    before = collections.Counter(be.fallbacks)
    run(case, dtype, "cuda")
    return be.fallbacks - before


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_row_on_cuda(cuda, case: Case, dtype: str) -> None:
    try:
        _run(case, dtype, cuda.raw_backend)
    except RuntimeError as e:  # the GPU machine's torch can be older than the oracle these rows are written for
        if "derivative for aten::" in str(e) and _raised_in_torch(e):
            pytest.skip(f"the oracle here, torch {torch.__version__}, cannot differentiate this row ({e})")
        raise


def _raised_in_torch(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return "/torch/" in tb.tb_frame.f_code.co_filename


def _listed() -> set[str]:
    return {name for ln in LISTED.read_text().splitlines() for name in ln.split("#")[0].split()}


def test_host_fallbacks_are_the_listed_ones(cuda) -> None:
    be = cuda.raw_backend
    rows: dict[str, list[str]] = {}
    for case in ALL_CASES:
        fell = _run(case, "float32", be, run_ours)  # (our side only: the census needs no oracle)
        if fell:
            rows[case.id] = sorted(fell)
    used = collections.Counter(p for prims in rows.values() for p in prims)
    report = {"device": "gpu" if _ON_GPU[0] else "emulator", "dtype": "float32",
              "rows": len(ALL_CASES), "rows_on_kernels_only": len(ALL_CASES) - len(rows),
              "rows_with_host_fallbacks": len(rows), "primitives_falling_back": dict(used.most_common()),
              "fallbacks_by_row": rows}
    if os.environ.get("TL_CUDA_COLUMN_REPORT"):
        Path(os.environ["TL_CUDA_COLUMN_REPORT"]).write_text(json.dumps(report, indent=1))
    print(f"\nCUDA column ({report['device']}, float32): {report['rows_on_kernels_only']} of {len(ALL_CASES)} rows ran "
          f"on kernels only; {len(rows)} used host fallbacks of {len(used)} primitives")
    listed = _listed()
    new, gone = sorted(set(used) - listed), sorted(listed - set(used))
    assert not new, f"primitives now falling back to the host (a kernel lost?): {new}; rows: " + ", ".join(
        f"{r}: {p}" for r, p in rows.items() if set(p) & set(new))
    assert not gone, f"primitives listed as host fallbacks that no row sends to the host any more: {gone}; " \
                     f"remove them from {LISTED.name}"
    assert len(rows) < len(ALL_CASES), "no row ran on kernels alone"

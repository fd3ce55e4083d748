"""``LaunchView`` without a browser: its model (``launch_model``), its static picture (``launch_png``) and its answers
to the browser's messages, on traces of small kernels on ``cuda-emu``. The browser half is
``tests/browser/test_launch_view.py``.

Expected values come from the kernels' sources (which thread writes which element, which words of shared memory a
phase writes), never from the code under test.
"""

from __future__ import annotations

import colorsys
import struct
import zlib

import numpy as np
import pytest
from conftest import emu_kernel_file

import tinygrad_like as tl

widgets = pytest.importorskip("tinygrad_like.widgets")
from tinygrad_like.widgets.launch_model import (  # noqa: E402
    MAX_ELEMENTS,
    block_info,
    element_info,
    launch_payload,
    output_grid,
    thread_info,
)
from tinygrad_like.widgets.launch_png import launch_png, owner_rgb  # noqa: E402
from tinygrad_like.widgets.launch_view import LaunchView  # noqa: E402

pytestmark = pytest.mark.cuda

KERNELS = r"""
extern "C" __global__ __launch_bounds__(256) void grid_stride(float* out, const float* x, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = 2.0f * x[i];
}
extern "C" __global__ __launch_bounds__(256) void pairs(float* out, const float* x, long long n) {
    __shared__ float s[64];
    __shared__ float r[32];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) r[t] = s[2 * t] + s[2 * t + 1];
    __syncthreads();
    if (t == 0) out[blockIdx.x] = r[0];
}
"""


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return emu_kernel_file(tmp_path_factory, "view.cu", KERNELS)


def emu(a):
    return tl.tensor(np.asarray(a, np.float32)).to("cuda-emu")


@pytest.fixture(scope="module")
def traces(src):
    n = 3000
    with tl.cuda.trace(block=1) as tr:
        tl.cuda.Kernel(src, "grid_stride")((4,), (256,), emu(np.zeros(n)), emu(np.arange(n)), n)
        tl.cuda.Kernel(src, "pairs")((2,), (64,), emu(np.zeros(2)), emu(np.arange(128)), 128)
    return tr


@pytest.mark.parametrize("numel, shape, want", [
    (5000, (5000,), (64, 79, 5000)),        # rows of 32 would be 157 tall: 64
    (8, (8,), (8, 1, 8)),                    # short: one row of its own length
    (4096, (64, 64), (64, 64, 4096)),        # a matrix keeps its rows
    (1 << 20, (1 << 20,), (256, 512, MAX_ELEMENTS)),  # the first 131,072 of a million, in rows of 256
    (6, (2, 3), (6, 1, 6)),                  # rows under 4 long: laid out as 1-D
])
def test_output_grid(numel, shape, want):
    assert output_grid(numel, shape) == want


def test_owner_colours_are_the_css_hsl_the_browser_draws():
    ids = np.array([0, 1, 2, 7, 1000])
    for i, rgb in zip(ids, owner_rgb(ids)):
        hue = (i * 137.508) % 360 / 360
        light = (44 + (i % 3) * 7) / 100
        want = np.round(np.array(colorsys.hls_to_rgb(hue, light, 0.62)) * 255)
        assert np.abs(rgb.astype(int) - want).max() <= 1, (i, rgb, want)


def test_payload_of_a_grid_stride_launch(traces):
    p = launch_payload(traces.launches, 0, None, "block")
    assert (p["kernel"], p["grid"], p["block"], p["tpb"], p["threads"]) == ("grid_stride", [4, 1, 1], [256, 1, 1],
                                                                             256, 1024)
    assert p["outputs"] == ["out"] and p["output"]["written"] == 3000
    owners = np.frombuffer(bytes(p["owners"]), np.uint32)
    np.testing.assert_array_equal(owners, np.arange(3000) % 1024)  # the global thread id of each element's writer
    assert p["barrier"]["words"] == 0  # no shared memory
    assert p["launches"][1].startswith("1: pairs grid (2, 1, 1) block (64, 1, 1)")


def test_payload_phases_of_the_traced_block(traces):
    p = launch_payload(traces.launches, 1, None, "warp")
    assert p["traced_block"] == 1 and p["barrier"]["block"] == [1, 0, 0]
    # s (64 floats) at byte 0, r (32 floats) after it at byte 256 = word 64: 96 words, three rows of 32 banks
    assert p["barrier"]["phases"] == 3 and p["barrier"]["layout"] == [["s", 0, 256], ["r", 256, 128]]
    words = p["barrier"]["words"]
    assert words == 96
    writers = np.frombuffer(bytes(p["writers"]), np.int16).reshape(3, words)
    reads = np.frombuffer(bytes(p["reads"]), np.uint16).reshape(3, words)
    np.testing.assert_array_equal(writers[0, :64], np.arange(64))           # phase 0: thread t writes s[t]
    assert (writers[0, 64:] == -1).all() and reads[0].sum() == 0
    np.testing.assert_array_equal(writers[1, 64:96], np.arange(32))         # phase 1: t < 32 writes r[t] ...
    assert (writers[1, :64] == -1).all()
    np.testing.assert_array_equal(reads[1, :64], np.ones(64))               # ... after reading s[2t], s[2t + 1]
    assert (writers[2] == -1).all() and reads[2, 64] == 1 and reads[2].sum() == 1  # phase 2: thread 0 reads r[0]
    assert [s["writes"] for s in p["steps"]] == [64, 32, 0]
    assert p["steps"][2]["global_writes"] == 1


def test_hover_answers(traces):
    t = traces[0]
    info = thread_info(t, 1, 3)  # global thread 259 writes 259, 1283, 2307
    assert info["elements"] == {"out": [259, 1283, 2307]}
    assert ["wrote out", "259, 1,283, 2,307"] in info["rows"] and ["warp, lane", "0, 3"] in info["rows"]
    assert ["wrote out", "768 elements (" + ", ".join(f"{i:,}" for i in range(512, 528)) + ", … (768 in all))"] in \
        block_info(t, 2, 1)["rows"]  # block 2: 512-767, 1536-1791, 2560-2815
    rows = dict(element_info(t, "out", 1283)["rows"])
    assert rows["written by"] == "blockIdx (1, 0, 0), threadIdx (3, 0, 0)"


def test_a_million_threads_send_a_bounded_payload(src):
    n = 1 << 20
    x, out = emu(np.zeros(n)), emu(np.zeros(n))
    with tl.cuda.trace() as tr:
        tl.cuda.Kernel(src, "grid_stride")((4096,), (256,), out, x, n)
    p = launch_payload(tr.launches, 0, None, "thread")
    assert p["threads"] == n and p["output"]["shown"] == MAX_ELEMENTS
    assert len(p["owners"]) == 4 * MAX_ELEMENTS and p["blocks"]["squares"] == 4096
    assert thread_info(tr[0], 4095, 255)["elements"] == {"out": [n - 1]}


def test_the_view_answers_the_browser_and_ignores_bad_messages(traces):
    view = LaunchView(traces)
    sent = []
    view.widget.send = sent.append
    assert view.trace.kernel == "pairs"  # the last launch by default
    view.on_message({"type": "launch", "index": 0})
    assert view.widget.payload["kernel"] == "grid_stride"
    view.on_message({"type": "hover_thread", "block": 0, "thread": 1})
    assert sent[-1]["elements"] == {"out": [1, 1025, 2049]}
    for bad in ({"type": "hover_thread", "block": 99, "thread": 0}, {"type": "hover_thread", "block": "0"},
                {"type": "launch", "index": 7}, {"type": "color", "by": "rainbow"}, {"type": "output", "name": "x"},
                {"type": "hover_block", "square": -1}, {"nonsense": 1}):
        view.on_message(bad)
    assert len(sent) == 1 and view.widget.payload["kernel"] == "grid_stride"
    view.on_message({"type": "color", "by": "thread"})
    assert view.widget.payload["color_by"] == "thread"
    bundle = view._repr_mimebundle_()
    assert "image/png" in bundle and "application/vnd.jupyter.widget-view+json" in bundle
    view.close()
    assert view.closed


def test_bad_arguments_say_what_was_expected(traces):
    with pytest.raises(TypeError, match="pass what `with tl.cuda.trace\\(\\) as tr:` recorded"):
        LaunchView([1, 2])
    with pytest.raises(TypeError, match="at least one launch"):
        LaunchView(tl.cuda.trace())
    with pytest.raises(ValueError, match="color_by must be one of"):
        LaunchView(traces, color_by="rainbow")
    with pytest.raises(ValueError, match="no launch of 'nope'"):
        LaunchView(traces, "nope")
    with pytest.raises(IndexError, match="an index into the 2 traced launches"):
        LaunchView(traces, 5)
    with pytest.raises(ValueError, match="has no written pointer argument 'x'"):
        LaunchView(traces, 0, output="x")


def test_the_static_picture_is_the_output_coloured_by_block(traces):
    p = launch_payload(traces.launches, 0, None, "block")
    png = launch_png(p)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", png[16:24])
    cols, rows = p["output"]["cols"], p["output"]["rows"]
    cell = min(8, 512 // cols)
    assert (w, h) == (cols * cell, rows * cell)
    raw = zlib.decompress(png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8])
    img = np.frombuffer(raw, np.uint8).reshape(h, 1 + 4 * w)[:, 1:].reshape(h, w, 4)
    # element 0 (block 0) and element 256 (block 1) differ; element 1024 is block 0 again
    def at(i):
        return tuple(img[(i // cols) * cell, (i % cols) * cell])
    assert at(0) == at(1024) != at(256)
    assert at(0) == (*owner_rgb(np.array([0]))[0], 255)

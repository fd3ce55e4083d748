"""Host-side checks of kernel_src/index.cuh (the math of kernel_src/index.cu) against PyTorch on the CPU.

Each kernel's per-element function -- exactly what one thread of the grid-stride loop runs -- is compiled for
the CPU with nvcc (tests/cuda_host/index_harness.cu) and run over every element; scatter-type kernels
(scatter_add, index_add, embedding_backward) then accumulate with a sequential ``+=`` where the device uses
atomicAdd, so the device's summation order (and, for float16, the per-add rounding order) and the atomics
themselves are only verified on a GPU. Covered: gather / scatter_add along every axis with index shapes
smaller than the tensors and non-contiguous (transposed) operands via the IndexLayout strides,
index_select / index_add, masked_fill with a broadcast mask, embedding forward / backward with repeated
indices and padding_idx; float32 and float16.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from host_harness import build_harnesses

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.cuda

NP = {"f32": np.float32, "f16": np.float16}
TOL = {"f32": dict(rtol=1e-6, atol=1e-6), "f16": dict(rtol=2e-3, atol=2e-3)}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harnesses(tmp_path_factory, "index_harness")[0]


def pad8(xs, fill):
    return list(xs) + [fill] * (8 - len(xs))


def index_layout(shape, a_stride, b_stride, dim, a_dim_size) -> np.ndarray:
    """The IndexLayout argument (27 int64): the launcher's packing."""
    return np.array(pad8(shape, 1) + pad8(a_stride, 0) + pad8(b_stride, 0) + [len(shape), dim, a_dim_size],
                    np.int64)


def mask_layout(shape, mask_stride) -> np.ndarray:
    """The MaskLayout argument (17 int64)."""
    return np.array(pad8(shape, 1) + pad8(mask_stride, 0) + [len(shape)], np.int64)


def elem_strides(a: np.ndarray):
    return [s // a.itemsize for s in a.strides]


def run(harness, d: Path, op, dt, files: dict, value=None):
    for name, arr in files.items():
        (d / f"{name}.bin").write_bytes(np.ascontiguousarray(arr).tobytes())
    args = [str(harness), op, dt, str(d)] + ([repr(float(value))] if value is not None else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return np.fromfile(d / "out.bin", NP[dt])


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_strided_input(harness, tmp_path, dt, dim):
    rng = np.random.default_rng(dim)
    base = rng.standard_normal((6, 5, 4)).astype(NP[dt])
    inp = base.transpose(2, 1, 0)  # shape (4, 5, 6), strides (1, 4, 20) elements into `base`
    ishape = [3, 4, 5]
    ishape[dim] = 7  # longer than the input along dim (allowed), shorter elsewhere
    index = rng.integers(0, inp.shape[dim], ishape).astype(np.int64)
    L = index_layout(ishape, elem_strides(inp), [0] * 3, dim, inp.shape[dim])
    got = run(harness, tmp_path, "gather", dt, {"input": base, "index": index, "scal": L})
    want = torch.gather(torch.from_numpy(np.ascontiguousarray(inp)), dim, torch.from_numpy(index)).numpy()
    np.testing.assert_array_equal(got.reshape(ishape), want)


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_add_strided_src(harness, tmp_path, dt, dim):
    rng = np.random.default_rng(10 + dim)
    self_ = rng.standard_normal((4, 5, 6)).astype(NP[dt])
    ishape = [3, 4, 5]
    ishape[dim] = 9  # many repeated targets along dim
    src_base = rng.standard_normal((10, 9, 9)).astype(NP[dt])
    src = src_base.transpose(2, 1, 0)  # (9, 9, 10), non-contiguous, larger than index everywhere
    index = rng.integers(0, self_.shape[dim], ishape).astype(np.int64)
    L = index_layout(ishape, elem_strides(self_), elem_strides(src), dim, self_.shape[dim])
    got = run(harness, tmp_path, "scatter_add", dt, {"self": self_, "src": src_base, "index": index, "scal": L})
    want = torch.from_numpy(self_.astype(np.float64)).scatter_add(
        dim, torch.from_numpy(index), torch.from_numpy(np.ascontiguousarray(src).astype(np.float64))).numpy()
    np.testing.assert_allclose(got.reshape(self_.shape).astype(np.float64), want,
                               **(TOL[dt] if dt == "f32" else dict(rtol=1e-2, atol=1e-2)))


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_index_select_and_index_add(harness, tmp_path, dt):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 4)).astype(NP[dt])
    index = np.array([4, 0, 0, 2, 1, 4], np.int64)
    for dim in (0, 1, 2):
        idx = index % x.shape[dim]
        outer, inner = int(np.prod(x.shape[:dim])), int(np.prod(x.shape[dim + 1:]))
        n = outer * idx.size * inner
        got = run(harness, tmp_path, "index_select", dt,
                  {"input": x, "index": idx, "scal": np.array([x.shape[dim], idx.size, inner, n], np.int64)})
        want = torch.index_select(torch.from_numpy(x), dim, torch.from_numpy(idx)).numpy()
        np.testing.assert_array_equal(got.reshape(want.shape), want)
        # index_add: the backward of index_select (repeated indices accumulate)
        src = rng.standard_normal(want.shape).astype(NP[dt])
        self_ = np.zeros_like(x)
        got = run(harness, tmp_path, "index_add", dt,
                  {"self": self_, "src": src, "index": idx, "scal": np.array([x.shape[dim], idx.size, inner, n],
                                                                            np.int64)})
        want = torch.zeros(x.shape, dtype=torch.float64).index_add(
            dim, torch.from_numpy(idx), torch.from_numpy(src.astype(np.float64))).numpy()
        np.testing.assert_allclose(got.reshape(x.shape), want, **TOL[dt])


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("value", [2.5, float("-inf")])
def test_masked_fill_broadcast_mask(harness, tmp_path, dt, value):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4, 5)).astype(NP[dt])
    for mshape in [(3, 4, 5), (1, 4, 1), (3, 1, 5), (1, 1, 1)]:
        mask = rng.random(mshape) < 0.4
        mstride = [s if m > 1 else 0 for s, m in zip(elem_strides(mask), mshape)]
        got = run(harness, tmp_path, "masked_fill", dt,
                  {"x": x, "mask": mask.astype(np.uint8), "scal": mask_layout(x.shape, mstride)}, value)
        want = torch.from_numpy(x).masked_fill(torch.from_numpy(mask), value).numpy()
        np.testing.assert_array_equal(got.reshape(x.shape), want)


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_forward_backward(harness, tmp_path, dt, padding_idx):
    rng = np.random.default_rng(5)
    V, D = 10, 7
    weight = rng.standard_normal((V, D)).astype(NP[dt])
    index = rng.integers(0, V, (3, 4)).astype(np.int64)
    index[0, :3] = 2  # repeated rows, and the padding row
    n = index.size * D
    got = run(harness, tmp_path, "embedding", dt,
              {"weight": weight, "index": index, "scal": np.array([D, V, n], np.int64)})
    w = torch.from_numpy(weight.astype(np.float64)).requires_grad_(True)
    out = torch.nn.functional.embedding(torch.from_numpy(index), w, padding_idx=padding_idx)
    np.testing.assert_array_equal(got.reshape(3, 4, D), out.detach().numpy().astype(NP[dt]))
    grad = rng.standard_normal((3, 4, D)).astype(NP[dt])
    out.backward(torch.from_numpy(grad.astype(np.float64)))
    got = run(harness, tmp_path, "embedding_backward", dt,
              {"grad": grad, "index": index, "gw": np.zeros((V, D), NP[dt]),
               "scal": np.array([D, V, -1 if padding_idx is None else padding_idx, n], np.int64)})
    np.testing.assert_allclose(got.reshape(V, D), w.grad.numpy(), **TOL[dt])
    if padding_idx is not None:
        assert not got.reshape(V, D)[padding_idx].any()


def test_out_of_range_indices_are_safe(harness, tmp_path):
    weight = np.arange(12, dtype=np.float32).reshape(4, 3)
    index = np.array([1, -1, 4, 3], np.int64)
    got = run(harness, tmp_path, "embedding", "f32",
              {"weight": weight, "index": index, "scal": np.array([3, 4, 12], np.int64)}).reshape(4, 3)
    np.testing.assert_array_equal(got, [weight[1], [0, 0, 0], [0, 0, 0], weight[3]])
    gw = run(harness, tmp_path, "embedding_backward", "f32",
             {"grad": np.ones((4, 3), np.float32), "index": index, "gw": np.zeros((4, 3), np.float32),
              "scal": np.array([3, 4, -1, 12], np.int64)}).reshape(4, 3)
    np.testing.assert_array_equal(gw.sum(axis=1), [0, 3, 0, 3])

"""The CUDA backend end to end, on the CPU emulator of ``tests/cuda_emu`` (or on a real GPU when there is one).

Every layer above the driver is the production code: ``tl.cuda``, the runtime, argument packing by the
kernels' own signatures, the buffer pool, ``CudaBackend``'s primitives, Storage residency and the
Tensor, nn and optim APIs. Under the emulator the kernels of ``kernel_src`` run on the CPU with CUDA's
execution model (blocks, barriers, warp shuffles, atomics); what only a GPU can show (speed, the
device math library, races between blocks) is checked on the lent GPU machine with the same file.

Each op runs on ``cuda`` and in PyTorch (the oracle) from the same data, forward and backward; ops that
claim a kernel must not fall back to the host (``backend.fallbacks`` is checked around each case).
"""

from __future__ import annotations

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
import tinygrad_like.nn.functional as F
from tinygrad_like import events

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def cuda():
    """The ``cuda`` device: the real one where CUDA is available, else the emulated one."""
    yield from cuda_device()


def _fallbacks(dev) -> dict:
    return dict(dev.raw_backend.fallbacks)


RNG = np.random.default_rng(0)


def _data(shape, kind="n"):
    if kind == "pos":
        return RNG.uniform(0.5, 2.0, shape).astype(np.float32)
    if kind == "away":
        return (RNG.uniform(0.3, 1.5, shape) * RNG.choice([-1, 1], shape)).astype(np.float32)
    return RNG.standard_normal(shape).astype(np.float32)


# (name, function applied to tl and torch tensors alike, input shapes and kinds, native: no host fallback)
CASES = [
    ("add", lambda a, b: a + b, [((3, 4), "n"), ((3, 4), "n")], True),
    ("add_broadcast", lambda a, b: a + b, [((2, 3, 4), "n"), ((4,), "n")], True),
    ("sub_mul_div", lambda a, b: (a - b) * a / b, [((5, 7), "n"), ((5, 1), "pos")], True),
    ("scalars", lambda a: (2.0 - a) * 3 + a / 4 - 1 / a, [((6, 5), "pos")], True),
    ("pow", lambda a: a ** 2 + a ** 0.5, [((4, 4), "pos")], True),
    ("unary", lambda a: a.exp() + a.tanh() + a.sigmoid() + a.relu() + a.abs() - a.neg().sin() + a.cos(),
     [((3, 50), "away")], True),
    ("log_sqrt", lambda a: a.log() + a.sqrt() + a.rsqrt(), [((2, 3, 5), "pos")], True),
    ("clamp", lambda a: a.clamp(-0.5, 0.7), [((40,), "away")], True),
    ("maximum", lambda a, b: tl_or_torch(a).maximum(a, b), [((3, 4), "n"), ((3, 4), "n")], True),
    ("where", lambda a, b: tl_or_torch(a).where(a > 0, a, b * 2), [((4, 6), "away"), ((4, 6), "n")], True),
    ("compare", lambda a, b: ((a < b).float() + (a >= 0.5).float()) * a, [((5, 5), "n"), ((5, 5), "n")], True),
    ("sum_all", lambda a: a.sum(), [((7, 9), "n")], True),
    ("sum_axes", lambda a: a.sum(dim=(0, 2), keepdim=True) * 2, [((3, 4, 5), "n")], True),
    ("sum_long_rows", lambda a: a.sum(1), [((3, 3000), "n")], True),
    ("mean_var", lambda a: a.mean(1) + a.var(0).sum(), [((6, 8), "n")], True),
    ("max_dim", lambda a: a.max(dim=1).values * 2 + a.amax(0).sum(), [((5, 9), "n")], True),
    ("max_all", lambda a: a.max() + a.min(), [((5, 9), "n")], True),
    ("matmul", lambda a, b: a @ b, [((33, 17), "n"), ((17, 21), "n")], True),
    ("matmul_batched_broadcast", lambda a, b: a @ b, [((2, 3, 5, 4), "n"), ((4, 6), "n")], True),
    ("matmul_transposed", lambda a, b: a.T @ b, [((9, 5), "n"), ((9, 7), "n")], True),
    ("matvec", lambda a, b: a @ b, [((6, 4), "n"), ((4,), "n")], True),
    ("softmax_last", lambda a: a.softmax(-1) * a, [((4, 10), "n")], True),
    ("softmax_mid", lambda a: a.softmax(1), [((2, 5, 3), "n")], True),
    ("log_softmax_long", lambda a: a.log_softmax(1), [((3, 1500), "n")], True),
    ("views", lambda a: a.T.exp() + a[1:, ::2].sum() + a.permute(1, 0)[::2].mean(), [((6, 8), "n")], True),
    ("reshape_expand", lambda a: a.reshape(3, -1).unsqueeze(0).expand(2, 3, 8).sum(0), [((4, 6), "n")], True),
    ("sum_two_pass", lambda a: a.sum() + a[:5].sum(), [((100000,), "n")], True),
    ("matmul_tile_edges", lambda a, b: a @ b, [((130, 129), "n"), ((129, 140), "n")], True),
    ("activations", lambda a: nnf(a).gelu(a) + nnf(a).silu(a) + nnf(a).softplus(a) + nnf(a).elu(a)
     + nnf(a).leaky_relu(a, 0.1), [((5, 6), "away")], True),
    ("conv2d", lambda x, w, b: nnf(x).conv2d(x, w, b, padding=1), [((2, 3, 7, 6), "n"), ((4, 3, 3, 3), "n"),
                                                                   ((4,), "n")], True),
    ("conv2d_stride_dilation", lambda x, w: nnf(x).conv2d(x, w, stride=2, dilation=2, padding=2),
     [((2, 2, 9, 8), "n"), ((3, 2, 3, 2), "n")], True),
    ("max_pool2d", lambda x: nnf(x).max_pool2d(x, 2), [((2, 3, 6, 8), "n")], True),
    ("max_pool2d_overlap", lambda x: nnf(x).max_pool2d(x, 3, stride=2, padding=1), [((1, 2, 7, 7), "n")], True),
    ("avg_pool2d", lambda x: nnf(x).avg_pool2d(x, 2), [((2, 2, 6, 4), "n")], True),
    ("layer_norm", lambda x, w, b: nnf(x).layer_norm(x, (8,), w, b), [((3, 4, 8), "n"), ((8,), "n"), ((8,), "n")],
     True),
    ("layer_norm_wide", lambda x: nnf(x).layer_norm(x, (3, 700)), [((2, 3, 700), "n")], True),
    ("cross_entropy", lambda x: nnf(x).cross_entropy(x, const(x, [1, 0, 4, 2, 2])), [((5, 6), "n")], True),
    ("cross_entropy_options", lambda x: nnf(x).cross_entropy(x, const(x, [1, 0, 4, 2, 2]), ignore_index=2,
                                                             weight=const(x, [0.5, 1.0, 2.0, 1.5, 0.7, 1.1]),
                                                             label_smoothing=0.1), [((5, 6), "n")], True),
    ("cross_entropy_wide", lambda x: nnf(x).cross_entropy(x, const(x, [7, 1500])), [((2, 1600), "n")], True),
    ("gather", lambda x: x.gather(1, const(x, [[0, 2, 2], [1, 0, 3], [3, 3, 1]])), [((3, 4), "n")], True),
    ("gather_transposed", lambda x: x.T.gather(0, const(x, [[0, 2], [1, 0]])), [((2, 3), "n")], True),
    ("index_select", lambda x: x.index_select(1, const(x, [2, 0, 2, 1])) * 2, [((2, 3, 4), "n")], True),
    ("to_zero_d", lambda a: a.sum() * a.max(), [((3,), "n")], True),
    # the bounds check reduces the int64 indices: reduce_minmax_i64, on the device
    ("embedding_bounds_on_device", lambda w: nnf(w).embedding(const(w, [[1, 4], [4, 0]]), w), [((5, 3), "n")],
     True),
    ("cat", lambda a, b: tl_or_torch(a).cat([a, b], 0) * 2, [((2, 3), "n"), ((4, 3), "n")], True),
    ("cumsum_fallback", lambda a: a.cumsum(1), [((3, 5), "n")], False),
    # wide rows: the *_reg_* kernels hold a row in registers (16-byte vectors when aligned and cols % 4 == 0,
    # scalar otherwise); rows too wide for them take the multi-pass *_block_* kernels
    ("softmax_rows_in_registers", lambda a: a.softmax(-1) * a, [((3, 4096), "n")], True),
    ("log_softmax_rows_in_registers", lambda a: a.log_softmax(-1), [((2, 3000), "n")], True),
    ("softmax_rows_not_multiple_of_4", lambda a: a.softmax(-1), [((2, 2051), "n")], True),
    ("log_softmax_rows_not_multiple_of_4", lambda a: a.log_softmax(-1), [((3, 1027), "n")], True),
    ("softmax_rows_misaligned", lambda a: a[1:].reshape(2, 2048).softmax(-1), [((4097,), "n")], True),
    ("softmax_fwd_registers_bwd_block", lambda a: a.log_softmax(-1), [((2, 9000), "n")], True),
    ("softmax_rows_too_wide_for_registers", lambda a: a.softmax(-1), [((2, 17000), "n")], True),
    ("layer_norm_rows_in_registers", lambda x, w, b: nnf(x).layer_norm(x, (4096,), w, b),
     [((3, 4096), "n"), ((4096,), "n"), ((4096,), "n")], True),
    ("layer_norm_rows_not_multiple_of_4", lambda x: nnf(x).layer_norm(x, (3, 1001)), [((2, 3, 1001), "n")], True),
    ("layer_norm_rows_misaligned", lambda x: nnf(x).layer_norm(x[2:].reshape(2, 2048), (2048,)), [((4098,), "n")],
     True),
    ("layer_norm_fwd_registers_bwd_block", lambda x: nnf(x).layer_norm(x, (9000,)), [((2, 9000), "n")], True),
    ("layer_norm_rows_too_wide_for_registers", lambda x: nnf(x).layer_norm(x, (17000,)), [((2, 17000), "n")],
     True),
    # attention: the flash-attention kernels (q, k, v read in place through two batch strides), and the path composed
    # from matmul / softmax kernels for head dims over 128
    ("sdpa_causal_head_views", lambda qkv: _heads_attention(qkv, 3), [((2, 37, 72), "n")], True),
    ("sdpa_broadcast_batch", lambda q, k, v: nnf(q).scaled_dot_product_attention(q, k, v),
     [((2, 3, 9, 20), "n"), ((1, 3, 40, 20), "n"), ((3, 40, 12), "n")], True),
    ("sdpa_float_mask_dead_row", lambda q, k, v: nnf(q).scaled_dot_product_attention(
        q, k, v, attn_mask=_mask_like(q, (2, 1, 9, 11), False)), [((2, 3, 9, 16), "n"), ((2, 3, 11, 16), "n"),
                                                                   ((2, 3, 11, 16), "n")], True),
    ("sdpa_bool_mask_dead_row", lambda q, k, v: nnf(q).scaled_dot_product_attention(
        q, k, v, attn_mask=_mask_like(q, (9, 11), True)), [((2, 9, 100), "n"), ((2, 11, 100), "n"),
                                                           ((2, 11, 70), "n")], True),
    ("sdpa_head_dim_over_128_composed", lambda q, k, v: nnf(q).scaled_dot_product_attention(q, k, v, is_causal=True),
     [((2, 6, 144), "n"), ((2, 6, 144), "n"), ((2, 6, 8), "n")], True),
]


def _heads_attention(qkv, heads: int):
    """nanoGPT's attention: (B, T, 3C) split into q, k, v viewed as (B, H, T, hs), causal, heads joined again."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = (t.reshape(B, T, heads, C // heads).transpose(1, 2) for t in qkv.split(C, dim=2))
    y = nnf(qkv).scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).reshape(B, T, C)


def _mask_like(like, shape: tuple, as_bool: bool):
    """A fixed attention mask beside ``like``: random, with query row 2 masked everywhere (its output is 0)."""
    keep = np.random.default_rng(7).random(shape) > 0.3
    keep[..., 2, :] = False
    values = keep if as_bool else np.where(keep, np.random.default_rng(8).standard_normal(shape), -np.inf)
    values = values.astype(np.bool_ if as_bool else np.float32)
    return torch.tensor(values) if isinstance(like, torch.Tensor) else tl.tensor(values, device=like.device)


def nnf(a):
    return torch.nn.functional if isinstance(a, torch.Tensor) else F


def const(like, values):
    """A constant (no grad) tensor beside ``like``: same library, same device (int64 or float32 values)."""
    values = np.asarray(values, np.float32 if isinstance(values[0], float) else np.int64)
    if isinstance(like, torch.Tensor):
        return torch.tensor(values)
    return tl.tensor(values, device=like.device)


def tl_or_torch(a):
    return torch if isinstance(a, torch.Tensor) else tl


def _run(fn, arrays, device, lib):
    if lib == "torch":
        xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    else:
        xs = [tl.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = fn(*xs)
    # the same output weights in both runs: backward sees a full vector, not just ones
    w = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    wt = torch.tensor(w) if lib == "torch" else tl.tensor(w, device=device)
    (out * wt).sum().backward()
    return out, [x.grad for x in xs]


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


@pytest.mark.parametrize("name,fn,inputs,native", CASES, ids=[c[0] for c in CASES])
def test_op_forward_and_backward_match_torch(cuda, name, fn, inputs, native):
    arrays = [_data(s, k) for s, k in inputs]
    before = _fallbacks(cuda)
    out, grads = _run(fn, arrays, "cuda", "tl")
    assert out.device == cuda and all(g is None or g.device == cuda for g in grads)
    new = {k: v - before.get(k, 0) for k, v in _fallbacks(cuda).items() if v != before.get(k, 0)}
    if native:
        assert not new, f"{name} ran on the host: {new}"
    else:
        assert new, f"{name} was expected to use the host fallback"
    ref, ref_grads = _run(fn, arrays, None, "torch")
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-4, atol=1e-5)
    for g, rg in zip(grads, ref_grads):
        assert (g is None) == (rg is None)
        if g is not None:
            assert tuple(g.shape) == tuple(rg.shape)
            np.testing.assert_allclose(_np(g), _np(rg), rtol=1e-4, atol=1e-5)


def test_float16_ops_accumulate_in_float32(cuda):
    a, b = _data((20, 48)), _data((48, 16))
    ta, tb = tl.tensor(a, device="cuda").half(), tl.tensor(b, device="cuda").half()
    before = _fallbacks(cuda)
    out = (ta @ tb).softmax(-1) + ta.sum()
    assert out.dtype == tl.float16 and _fallbacks(cuda) == before
    ra, rb = torch.tensor(a).half().float(), torch.tensor(b).half().float()
    ref = (ra @ rb).half().float().softmax(-1) + ra.sum()
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), rtol=2e-3, atol=2e-2)


def test_integer_and_bool_ops(cuda):
    x = tl.arange(12, device="cuda").reshape(3, 4)
    assert x.dtype == tl.int64
    y = (x * 3 - 5).maximum(tl.zeros(3, 4, dtype=tl.int64, device="cuda"))
    np.testing.assert_array_equal(y.numpy(), np.maximum(np.arange(12).reshape(3, 4) * 3 - 5, 0))
    m = (x > 4) & (x < 9)
    np.testing.assert_array_equal(m.numpy(), (np.arange(12) > 4).reshape(3, 4) & (np.arange(12) < 9).reshape(3, 4))
    assert bool(m.any()) and not bool(m.all())
    np.testing.assert_array_equal(x.float().argmax(1).numpy(), [3, 3, 3])


def test_mixing_devices_in_one_op_is_a_clear_error(cuda):
    with pytest.raises(RuntimeError, match="same device.*cpu and cuda:0"):
        tl.ones(2) + tl.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="same device"):
        tl.ones(2, 2, device="cuda") @ tl.ones(2, 2)


def test_residency_transitions_are_lazy_and_reported(cuda):
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        x = tl.tensor(np.arange(6, dtype=np.float32), device="cuda")
        st = x.storage
        assert st.residency == "gpu" and st.dirty is None
        np.testing.assert_array_equal(x.numpy(), np.arange(6))          # host read: download, mirror kept
        assert st.residency == "both" and st.dirty is None
        x.mul_(2)                                                         # device write: mirror is stale
        assert st.dirty == "gpu"
        np.testing.assert_array_equal(x.numpy(), np.arange(6) * 2)      # downloads again
        assert st.dirty is None
    finally:
        unsubscribe()
    moves = [(e.direction, e.nbytes) for e in seen if isinstance(e, events.StorageStateChanged) and e.direction]
    assert moves == [("d2h", 24), ("d2h", 24)]


def test_load_state_dict_into_a_cuda_model_uploads_at_next_use(cuda):
    src = tl.nn.Linear(3, 2)
    model = tl.nn.Linear(3, 2).to("cuda")
    st = model.weight.storage
    for p in model.parameters():  # host mirrors exist and are current
        p.detach().numpy()
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        model.load_state_dict(src.state_dict())
        assert st.dirty == "cpu" and st in cuda.pending   # written on the host, not uploaded yet
        assert not [e for e in seen if isinstance(e, events.StorageStateChanged) and e.direction == "h2d"]
        x = tl.tensor(_data((4, 3)))
        y = model(x.to("cuda"))                            # the device's next op uploads first
        assert st.dirty is None and not cuda.pending
    finally:
        unsubscribe()
    uploads = [e for e in seen if isinstance(e, events.StorageStateChanged) and e.direction == "h2d"]
    assert [e.storage_id for e in uploads].count(st.id) == 1 and uploads[0].nbytes > 0
    np.testing.assert_allclose(y.detach().numpy(), src(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def _training(device, layers, optimizer, x_shape, seed):
    """A seeded model on ``device`` and a step function (same weights and batch on every device)."""
    tl.manual_seed(0)
    model = tl.nn.Sequential(*layers()).to(device)
    opt = optimizer(model.parameters())
    x = tl.tensor(np.random.default_rng(seed).standard_normal(x_shape).astype(np.float32), device=device)
    y = tl.tensor(np.arange(x_shape[0]) % 10, device=device)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return model, step


def _mlp_step_setup(device):
    return _training(device, lambda: (tl.nn.Linear(64, 32), tl.nn.ReLU(), tl.nn.Linear(32, 10)),
                     lambda ps: tl.optim.Adam(ps, lr=1e-2), (16, 64), 2)


def test_mlp_training_matches_the_cpu_and_runs_every_kernel_on_the_device(cuda):
    cpu_model, cpu_step = _mlp_step_setup("cpu")
    gpu_model, gpu_step = _mlp_step_setup("cuda")
    before = _fallbacks(cuda)
    for _ in range(3):
        lc, lg = cpu_step(), gpu_step()
    assert _fallbacks(cuda) == before, "the MLP step used a host fallback"
    np.testing.assert_allclose(lg, lc, rtol=1e-5)
    for pc, pg in zip(cpu_model.parameters(), gpu_model.parameters()):
        assert pg.device == cuda
        np.testing.assert_allclose(pg.detach().numpy(), pc.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_training_step_allocates_nothing_new_after_warm_up(cuda):
    _, step = _mlp_step_setup("cuda")
    step()
    step()
    stats = tl.cuda.memory_stats()
    for _ in range(3):
        step()
    after = tl.cuda.memory_stats()
    assert after["driver_allocs"] == stats["driver_allocs"], (stats, after)
    assert after["pool_hits"] > stats["pool_hits"]


def test_kernel_timings_reach_the_profiler(cuda):
    x = tl.tensor(_data((8, 8)), device="cuda")
    with tl.profile() as prof:
        y = (x @ x).relu().sum()
        y.item()
    names = {e.name for e in prof.kernels}
    assert "ew_unary_contig_f32" in names and names & {"gemm_f32", "gemm_f32_vec"}, names  # (the variant the
    timed = [e for e in prof.kernels if e.name.startswith("gemm_f32")][0]  # autotuner chose, on a GPU)
    assert timed.device == "cuda:0" and timed.grid == (1, 1, 1) and timed.block == (256, 1, 1)


def test_a_host_fallback_is_counted_and_visible(cuda):
    x = tl.tensor(np.arange(4.0), device="cuda")  # float64: no kernels, runs on the host
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        before = _fallbacks(cuda).get("add", 0)
        y = x + x
    finally:
        unsubscribe()
    assert y.device == cuda and y.dtype == tl.float64
    np.testing.assert_array_equal(y.numpy(), np.arange(4.0) * 2)
    assert _fallbacks(cuda)["add"] == before + 1
    assert any(isinstance(e, events.KernelTimed) and e.name == "host:add" for e in seen)


def test_cnn_training_matches_the_cpu_without_host_fallbacks(cuda):
    def setup(device):
        return _training(device, lambda: (tl.nn.Conv2d(1, 4, 3, padding=1), tl.nn.ReLU(), tl.nn.MaxPool2d(2),
                                          tl.nn.Conv2d(4, 6, 3, padding=1), tl.nn.ReLU(), tl.nn.MaxPool2d(2),
                                          tl.nn.Flatten(), tl.nn.Linear(6 * 2 * 2, 10)),
                         lambda ps: tl.optim.SGD(ps, lr=0.05, momentum=0.9), (8, 1, 8, 8), 3)

    cpu_model, cpu_step = setup("cpu")
    gpu_model, gpu_step = setup("cuda")
    before = _fallbacks(cuda)
    losses = [(cpu_step(), gpu_step()) for _ in range(3)]
    assert _fallbacks(cuda) == before, "the CNN step used a host fallback"
    np.testing.assert_allclose([g for _, g in losses], [c for c, _ in losses], rtol=1e-5)
    assert losses[-1][1] < losses[0][1]
    for pc, pg in zip(cpu_model.parameters(), gpu_model.parameters()):
        np.testing.assert_allclose(pg.detach().numpy(), pc.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_dropout_masks_come_from_the_same_philox_stream_as_on_the_cpu(cuda):
    x = _data((4, 64))
    outs = {}
    for device in ("cpu", "cuda"):
        tl.manual_seed(5)
        t = tl.tensor(x, device=device)
        outs[device] = [F.dropout(t, 0.3).numpy() for _ in range(2)]  # 256 draws each: whole Philox blocks
    before = _fallbacks(cuda)
    tl.manual_seed(5)
    F.dropout(tl.tensor(x, device="cuda"), 0.3)
    assert _fallbacks(cuda) == before, "dropout ran on the host"
    for c, g in zip(outs["cpu"], outs["cuda"]):
        np.testing.assert_array_equal(g, c)
    kept = outs["cuda"][0] != 0
    assert 0.5 < kept.mean() < 0.9
    np.testing.assert_allclose(outs["cuda"][0][kept], x[kept] / 0.7, rtol=1e-6)


def test_edge_cases_behave_as_on_the_cpu(cuda):
    """Shapes, dtypes and in-place writes that once differed from the CPU backend on cuda."""
    assert tl.tensor(3.0, device="cuda").shape == () and tl.tensor(3.0).to("cuda").shape == ()
    assert tl.tensor(np.arange(4), device="cuda").sum().shape == ()   # int64 sum: a host fallback, still 0-d
    for device in ("cpu", "cuda"):
        t = tl.arange(600.0, device=device, dtype=tl.float32)
        t[1:] = t[:-1]                                                  # overlapping source and destination
        np.testing.assert_array_equal(t.numpy(), np.r_[0, np.arange(599)], err_msg=device)
        with pytest.raises(RuntimeError, match=r"broadcast"):
            u = tl.zeros(2, 3, device=device)
            u[0] = tl.ones(2, 3, device=device)
        f = tl.tensor([[0.0, 1.0], [0.0, 0.0]], device=device)          # float64: no kernels
        np.testing.assert_array_equal(f.any(1).numpy(), [True, False], err_msg=device)
        f[:, 1] = 5.0
        f.T.add_(1)
        np.testing.assert_array_equal(f.numpy(), [[1, 6], [1, 6]], err_msg=device)
        c = tl.arange(-3, 5, device=device).clamp(max=2)
        assert c.dtype == tl.int64, device
        big = tl.ones((1,) * 9 + (2,), device=device) + tl.ones(2, device=device)
        assert big.shape == (1,) * 9 + (2,) and float(big.sum()) == 4.0, device


def test_negative_indices_wrap_as_on_the_cpu(cuda):
    """tinygrad_like accepts indices in [-n, n) (torch.gather does not); cuda must agree with the cpu."""
    x = _data((3, 4))
    res = {}
    before = _fallbacks(cuda)
    for device in ("cpu", "cuda"):
        t = tl.tensor(x, device=device, requires_grad=True)
        gi = tl.tensor([[-1, 0], [-4, 2], [1, -2]], device=device)
        si = tl.tensor([-1, 0, -3], device=device)
        out = t.gather(1, gi) * 2 + t.index_select(0, si)[:, :2] - t[:, tl.tensor([-1, 1], device=device)]
        (out * tl.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2), device=device)).sum().backward()
        res[device] = (out.detach().numpy(), t.grad.numpy())
    assert _fallbacks(cuda).keys() - before.keys() <= {"index"}  # x[:, idx] forward: advanced indexing on the host
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("cols", [4096, 2052, 1030, 9000, 17000])
def test_float16_softmax_and_layer_norm_rows(cuda, cols):
    """float16 storage, float32 math: 16-byte vectors of 8 halves (cols % 8 == 0), scalar loads (2052, 1030),
    registers forward and multi-pass backward (9000), multi-pass both ways (17000)."""
    x = _data((3, cols)).astype(np.float16)
    dy = _data((3, cols)).astype(np.float16)
    before = _fallbacks(cuda)
    for name in ("softmax", "log_softmax", "layer_norm"):
        tx = tl.tensor(x, device="cuda", requires_grad=True)
        rx = torch.tensor(x.astype(np.float32), requires_grad=True)
        if name == "layer_norm":
            out, ref = F.layer_norm(tx, (cols,)), torch.nn.functional.layer_norm(rx, (cols,))
        else:
            out, ref = getattr(tx, name)(-1), getattr(rx, name)(-1)
        (out * tl.tensor(dy, device="cuda")).sum().backward()
        (ref * torch.tensor(dy.astype(np.float32))).sum().backward()
        assert out.dtype == tl.float16 and tx.grad.dtype == tl.float16
        np.testing.assert_allclose(out.detach().float().numpy(), ref.detach().numpy(), rtol=2e-3, atol=2e-3 if
                                   name == "softmax" else 2e-2, err_msg=name)
        np.testing.assert_allclose(tx.grad.float().numpy(), rx.grad.numpy(), rtol=2e-3, atol=2e-3 if
                                   name == "softmax" else 2e-2, err_msg=name)
    assert _fallbacks(cuda) == before


def test_rows_wider_than_the_register_kernels_take_the_multi_pass_kernels(cuda, monkeypatch):
    """The host sends a row that does not fit the *_reg_* kernels' registers to the *_block_* kernels."""
    backend = cuda.raw_backend
    monkeypatch.setattr(backend, "ROW_REG", {k: 2 for k in backend.ROW_REG})  # 2048 columns at most
    launched = []
    real = backend.rt.launch

    def spy(kernel, *args, **kwargs):
        launched.append(kernel)
        real(kernel, *args, **kwargs)

    monkeypatch.setattr(backend.rt, "launch", spy)
    a = _data((2, 3000))
    for name, fn in (("softmax", lambda t: t.softmax(-1)), ("layer_norm", lambda t: nnf(t).layer_norm(t, (3000,)))):
        out, grads = _run(fn, [a], "cuda", "tl")
        ref, ref_grads = _run(fn, [a], None, "torch")
        np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(_np(grads[0]), _np(ref_grads[0]), rtol=1e-4, atol=1e-5, err_msg=name)
    rows = [k for k in launched if k.startswith(("softmax", "layernorm"))]
    assert rows and all("_block_" in k for k in rows), rows


def test_a_cuda_model_deep_copies_and_pickles_on_its_device(cuda):
    """Device buffers cannot be pickled: a device tensor is rebuilt on its device from a host copy of its values."""
    import copy
    import pickle

    model = tl.nn.Linear(3, 2).to("cuda")
    model(tl.ones(1, 3).to("cuda")).sum().backward()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        for p, q in zip(model.parameters(), clone.parameters()):
            assert type(q) is type(p) and q.device is p.device and q.storage is not p.storage
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
            np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())


_MOVES = [  # (name, function of a NumPy-like module `m` and an array, input shape, dtype)
    ("cat", lambda lib, x: lib.cat([x[:, :2], x.mT[:2].mT, x[:, :0], x.flip(1)], 1), (3, 4), "float32"),
    ("cat_int", lambda lib, x: lib.cat([x, x[::2], x[1:2]], 0), (5, 3), "int64"),
    ("stack_bool", lambda lib, x: lib.stack([x, ~x, x.mT.mT], -1), (2, 3), "bool"),
    ("flip_strided", lambda lib, x: x[:, ::2].flip(0, 2), (3, 8, 2), "float32"),
    ("flip_int32", lambda lib, x: x.flip(-1), (2, 5), "int32"),
    ("pad", lambda lib, x: lib.nn.functional.pad(x.mT, (1, 2, 0, 3), value=-1.5), (3, 4), "float32"),
    ("pad_int", lambda lib, x: lib.nn.functional.pad(x, (2, 0), value=7), (2, 3), "int64"),
    ("roll", lambda lib, x: x.roll((-1, 5), (0, 2)), (3, 2, 4), "float32"),
    ("roll_flat", lambda lib, x: x.mT.roll(3), (3, 4), "float32"),
    ("tile", lambda lib, x: x.tile((2, 1, 3)), (2, 3), "float32"),
    ("repeat", lambda lib, x: x[:, 1:].repeat(2, 2), (3, 4), "int32"),
    ("tril", lambda lib, x: x.mT.tril(-1) + x.triu(2).mT, (2, 4, 4), "float32"),
    ("triu_wide_int", lambda lib, x: lib.triu(x, 1) - lib.tril(x, 9), (3, 5), "int64"),
    ("tril_bool_mask", lambda lib, x: lib.ones_like(x).tril().bool() & x, (4, 4), "bool"),
]


@pytest.mark.parametrize("name,fn,shape,dtype", _MOVES, ids=[m[0] for m in _MOVES])
def test_movement_ops_are_strided_copies_on_the_device(cuda, name, fn, shape, dtype):
    """cat, flip, pad, roll, tile/repeat and eye run as copy kernels over views of the inputs and the output, and
    tril/triu as a compare of two aranges and a where (no host fallback), for any input layout and every dtype the
    kernels take."""
    data = (RNG.standard_normal(shape) * 4).astype(dtype) if dtype != "bool" else RNG.random(shape) > 0.5
    before = _fallbacks(cuda)
    got = fn(tl, tl.tensor(data, device=cuda))
    assert _fallbacks(cuda) == before, f"{name} fell back to the host"
    want = fn(torch, torch.tensor(data))
    assert got.device == cuda and got.dtype.name == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("n,m,dtype", [(3, 3, "float32"), (2, 5, "int64"), (4, 1, "bool"), (0, 3, "float16")])
def test_eye_on_the_device(cuda, n, m, dtype):
    before = _fallbacks(cuda)
    got = tl.eye(n, m, dtype=getattr(tl, dtype), device=cuda)
    assert _fallbacks(cuda) == before
    np.testing.assert_array_equal(got.cpu().numpy(), np.eye(n, m, dtype=dtype))


def test_attention_runs_the_flash_kernels_and_saves_lse_and_output(cuda):
    """The forward and backward of a causal attention are the flash-attention kernels (no gemm, no softmax, so no
    L x S matrix in device memory); the node saves q, k, v, each row's log-sum-exp, the mask (none here) and the
    output, as torch's flash attention does, and the log-sum-exp is the scores' (checked against torch)."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 33, 16)).astype(np.float32) for _ in range(3))
    tq, tk, tv = (tl.tensor(a, device="cuda", requires_grad=True) for a in (q, k, v))
    seen: list = []
    unsubscribe = events.subscribe(seen.append)
    try:
        y = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
        y.sum().backward()
        tl.cuda.synchronize()
    finally:
        unsubscribe()
    launched = {e.name for e in seen if isinstance(e, events.KernelTimed)}
    assert {"flash_attn_fwd_f32_d64", "flash_attn_bwd_pre_f32", "flash_attn_bwd_dq_f32_d64",
            "flash_attn_bwd_dkv_f32_d64"} <= launched, launched
    assert not [n for n in launched if n.startswith(("gemm", "softmax", "host:"))], launched
    y2 = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    sq, sk, sv, lse, no_mask, out = y2.grad_fn.saved_tensors
    assert sq is tq and sk is tk and sv is tv and no_mask is None
    assert lse.dtype == tl.float32 and tuple(lse.shape) == (2, 3, 33)
    np.testing.assert_array_equal(out.detach().numpy(), y2.detach().numpy())
    scores = torch.tensor(q) @ torch.tensor(k).transpose(-1, -2) / 4.0
    scores = scores.masked_fill(torch.ones(33, 33, dtype=torch.bool).triu(1), -torch.inf)
    np.testing.assert_allclose(lse.numpy(), torch.logsumexp(scores, -1).numpy(), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        ty = torch.nn.functional.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                                              is_causal=True)
    np.testing.assert_allclose(y2.detach().numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)


def test_attention_float16_on_the_kernels(cuda):
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 4, 40, 32)).astype(np.float16) for _ in range(3))
    before = _fallbacks(cuda)
    tq, tk, tv = (tl.tensor(a, device="cuda", requires_grad=True) for a in (q, k, v))
    y = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    y.float().sum().backward()
    assert y.dtype == tl.float16 and tq.grad.dtype == tl.float16 and _fallbacks(cuda) == before
    rq, rk, rv = (torch.tensor(a).float().requires_grad_() for a in (q, k, v))
    ry = torch.nn.functional.scaled_dot_product_attention(rq, rk, rv, is_causal=True)
    ry.sum().backward()
    np.testing.assert_allclose(y.float().detach().numpy(), ry.detach().numpy(), rtol=0, atol=4e-3)
    for ours, theirs in ((tq, rq), (tk, rk), (tv, rv)):  # float16 results of float32 arithmetic
        np.testing.assert_allclose(ours.grad.float().numpy(), theirs.grad.numpy(), rtol=0,
                                   atol=4e-3 * max(1.0, float(theirs.grad.abs().max())))


def test_int64_min_and_max_of_a_whole_array_are_exact_on_the_device(cuda):
    """Indices' range checks (embedding, cross-entropy, scatter...) reduce int64 arrays: one kernel, exact past
    2^53 (no float accumulator), one block or two passes, any layout; partial reductions still run on the host."""
    rng = np.random.default_rng(9)
    for n in (1, 300, 100_000):
        a = rng.integers(-2**62, 2**62, n)
        a[rng.integers(0, n)] = 2**62 + 12345  # a maximum that float64 would round
        x = tl.tensor(a, device="cuda")
        before = _fallbacks(cuda)
        assert int(x.max()) == a.max() and int(x.min()) == a.min()
        assert _fallbacks(cuda) == before, n
    m = tl.tensor(np.arange(24).reshape(4, 6), device="cuda")
    before = _fallbacks(cuda)
    assert m.T.max(keepdim=True).shape == (1, 1) and int(m[1:, 2:].T.min()) == 8
    assert _fallbacks(cuda) == before
    np.testing.assert_array_equal(m.amax(1).numpy(), np.arange(24).reshape(4, 6).max(1))  # (on the host)
    assert _fallbacks(cuda) != before
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(tl.tensor([0, 7], device="cuda"), tl.zeros(5, 2, device="cuda"))


def test_attention_a_nan_score_gives_nan_rows_and_a_modified_mask_is_refused(cuda):
    """A NaN in a query row makes its output and gradients NaN (the kernel does not take it for a masked row);
    a float mask written in place after the forward is an error at backward, as in PyTorch."""
    q = np.ones((1, 4, 8), np.float32)
    q[0, 1, 0] = np.nan
    kv = np.random.default_rng(3).standard_normal((1, 6, 8)).astype(np.float32)
    tq = tl.tensor(q, device="cuda", requires_grad=True)
    y = F.scaled_dot_product_attention(tq, tl.tensor(kv, device="cuda"), tl.tensor(kv, device="cuda"))
    y.sum().backward()
    rq = torch.tensor(q, requires_grad=True)
    ry = torch.nn.functional.scaled_dot_product_attention(rq, torch.tensor(kv), torch.tensor(kv))
    ry.sum().backward()
    np.testing.assert_array_equal(np.isnan(y.detach().numpy()), np.isnan(ry.detach().numpy()))
    np.testing.assert_array_equal(np.isnan(tq.grad.numpy()), np.isnan(rq.grad.numpy()))
    assert np.isnan(y.detach().numpy()[0, 1]).all() and not np.isnan(y.detach().numpy()[0, 0]).any()
    mask = tl.zeros(4, 6, device="cuda")
    tq = tl.tensor(np.ones((1, 4, 8), np.float32), device="cuda", requires_grad=True)
    y = F.scaled_dot_product_attention(tq, tl.tensor(kv, device="cuda"), tl.tensor(kv, device="cuda"), mask)
    mask.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()

"""Host-side checks of kernel_src/adam.cuh (the math of kernel_src/adam.cu) against the NumPy backend.

``adam::adam_elem`` -- exactly what each thread of adam_f32 / adam_f16 runs -- is compiled for the CPU with
nvcc (tests/cuda_host/adam_harness.cu) and applied to every element for several steps; the results must
equal ``NumpyNNPrimitives.adam_step`` bit for bit (float32) for Adam, AdamW, L2 weight decay and AMSGrad,
given the host-side scalar packing that the launcher must use (``adam_scalars`` below). On the device the
same operations use explicitly rounded intrinsics (__fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn), which is
only verified on a GPU. The float16 variant (float16 params, float32 state) is checked to float16 rounding.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_harness import build_harnesses

from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives

pytestmark = pytest.mark.cuda



@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harnesses(tmp_path_factory, "adam_harness")[0]


def adam_scalars(step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
                 decoupled: bool) -> bytes:
    """The AdamScalars argument of adam_f32 / adam_f16 for one step (36 bytes): the launcher's packing."""
    floats = [1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay, lr / (1 - beta1 ** step),
              (1 - beta2 ** step) ** 0.5, eps]
    return np.array(floats, np.float32).tobytes() + np.int32(1 if decoupled else 0).tobytes()


CONFIGS = [
    dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False, amsgrad=False),
    dict(lr=3e-2, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.1, decoupled=False, amsgrad=False),
    dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, decoupled=True, amsgrad=False),
    dict(lr=5e-3, beta1=0.95, beta2=0.9, eps=1e-8, weight_decay=0.0, decoupled=False, amsgrad=True),
    dict(lr=5e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.05, decoupled=True, amsgrad=True),
]


def run(harness, tmp_path, dtype, param, grads, cfg, nsteps):
    n = param.size
    hp = {k: v for k, v in cfg.items() if k != "amsgrad"}
    (tmp_path / "steps.bin").write_bytes(b"".join(adam_scalars(s, **hp) for s in range(1, nsteps + 1)))
    (tmp_path / "param.bin").write_bytes(param.astype(dtype).tobytes())
    (tmp_path / "grad.bin").write_bytes(np.stack(grads).astype(dtype).tobytes())
    for name in ("m", "v", "vmax"):
        (tmp_path / f"{name}.bin").write_bytes(np.zeros(n, np.float32).tobytes())
    tag = "f32" if dtype == np.float32 else "f16"
    p = subprocess.run([str(harness), tag, str(n), str(tmp_path / "steps.bin"), str(tmp_path),
                        "1" if cfg["amsgrad"] else "0"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return {k: np.fromfile(tmp_path / f"{k}.bin", dtype if k == "param" else np.float32)
            for k in ("param", "m", "v", "vmax")}


def reference(param, grads, cfg, nsteps):
    p = param.astype(np.float32)
    m, v = np.zeros_like(p), np.zeros_like(p)
    vmax = np.zeros_like(p) if cfg["amsgrad"] else None
    for s in range(1, nsteps + 1):
        NumpyNNPrimitives.adam_step(p, grads[s - 1].astype(np.float32), m, v, s, cfg["lr"], cfg["beta1"],
                                    cfg["beta2"], cfg["eps"], cfg["weight_decay"], cfg["decoupled"], vmax)
    return p, m, v, vmax


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_adam_f32_is_bit_identical_to_numpy_backend(harness, tmp_path, cfg):
    rng = np.random.default_rng(0)
    n, nsteps = 1537, 5
    param = rng.standard_normal(n).astype(np.float32)
    grads = [rng.standard_normal(n).astype(np.float32) * np.float32(10.0 ** rng.integers(-3, 2)) for _ in range(nsteps)]
    grads[2][:10] = 0  # zero gradients and second moments stay finite (eps)
    got = run(harness, tmp_path, np.float32, param, grads, cfg, nsteps)
    p, m, v, vmax = reference(param, grads, cfg, nsteps)
    np.testing.assert_array_equal(got["m"], m)
    np.testing.assert_array_equal(got["v"], v)
    np.testing.assert_array_equal(got["param"], p)
    if vmax is not None:
        np.testing.assert_array_equal(got["vmax"], vmax)


def test_adam_matches_torch_adamw(harness, tmp_path):
    torch = pytest.importorskip("torch")
    cfg = dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, decoupled=True, amsgrad=True)
    rng = np.random.default_rng(1)
    n, nsteps = 300, 4
    param = rng.standard_normal(n).astype(np.float32)
    grads = [rng.standard_normal(n).astype(np.float32) for _ in range(nsteps)]
    got = run(harness, tmp_path, np.float32, param, grads, cfg, nsteps)
    t = torch.tensor(param.copy(), requires_grad=True)
    opt = torch.optim.AdamW([t], lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"],
                            weight_decay=cfg["weight_decay"], amsgrad=True, foreach=False)
    for g in grads:
        t.grad = torch.tensor(g)
        opt.step()
    np.testing.assert_allclose(got["param"], t.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cfg", CONFIGS[1:3], ids=["l2", "adamw"])
def test_adam_f16_params_with_f32_state(harness, tmp_path, cfg):
    rng = np.random.default_rng(2)
    n = 512
    param = rng.standard_normal(n).astype(np.float16)
    grad = rng.standard_normal(n).astype(np.float16)
    got = run(harness, tmp_path, np.float16, param, [grad], cfg, 1)
    # one step: float32 math on the float16 values, rounded to float16 once
    p, m, v, _ = reference(param.astype(np.float32), [grad.astype(np.float32)], cfg, 1)
    np.testing.assert_array_equal(got["m"], m)
    np.testing.assert_array_equal(got["v"], v)
    np.testing.assert_array_equal(got["param"], p.astype(np.float16))

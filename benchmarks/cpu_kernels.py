"""Each compiled CPU kernel against the NumPy code it replaces, in one process, round robin.

The compiled kernels (``kernel_src/cpu/``) are kept only where they beat NumPy; this script prints the figures
behind each choice (``benchmarks/RESULTS.md`` records them). Per case, the primitive is timed with the kernels on
and with ``cpu_kernels.enable(False)`` (NumPy's code), alternating, best of ``--rounds``; threads as the machine's
defaults for both (the kernels start none; NumPy's BLAS takes part only in the convolutions' products).

    .venv/bin/python benchmarks/cpu_kernels.py [--rounds 7] [--only GROUP] [--out FILE]

GROUP: conv, direct_conv, pool, activation, chains, optim (all by default), or direct_sweep (only on request: the
120 convolutions behind conv_direct.c's size bounds, numpy_nn._direct_ok).

Prints one JSON document: per case, the microseconds of each variant and their ratio (compiled / NumPy; below 1
the kernel is faster), with the kernel that ran.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from _env import git_state, machine_info, report  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.backends import cpu_kernels, numpy_nn  # noqa: E402
from tinygrad_like.backends.numpy_backend import NumpyBackend  # noqa: E402
from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as P  # noqa: E402

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def conv_cases():
    """im2col / col2im of strided convolutions (the general layout; stride-1 ones use NumPy's wide columns)."""
    for shape, k, s, p in [((64, 8, 14, 14), 3, 2, 1), ((8, 64, 56, 56), 3, 2, 1), ((8, 3, 224, 224), 7, 2, 3),
                           ((16, 64, 28, 28), 1, 2, 0)]:
        x = _f32(*shape)
        geo = ((k, k), (s, s), (p, p), (1, 1))
        cols = P.im2col(x, *geo)
        yield f"im2col {shape} k{k} s{s} p{p}", lambda x=x, geo=geo: P.im2col(x, *geo)
        yield f"col2im {shape} k{k} s{s} p{p}", lambda c=cols, shape=shape, geo=geo: P.col2im(c, shape, *geo)


def direct_conv_cases():
    """The CNN benchmark's two stride-1 convolutions (conv_direct.c against the wide columns and BLAS): forward,
    and the input's gradient of the second (the first's input needs none)."""
    for shape, oc in (((64, 1, 28, 28), 8), ((64, 8, 14, 14), 16)):
        x, w, b = _f32(*shape), _f32(oc, shape[1], 3, 3), _f32(oc)
        yield f"conv2d fwd {shape} -> {oc}", lambda x=x, w=w, b=b: P.conv2d(x, w, b, (1, 1), (1, 1), (1, 1))
        if shape[1] > 1:
            g = _f32(shape[0], oc, *shape[2:])
            yield (f"conv2d input grad {shape} -> {oc}",
                   lambda g=g, w=w, s=shape: P.conv2d_backward(g, None, w, s, (1, 1), (1, 1), (1, 1), True, False,
                                                               False))


def direct_sweep_cases():
    """3x3 stride-1 convolutions over batch, size and channels, forward and input gradient: where conv_direct.c
    beats im2col + BLAS (numpy_nn._direct_ok's bounds). With the kernels on, every case runs the direct kernel,
    whatever the bounds say (they are opened for the run); with them off, the wide columns and BLAS."""
    for n, h in ((64, 28), (64, 14), (16, 32)):
        for c in (1, 3, 8, 16, 32):
            for oc in (8, 16, 32, 64):
                x, w, g = _f32(n, c, h, h), _f32(oc, c, 3, 3), _f32(n, oc, h, h)
                yield f"fwd n{n} {h}x{h} {c} -> {oc}", lambda x=x, w=w: _unbounded(
                    lambda: P.conv2d(x, w, None, (1, 1), (1, 1), (1, 1)))
                yield f"input grad n{n} {h}x{h} {c} -> {oc}", lambda g=g, w=w, s=(n, c, h, h): _unbounded(
                    lambda: P.conv2d_backward(g, None, w, s, (1, 1), (1, 1), (1, 1), True, False, False))


def _unbounded(fn):
    bounds = numpy_nn._DIRECT_CHANNELS, numpy_nn._DIRECT_MAX_TAPS, numpy_nn._DIRECT_CORES
    numpy_nn._DIRECT_CHANNELS, numpy_nn._DIRECT_MAX_TAPS, numpy_nn._DIRECT_CORES = (1, 10 ** 9), 10 ** 9, 10 ** 9
    try:
        return fn()
    finally:
        numpy_nn._DIRECT_CHANNELS, numpy_nn._DIRECT_MAX_TAPS, numpy_nn._DIRECT_CORES = bounds


def pool_cases():
    """Max-pooling: the forward where the kernel runs it (wide strided rows), the backward from each state."""
    for shape, k, s, p in [((64, 8, 28, 28), 2, 2, 0), ((64, 16, 14, 14), 2, 2, 0), ((8, 64, 112, 112), 3, 2, 1),
                           ((64, 8, 28, 28), 3, 1, 1)]:
        x = _f32(*shape)
        geo = ((k, k), (s, s), (p, p), (1, 1))
        out, state = P.max_pool2d(x, *geo)
        g = _f32(*out.shape)
        yield f"max_pool2d fwd {shape} k{k} s{s} p{p}", lambda x=x, geo=geo: P.max_pool2d(x, *geo)

        def backward(g=g, x=x, geo=geo):  # (the state of this variant's own forward: an argmax, masks or None)
            o, st = P.max_pool2d(x, *geo)
            return P.max_pool2d_backward(g, x, o, st, *geo)

        yield f"max_pool2d fwd+bwd {shape} k{k} s{s} p{p}", backward


def activation_cases():
    """relu, the backward of relu / tanh / sigmoid, and the dropout mask, at and above the size they start at."""
    for n in (32_768, 401_408, 4_194_304):
        x, g = _f32(n), _f32(n)
        y = np.tanh(x)
        yield f"relu {n}", lambda x=x: numpy_nn.relu(x)
        yield f"relu_backward {n}", lambda g=g, y=y: NumpyBackend.relu_backward(g, y)
        yield f"tanh_backward {n}", lambda g=g, y=y: NumpyBackend.tanh_backward(g, y)
        yield f"sigmoid_backward {n}", lambda g=g, y=y: NumpyBackend.sigmoid_backward(g, y)
        gen = tl.Generator().manual_seed(0)
        yield f"dropout_mask {n}", lambda gen=gen, n=n: P.dropout_mask(gen, (n,), 0.1, tl.float32)


def chain_cases():
    """The elementwise chains (``backends/chains.py``) of the activations built on them, forward and backward: one
    generated loop against the formula's steps as NumPy calls."""
    from tinygrad_like.ops import activation as a

    for n in (32_768, 401_408):
        x, g = _f32(n), _f32(n)
        for name, chain, params in [("silu", a.SILU, ()), ("elu", a.ELU, (1.0,)), ("mish", a.MISH, ()),
                                    ("leaky_relu", a.LEAKY_RELU, (0.01,))]:
            yield f"{name} forward {n}", lambda x=x, c=chain, p=params: NumpyBackend.elementwise_chain(c, (x,), p)
        for name, chain, params in [("silu", a.SILU_GRAD, ()), ("elu", a.ELU_GRAD, (1.0,)), ("mish", a.MISH_GRAD, ()),
                                    ("leaky_relu", a.LEAKY_RELU_GRAD, (0.01,)),
                                    ("softplus", a.SOFTPLUS_GRAD, (1.0, 20.0))]:
            yield (f"{name} backward {n}",
                   lambda g=g, x=x, c=chain, p=params: NumpyBackend.elementwise_chain(c, (g, x), p))


def optim_cases():
    """SGD's update ``p += -lr * g`` (``axpy``) on the MLP benchmark's parameter sizes: one compiled pass against
    NumPy's product into a new array and sum."""
    for n in (32_768, 65_536, 131_072, 262_144, 401_408):
        y, x = _f32(n), _f32(n)
        yield f"axpy {n}", lambda y=y, x=x: NumpyBackend.axpy(y, x, -1e-9)  # (a tiny step: y stays as it is)


GROUPS = {"conv": conv_cases, "direct_conv": direct_conv_cases, "pool": pool_cases, "activation": activation_cases,
          "chains": chain_cases, "optim": optim_cases, "direct_sweep": direct_sweep_cases}
DEFAULT = [g for g in GROUPS if g != "direct_sweep"]


def once_us(fn) -> float:
    """Microseconds per call of ``fn``, over as many calls as take ~0.2 s."""
    t = timeit.Timer(fn)
    number, _ = t.autorange()
    return t.timeit(number) / number * 1e6


def run(groups: list[str], rounds: int) -> dict:
    rows = []
    for group in groups:
        for name, fn in GROUPS[group]():
            cpu_kernels.LAUNCHED[0] = None
            fn()
            ran = cpu_kernels.LAUNCHED[0]
            times = {"compiled": [], "numpy": []}
            for _ in range(rounds):  # round robin, so that the machine's drift hits both alike
                for variant in times:
                    cpu_kernels.enable(variant == "compiled")
                    times[variant].append(once_us(fn))
            cpu_kernels.enable(True)
            ours, ref = min(times["compiled"]), min(times["numpy"])
            rows.append({"case": name, "kernel": ran, "compiled_us": round(ours, 1), "numpy_us": round(ref, 1),
                         "ratio": round(ours / ref, 2)})
            print(f"{name:48s} {ran or '(numpy)':18s} {ours:10.1f} {ref:10.1f} {ours / ref:6.2f}", file=sys.stderr)
    return {"benchmark": "cpu_kernels", "date": datetime.date.today().isoformat(), "machine": machine_info("numpy"),
            "git": git_state("kernel_src/cpu", "tinygrad_like/backends"), "rounds": rounds, "rows": rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--only", choices=sorted(GROUPS))
    p.add_argument("--out", help="also write the JSON to this file")
    args = p.parse_args(argv)
    if not cpu_kernels.available():
        print("no C compiler here: the compiled CPU kernels cannot be built", file=sys.stderr)
        return 1
    report(run([args.only] if args.only else DEFAULT, args.rounds), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

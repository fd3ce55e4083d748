"""The backend protocol, written down once: every primitive a backend offers, as one table.

A backend is an object whose attributes are these primitives (plus ``name`` and ``is_host``, plain attributes);
every op of the Tensor API is composed from them.
Each row says what the primitive is (``kind``), which positional operands it writes in place (``writes``: the
caller bumps those tensors' versions, and the CUDA backend's host fallback copies them back), and what it returns.
Unless ``writes`` says otherwise a primitive returns *fresh* arrays, never a view of an input: storages must not
alias. How each primitive is called (its parameters, their names and types) is written beside this table, as the
methods of ``signatures.Backend``.

The table is read by:

- ``device.TimedBackend``: it times every primitive except the ``memory`` ones (allocation, views, transfers);
- the CUDA backend: a primitive without a kernel there runs NumPy's on host copies (``_fallback``), writing back
  the operands in ``writes``;
- the conformance tests (``tests/test_backend_protocol.py``): the NumPy backend implements every primitive that is
  not ``device_only`` and nothing else, every backend has the signatures ``signatures.Backend`` gives, and the CUDA
  backend serves every primitive, by a kernel or by the fallback.

>>> from tinygrad_like.backends.protocol import PRIMITIVES
>>> PRIMITIVES["setitem"].writes, PRIMITIVES["conv2d"].returns
((0,), '(out, cols)')
"""

from __future__ import annotations

from typing import NamedTuple


class Primitive(NamedTuple):
    name: str
    kind: str  # memory, elementwise, matmul, reduce, movement, creation, random, index, fused, optimizer
    returns: str  # "array", "none", or the tuple it returns, e.g. "(out, cols)"
    writes: tuple = ()  # positional operands written in place
    device_only: bool = False  # only backends with a memory of their own (not the host's) have it


def _rows(kind: str, names: str, returns: str = "array") -> list[Primitive]:
    return [Primitive(n, kind, returns) for n in names.split()]


_TABLE: list[Primitive] = [
    # memory: allocation, views and transfers (not timed: they move or describe bytes, they compute nothing)
    Primitive("alloc", "memory", "buffer"),
    Primitive("adopt", "memory", "(buffer, array)"),
    Primitive("view", "memory", "array (a view of the buffer)"),
    Primitive("reshape", "memory", "array (a view where possible)"),
    Primitive("swap_last", "memory", "array (a view)"),
    Primitive("permute", "memory", "array (a view with its dims in the given order)"),
    Primitive("broadcast_to", "memory", "array (a view)"),
    Primitive("from_numpy", "memory", "array"),
    Primitive("to_numpy", "memory", "numpy array"),
    Primitive("wait", "memory", "none"),
    Primitive("upload", "memory", "none", device_only=True),
    Primitive("upload_into", "memory", "none", (0,), device_only=True),
    Primitive("download", "memory", "numpy array", device_only=True),
    Primitive("download_into", "memory", "none", (1,), device_only=True),
    # elementwise, with NumPy's broadcasting
    *_rows("elementwise", "abs cos exp log neg sign sin sqrt tanh erf rsqrt sigmoid relu isnan logical_not softplus "
                          "clip cast"),
    *_rows("elementwise", "add sub mul div pow maximum minimum eq ne lt le gt ge logical_and logical_or logical_xor "
                          "bitwise_and bitwise_or bitwise_xor where"),
    Primitive("matmul", "matmul", "array"),
    # reductions and scans over axes
    *_rows("reduce", "sum max min argmax argmin any all logsumexp cumsum"),
    # copies that move elements
    *_rows("movement", "copy cat flip pad tile tril triu"),
    # new arrays
    *_rows("creation", "full arange linspace eye"),
    *_rows("random", "uniform normal randint randperm dropout_mask"),
    # indexing
    *_rows("index", "gather scatter_add index_select index index_add nonzero"),
    Primitive("setitem", "index", "none", (0,)),
    Primitive("assign", "index", "none", (0,)),
    Primitive("axpy", "elementwise", "none", (0,)),  # y += alpha * x
    Primitive("scale", "elementwise", "none", (0,)),  # y *= s, a number
    # fused forward and backward kernels
    *_rows("fused", "softmax softmax_backward log_softmax log_softmax_backward relu_backward tanh_backward "
                    "sigmoid_backward im2col col2im max_pool2d_backward max_pool2d_indices layer_norm_backward "
                    "cross_entropy_backward"),
    Primitive("elementwise_chain", "fused", "array"),  # a formula of backends/chains.py over arrays of one shape
    Primitive("conv2d", "fused", "(out, cols)"),
    Primitive("conv2d_backward", "fused", "(gx, gweight, gbias), None for those not asked for"),
    Primitive("max_pool2d", "fused", "(out, state)"),
    Primitive("layer_norm", "fused", "(xhat, mean, rstd)"),
    Primitive("cross_entropy", "fused", "(loss, logp, coef, coef_sum)"),
    Primitive("cross_entropy_coefs", "fused", "(coef, coef_sum)"),
    # GELU: the state is what its backward reads again (the CPU keeps gelu'(x), so it computes no erf; CUDA: None)
    Primitive("gelu", "fused", "(out, state)"),
    Primitive("gelu_backward", "fused", "array"),
    # softmax(q @ k^T * scale + mask) @ v; each row's log-sum-exp, and the weights (the softmax) where the backend
    # keeps them for its backward (None from a flash-attention kernel)
    Primitive("attention", "fused", "(out, lse, weights)"),
    Primitive("attention_backward", "fused", "(gq, gk, gv)"),
    # recurrent layers: one layer (one direction) over a whole sequence, and backpropagation through time
    Primitive("lstm_layer", "fused", "(states, gates, m), m None without a projection"),
    Primitive("lstm_layer_backward", "fused", "(dxp, dh0, dc0, dw_hh, db_hh, dw_hr), dw_hr None without a projection"),
    Primitive("gru_layer", "fused", "(states, gates, hn)"),
    Primitive("gru_layer_backward", "fused", "(dxp, dh0, dw_hh, db_hh)"),
    Primitive("rnn_layer", "fused", "array (the states)"),
    Primitive("rnn_layer_backward", "fused", "(dxp, dh0, dw_hh, db_hh)"),
    # linalg family: cross products, triangle indices
    Primitive("cross", "fused", "array"),
    *_rows("creation", "tril_indices triu_indices"),
    Primitive("svd", "fused", "(U, S, Vh)"),  # singular value decomposition (NumPy's LAPACK gesdd)
    Primitive("svdvals", "fused", "array"),
    # sorting family: sorts, order statistics, products and scans, sampling
    *_rows("movement", "sort", "(values, indices)"),
    *_rows("reduce", "topk kthvalue median mode cummax", "(values, indices)"),
    *_rows("movement", "unique unique_consecutive", "(values, inverse, counts)"),
    Primitive("searchsorted", "index", "array"),
    *_rows("reduce", "prod cumprod logcumsumexp"),
    *_rows("random", "multinomial exponential"),
    *_rows("reduce", "bincount histc histogram"),  # counting: counts per value / per bin
    # math family: rounding, inverse trig and hyperbolic, logs/exps, remainders, bits, finiteness
    *_rows("elementwise", "floor ceil trunc round acos asin atan tan sinh cosh asinh acosh atanh log2 log10 log1p "
                          "expm1 exp2 isinf isfinite nan_to_num bitwise_not"),
    *_rows("elementwise", "atan2 hypot copysign logaddexp logaddexp2 fmod remainder floor_divide trunc_divide xlogy "
                          "bitwise_left_shift bitwise_right_shift"),
    # shaping family: roll, repeat_interleave, scatter and scatter_reduce, logspace
    *_rows("movement", "roll repeat_interleave"),
    *_rows("index", "scatter scatter_reduce"),
    Primitive("logspace", "creation", "array"),
    # optimizer updates, in place
    Primitive("adam_step", "optimizer", "none", (0, 2, 3, 11)),
]

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _TABLE}
assert len(PRIMITIVES) == len(_TABLE), "a primitive is listed twice"

#: what the timing wrapper does not time
UNTIMED = frozenset(p.name for p in _TABLE if p.kind == "memory")
#: primitive -> the positional operands it writes in place
IN_PLACE = {p.name: p.writes for p in _TABLE if p.writes}

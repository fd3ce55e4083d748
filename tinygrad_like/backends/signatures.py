"""The backend protocol as Python signatures: :class:`Backend`, one method per primitive of ``protocol.py``'s table.

The table says what each primitive is (its kind, the operands it writes in place, what it returns); this class says
how it is called: its parameters, with the NumPy backend's names, and their types. ``Native`` stands for the
backend's own array type (``numpy.ndarray`` on ``numpy`` and ``sim``, ``CudaArray`` on ``cuda``), ``Buffer`` for its
flat allocations. Every backend is checked against this class by ``tests/test_backend_protocol.py``: the NumPy
backend, the simulated device's and the CUDA backend's explicit methods have these names, parameter names, kinds and
defaults (annotations aside), and the CUDA backend serves the rest through its host fallback.

>>> import inspect
>>> from tinygrad_like.backends.signatures import Backend
>>> str(inspect.signature(Backend.gelu))
"(self, x: 'Native', approximate: 'str', keep: 'bool') -> 'tuple[Native, Native | None]'"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..dtypes import DType
from ..layout import Layout
from .chains import Chain

#: the backend's array type: ``numpy.ndarray`` (numpy, sim), ``CudaArray`` (cuda)
Native = Any
#: a flat allocation: ``numpy.ndarray`` (numpy), ``SimBuffer`` (sim), ``DeviceBuffer`` (cuda)
Buffer = Any
#: a host array, the other side of a transfer
HostArray = np.ndarray
#: a Python (or NumPy) number
Scalar = bool | int | float
#: what an elementwise primitive combines: arrays and numbers, broadcast together
Operand = Native | Scalar
Shape = tuple[int, ...]
#: one axis, several, or None for all
Axis = int | tuple[int, ...] | None
#: (height, width) of a kernel, a stride, a padding or a dilation
Pair = tuple[int, int]
#: a NumPy-style index: ints, slices, None, Ellipsis and native integer or bool arrays, or a tuple of them
Index = Any
#: what a fused forward keeps for its backward; its content is the backend's own business (see :class:`Backend`)
State = Any


class RandomGenerator(Protocol):
    """What a backend asks of a ``tl.Generator``: the NumPy generator over its Philox stream."""

    def np_generator(self) -> np.random.Generator: ...


class Backend(Protocol):
    """Every primitive a backend offers, as it is called; ``name`` and ``is_host`` are plain attributes.

    Conventions, and the differences between backends that are deliberate:

    - The core passes every argument by position (``tests/test_backend_protocol.py`` checks it), for two reasons.
      Elementwise operands are positional-only (``/``): NumPy's ufuncs serve most elementwise primitives and take
      operands by position only, and so do ``np.where``, ``np.clip`` and ``np.matmul``, which serve ``where``,
      ``clip`` and ``matmul`` on the NumPy backend (with parameter names and extra optional parameters of their
      own, ``out=`` and the like, which nobody passes). And the CUDA backend's host fallback, which serves every
      primitive it has no kernel for, forwards ``*args`` only.
    - A primitive returns the same shape of result on every backend: a fused forward with a backward state returns
      the tuple its row of the table names, with None where it has no state (``gelu`` on CUDA). What such a state
      holds is the backend's own business, and only its own backward reads it: ``conv2d``'s columns (NumPy keeps
      stride-1 ones on a wider grid, and after a direct convolution the input, to build them from),
      ``max_pool2d``'s state (NumPy: the 2x2 fast path's masks or None; CUDA: the argmax indices),
      ``layer_norm``'s ``rstd`` (CUDA: an object holding x, mean and rstd), ``cross_entropy``'s ``logp`` and
      coefficients (CUDA: an object holding the logits, and None for the dense coefficients, which
      ``cross_entropy_coefs`` makes when a differentiable backward asks for them), ``gelu``'s state (NumPy:
      ``gelu'(x)``; CUDA: None).
    - ``upload``, ``upload_into``, ``download`` and ``download_into`` (``device_only`` in the table) exist only on
      backends with a memory of their own (``sim``, ``cuda``), and the memory primitives' ``Buffer`` differs per
      backend.
    """

    name: str
    is_host: bool

    # ---- memory: allocation, views and transfers ----------------------------------------------------------------
    def alloc(self, numel: int, dtype: DType) -> Buffer:
        """A new, uninitialised buffer of ``numel`` elements of ``dtype``."""

    def adopt(self, r: Native) -> tuple[Buffer, Native]:
        """A primitive's result as (its buffer, a C-contiguous array over the buffer from its start)."""

    def view(self, buf: Buffer, layout: Layout, dtype: DType) -> Native:
        """The array ``layout`` describes (shape, strides and offset in elements) over ``buf``."""

    def reshape(self, x: Native, shape: Shape) -> Native:
        """``x`` in a new shape (one dim may be -1): a view where the layout allows it, else a copy."""

    def swap_last(self, x: Native) -> Native:
        """A view of ``x`` with its last two dims swapped."""

    def permute(self, x: Native, dims: tuple[int, ...]) -> Native:
        """A view of ``x`` with its dims in the order ``dims``."""

    def broadcast_to(self, x: Native, shape: Shape) -> Native:
        """A view of ``x`` broadcast to ``shape`` (stride 0 on the new dims)."""

    def from_numpy(self, arr: HostArray) -> Native:
        """``arr`` as this backend's array, shape kept (0-d too); a device uploads a copy."""

    def to_numpy(self, x: Native) -> HostArray:
        """``x`` as a host array with its shape (the host backend: ``x`` itself; a device: a downloaded copy)."""

    def wait(self, fence: Any) -> None:
        """Block until the work ``fence`` marks is done (None, or a host backend: nothing to wait for)."""

    def upload(self, host: HostArray) -> Buffer:
        """A new device buffer holding a copy of ``host``, flattened (device only)."""

    def upload_into(self, host: HostArray, buf: Buffer) -> None:
        """Copy ``host``, flattened, into the start of the device buffer ``buf`` (device only)."""

    def download(self, buf: Buffer, numel: int, dtype: DType) -> HostArray:
        """A new flat host array holding the first ``numel`` elements of ``buf`` (device only)."""

    def download_into(self, buf: Buffer, host: HostArray) -> None:
        """Copy the start of ``buf`` into every element of the host array ``host`` (device only)."""

    # ---- elementwise, unary -----------------------------------------------------------------------------------
    def abs(self, x: Native, /) -> Native:
        """``|x|``."""

    def cos(self, x: Native, /) -> Native:
        """``cos(x)``."""

    def exp(self, x: Native, /) -> Native:
        """``e ** x``."""

    def log(self, x: Native, /) -> Native:
        """The natural logarithm."""

    def neg(self, x: Native, /) -> Native:
        """``-x``."""

    def sign(self, x: Native, /) -> Native:
        """-1, 0 or 1 in ``x``'s dtype; 0 for NaN, as torch's."""

    def sin(self, x: Native, /) -> Native:
        """``sin(x)``."""

    def sqrt(self, x: Native, /) -> Native:
        """The square root."""

    def tanh(self, x: Native, /) -> Native:
        """The hyperbolic tangent."""

    def erf(self, x: Native, /) -> Native:
        """The error function."""

    def rsqrt(self, x: Native, /) -> Native:
        """``1 / sqrt(x)``."""

    def sigmoid(self, x: Native, /) -> Native:
        """``1 / (1 + e ** -x)``, computed without overflow."""

    def relu(self, x: Native, /) -> Native:
        """``max(x, 0)``, NaN kept."""

    def isnan(self, x: Native, /) -> Native:
        """Where ``x`` is NaN (bool)."""

    def logical_not(self, x: Native, /) -> Native:
        """Where ``x`` is zero (bool)."""

    def softplus(self, x: Native, beta: float, threshold: float) -> Native:
        """``log(1 + e ** (beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""

    def clip(self, x: Native, lo: Operand | None, hi: Operand | None, /) -> Native:
        """``x`` clamped into ``[lo, hi]`` (None: no bound on that side)."""

    def cast(self, x: Native, dtype: DType) -> Native:
        """A copy of ``x`` in ``dtype`` (floats to small integers through the dtype's ``float_via``)."""

    # ---- elementwise, binary (NumPy's broadcasting and type promotion) ------------------------------------------
    def add(self, x: Operand, y: Operand, /) -> Native:
        """``x + y``."""

    def sub(self, x: Operand, y: Operand, /) -> Native:
        """``x - y``."""

    def mul(self, x: Operand, y: Operand, /) -> Native:
        """``x * y``."""

    def div(self, x: Operand, y: Operand, /) -> Native:
        """``x / y`` (true division)."""

    def pow(self, x: Operand, y: Operand, /) -> Native:
        """``x ** y``."""

    def maximum(self, x: Operand, y: Operand, /) -> Native:
        """The larger of ``x`` and ``y``, NaN if either is."""

    def minimum(self, x: Operand, y: Operand, /) -> Native:
        """The smaller of ``x`` and ``y``, NaN if either is."""

    def eq(self, x: Operand, y: Operand, /) -> Native:
        """``x == y`` (bool)."""

    def ne(self, x: Operand, y: Operand, /) -> Native:
        """``x != y`` (bool)."""

    def lt(self, x: Operand, y: Operand, /) -> Native:
        """``x < y`` (bool)."""

    def le(self, x: Operand, y: Operand, /) -> Native:
        """``x <= y`` (bool)."""

    def gt(self, x: Operand, y: Operand, /) -> Native:
        """``x > y`` (bool)."""

    def ge(self, x: Operand, y: Operand, /) -> Native:
        """``x >= y`` (bool)."""

    def logical_and(self, x: Operand, y: Operand, /) -> Native:
        """Where both are nonzero (bool)."""

    def logical_or(self, x: Operand, y: Operand, /) -> Native:
        """Where either is nonzero (bool)."""

    def logical_xor(self, x: Operand, y: Operand, /) -> Native:
        """Where exactly one is nonzero (bool)."""

    def bitwise_and(self, x: Operand, y: Operand, /) -> Native:
        """``x & y`` for integers and bools."""

    def bitwise_or(self, x: Operand, y: Operand, /) -> Native:
        """``x | y`` for integers and bools."""

    def bitwise_xor(self, x: Operand, y: Operand, /) -> Native:
        """``x ^ y`` for integers and bools."""

    def where(self, cond: Native, x: Operand, y: Operand, /) -> Native:
        """``x`` where ``cond``, else ``y`` (all three broadcast)."""

    def matmul(self, a: Native, b: Native, /) -> Native:
        """The matrix product, NumPy's ``matmul`` rules (1-D operands, batch dims broadcast)."""

    # ---- reductions and scans ---------------------------------------------------------------------------------
    def sum(self, x: Native, axis: Axis, keepdims: bool, dtype: DType | None = None) -> Native:
        """The sum over ``axis``, accumulated and returned in ``dtype`` when given."""

    def max(self, x: Native, axis: Axis, keepdims: bool) -> Native:
        """The maximum over ``axis`` (NaN if any element is)."""

    def min(self, x: Native, axis: Axis, keepdims: bool) -> Native:
        """The minimum over ``axis`` (NaN if any element is)."""

    def argmax(self, x: Native, axis: int | None, keepdims: bool) -> Native:
        """The int64 index of the first maximum along ``axis`` (None: of the flattened array)."""

    def argmin(self, x: Native, axis: int | None, keepdims: bool) -> Native:
        """The int64 index of the first minimum along ``axis`` (None: of the flattened array)."""

    def any(self, x: Native, axis: Axis, keepdims: bool) -> Native:
        """Whether any element over ``axis`` is nonzero (bool)."""

    def all(self, x: Native, axis: Axis, keepdims: bool) -> Native:
        """Whether every element over ``axis`` is nonzero (bool)."""

    def logsumexp(self, x: Native, axis: Axis, keepdims: bool) -> Native:
        """``log(sum(exp(x)))`` over ``axis``, shifted by the maximum so it does not overflow."""

    def cumsum(self, x: Native, axis: int) -> Native:
        """The running sum along ``axis``, in ``x``'s dtype."""

    # ---- movement: copies that move elements ------------------------------------------------------------------
    def copy(self, x: Native) -> Native:
        """A C-contiguous copy of ``x`` (any view)."""

    def cat(self, xs: Sequence[Native], axis: int) -> Native:
        """The arrays of ``xs`` joined along ``axis``."""

    def flip(self, x: Native, axes: tuple[int, ...]) -> Native:
        """``x`` with the order of its elements reversed along ``axes``."""

    def pad(self, x: Native, widths: Sequence[tuple[int, int]], value: Scalar) -> Native:
        """``x`` padded with ``value``: ``widths`` holds (before, after) for every dim."""

    def tile(self, x: Native, reps: tuple[int, ...]) -> Native:
        """``x`` repeated ``reps[i]`` times along each dim (NumPy's ``tile``)."""

    def tril(self, x: Native, k: int) -> Native:
        """``x`` with the elements above its ``k``-th diagonal zeroed (the last two dims)."""

    def triu(self, x: Native, k: int) -> Native:
        """``x`` with the elements below its ``k``-th diagonal zeroed (the last two dims)."""

    # ---- creation ---------------------------------------------------------------------------------------------
    def full(self, shape: Shape, value: Scalar, dtype: DType) -> Native:
        """A new array of ``shape`` filled with ``value``."""

    def arange(self, start: float, end: float, step: float, dtype: DType) -> Native:
        """``start, start + step, ...`` up to ``end`` (excluded)."""

    def linspace(self, start: float, end: float, steps: int, dtype: DType) -> Native:
        """``steps`` evenly spaced values from ``start`` to ``end``, both included."""

    def eye(self, n: int, m: int, dtype: DType) -> Native:
        """An ``n x m`` matrix with ones on the diagonal, zeros elsewhere."""

    # ---- random (from the generator's Philox stream) ----------------------------------------------------------
    def uniform(self, gen: RandomGenerator, shape: Shape, low: float, high: float, dtype: DType) -> Native:
        """Uniform draws from ``[low, high)``."""

    def normal(self, gen: RandomGenerator, shape: Shape, mean: float, std: float, dtype: DType) -> Native:
        """Normal draws of mean ``mean`` and standard deviation ``std``."""

    def randint(self, gen: RandomGenerator, shape: Shape, low: int, high: int, dtype: DType) -> Native:
        """Integers drawn uniformly from ``[low, high)``."""

    def randperm(self, gen: RandomGenerator, n: int, dtype: DType) -> Native:
        """A random permutation of ``0 .. n - 1``."""

    def dropout_mask(self, gen: RandomGenerator, shape: Shape, p: float, dtype: DType) -> Native:
        """``1 / (1 - p)`` where an element is kept (probability ``1 - p``), 0 where it is dropped."""

    # ---- indexing -----------------------------------------------------------------------------------------------
    def gather(self, x: Native, axis: int, index: Native) -> Native:
        """``x`` read at ``index`` along ``axis`` (torch's ``gather``: every other dim by position)."""

    def scatter_add(self, x: Native, axis: int, index: Native, src: Native) -> Native:
        """A copy of ``x`` with ``src`` added at ``index`` along ``axis`` (duplicates add up)."""

    def index_select(self, x: Native, axis: int, index: Native) -> Native:
        """The slices of ``x`` along ``axis`` that the 1-D ``index`` picks."""

    def index(self, x: Native, index: Index) -> Native:
        """A copy of ``x[index]`` (basic and advanced indexing, NumPy's rules)."""

    def index_add(self, shape: Shape, dtype: DType, index: Index, g: Native) -> Native:
        """Zeros of ``shape`` with ``g`` added at ``index`` (the backward of indexing; duplicates add up)."""

    def nonzero(self, x: Native) -> Native:
        """The int64 coordinates of ``x``'s nonzero elements, one row each."""

    def setitem(self, x: Native, index: Index, value: Operand) -> None:
        """``x[index] = value``, in place."""

    def assign(self, dst: Native, src: Operand) -> None:
        """Write ``src`` (broadcast, cast) into the view ``dst``, in place."""

    def axpy(self, y: Native, x: Native, alpha: Scalar) -> None:
        """``y += alpha * x``, in place."""

    def scale(self, y: Native, s: Scalar) -> None:
        """``y *= s`` for a number ``s``, in place."""

    # ---- fused forward and backward kernels -------------------------------------------------------------------
    def softmax(self, x: Native, axis: int) -> Native:
        """The softmax along ``axis``."""

    def softmax_backward(self, g: Native, y: Native, axis: int) -> Native:
        """The softmax's input gradient from its output ``y``: ``y * (g - sum(g * y))``."""

    def log_softmax(self, x: Native, axis: int) -> Native:
        """The log-softmax along ``axis``."""

    def log_softmax_backward(self, g: Native, y: Native, axis: int) -> Native:
        """The log-softmax's input gradient from its output ``y``: ``g - exp(y) * sum(g)``."""

    def relu_backward(self, g: Native, y: Native) -> Native:
        """``g`` where relu's output ``y`` is not ``<= 0``, else +0.0."""

    def tanh_backward(self, g: Native, y: Native) -> Native:
        """``g * (1 - y * y)`` from tanh's output ``y``."""

    def sigmoid_backward(self, g: Native, y: Native) -> Native:
        """``g * y * (1 - y)`` from the sigmoid's output ``y``."""

    def elementwise_chain(self, chain: Chain, arrays: tuple, params: tuple = ()) -> Native:
        """A formula of ``backends/chains.py`` over ``arrays`` of one shape: one loop, or ``chain.run(self, ...)``."""

    def im2col(self, x: Native, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Native:
        """(N, C, H, W) -> (N, C*KH*KW, OH*OW): one column per output position, one row per kernel tap."""

    def col2im(self, cols: Native, shape: Shape, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Native:
        """The adjoint of ``im2col``: every column entry added back into the pixel of ``shape`` it was read from."""

    def max_pool2d_backward(self, g: Native, x: Native, out: Native, state: State, kernel: Pair, stride: Pair,
                            padding: Pair, dilation: Pair) -> Native:
        """Each output gradient sent to the input position its maximum came from (overlaps summed)."""

    def max_pool2d_indices(self, x: Native, out: Native, kernel: Pair, stride: Pair, padding: Pair,
                           dilation: Pair) -> Native:
        """The flat index ``h * W + w`` of each window's maximum (torch's choice among ties and NaNs), int64."""

    def layer_norm_backward(self, g: Native, xhat: Native, rstd: State, axes: tuple[int, ...]) -> Native:
        """The normalization's input gradient (before any affine weight), from ``layer_norm``'s results."""

    def cross_entropy_backward(self, g: Native, logp: State, a: Native | None, a_sum: Native) -> Native:
        """The logits' gradient ``(p * a_sum - a) * g`` per row, from ``cross_entropy``'s results."""

    def conv2d(self, x: Native, weight: Native, bias: Native | None, stride: Pair, padding: Pair,
               dilation: Pair) -> tuple[Native, State]:
        """(out, cols): the convolution of (N, C, H, W) ``x`` as one matrix product, and the columns it read."""

    def conv2d_backward(self, g: Native, cols: State, weight: Native, x_shape: Shape, stride: Pair, padding: Pair,
                        dilation: Pair, need_x: bool, need_w: bool,
                        need_b: bool) -> tuple[Native | None, Native | None, Native | None]:
        """(gx, gweight, gbias) of ``conv2d``, None for those not asked for."""

    def max_pool2d(self, x: Native, kernel: Pair, stride: Pair, padding: Pair,
                   dilation: Pair) -> tuple[Native, State]:
        """(out, state): the maximum of each window, and what ``max_pool2d_backward`` reads besides x and out."""

    def layer_norm(self, x: Native, axes: tuple[int, ...], eps: float) -> tuple[Native, Native, State]:
        """(xhat, mean, rstd): ``x`` normalized over its trailing ``axes``, the last two kept for the backward."""

    def cross_entropy(self, logits: Native, target: Native, weight: Native | None, ignore_index: int,
                      smoothing: float) -> tuple[Native, State, Native | None, Native]:
        """(loss, logp, coef, coef_sum): per-row softmax cross-entropy of class indices, and its backward's state."""

    def cross_entropy_coefs(self, logp: State, a: Native | None, a_sum: Native) -> tuple[Native, Native]:
        """(coef, coef_sum) as dense arrays, from ``cross_entropy``'s results (for a differentiable backward)."""

    def gelu(self, x: Native, approximate: str, keep: bool) -> tuple[Native, Native | None]:
        """(out, state): GELU (``approximate``: "none" or "tanh"), and with ``keep`` its backward's state, or None."""

    def gelu_backward(self, g: Native, x: Native, state: Native | None, approximate: str) -> Native:
        """``g * gelu'(x)``, from ``gelu``'s state when it kept one."""

    def attention(self, q: Native, k: Native, v: Native, scale: float, mask: Native | None,
                  causal: bool) -> tuple[Native, Native, Native | None]:
        """(out, lse, weights): ``softmax(q @ k^T * scale + mask) @ v``, rows' log-sum-exp, the softmax or None."""

    def attention_backward(self, g: Native, q: Native, k: Native, v: Native, out: Native, lse: Native,
                           weights: Native | None, scale: float, mask: Native | None,
                           causal: bool) -> tuple[Native, Native, Native]:
        """(gq, gk, gv): the gradients of ``attention``'s inputs from ``g``, in the broadcast batch shape."""

    def lstm_layer(self, xp: Native, h0: Native, c0: Native, w_hh: Native, b_hh: Native | None, w_hr: Native | None,
                   reverse: bool, batch_sizes: tuple[int, ...] | None) -> tuple[Native, Native, Native | None]:
        """(states, gates, m): one LSTM layer over every step of the input projection ``xp`` (numpy_recurrent.py)."""

    def lstm_layer_backward(self, g: Native, states: Native, gates: Native, ms: Native | None, h0: Native, c0: Native,
                            w_hh: Native, w_hr: Native | None, reverse: bool, batch_sizes: tuple[int, ...] | None,
                            xp_rows: int) -> tuple[Native, Native, Native, Native, Native, Native | None]:
        """(dxp, dh0, dc0, dw_hh, db_hh, dw_hr): backpropagation through time of ``lstm_layer`` from ``g``."""

    def gru_layer(self, xp: Native, h0: Native, w_hh: Native, b_hh: Native | None, reverse: bool,
                  batch_sizes: tuple[int, ...] | None) -> tuple[Native, Native, Native]:
        """(states, gates, hn): one GRU layer over every step of the input projection ``xp``."""

    def gru_layer_backward(self, g: Native, states: Native, gates: Native, hns: Native, h0: Native, w_hh: Native,
                           reverse: bool, batch_sizes: tuple[int, ...] | None,
                           xp_rows: int) -> tuple[Native, Native, Native, Native]:
        """(dxp, dh0, dw_hh, db_hh): backpropagation through time of ``gru_layer`` from ``g``."""

    def rnn_layer(self, xp: Native, h0: Native, w_hh: Native, b_hh: Native | None, relu: bool, reverse: bool,
                  batch_sizes: tuple[int, ...] | None) -> Native:
        """The states of one Elman RNN layer (tanh, or relu) over every step of the input projection ``xp``."""

    def rnn_layer_backward(self, g: Native, states: Native, h0: Native, w_hh: Native, relu: bool, reverse: bool,
                           batch_sizes: tuple[int, ...] | None, xp_rows: int) -> tuple[Native, Native, Native, Native]:
        """(dxp, dh0, dw_hh, db_hh): backpropagation through time of ``rnn_layer`` from ``g``."""

    # ---- linalg -------------------------------------------------------------------------------------------------
    def cross(self, a: Native, b: Native, axis: int) -> Native:
        """The cross product of 3-vectors along ``axis``."""

    def tril_indices(self, row: int, col: int, offset: int, dtype: DType) -> Native:
        """(2, N): the row and column indices of the lower triangle of a ``row x col`` matrix."""

    def triu_indices(self, row: int, col: int, offset: int, dtype: DType) -> Native:
        """(2, N): the row and column indices of the upper triangle of a ``row x col`` matrix."""

    def svd(self, x: Native, full_matrices: bool) -> tuple[Native, Native, Native]:
        """(U, S, Vh) of the matrices in ``x``'s last two dims, singular values descending."""

    def svdvals(self, x: Native) -> Native:
        """The singular values alone, descending."""

    # ---- sorting, order statistics, scans, sampling, counting -------------------------------------------------
    def sort(self, x: Native, axis: int, descending: bool, stable: bool) -> tuple[Native, Native]:
        """(values, indices) sorted along ``axis``, NaN above every number."""

    def topk(self, x: Native, k: int, axis: int, largest: bool, sorted: bool) -> tuple[Native, Native]:
        """(values, indices) of the ``k`` largest (smallest) along ``axis``, best first."""

    def kthvalue(self, x: Native, k: int, axis: int, keepdims: bool) -> tuple[Native, Native]:
        """(values, indices) of the ``k``-th smallest (1-based) along ``axis``."""

    def median(self, x: Native, axis: int | None, keepdims: bool, ignore_nan: bool) -> tuple[Native, Native]:
        """(values, indices) of the lower median along ``axis`` (None: of all elements); ``ignore_nan``: nanmedian."""

    def mode(self, x: Native, axis: int, keepdims: bool) -> tuple[Native, Native]:
        """(values, indices): the most frequent value along ``axis`` and the index of its last occurrence."""

    def cummax(self, x: Native, axis: int, is_max: bool) -> tuple[Native, Native]:
        """(values, indices): the running maximum (minimum) along ``axis`` and where it was last reached."""

    def unique(self, x: Native, axis: int | None, return_inverse: bool,
               return_counts: bool) -> tuple[Native, Native, Native]:
        """(values, inverse, counts): the sorted distinct elements (slices along ``axis``) and where they occur."""

    def unique_consecutive(self, x: Native, axis: int | None) -> tuple[Native, Native, Native]:
        """(values, inverse, counts) with only runs of equal consecutive elements (slices) collapsed."""

    def searchsorted(self, seq: Native, values: Native, right: bool, sorter: Native | None) -> Native:
        """The int64 index at which each value would be inserted into the sorted last dim of ``seq``."""

    def prod(self, x: Native, axis: Axis, keepdims: bool, dtype: DType | None) -> Native:
        """The product over ``axis``, in ``dtype`` when given."""

    def cumprod(self, x: Native, axis: int, dtype: DType | None) -> Native:
        """The running product along ``axis``, in ``dtype`` when given."""

    def logcumsumexp(self, x: Native, axis: int) -> Native:
        """``log(cumsum(exp(x)))`` along ``axis``, without overflow."""

    def multinomial(self, gen: RandomGenerator, probs: Native, num_samples: int, replacement: bool) -> Native:
        """``num_samples`` int64 category indices drawn per row of the weights ``probs``."""

    def exponential(self, gen: RandomGenerator, shape: Shape, lambd: float, dtype: DType) -> Native:
        """Exponential draws of rate ``lambd``."""

    def bincount(self, x: Native, weights: Native | None, minlength: int) -> Native:
        """How often each value of the non-negative integer ``x`` occurs (or the sum of ``weights`` per value)."""

    def histc(self, x: Native, bins: int, lo: float, hi: float) -> Native:
        """Counts of ``x``'s elements in ``bins`` equal bins over ``[lo, hi]``, in ``x``'s dtype."""

    def histogram(self, x: Native, edges: Native, weight: Native | None) -> Native:
        """Counts (or sums of ``weight``) of ``x``'s elements in the bins between consecutive ``edges``."""

    # ---- math: rounding, inverse trig and hyperbolic, logs and exps, finiteness, bits --------------------------
    def floor(self, x: Native, /) -> Native:
        """Rounded down."""

    def ceil(self, x: Native, /) -> Native:
        """Rounded up."""

    def trunc(self, x: Native, /) -> Native:
        """Rounded toward zero."""

    def round(self, x: Native, decimals: int) -> Native:
        """Rounded half to even at ``decimals`` decimal places."""

    def acos(self, x: Native, /) -> Native:
        """The inverse cosine."""

    def asin(self, x: Native, /) -> Native:
        """The inverse sine."""

    def atan(self, x: Native, /) -> Native:
        """The inverse tangent."""

    def tan(self, x: Native, /) -> Native:
        """The tangent."""

    def sinh(self, x: Native, /) -> Native:
        """The hyperbolic sine."""

    def cosh(self, x: Native, /) -> Native:
        """The hyperbolic cosine."""

    def asinh(self, x: Native, /) -> Native:
        """The inverse hyperbolic sine."""

    def acosh(self, x: Native, /) -> Native:
        """The inverse hyperbolic cosine."""

    def atanh(self, x: Native, /) -> Native:
        """The inverse hyperbolic tangent."""

    def log2(self, x: Native, /) -> Native:
        """The base-2 logarithm."""

    def log10(self, x: Native, /) -> Native:
        """The base-10 logarithm."""

    def log1p(self, x: Native, /) -> Native:
        """``log(1 + x)``, accurate for small ``x``."""

    def expm1(self, x: Native, /) -> Native:
        """``e ** x - 1``, accurate for small ``x``."""

    def exp2(self, x: Native, /) -> Native:
        """``2 ** x``."""

    def isinf(self, x: Native, /) -> Native:
        """Where ``x`` is +-inf (bool)."""

    def isfinite(self, x: Native, /) -> Native:
        """Where ``x`` is neither inf nor NaN (bool)."""

    def nan_to_num(self, x: Native, nan: float, posinf: float | None, neginf: float | None) -> Native:
        """NaN, +inf and -inf replaced (None: the dtype's largest or smallest finite value)."""

    def bitwise_not(self, x: Native, /) -> Native:
        """``~x`` for integers and bools."""

    def atan2(self, x: Operand, y: Operand, /) -> Native:
        """``arctan(x / y)`` in the quadrant of the point (``y``, ``x``)."""

    def hypot(self, x: Operand, y: Operand, /) -> Native:
        """``sqrt(x ** 2 + y ** 2)``, without overflow."""

    def copysign(self, x: Operand, y: Operand, /) -> Native:
        """``|x|`` with the sign of ``y``."""

    def logaddexp(self, x: Operand, y: Operand, /) -> Native:
        """``log(e ** x + e ** y)``."""

    def logaddexp2(self, x: Operand, y: Operand, /) -> Native:
        """``log2(2 ** x + 2 ** y)``."""

    def fmod(self, x: Operand, y: Operand, /) -> Native:
        """The remainder of ``x / y`` with the sign of the dividend (C's ``fmod``)."""

    def remainder(self, x: Operand, y: Operand, /) -> Native:
        """The remainder of ``x / y`` with the sign of the divisor (Python's ``%``)."""

    def floor_divide(self, x: Operand, y: Operand, /) -> Native:
        """``x / y`` rounded down."""

    def trunc_divide(self, x: Operand, y: Operand, /) -> Native:
        """``x / y`` rounded toward zero."""

    def xlogy(self, x: Operand, y: Operand, /) -> Native:
        """``x * log(y)``, 0 where ``x == 0`` unless ``y`` is NaN."""

    def bitwise_left_shift(self, x: Operand, y: Operand, /) -> Native:
        """``x << y`` for integers (0 for a shift by the width or more)."""

    def bitwise_right_shift(self, x: Operand, y: Operand, /) -> Native:
        """``x >> y`` for integers, arithmetic (the sign fill for a shift by the width or more)."""

    # ---- shaping: roll, repeat_interleave, scatter and scatter_reduce, logspace --------------------------------
    def roll(self, x: Native, shifts: int | tuple[int, ...], axes: int | tuple[int, ...] | None) -> Native:
        """``x`` shifted circularly by ``shifts[i]`` along ``axes[i]`` (None: over the flattened array)."""

    def repeat_interleave(self, x: Native, repeats: int | Native, axis: int | None) -> Native:
        """Each element (slice along ``axis``) repeated ``repeats`` times, in place order."""

    def scatter(self, x: Native, axis: int, index: Native, src: Operand) -> Native:
        """A copy of ``x`` with ``src`` written at ``index`` along ``axis`` (of duplicates, the last write wins)."""

    def scatter_reduce(self, x: Native, axis: int, index: Native, src: Native, reduce: str,
                       include_self: bool) -> Native:
        """A copy of ``x`` with ``src`` reduced into it at ``index`` (sum, prod, mean, amax or amin)."""

    def logspace(self, start: float, end: float, steps: int, base: float, dtype: DType) -> Native:
        """``base ** linspace(start, end, steps)``."""

    # ---- optimizer updates, in place ----------------------------------------------------------------------------
    def adam_step(self, param: Native, grad: Native, exp_avg: Native, exp_avg_sq: Native, step: int, lr: float,
                  beta1: float, beta2: float, eps: float, weight_decay: float, decoupled: bool,
                  max_exp_avg_sq: Native | None = None) -> None:
        """One Adam (AdamW with ``decoupled``; AMSGrad with ``max_exp_avg_sq``) update, written into its state."""

"""Attention as functions: ``scaled_dot_product_attention`` (one fused :class:`ScaledDotProductAttention` node
where no dropout is asked for and the mask needs no gradient, else composed from Tensor ops) and PyTorch's
``multi_head_attention_forward``.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> q = tl.ones(1, 2, 4)
>>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
tl.Size([1, 2, 4])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends.numpy_attention import causal_mask
from ..layout import broadcast_shapes
from ._nn_args import _check_tensor
from .dropout import dropout
from .elementwise import where
from .linear import linear
from .movement import cat, pad  # (pad: the constant pad that F.pad comes down to for the masks here)
from .reduce import SoftmaxBackward

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class ScaledDotProductAttention(Function):
    """``softmax(q @ k^T * scale + mask) @ v`` as one node, through two fused primitives (``attention`` and
    ``attention_backward``): no dropout; ``mask`` None or an additive mask tensor that needs no gradient (a bool
    ``attn_mask`` made 0 / -inf), ``causal`` PyTorch's ``is_causal``.

    It saves what a flash-attention kernel keeps: q, k, v, each query row's log-sum-exp of the scores (``lse``) and
    the output, so an in-place write to any of them before backward is an error, as in PyTorch. The CUDA kernels
    recompute the weights from them and the mask, which is then saved too (PyTorch's fused CUDA kernels save it;
    its CPU path does not). The CPU keeps the weights privately (``w``: recomputing them costs more than it saves).
    When a graph of the backward is recorded (``create_graph``), the weights are computed again with Tensor ops from
    ``q`` and ``k`` so that their dependence on them is recorded."""

    __slots__ = ("scale", "causal", "w", "mask")
    save_output = True

    def forward(self, q, k, v, scale, mask, causal):
        self.scale, self.causal = scale, causal
        out, lse, self.w = q._dev.backend.attention(q._x, k._x, v._x, scale, None if mask is None else mask._x,
                                                    causal)
        if _grad_mode.enabled:
            # the mask is saved (version-checked) where the backward reads it; else kept for create_graph only
            self.save_for_backward(q, k, v, q._wrap(lse, q._dev), mask if self.w is None else None)
            self.mask = mask
        return out

    def _weights(self, q, k, mask):
        s = (q * self.scale) @ k.mT
        if self.causal:
            s = s + q._wrap(_causal_mask(s.shape[-2], s.shape[-1], q.dtype.np, q._dev), q._dev)
        if mask is not None:
            s = s + mask
        return _masked_softmax_safe(s) if mask is not None else s.softmax(-1)

    def backward(self, g):
        q, k, v, lse, mask, out = self.saved_tensors
        if not _grad_mode.enabled:
            gq, gk, gv = q._dev.backend.attention_backward(g._x, q._x, k._x, v._x, out._x, lse._x, self.w, self.scale,
                                                          None if mask is None else mask._x, self.causal)
            return q._wrap(gq, q._dev), q._wrap(gk, q._dev), q._wrap(gv, q._dev), None, None, None
        w = self._weights(q, k, self.mask)  # (create_graph: the formula as Tensor ops, recorded)
        gv = w.mT @ g
        gs = SoftmaxBackward.apply((g * self.scale) @ v.mT, w, w.ndim - 1)
        return gs @ k, gs.mT @ q, gv, None, None, None

    def release(self) -> None:
        super().release()
        self.w = self.mask = None


def _masked_softmax_safe(scores: Tensor) -> Tensor:
    """Softmax over the last dim where a row that is -inf everywhere gives zeros, not NaN (torch's math path of
    scaled_dot_product_attention)."""
    dead = (scores == -math.inf).all(-1, keepdim=True)
    if not bool(dead.any().item()):
        return scores.softmax(-1)
    return where(dead, 0.0, where(dead, 0.0, scores).softmax(-1))


_CAUSAL_MASKS: dict = {}


def _causal_mask(L: int, S: int, np_dtype, dev):
    """The additive causal mask of ``is_causal`` (0 where a query may attend, -inf after it: top-left aligned, as
    PyTorch) on ``dev``, uploaded once per shape, dtype and device, never written."""
    m = causal_mask(L, S, np_dtype)
    if dev.is_host:
        return m
    key = (L, S, np.dtype(np_dtype), dev)
    d = _CAUSAL_MASKS.get(key)
    if d is None:
        if len(_CAUSAL_MASKS) >= 64:
            _CAUSAL_MASKS.clear()
        d = _CAUSAL_MASKS[key] = dev.backend.from_numpy(m)
    return d


def _fusable(query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Whether the fused node takes these: one device; float32 or float64 (float16 too off the host, where the
    kernels compute in float32: NumPy's float16 products do not)."""
    dt = query.dtype
    return (query._dev is key._dev is value._dev
            and (dt in (dtypes.float32, dtypes.float64) or (dt is dtypes.float16 and not query._dev.is_host)))


def _additive_mask(attn_mask: Tensor | None, query: Tensor, key: Tensor, value: Tensor):
    """``attn_mask`` as the fused node takes it: None, or an additive mask of the query's dtype (a bool mask as 0
    where True, -inf where False; a float one itself, which the node then version-checks); False where the node
    does not take it (another device, a mask that needs a gradient, or one that would broadcast the result to a
    larger shape: the composed path says what it does)."""
    if attn_mask is None:
        return None
    if attn_mask._dev is not query._dev or (attn_mask.requires_grad and _grad_mode.enabled):
        return False
    scores = broadcast_shapes(query._x.shape[:-2], key._x.shape[:-2], value._x.shape[:-2]) + (query.shape[-2],
                                                                                              key.shape[-2])
    try:
        if broadcast_shapes(attn_mask._x.shape, scores) != scores:
            return False
    except ValueError:
        return False
    if attn_mask.dtype is dtypes.bool_:
        return query.new_zeros(attn_mask.shape).masked_fill(attn_mask.logical_not(), -math.inf)
    return attn_mask if attn_mask.dtype is query.dtype else attn_mask.to(query.dtype)


# torch's C++ names of the dtypes, as its SDPA error message prints them
_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char"}


def _check_mask_dtype(attn_mask: Tensor, query: Tensor) -> None:
    """A mask is bool, float32, or the query's own dtype (PyTorch's rule)."""
    dt = attn_mask.dtype
    if dt is not dtypes.bool_ and dt is not dtypes.float32 and dt is not query.dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_CPP_NAMES.get(dt.name, dt.name)} and  query.dtype: "
                           f"{_CPP_NAMES.get(query.dtype.name, query.dtype.name)} instead.")


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries and (..., S, E) keys.

    A bool ``attn_mask`` says which positions take part (True) and a float one is added to the scores;
    ``is_causal`` masks out the keys after each query (top-left aligned, as PyTorch). A query that may attend
    to nothing gets zeros. ``dropout_p`` drops attention weights (always, as PyTorch's function does: pass 0.0
    in eval)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, "scaled_dot_product_attention", name)
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must be at least 2-D (..., L, E), got shape "
                               f"{list(t.shape)}")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype.name} key.dtype: {key.dtype.name} and value.dtype: {value.dtype.name} "
                           f"instead.")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query of shape {list(query.shape)} and key of shape "
                           f"{list(key.shape)} must have the same embedding size (last dim)")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key of shape {list(key.shape)} and value of shape "
                           f"{list(value.shape)} must have the same sequence length (dim -2)")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if attn_mask is not None:
        _check_tensor(attn_mask, "scaled_dot_product_attention", "attn_mask")
        _check_mask_dtype(attn_mask, query)
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and query.ndim >= 3 and min(key.ndim, value.ndim) >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(f"Number of heads in key and value must divide the number of heads in query: query "
                               f"has {hq} heads, key {hk} and value {hv} (shapes {list(query.shape)}, "
                               f"{list(key.shape)}, {list(value.shape)})")
        if hk != hq:  # each key/value head serves hq // hk query heads, side by side
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)
    try:  # the batch dims (all but the last two) of the three must broadcast together
        broadcast_shapes(query._x.shape[:-2], key._x.shape[:-2], value._x.shape[:-2])
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: the batch dims of query {list(query.shape)}, key "
                           f"{list(key.shape)} and value {list(value.shape)} (all but the last two) do not "
                           f"broadcast") from None
    L, S = query.shape[-2], key.shape[-2]
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if dropout_p == 0.0 and _fusable(query, key, value):  # one fused node (the composed path below: the same math)
        mask = _additive_mask(attn_mask, query, key, value)
        if mask is not False:
            return ScaledDotProductAttention.apply(query, key, value, s, mask, is_causal)
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        keep = np.tril(np.ones((L, S), dtype=bool))
        scores = scores.masked_fill(query._wrap(keep if query._dev.backend.is_host else
                                                query._dev.backend.from_numpy(keep), query._dev).logical_not(),
                                    -math.inf)
        w = scores.softmax(-1)  # (row 0 keeps key 0: no row is empty)
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
        w = _masked_softmax_safe(scores)
    else:
        w = scores.softmax(-1)
    if dropout_p > 0.0:
        w = dropout(w, dropout_p, True)
    return w @ value


def _canonical_mask(mask, name: str, target_dtype):
    """A bool mask (True = masked out) as a float mask of 0 and -inf; a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype is dtypes.bool_:
        return mask.new_zeros(mask.shape, dtype=target_dtype).masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            if attn_mask.ndim == 3:
                want = (num_heads, query.shape[0], key.shape[0])
                if attn_mask.shape != want:
                    raise AssertionError(f"Expected `attn_mask` shape to be {want} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         f"tensor")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias, training: bool = True,
                                 key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """PyTorch's multi-head attention on (L, N, E) query and (S, N, E) key/value (or unbatched (L, E)).

    Returns ``(output, weights)``: weights (N, L, S) averaged over heads, or (N, heads, L, S), or None when
    ``need_weights`` is False (then the attention runs through :func:`scaled_dot_product_attention`)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint says the mask is causal: scaled_dot_product_attention builds it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        is_causal = False
    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        w = in_proj_weight.chunk(3)
        q, k, v = linear(query, w[0], b[0]), linear(key, w[1], b[1]), linear(value, w[2], b[2])
    else:
        b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b[0]), linear(key, k_proj_weight, b[1]), \
            linear(value, v_proj_weight, b[2])
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k = cat([k, k.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        v = cat([v, v.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out, None) if is_batched else (out.squeeze(1), None)

"""Scaled dot-product attention on the CUDA backend: the flash-attention kernels of ``kernel_src/flash_attention.cu``
(the L x S scores never reach device memory; the backward recomputes them from each row's log-sum-exp), and a
path composed from the matmul, elementwise and reduction kernels for what those kernels do not take (head dims
over 128, a mask of another dtype than the query's, batches of 2^31 problems or more); an empty problem and the
dtypes without kernels (float64) run on the host. Mixed into ``CudaBackend``.

The kernels read each operand through two batch strides (``AttnGeom``: batch = outer x the last batch dim), so the
(B, H, T, hs) views a transformer makes of its (B, T, H * hs) projections are read in place; an operand whose
batch dims do not fold into two strides is copied first.
"""

from __future__ import annotations

import math

import numpy as np

from ...dtypes import float32
from ...layout import broadcast_shapes
from ..numpy_attention import causal_mask
from .array import CudaArray

_FA_SFX = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}
FA_HEAD_DIMS = (64, 128)  # the kernels' head-dim templates (E, Ev <= D: zero-padded in shared memory)
FA_ROWS = {64: (32, 16), 128: (16, 8)}  # query rows per block: forward, backward (FaRows in the .cu)
FA_KEYS = 32  # keys per tile, one per lane (FA_KT)
FA_THREADS = 128


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _fold(dims) -> int | None:
    """The one stride that walks ``dims`` ((size, stride) pairs, row-major) as a flat index, or None."""
    dims = [(n, s) for n, s in dims if n != 1]
    if all(s == 0 for _, s in dims):
        return 0
    if any(s == 0 for _, s in dims):
        return None
    for (_n0, s0), (n1, s1) in zip(dims, dims[1:]):
        if s0 != n1 * s1:
            return None
    return dims[-1][1]


def _strides_over(x: CudaArray, shape: tuple) -> tuple:
    """``x``'s strides when read over ``shape`` (0 on broadcast dims)."""
    lead = len(shape) - x.ndim
    return (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in zip(x.shape, shape[lead:], x.strides))


class _Plan:
    """One attention problem as the kernels take it: the operands (copied where they had to be), the batch shape,
    the sizes and the ``AttnGeom`` fields but the causal flag."""

    __slots__ = ("q", "k", "v", "mask", "bshape", "nbatch", "L", "S", "E", "Ev", "D", "sfx", "geom")


class CudaAttention:
    """``attention`` and ``attention_backward`` of the primitive protocol."""

    def _batch_strides(self, x: CudaArray, bshape: tuple, tail: tuple, last_unit: bool):
        """(x, outer stride, inner stride, row stride, column stride) of ``x`` read over ``bshape + tail``;
        ``x`` is first made contiguous (broadcast) if its batch dims do not fold into two strides, or (with
        ``last_unit``) its last dim is not contiguous."""
        shape = bshape + tail
        st = _strides_over(x, shape)
        nb = len(bshape)
        outer = _fold(zip(bshape[:-1], st[:nb - 1])) if nb > 1 else 0
        inner = (st[nb - 1] if bshape[-1] != 1 else 0) if nb else 0
        if outer is None or (last_unit and tail[-1] > 1 and st[-1] != 1):
            x = self.contiguous(x.with_layout(shape, st))
            st = x.strides
            outer = st[nb - 2] if nb > 1 else 0
            inner = st[nb - 1] if nb else 0
        return x, outer, inner, st[-2], st[-1]

    def _dense(self, x: CudaArray) -> CudaArray:
        """``x`` itself when it is contiguous, else a contiguous copy."""
        return x if x.is_contiguous else self.contiguous(x)

    def _flash_plan(self, q, k, v, mask) -> _Plan | None:
        """The kernels' view of the problem, or None where they do not apply (a dtype, a head dim, an empty
        problem, operands that do not broadcast)."""
        dt = q.dtype
        if dt not in _FA_SFX or k.dtype != dt or v.dtype != dt or (mask is not None and mask.dtype != dt):
            return None
        if min(q.ndim, k.ndim, v.ndim) < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            return None
        L, S, E, Ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
        D = next((d for d in FA_HEAD_DIMS if max(E, Ev) <= d), None)
        try:
            bshape = broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
            if mask is not None and broadcast_shapes(mask.shape, bshape + (L, S)) != bshape + (L, S):
                return None
        except ValueError:
            return None
        nbatch = _prod(bshape)
        if D is None or 0 in (L, S, E, nbatch) or nbatch >= 2**31:  # (the kernels split the batch in 32 bits)
            return None
        p = _Plan()
        p.q, q0, q1, ql, _ = self._batch_strides(q, bshape, (L, E), True)
        p.k, k0, k1, ks, _ = self._batch_strides(k, bshape, (S, E), True)
        p.v, v0, v1, vs, _ = self._batch_strides(v, bshape, (S, Ev), True)
        m0 = m1 = ml = ms = 0
        p.mask = None
        if mask is not None:
            p.mask, m0, m1, ml, ms = self._batch_strides(mask, bshape, (L, S), False)
        p.bshape, p.nbatch, p.L, p.S, p.E, p.Ev, p.D, p.sfx = bshape, nbatch, L, S, E, Ev, D, _FA_SFX[dt]
        p.geom = (nbatch, bshape[-1] if bshape else 1, L, S, E, Ev, q0, q1, ql, k0, k1, ks, v0, v1, vs,
                  m0, m1, ml, ms)
        return p

    def _fa_launch(self, name: str, grid_x: int, p: _Plan, args: tuple, nbytes: int) -> None:
        self.rt.launch(f"flash_attn_{name}_{p.sfx}_d{p.D}", (grid_x, min(p.nbatch, 65535), 1), (FA_THREADS, 1, 1),
                       args, shapes=(p.q.shape, p.k.shape, p.v.shape), nbytes=nbytes)

    def attention(self, q, k, v, scale, mask, causal):
        """(out, lse, None) from the flash-attention kernel; the composed path's (out, lse, weights) otherwise."""
        p = self._flash_plan(q, k, v, mask)
        if p is None:
            return self._attention_composed(q, k, v, scale, mask, causal)
        out = self._empty(p.bshape + (p.L, p.Ev), q.dtype)
        lse = self._empty(p.bshape + (p.L,), np.float32)
        mptr = p.mask.ptr if p.mask is not None else 0
        self._fa_launch("fwd", -(-p.L // FA_ROWS[p.D][0]), p,
                        (out.ptr, lse.ptr, p.q.ptr, p.k.ptr, p.v.ptr, mptr, *p.geom, int(causal), float(scale)),
                        q.nbytes + k.nbytes + v.nbytes + out.nbytes)
        return out, lse, None

    def attention_backward(self, g, q, k, v, out, lse, weights, scale, mask, causal):
        """(gq, gk, gv): the flash-attention backward kernels from ``lse`` (``Dv = rowsum(g * out)``, then dQ and,
        in blocks that each own their keys, dK and dV); with ``weights`` (the composed forward's), composed."""
        p = self._flash_plan(q, k, v, mask) if weights is None else None
        if p is None:
            return self._attention_backward_composed(g, q, k, v, out, lse, weights, scale, mask, causal)
        shape_o = p.bshape + (p.L, p.Ev)
        g, out, lse = self._dense(g.with_layout(shape_o, _strides_over(g, shape_o))), self._dense(out), self._dense(lse)
        rows = p.nbatch * p.L
        dvec = self._empty((rows,), np.float32)
        self.rt.launch(f"flash_attn_bwd_pre_{p.sfx}", (max(1, min(-(-rows // 8), self.cap)), 1, 1), (256, 1, 1),
                       (dvec.ptr, g.ptr, out.ptr, rows, p.Ev), shapes=(g.shape,), nbytes=g.nbytes + out.nbytes)
        gq = self._empty(p.bshape + (p.L, p.E), q.dtype)
        gk = self._empty(p.bshape + (p.S, p.E), q.dtype)
        gv = self._empty(p.bshape + (p.S, p.Ev), q.dtype)
        mptr = p.mask.ptr if p.mask is not None else 0
        tail = (*p.geom, int(causal), float(scale))
        reads = q.nbytes + k.nbytes + v.nbytes + g.nbytes
        self._fa_launch("bwd_dq", -(-p.L // FA_ROWS[p.D][1]), p,
                        (gq.ptr, p.q.ptr, p.k.ptr, p.v.ptr, mptr, g.ptr, lse.ptr, dvec.ptr, *tail),
                        reads + gq.nbytes)
        self._fa_launch("bwd_dkv", -(-p.S // FA_KEYS), p,
                        (gk.ptr, gv.ptr, p.q.ptr, p.k.ptr, p.v.ptr, mptr, g.ptr, lse.ptr, dvec.ptr, *tail),
                        reads + gk.nbytes + gv.nbytes)
        return gq, gk, gv

    # ---- what the kernels do not take --------------------------------------------------------------------------
    def _causal(self, L: int, S: int, dtype) -> CudaArray:
        """The additive causal mask on the device, uploaded once per shape and dtype (never written)."""
        cache = self.__dict__.setdefault("_causal_masks", {})
        key = (L, S, np.dtype(dtype))
        m = cache.get(key)
        if m is None:
            if len(cache) >= 16:
                cache.clear()
            m = cache[key] = self.from_numpy(causal_mask(L, S, dtype))
        return m

    def _scores(self, q, k, scale, mask, causal):
        s = self.matmul(self.mul(q, scale), self.swap_last(k))
        if causal:
            s = self.add(s, self._causal(*s.shape[-2:], s.dtype))
        if mask is not None:
            s = self.add(s, mask)
        return s

    def _attention_composed(self, q, k, v, scale, mask, causal):
        """The scores in device memory, then softmax and its log-sum-exp from the reduction and elementwise kernels
        (a row whose keys are all masked: zeros and -inf, as the kernels give); the host for other dtypes."""
        if q.dtype not in _FA_SFX or q.size == 0 or k.size == 0 or v.size == 0:
            return self._fallback("attention", (q, k, v, scale, mask, causal))
        s = self._scores(q, k, scale, mask, causal)
        top = self.max(s, s.ndim - 1, True)
        top = self.where(self.eq(top, -math.inf), 0.0, top)  # an all-masked row is shifted by 0: exp gives zeros
        e = self.exp(self.sub(s, top))
        total = self.sum(e, s.ndim - 1, True)
        w = self.where(self.gt(total, 0.0), self.div(e, total), 0.0)
        lse = self.reshape(self.cast(self.add(top, self.log(total)), float32), total.shape[:-1])
        return self.matmul(w, v), lse, w

    def _attention_backward_composed(self, g, q, k, v, out, lse, weights, scale, mask, causal):
        if q.dtype not in _FA_SFX or q.size == 0 or k.size == 0 or v.size == 0:
            return self._fallback("attention_backward", (g, q, k, v, out, lse, weights, scale, mask, causal))
        w = weights
        if w is None:  # (a forward by the kernels, a backward that cannot use them: recompute the weights)
            s = self._scores(q, k, scale, mask, causal)
            lse_s = self.reshape(self.contiguous(lse, q.dtype), lse.shape + (1,))
            dead = self.eq(lse_s, -math.inf)
            w = self.where(dead, 0.0, self.exp(self.sub(s, self.where(dead, 0.0, lse_s))))
        gv = self.matmul(self.swap_last(w), g)
        gs = self.mul(self.softmax_backward(self.matmul(g, self.swap_last(v)), w, w.ndim - 1), scale)
        return self.matmul(gs, k), self.matmul(self.swap_last(gs), q), gv

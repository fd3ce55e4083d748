"""Recurrent layers on the CPU: one LSTM, GRU or Elman-RNN layer (one direction) over a whole sequence, forward and
backward through time, as NumPy loops over the time steps (the primitives behind ``ops/recurrent.py``'s nodes).

Per step the state goes through one small matrix product (``h @ W_hh^T``, on one BLAS thread: see
``blas_threads``) and a few in-place NumPy passes over the gates; nothing is allocated per step but the products'
temporaries. The shapes, shared by the three kinds:

* ``xp``: the input projection ``x @ W_ih^T + b_ih`` of every step, (L, N, G) (G = 4H for LSTM, 3H for GRU, H for
  RNN); or packed, (sum of lengths, G), with ``batch_sizes`` (the sequences running at step t are the first
  ``batch_sizes[t]`` of the batch, as ``PackedSequence`` sorts them);
* ``h0`` (N, P) and, for LSTM, ``c0`` (N, H): the initial state (P = the projection size, or H);
* ``states``: (L, N, P + H) for LSTM, ``[h_t | c_t]`` after step t; (L, N, H) for GRU and RNN. A sequence that is
  not running at step t keeps its state there unchanged, so after the last step of the run (t = L - 1 forward,
  0 in reverse) every sequence's final state is in ``states``;
* ``reverse``: run t = L - 1 down to 0 (the backward direction of a bidirectional layer).

Gate order and formulas are PyTorch's: LSTM (input, forget, cell, output), GRU (reset, update, new) with
``n = tanh(x_n + r * (h W_hn^T + b_hn))`` and ``h' = (1 - z) * n + z * h``.
"""

from __future__ import annotations

import numpy as np

from . import cpu_kernels
from .blas_threads import matmul_into

_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _schedule(n_steps: int, batch: int, reverse: bool, batch_sizes) -> list[tuple[int, int, int]]:
    """(t, rows, start) for every step in the order the layer runs them: the sequences running at step t are the
    first ``rows`` of the batch, and in a packed input step t's rows begin at ``start``."""
    if batch_sizes is None:
        sizes, starts = [batch] * n_steps, [t * batch for t in range(n_steps)]
    else:
        sizes, starts, at = list(batch_sizes), [], 0
        for b in sizes:
            starts.append(at)
            at += b
    order = range(n_steps - 1, -1, -1) if reverse else range(n_steps)
    return [(t, sizes[t], starts[t]) for t in order]


def _steps_of(xp, batch_sizes) -> int:
    return len(batch_sizes) if batch_sizes is not None else xp.shape[0]


def _step_input(xp, t: int, rows: int, start: int, packed: bool):
    return xp[start:start + rows] if packed else xp[t]


def _as_input_layout(d_all, schedule, packed: bool, total: int):
    """A gradient per step, (L, N, G), in the layout of ``xp``: itself, or its running rows packed in time order."""
    if not packed:
        return d_all
    out = np.empty((total, d_all.shape[-1]), d_all.dtype)
    for t, rows, start in schedule:
        out[start:start + rows] = d_all[t, :rows]
    return out


def _previous(states, h0, reverse: bool, width: int | None = None):
    """The state each step starts from, (L, N, ...): ``h0`` for the first step run, else the step run before it."""
    s = states if width is None else states[..., :width]
    first = h0[None]
    return np.concatenate([s[1:], first]) if reverse else np.concatenate([first, s[:-1]])


def _compiled(name: str, dtype):
    """The compiled cell kernel ``name`` for ``dtype`` (``cpu_kernels``), or None: then the NumPy code runs."""
    sfx = _SUFFIX.get(dtype)
    return cpu_kernels.kernel(f"{name}_{sfx}") if sfx else None


def _sigmoid_(x) -> None:
    """sigmoid(x), in place: ``0.5 * tanh(x / 2) + 0.5`` (no overflow for any x, and one transcendental pass)."""
    np.multiply(x, 0.5, out=x)
    np.tanh(x, out=x)
    np.multiply(x, 0.5, out=x)
    np.add(x, 0.5, out=x)


class NumpyRecurrentPrimitives:
    """Mixed into the NumPy backend: ``lstm_layer``, ``gru_layer``, ``rnn_layer`` and their backward passes."""

    # ---- LSTM ------------------------------------------------------------------------------------------
    @staticmethod
    def lstm_layer(xp, h0, c0, w_hh, b_hh, w_hr, reverse, batch_sizes):
        """Returns ``(states, gates, m)``: the states (L, N, P + H); the gates after their nonlinearities, (L, N, 4H),
        zero where a sequence was not running; ``m = o * tanh(c)`` before the projection (None without one)."""
        n, hidden, proj = h0.shape[0], c0.shape[-1], h0.shape[-1]
        n_steps, packed = _steps_of(xp, batch_sizes), batch_sizes is not None
        dt = xp.dtype
        states = np.empty((n_steps, n, proj + hidden), dt)
        gates = np.zeros((n_steps, n, 4 * hidden), dt)
        ms = np.zeros((n_steps, n, hidden), dt) if w_hr is not None else None  # (zero where not running)
        w_hr_t = np.ascontiguousarray(w_hr.T) if w_hr is not None else None
        w_t = np.ascontiguousarray(w_hh.T)  # (a product with a transposed view costs twice as much: 60 vs 33 us)
        schedule = _schedule(n_steps, n, reverse, batch_sizes)
        cell = _compiled("lstm_cell_fwd", dt)
        if cell is not None:
            _lstm_steps_compiled(cell, np.ascontiguousarray(xp), h0, np.ascontiguousarray(c0), w_t, b_hh, w_hr_t,
                                 schedule, packed, states, gates, ms)
            cpu_kernels.launched("lstm_layer_fwd")
            return states, gates, ms
        h, c = h0, c0
        for t, rows, start in schedule:
            gt = gates[t, :rows]
            matmul_into(h[:rows], w_t, gt)
            gt += _step_input(xp, t, rows, start, packed)
            if b_hh is not None:
                gt += b_hh
            i, f, g, o = gt[:, :hidden], gt[:, hidden:2 * hidden], gt[:, 2 * hidden:3 * hidden], gt[:, 3 * hidden:]
            _sigmoid_(gt[:, :2 * hidden])
            np.tanh(g, out=g)
            _sigmoid_(o)
            st = states[t]
            c_new = st[:rows, proj:]
            np.multiply(f, c[:rows], out=c_new)
            c_new += i * g
            m = np.tanh(c_new)
            m *= o
            if w_hr is not None:
                ms[t, :rows] = m
                matmul_into(m, w_hr_t, st[:rows, :proj])
            else:
                st[:rows, :proj] = m
            if rows < n:  # the sequences that are not running keep their state
                st[rows:, :proj], st[rows:, proj:] = h[rows:], c[rows:]
            h, c = st[:, :proj], st[:, proj:]
        return states, gates, ms

    @staticmethod
    def lstm_layer_backward(g, states, gates, ms, h0, c0, w_hh, w_hr, reverse, batch_sizes, xp_rows):
        """The gradients ``(dxp, dh0, dc0, dw_hh, db_hh, dw_hr)`` from ``g``, the gradient of ``states``, and what
        ``lstm_layer`` returned. ``xp_rows``: the number of rows of a packed ``xp`` (ignored when not packed).
        ``dw_hr`` is None without a projection; ``db_hh`` is the sum of ``dxp`` over the steps and the batch."""
        n_steps, n, width = states.shape
        hidden = c0.shape[-1]
        proj = width - hidden
        packed = batch_sizes is not None
        schedule = _schedule(n_steps, n, reverse, batch_sizes)
        d_gates = np.zeros_like(gates)
        dh, dc = np.zeros_like(h0), np.zeros_like(c0)  # the gradient reaching the state a step starts from
        dw_hr = np.zeros_like(w_hr) if w_hr is not None else None
        prev_c = _previous(states[..., proj:], c0, reverse)
        cell = _compiled("lstm_cell_bwd", gates.dtype)
        if cell is not None:
            dh, dc = _lstm_back_compiled(cell, g, states, gates, ms, w_hh, w_hr, schedule, prev_c, d_gates, dh, dc,
                                         dw_hr)
            cpu_kernels.launched("lstm_layer_bwd")
        else:  # (NumPy: the reference the kernels are tested against)
            for t, rows, _ in reversed(schedule):
                gh = g[t, :, :proj] + dh  # the whole gradient of h_t and c_t: from outside, and from the step after
                gc = g[t, :, proj:] + dc
                i, f, gg, o = (gates[t, :rows, k * hidden:(k + 1) * hidden] for k in range(4))
                tc = np.tanh(states[t, :rows, proj:])
                if w_hr is not None:
                    dw_hr += gh[:rows].T @ ms[t, :rows]
                    dm = gh[:rows] @ w_hr
                else:
                    dm = gh[:rows]
                dct = gc[:rows] + dm * o * (1 - tc * tc)
                dg = d_gates[t, :rows]
                dg[:, :hidden] = dct * gg * i * (1 - i)                      # input gate
                dg[:, hidden:2 * hidden] = dct * prev_c[t, :rows] * f * (1 - f)  # forget gate
                dg[:, 2 * hidden:3 * hidden] = dct * i * (1 - gg * gg)         # cell candidate
                dg[:, 3 * hidden:] = dm * tc * o * (1 - o)                     # output gate
                dh, dc = gh.copy(), gc.copy()  # (the sequences not running pass their gradient on untouched)
                matmul_into(dg, w_hh, dh[:rows])
                np.multiply(dct, f, out=dc[:rows])
        flat = d_gates.reshape(-1, 4 * hidden)
        dw_hh = flat.T @ _previous(states, h0, reverse, proj).reshape(-1, proj)
        db_hh = flat.sum(0)
        return _as_input_layout(d_gates, schedule, packed, xp_rows), dh, dc, dw_hh, db_hh, dw_hr

    # ---- GRU -------------------------------------------------------------------------------------------
    @staticmethod
    def gru_layer(xp, h0, w_hh, b_hh, reverse, batch_sizes):
        """Returns ``(states, gates, hn)``: the states (L, N, H); the gates ``[r, z, n]`` after their nonlinearities,
        (L, N, 3H); ``hn = h W_hn^T + b_hn``, (L, N, H), which the reset gate scaled."""
        n, hidden = h0.shape
        n_steps, packed = _steps_of(xp, batch_sizes), batch_sizes is not None
        dt = xp.dtype
        states = np.empty((n_steps, n, hidden), dt)
        gates = np.zeros((n_steps, n, 3 * hidden), dt)
        hns = np.zeros((n_steps, n, hidden), dt)
        hh = np.empty((n, 3 * hidden), dt)
        w_t = np.ascontiguousarray(w_hh.T)  # (a product with a transposed view costs twice as much: 60 vs 33 us)
        schedule = _schedule(n_steps, n, reverse, batch_sizes)
        cell = _compiled("gru_cell_fwd", dt)
        if cell is not None:
            _gru_steps_compiled(cell, np.ascontiguousarray(xp), h0, w_t, b_hh, schedule, packed, states, gates, hns, hh)
            cpu_kernels.launched("gru_layer_fwd")
            return states, gates, hns
        h = h0
        for t, rows, start in schedule:
            hht = hh[:rows]
            matmul_into(h[:rows], w_t, hht)
            if b_hh is not None:
                hht += b_hh
            x = _step_input(xp, t, rows, start, packed)
            gt = gates[t, :rows]
            np.add(x[:, :2 * hidden], hht[:, :2 * hidden], out=gt[:, :2 * hidden])
            _sigmoid_(gt[:, :2 * hidden])
            r, z, nn = gt[:, :hidden], gt[:, hidden:2 * hidden], gt[:, 2 * hidden:]
            hns[t, :rows] = hht[:, 2 * hidden:]
            np.multiply(r, hht[:, 2 * hidden:], out=nn)
            nn += x[:, 2 * hidden:]
            np.tanh(nn, out=nn)
            st = states[t]
            np.subtract(h[:rows], nn, out=st[:rows])  # h' = n + z * (h - n)
            st[:rows] *= z
            st[:rows] += nn
            if rows < n:
                st[rows:] = h[rows:]
            h = st
        return states, gates, hns

    @staticmethod
    def gru_layer_backward(g, states, gates, hns, h0, w_hh, reverse, batch_sizes, xp_rows):
        """The gradients ``(dxp, dh0, dw_hh, db_hh)`` from ``g``, the gradient of ``states``."""
        n_steps, n, hidden = states.shape
        packed = batch_sizes is not None
        schedule = _schedule(n_steps, n, reverse, batch_sizes)
        d_x = np.zeros_like(gates)   # the gradient of the step's input projection
        d_hh = np.zeros_like(gates)  # ... and of h W_hh^T + b_hh (they differ in the new gate, which r scales)
        prev = _previous(states, h0, reverse)
        dh = np.zeros_like(h0)
        cell = _compiled("gru_cell_bwd", gates.dtype)
        if cell is not None:
            dh = _gru_back_compiled(cell, g, gates, hns, w_hh, schedule, prev, d_x, d_hh, dh)
            cpu_kernels.launched("gru_layer_bwd")
        else:  # (NumPy: the reference the kernels are tested against)
            for t, rows, _ in reversed(schedule):
                gh = g[t] + dh
                r, z, nn = (gates[t, :rows, k * hidden:(k + 1) * hidden] for k in range(3))
                d = gh[:rows]
                dn = d * (1 - z) * (1 - nn * nn)
                dx, dhh = d_x[t, :rows], d_hh[t, :rows]
                dx[:, :hidden] = dn * hns[t, :rows] * r * (1 - r)                # reset gate
                dx[:, hidden:2 * hidden] = d * (prev[t, :rows] - nn) * z * (1 - z)  # update gate
                dx[:, 2 * hidden:] = dn                                          # new gate
                dhh[:, :2 * hidden] = dx[:, :2 * hidden]
                np.multiply(dn, r, out=dhh[:, 2 * hidden:])
                dh = gh.copy()
                np.multiply(d, z, out=dh[:rows])
                dh[:rows] += dhh @ w_hh
        flat = d_hh.reshape(-1, 3 * hidden)
        dw_hh = flat.T @ prev.reshape(-1, hidden)
        return _as_input_layout(d_x, schedule, packed, xp_rows), dh, dw_hh, flat.sum(0)

    # ---- Elman RNN -------------------------------------------------------------------------------------
    @staticmethod
    def rnn_layer(xp, h0, w_hh, b_hh, relu, reverse, batch_sizes):
        """The states (L, N, H) of ``h' = tanh(x + h W_hh^T + b_hh)`` (or relu)."""
        n, hidden = h0.shape
        n_steps, packed = _steps_of(xp, batch_sizes), batch_sizes is not None
        states = np.empty((n_steps, n, hidden), xp.dtype)
        w_t = np.ascontiguousarray(w_hh.T)  # (a product with a transposed view costs twice as much: 60 vs 33 us)
        h = h0
        for t, rows, start in _schedule(n_steps, n, reverse, batch_sizes):
            st = states[t]
            pre = st[:rows]
            matmul_into(h[:rows], w_t, pre)
            pre += _step_input(xp, t, rows, start, packed)
            if b_hh is not None:
                pre += b_hh
            if relu:
                np.maximum(pre, 0, out=pre)
            else:
                np.tanh(pre, out=pre)
            if rows < n:
                st[rows:] = h[rows:]
            h = st
        return states

    @staticmethod
    def rnn_layer_backward(g, states, h0, w_hh, relu, reverse, batch_sizes, xp_rows):
        """The gradients ``(dxp, dh0, dw_hh, db_hh)`` from ``g``, the gradient of ``states``."""
        n_steps, n, hidden = states.shape
        packed = batch_sizes is not None
        schedule = _schedule(n_steps, n, reverse, batch_sizes)
        d_pre = np.zeros_like(states)
        dh = np.zeros_like(h0)
        for t, rows, _ in reversed(schedule):
            gh = g[t] + dh
            h = states[t, :rows]
            dp = d_pre[t, :rows]
            if relu:
                np.multiply(gh[:rows], h > 0, out=dp)
            else:
                np.multiply(gh[:rows], 1 - h * h, out=dp)
            dh = gh.copy()
            matmul_into(dp, w_hh, dh[:rows])
        flat = d_pre.reshape(-1, hidden)
        dw_hh = flat.T @ _previous(states, h0, reverse).reshape(-1, hidden)
        return _as_input_layout(d_pre, schedule, packed, xp_rows), dh, dw_hh, flat.sum(0)


# ---- the same loops with the compiled cell kernels (kernel_src/cpu/recurrent.c) -------------------------------------
# perf: the kernels take addresses, worked out from each array's base address and strides once per layer: reading
# ``a.ctypes.data`` costs 1 us, a view per step more; a step's whole cell kernel costs 8 us (LSTM, 16 x 128).
def _lstm_steps_compiled(cell, xp, h0, c0, w_t, b_hh, w_hr_t, schedule, packed, states, gates, ms) -> None:
    """``lstm_layer``'s loop: per step one BLAS product and one call of the cell kernel (which adds the input
    projection and the bias, applies the nonlinearities and writes c and m)."""
    n, hidden, proj = h0.shape[0], c0.shape[-1], h0.shape[-1]
    bias = np.zeros(4 * hidden, xp.dtype) if b_hh is None else np.ascontiguousarray(b_hh)
    b_addr = bias.ctypes.data
    width, item = proj + hidden, states.itemsize
    x0, s0, g0, m0 = xp.ctypes.data, states.ctypes.data, gates.ctypes.data, 0 if ms is None else ms.ctypes.data
    x_step, s_step, g_step = xp.strides[0], states.strides[0], gates.strides[0]
    h, c = h0, c0
    c_addr, c_stride = c0.ctypes.data, hidden
    for t, rows, start in schedule:
        gt = gates[t, :rows]
        matmul_into(h[:rows], w_t, gt)
        c_out = s0 + t * s_step + proj * item
        if ms is None:  # m is h: written into the states
            m_addr, m_stride = s0 + t * s_step, width
        else:
            m_addr, m_stride = m0 + t * ms.strides[0], hidden
        cell(rows, hidden, g0 + t * g_step, x0 + (start if packed else t) * x_step, b_addr, c_addr,
             c_stride, c_out, width, m_addr, m_stride)
        st = states[t]
        if ms is not None:
            matmul_into(ms[t, :rows], w_hr_t, st[:rows, :proj])
        if rows < n:  # the sequences that are not running keep their state
            st[rows:, :proj], st[rows:, proj:] = h[rows:], c[rows:]
        h, c = st[:, :proj], st[:, proj:]
        c_addr, c_stride = c_out, width


def _lstm_back_compiled(cell, g, states, gates, ms, w_hh, w_hr, schedule, prev_c, d_gates, dh, dc, dw_hr):
    """``lstm_layer_backward``'s loop: per step the cell kernel (the gates' gradients and c_{t-1}'s) and one BLAS
    product (h_{t-1}'s). Returns the gradients of h0 and c0."""
    n, width = states.shape[1], states.shape[2]
    hidden = prev_c.shape[-1]
    proj, item = width - hidden, states.itemsize
    s0, g0, p0, d0 = states.ctypes.data, gates.ctypes.data, prev_c.ctypes.data, d_gates.ctypes.data
    s_step, g_step, p_step, d_step = states.strides[0], gates.strides[0], prev_c.strides[0], d_gates.strides[0]
    gh, gc = np.empty_like(dh), np.empty_like(dc)  # the whole gradient of the step's h and c
    gh_addr, gc_addr = gh.ctypes.data, gc.ctypes.data
    dc_next = np.empty_like(dc)
    dc_addrs = {id(dc): dc.ctypes.data, id(dc_next): dc_next.ctypes.data}
    dm = gh if w_hr is None else None
    for t, rows, _ in reversed(schedule):
        np.add(g[t, :, :proj], dh, out=gh)
        np.add(g[t, :, proj:], dc, out=gc)
        if w_hr is not None:
            dw_hr += gh[:rows].T @ ms[t, :rows]
            dm = np.ascontiguousarray(gh[:rows] @ w_hr)
        cell(rows, hidden, g0 + t * g_step, s0 + t * s_step + proj * item, width, p0 + t * p_step, hidden,
             gh_addr if w_hr is None else dm.ctypes.data, gc_addr, hidden, d0 + t * d_step, dc_addrs[id(dc_next)])
        matmul_into(d_gates[t, :rows], w_hh, dh[:rows])  # (h_{t-1}'s gradient: dh is read only through gh above)
        if rows < n:  # (the sequences not running pass their gradient on untouched)
            dh[rows:], dc_next[rows:] = gh[rows:], gc[rows:]
        dc, dc_next = dc_next, dc
    return dh, dc


def _gru_steps_compiled(cell, xp, h0, w_t, b_hh, schedule, packed, states, gates, hns, hh) -> None:
    """``gru_layer``'s loop: per step one BLAS product, the bias, and one call of the cell kernel."""
    n, hidden = h0.shape
    x0, s0, g0, n0 = xp.ctypes.data, states.ctypes.data, gates.ctypes.data, hns.ctypes.data
    x_step, s_step, g_step, n_step = xp.strides[0], states.strides[0], gates.strides[0], hns.strides[0]
    hh_addr = hh.ctypes.data
    h, h_addr, h_stride = h0, h0.ctypes.data, h0.strides[0] // h0.itemsize
    for t, rows, start in schedule:
        hht = hh[:rows]
        matmul_into(h[:rows], w_t, hht)
        if b_hh is not None:
            hht += b_hh
        cell(rows, hidden, hh_addr, x0 + (start if packed else t) * x_step, h_addr, h_stride, s0 + t * s_step,
             hidden, g0 + t * g_step, n0 + t * n_step)
        st = states[t]
        if rows < n:
            st[rows:] = h[rows:]
        h, h_addr, h_stride = st, s0 + t * s_step, hidden


def _gru_back_compiled(cell, g, gates, hns, w_hh, schedule, prev, d_x, d_hh, dh):
    """``gru_layer_backward``'s loop: per step the cell kernel and one BLAS product. Returns h0's gradient."""
    n, hidden = dh.shape
    g0, n0, p0, x0, b0 = gates.ctypes.data, hns.ctypes.data, prev.ctypes.data, d_x.ctypes.data, d_hh.ctypes.data
    g_step, n_step, p_step, x_step, b_step = (a.strides[0] for a in (gates, hns, prev, d_x, d_hh))
    dh_next = np.empty_like(dh)
    for t, rows, _ in reversed(schedule):
        gh = g[t] + dh
        cell(rows, hidden, g0 + t * g_step, n0 + t * n_step, p0 + t * p_step, hidden, gh.ctypes.data,
             x0 + t * x_step, b0 + t * b_step, dh_next.ctypes.data)
        dh_next[:rows] += d_hh[t, :rows] @ w_hh
        if rows < n:
            dh_next[rows:] = gh[rows:]
        dh, dh_next = dh_next, dh
    return dh

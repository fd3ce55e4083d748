"""The parametrizations torch ships, on top of :mod:`.parametrize`: ``weight_norm`` (direction and magnitude),
``spectral_norm`` (the weight divided by its largest singular value, by power iteration) and ``orthogonal``
(an orthogonal matrix from an unconstrained one).

The maps are composed from Tensor ops, so gradients reach the stored originals. ``orthogonal``'s matrix exponential
is a scaling-and-squaring Taylor series (exact to rounding for the skew-symmetric matrices it gets), its Householder
map the product of the reflections; the Cayley map needs a linear solve and uses ``linalg.solve``.

>>> import tinygrad_like as tl
>>> from tinygrad_like.nn.utils.parametrizations import orthogonal
>>> m = orthogonal(tl.nn.Linear(4, 4))
>>> bool(tl.allclose(m.weight @ m.weight.T, tl.eye(4), atol=1e-5))
True
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd import grad_mode
from ...creation import eye
from ...functions import cat
from ...ops.normalization import normalize
from ...tensor import Tensor
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- weight norm -----------------------------------------------------------------------------------------------
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim except ``dim``, shaped to broadcast against ``v`` (``dim=-1``: the
    norm of all of ``v``), as ``torch.norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.reshape(v.shape[0], -1).norm(pow, 1).reshape((v.shape[0],) + (1,) * (v.ndim - 1))
    if dim == v.ndim - 1:
        return v.reshape(-1, v.shape[-1]).norm(pow, 0).reshape((1,) * (v.ndim - 1) + (v.shape[-1],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * g / ||v||`` with the norm over every dim except ``dim`` (``torch._weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (Salimans & Kingma, 2016): the magnitude
    ``parametrizations.<name>.original0`` and the direction ``original1`` are learned apart."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(mod, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        """Load a checkpoint of the hook-based ``weight_norm`` (``<name>_g``, ``<name>_v``) into this one."""
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    if hasattr(module, "register_load_state_dict_pre_hook"):  # (Modules with torch's state-dict hooks)
        module.register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral norm ---------------------------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty((h,)).normal_(0, 1)
            v = weight_mat.new_empty((w,)).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with grad_mode.no_grad():
            w = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(w.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(w.T.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * weight_mat.mv(v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _default_spectral_dim(module: Module) -> int:
    from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # (nn.conv imports nn.utils' package)
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as the weight divided by its spectral norm (Miyato et al., 2018), the norm
    estimated by ``n_power_iterations`` of power iteration per training-mode access."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_spectral_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal --------------------------------------------------------------------------------------------------
_MAPS = ("matrix_exp", "cayley", "householder")


def _matrix_exp(a: Tensor) -> Tensor:
    """``exp(a)`` of (a batch of) square matrices by scaling and squaring a Taylor series, in Tensor ops."""
    with grad_mode.no_grad():
        norm = float(a.detach().abs().sum(-1).amax()) if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    x = a / (2 ** s)
    n = a.shape[-1]
    ident = eye(n, dtype=a.dtype, device=a.device).expand(a.shape)
    term, out = ident, ident
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """``H_1 H_2 ... H_k`` (first ``n`` x ``k`` columns) with ``H_i = I - tau_i v_i v_i^T``, ``v_i`` column ``i`` of
    ``a`` below the diagonal with a 1 on it (LAPACK's orgqr), in Tensor ops."""
    n, k = a.shape[-2], a.shape[-1]
    ident = eye(n, dtype=a.dtype, device=a.device)
    unit = eye(n, k, dtype=a.dtype, device=a.device)
    vs = a.tril(-1) + unit
    q = ident.expand(*a.shape[:-2], n, n)
    for i in range(k):
        v = vs[..., :, i:i + 1]
        q = q - (q @ v) @ (v.transpose(-2, -1) * tau[..., i:i + 1].unsqueeze(-1))
    return q[..., :, :k]


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a``'s QR with R's diagonal made positive (no gradient: used to initialise)."""
    arr = a.detach().numpy(force=True)
    q, r = np.linalg.qr(arr)
    d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    d = np.where(d == 0, 1, d)
    return a.new_tensor(q * d[..., None, :])


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros((*X.shape[:-2], n, n - k))], -1)
            A = X - X.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                Q = _matrix_exp(A)
            else:
                from ... import linalg  # (tl.linalg sits above nn in the layers)
                ident = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(ident - A * 0.5, ident + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if self._buffers.get("base") is not None:
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{Q.shape}.")
        with grad_mode.no_grad():
            q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                arr = Q.detach().numpy(force=True)
                flat = arr.reshape(-1, n, k)
                out = np.empty_like(flat)
                for i, m in enumerate(flat):
                    h, tau = np.linalg.qr(m, mode="raw")  # LAPACK geqrf: R above the diagonal, reflectors below
                    a = h.T.copy()
                    diag = np.sign(np.diagonal(a)).copy()
                    diag[tau == 0] *= -1
                    np.fill_diagonal(a, diag)
                    out[i] = a
                a = Q.new_tensor(out.reshape(arr.shape))
                return a.transpose(-2, -1) if transpose else a
            if n == k:
                ident = eye(k, dtype=Q.dtype, device=Q.device)
                eps = 10.0 * n * float(np.finfo(Q.dtype.np).eps)
                is_orth = bool(((Q.transpose(-2, -1) @ Q - ident).abs() <= eps).all())
                Q = Q.clone() if is_orth else _make_orthogonal(Q)
            else:
                noise = Q.new_empty((*Q.shape[:-2], n, n - k)).normal_()
                Q = _make_orthogonal(cat([Q, noise], -1))
            self.base = Q
            neg_id = q_init.new_zeros(q_init.shape)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` to (semi-)orthogonal matrices: it is computed from an unconstrained matrix by the
    matrix exponential (default for square matrices), the Cayley map or Householder reflections (the default for
    the others)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module

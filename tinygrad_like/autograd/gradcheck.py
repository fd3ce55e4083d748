"""Compare analytic gradients with float64 central finite differences."""

from __future__ import annotations

import numpy as np

from . import grad_mode


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck`; carries both Jacobians for inspection (``.analytic``, ``.numeric``)."""

    def __init__(self, msg, analytic, numeric):
        super().__init__(msg)
        self.analytic, self.numeric = analytic, numeric


def _outputs(fn, inputs):
    out = fn(*inputs)
    from ..tensor import Tensor  # (tensor is a higher layer: a module-level import would be a cycle)
    return (out,) if isinstance(out, Tensor) else tuple(out)


def jacobians(fn, inputs, eps: float = 1e-6):
    """Analytic and numeric Jacobians: lists indexed [input][output] of arrays (out.numel, in.numel)."""
    from ..tensor import Tensor  # (tensor is a higher layer: a module-level import would be a cycle)
    from .api import grad  # (autograd.api is a higher layer: a module-level import would be a cycle)
    inputs = tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    for i in diff:
        if inputs[i].dtype.name != "float64":
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype.name}; finite differences need float64 "
                            f"inputs (call .double())")
    outs = _outputs(fn, inputs)
    analytic = [[np.zeros((o.numel(), inputs[i].numel())) for o in outs] for i in diff]
    numeric = [[np.zeros((o.numel(), inputs[i].numel())) for o in outs] for i in diff]
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            go = o.new_zeros(o.shape)
            with grad_mode.no_grad():
                go.reshape(-1)[k] = 1.0
            gs = grad(o, [inputs[i] for i in diff], grad_outputs=go, retain_graph=True, allow_unused=True)
            for j, g in enumerate(gs):
                if g is not None:
                    analytic[j][oi][k] = g.detach().numpy().reshape(-1)
    for j, i in enumerate(diff):
        x = inputs[i]
        if not x.is_contiguous():
            raise ValueError(f"gradcheck: input {i} must be contiguous")
        # on the CPU the input's own memory is perturbed through NumPy; on a device (cuda, cuda-emu, sim) the host
        # copy is read-only, so each element is written on the device through a view of the input
        on_cpu = x.device.type == "cpu"
        flat = x.detach().numpy().reshape(-1) if on_cpu else x.detach().cpu().numpy().reshape(-1).copy()
        target = flat if on_cpu else x.detach().reshape(-1)
        for k in range(flat.size):
            orig = float(flat[k])
            with grad_mode.no_grad():
                target[k] = orig + eps
                plus = [o.detach().numpy().astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
                target[k] = orig - eps
                minus = [o.detach().numpy().astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
                target[k] = orig
            for oi in range(len(outs)):
                numeric[j][oi][:, k] = (plus[oi] - minus[oi]) / (2 * eps)
    return analytic, numeric


def gradcheck(func, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True if every analytic Jacobian entry matches finite differences within ``atol + rtol*|numeric|``.

    torch's further switches are accepted: the checks they add (undefined gradients, batched gradients, forward
    AD, nondeterminism, the fast mode's random projection) are not run here; the full Jacobian check always is,
    unless ``check_backward_ad=False``."""
    inputs = (inputs,) if _is_tensor(inputs) else tuple(inputs)
    if not check_backward_ad:
        return True
    analytic, numeric = jacobians(func, inputs, eps)
    for j, (aj, nj) in enumerate(zip(analytic, numeric)):
        for oi, (a, n) in enumerate(zip(aj, nj)):
            bad = ~np.isclose(a, n, atol=atol, rtol=rtol)
            if bad.any():
                r, c = np.argwhere(bad)[0]
                msg = (f"Jacobian mismatch for output {oi} with respect to input {j}: {int(bad.sum())} of "
                       f"{bad.size} entries differ; first at [{r}, {c}]: analytic {a[r, c]:.6g} vs numeric "
                       f"{n[r, c]:.6g}\nanalytic:\n{a}\nnumeric:\n{n}")
                if raise_exception:
                    raise GradcheckError(msg, analytic, numeric)
                return False
    return True


def _is_tensor(x) -> bool:
    from ..tensor import Tensor  # (tensor is a higher layer: a module-level import would be a cycle)
    return isinstance(x, Tensor)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: the gradient of ``func``'s backward (made with ``create_graph=True``), with
    respect to both the inputs and the output gradients, against finite differences of that backward.

    As torch: without ``grad_outputs``, random float64 ones are drawn (fixed seed here, so a failure repeats),
    and ``gradcheck`` runs on ``(inputs, grad_outputs) -> grad(func(inputs), inputs, grad_outputs)``."""
    import numpy as np  # (only here: the random output gradients)

    from ..creation import tensor  # (creation is a higher layer: a module-level import would be a cycle)
    from .api import grad  # (autograd.api is a higher layer: a module-level import would be a cycle)
    inputs = (inputs,) if _is_tensor(inputs) else tuple(inputs)
    if not check_rev_over_rev:
        return True
    diff = [i for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    if grad_outputs is None:
        outs = _outputs(func, inputs)
        rng = np.random.default_rng(0)
        grad_outputs = tuple(tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, requires_grad=True)
                             for o in outs if o.requires_grad)
    else:
        grad_outputs = (grad_outputs,) if _is_tensor(grad_outputs) else tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        with grad_mode.enable_grad():  # (also while gradcheck's finite differences run under no_grad)
            outs = [o for o in _outputs(func, ins) if o.requires_grad]
            grads = grad(outs, [ins[i] for i in diff], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)

"""L-BFGS: quasi-Newton steps from a short history of gradient differences, with an optional strong-Wolfe line search.

A port of PyTorch's ``torch.optim.LBFGS`` (itself after minFunc and torch7's optim), step for step: the same
two-loop recursion over ``history_size`` pairs, the same first step ``min(1, 1/|g|_1) * lr``, the same stopping
tests, and the same cubic-interpolating line search. The scalars that torch keeps as 0-d tensors (``ys``,
``H_diag``, the directional derivatives) are 0-d tensors here too, so their rounding is the parameters' dtype's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..creation import zeros
from ..functions import cat
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, check_number

__all__ = ["LBFGS"]


def _sqrt(x: Any) -> Any:
    return x.sqrt() if isinstance(x, Tensor) else math.sqrt(x)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1``, ``g2``, clamped to
    ``bounds`` (default: between ``x1`` and ``x2``); their midpoint when the cubic has no minimum."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = _sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` that satisfies the strong Wolfe conditions (torch7's lswolfe): bracket, then zoom.

    Returns ``(f_new, g_new, t, evaluations)``."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        # next step
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # reached the most evaluations allowed
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: refine the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # a t too close to the bracket's ends makes little progress: move it 0.1 of the bracket inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied, or not lower than the lowest point
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old high becomes the new low
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            # the new point becomes the new low
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _scalar(x: Any) -> float:
    return x.item() if isinstance(x, Tensor) else x


class LBFGS(Optimizer):
    """``torch.optim.LBFGS``: ``step(closure)`` runs up to ``max_iter`` quasi-Newton iterations.

    ``closure`` must zero the gradients, compute the loss, call ``backward()`` and return the loss; ``step``
    calls it once per function evaluation (at most ``max_eval`` times, default ``max_iter * 5 // 4``). Each
    iteration steps along the L-BFGS direction from the last ``history_size`` pairs: by ``lr`` (the first by
    ``min(1, 1/|g|_1) * lr``), or by a strong-Wolfe line search with ``line_search_fn="strong_wolfe"``. It stops
    early when the largest gradient element is at most ``tolerance_grad``, or the step or the loss changes by
    less than ``tolerance_change``. One parameter group only. The whole state (flat direction and history) is
    kept under the first parameter, as torch does, so ``state_dict`` has torch's layout.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.5, -0.5], requires_grad=True)
    >>> opt = tl.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - tl.tensor([3.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in w.tolist()]
    [3.0, 2.0]
    """

    _state_shaped_like_params = False

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}{where}")
        for name in ("tolerance_grad", "tolerance_change"):
            check_number(name, group[name], where)
        for name in ("max_iter", "max_eval", "history_size"):
            value = group[name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}{where}")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"line_search_fn must be None or 'strong_wolfe', got {group['line_search_fn']!r}"
                             f"{where}")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:  # torch refuses a second group in the constructor; a later one likewise
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._params = self.param_groups[0]["params"]

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        views = [zeros(p.numel(), dtype=p.dtype, device=p.device) if p.grad is None else p.grad.reshape(-1)
                 for p in self._params]
        return cat(views, 0)

    def _add_grad(self, step_size: Any, update: Tensor) -> None:
        offset = 0
        alpha = _scalar(step_size)
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=alpha)
            offset += numel

    def _clone_param(self) -> list[Tensor]:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Tensor], t: Any,
                              d: Tensor) -> tuple[float, Tensor]:
        self._add_grad(t, d)
        loss = float(self._run_closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` iterations; returns the loss ``closure()`` gave at the start."""
        if closure is None:
            raise RuntimeError("LBFGS.step() needs a closure: a function that zeroes the gradients, computes the "
                               "loss, calls backward() and returns the loss (it is evaluated several times per step)")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the state is global, kept under the first parameter (so load_state_dict casts it like any other)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._run_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # ---- the descent direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # update the memory with the last step
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:  # limited memory: drop the oldest pair
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # the scale of the initial inverse Hessian

                # the two-loop recursion: the approximate inverse Hessian times the gradient
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-_scalar(al[i]))
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=_scalar(al[i] - be_i))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # ---- the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)  # a fixed step
                if n_iter != max_iter:
                    # evaluate again, except after the last iteration (in a stochastic setting it would be wasted)
                    loss = float(self._run_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # ---- the stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # no progress in the parameters
                break
            if abs(loss - prev_loss) < tolerance_change:  # nor in the loss
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"], state["H_diag"] = old_dirs, old_stps, ro, H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss

"""``functional_call``: call a module with some of its parameters and buffers replaced by given tensors, for the
call only (the basis of per-sample gradients, meta-learning and ensembling)."""

from __future__ import annotations

import contextlib
import warnings

__all__ = ["functional_call"]


def _swap(module, name: str, value):
    """Put ``value`` at the dotted ``name`` of ``module``; return what was there (and in which store)."""
    *path, leaf = name.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__[store]
        if leaf in d:
            old = d[leaf]
            d[leaf] = value
            return owner, store, leaf, old
    old = owner.__dict__.get(leaf, _MISSING)
    object.__setattr__(owner, leaf, value)
    return owner, None, leaf, old


_MISSING = object()


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = [k for k in known if k not in values]
        unexpected = [k for k in values if k not in known]
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Missing key(s): {missing}.\n\tUnexpected key(s): {unexpected}.")
    values = dict(values)
    if tie_weights:  # a tensor shared under several names takes the given value under each of them
        by_id: dict = {}
        for k, t in known.items():
            by_id.setdefault(id(t), []).append(k)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if given:
                for n in names:
                    values.setdefault(n, values[given[0]])
    swapped = []
    try:
        for name, value in values.items():
            swapped.append(_swap(module, name, value))
        yield
    finally:
        for owner, store, leaf, old in reversed(swapped):
            if store is None:
                if old is _MISSING:
                    owner.__dict__.pop(leaf, None)
                else:
                    object.__setattr__(owner, leaf, old)
            else:
                owner.__dict__[store][leaf] = old


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the named tensors (a dict, or a tuple of dicts) in place of the module's
    own parameters and buffers, restored afterwards. Deprecated in torch in favour of
    ``torch.func.functional_call``, which it warns about."""
    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future version of PyTorch. "
                  "Please use torch.func.functional_call instead which is a drop-in replacement.", FutureWarning,
                  stacklevel=2)
    if isinstance(parameters_and_buffers, (tuple, list)):
        merged: dict = {}
        for d in parameters_and_buffers:
            for k in d:
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is "
                                     f"ambiguous")
            merged.update(d)
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)

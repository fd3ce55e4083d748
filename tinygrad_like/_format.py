"""Tensor printing: a port of PyTorch's ``torch/_tensor_str.py`` (2.x) over NumPy arrays.

``format_tensor(arr, dtype_name, suffixes)`` gives exactly what ``repr(torch_tensor)`` gives for a dense CPU
tensor holding the same values, except that dtypes print as ``tinygrad_like.float64`` instead of
``torch.float64``. The rules ported from torch:

* One ``_Formatter`` per tensor picks a style from the nonzero finite values: *int mode* when all are
  integral (``1.``, ``-3.``), *sci mode* when max/min > 1000, max > 1e8 or min < 1e-4 (``1.0000e-05``),
  otherwise fixed point with ``precision`` digits; every element is right-aligned to one common width.
* Rows wrap to fit ``linewidth``; nested dimensions are joined by ``,`` plus one blank line per extra dim.
* Above ``threshold`` elements, each dimension shows only ``edgeitems`` at each end around ``...``.
* Suffixes (``device=``, ``size=``, ``dtype=``, ``requires_grad=``/``grad_fn=``) follow the data, each moved
  to its own line when it would overflow ``linewidth``.

Imports only NumPy and the standard library.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["PRINT_OPTS", "STYLE", "format_tensor", "get_printoptions", "printoptions", "set_printoptions",
           "use_torch_style"]


class _Style:
    """Which printing style applies: the project's own (``tl.Size([3])`` / ``(3,)``, ``tinygrad_like.float32``) or,
    once the torch alias is installed, PyTorch's (``torch.Size([3])``, ``torch.float32``)."""

    __slots__ = ("torch", "package")

    def __init__(self) -> None:
        self.torch, self.package = False, "tinygrad_like"


STYLE = _Style()


def use_torch_style(on: bool = True) -> None:
    """Print as PyTorch does (set by ``install_as_torch``, undone by ``uninstall_torch_alias``)."""
    STYLE.torch, STYLE.package = bool(on), "torch" if on else "tinygrad_like"


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None, profile: str | None = None,
                     sci_mode: bool | None = None) -> None:
    """Set printing options, as ``torch.set_printoptions`` does (``profile``: 'default', 'short' or 'full').

    As in torch, options left as ``None`` keep their value, except ``sci_mode``, which is always set
    (``None`` means: chosen per tensor).
    """
    if profile is not None:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (same arguments as ``set_printoptions``)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one style and width for all elements of a tensor (torch's ``_Formatter``)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = arr.reshape(-1)
        if not self.floating:
            self.max_width = max([1] + [len(f"{v}") for v in flat.tolist()])
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:  # only zeros, infs and nans: int mode, width 1
            return
        absvals = np.abs(vals).astype(np.float64)
        vmin, vmax = float(absvals.min()), float(absvals.max())
        values = vals.tolist()
        self.int_mode = all(v == math.ceil(v) for v in values)
        self.sci_mode = (vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        p = PRINT_OPTS.precision
        if self.sci_mode:
            widths = [len(f"{v:.{p}e}") for v in values]
        elif self.int_mode:  # the trailing "." marks a float
            widths = [len(f"{v:.0f}") + 1 for v in values]
        else:
            widths = [len(f"{v:.{p}f}") for v in values]
        self.max_width = max([1] + widths)

    def format(self, value: Any) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return ret.rjust(self.max_width)


def _summarized_data(arr: np.ndarray) -> np.ndarray:
    """The elements that a summarized print shows (torch's ``get_summarized_data``), for the formatter."""
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate((arr[:e], arr[-e:])) if arr.shape[0] > 2 * e else arr
    if not e:
        return np.empty((0,) * arr.ndim, dtype=arr.dtype)
    rows = list(arr[:e]) + list(arr[-e:]) if arr.shape[0] > 2 * e else list(arr)
    return np.stack([_summarized_data(r) for r in rows])


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2  # with ", "
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = [fmt.format(v) for v in arr[:e].tolist()] + [" ..."]
        data += [fmt.format(v) for v in arr[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    n, e = arr.shape[0], PRINT_OPTS.edgeitems
    if summarize and n > 2 * e:
        slices = ([_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(n - e, n)])
    else:
        slices = [_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(arr: np.ndarray, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    fmt = _Formatter(_summarized_data(arr) if summarize else arr)
    return _tensor_str_with_formatter(arr, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: Sequence[str], indent: int) -> str:
    parts = [tensor_str]
    # torch's count: on a one-line repr rfind gives -1, so this is len + 2 (kept for identical wrapping)
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"


def format_tensor(arr: np.ndarray, dtype_name: str, suffixes: Sequence[str] = (), *,
                  default_dtype: str = "float32", prefix: str = "tensor(") -> str:
    """``repr`` of a tensor holding ``arr``, as PyTorch prints it, with ``tinygrad_like.`` dtype names (``torch.``
    under the torch alias: :func:`use_torch_style`).

    ``dtype_name`` is the tensor's dtype ('float32', 'int64', ... ; a ``tinygrad_like.``/``torch.`` prefix is
    dropped). ``suffixes`` are ready-made strings such as ``"device='cuda:0'"``, ``"requires_grad=True"``,
    ``"grad_fn=<AddBackward0>"``; as in torch, ``device=`` ones go before the ``size=``/``dtype=`` this
    function adds and the rest after. ``default_dtype`` is the current default float dtype: dtype is shown
    unless it is that, int64 or bool (for an empty tensor: unless it is that).
    """
    arr = np.asarray(arr)
    if arr.dtype.name == "bfloat16":  # (ml_dtypes' bfloat16, not a NumPy float kind): its values print as floats
        arr = arr.astype(np.float32)
    name = dtype_name.rsplit(".", 1)[-1]
    indent = len(prefix)
    own = []
    if arr.size == 0:
        if arr.ndim != 1:  # like NumPy, the shape is shown unless it is (0,)
            own.append(f"size={tuple(arr.shape)}")
        if name != default_dtype:  # no elements to tell an int from a float
            own.append(f"dtype={STYLE.package}.{name}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            own.append(f"size={tuple(arr.shape)}")
        if name not in (default_dtype, "int64", "bool"):
            own.append(f"dtype={STYLE.package}.{name}")
        body = _tensor_str(arr, indent)
    device = [s for s in suffixes if s.startswith("device=")]
    rest = [s for s in suffixes if not s.startswith("device=")]
    return _add_suffixes(prefix + body, device + own + rest, indent)

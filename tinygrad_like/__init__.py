"""tinygrad_like: a compact tensor/autograd framework that shows what happens underneath.

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

__version__ = "0.1.0"

import math as _math
import warnings as _warnings

from . import autograd, events, sites
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .creation import (arange, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace, ones,
                       ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, tensor, zeros,
                       zeros_like)
from .device import Device, get_device as device
from .dtypes import (DType, bfloat16, bool_ as bool, float16, float32, float64, get_default_dtype, int8, int16,
                     int32, int64, set_default_dtype, uint8)
from .functions import *  # noqa: F403 - the functional spelling of every op
from .functions import log_softmax, softmax, where  # (generated there from the Tensor methods)
from .ops.comparison import *  # noqa: F403
from .ops.arithmetic import *  # noqa: F403
from .ops.bitwise import *  # noqa: F403
from .ops.division import *  # noqa: F403
from .ops.rounding import *  # noqa: F403
from .ops.transcendental import *  # noqa: F403
# tl.<name> outside __all__ (functions.py made these before: ``from tinygrad_like import *`` never gave them)
from .ops.arithmetic import (abs_, absolute_, addcdiv, addcmul, cos_, erf_, exp_, heaviside, log_, neg_,
                             negative_, relu_, rsqrt_, sigmoid_, sin_, sqrt_, tanh_)
from .ops.division import div
from .ops.reduce import (all, amax, amin, aminmax, any, argmax, argmin, cumsum, logsumexp, matmul, max,  # noqa: A004
                         mean, min, std, sum, var)
from .ops.transcendental import cos, erf, logit, rsqrt, sin
from .ops.comparison import (clamp, clip, eq, ge, gt, isnan, le, logical_and, logical_not, logical_or, logical_xor, lt,
                             maximum, minimum, ne, sign)
from .ops.elementwise import *  # noqa: F403
from .ops.indexing import *  # noqa: F403
from .ops.indexing import nonzero, one_hot
from .ops.movement import *  # noqa: F403
from .ops.movement import broadcast_tensors, cat, concat, concatenate, pad, stack
from .ops.scatter import *  # noqa: F403
from .ops.shaping import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.products import *  # noqa: F403
from .ops.solvers import *  # noqa: F403
from .ops.decompositions import *  # noqa: F403
from .ops.sampling import *  # noqa: F403
from .ops.scans import *  # noqa: F403
from .ops.sorting import *  # noqa: F403
from .ops.statistics import *  # noqa: F403
from .layout import Layout, broadcast_shapes, normalize_dim  # (normalize_dim: as functions.py once re-exported it)
from .memory_timeline import MemoryTimeline, memory_timeline
from .profiler import profile
from .random import Generator, get_rng_state, manual_seed, set_rng_state
from .storage import Storage, live_storages
from .tensor import Tensor

from . import cuda, datasets, linalg, nn, optim, special, utils  # noqa: E402 - need Tensor and the ops above
from .io import load, save  # noqa: E402
from .nn.aten import *  # noqa: E402, F403 - torch's top-level layer functions (torch.conv2d, torch.lstm, ...)
from . import accelerator, amp, backends  # noqa: E402 - PyTorch's device/precision namespaces (no-ops on a CPU)
from . import ops, return_types  # noqa: E402
from .accelerator import get_default_device, set_default_device  # noqa: E402
from .amp import autocast  # noqa: E402
from .autograd import inference_mode, is_inference_mode_enabled  # noqa: E402
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled  # noqa: E402
from .dropin import install_as_torch, uninstall_torch_alias  # noqa: E402
from .compat import Size, compile  # noqa: E402, A004 - torch's names
from . import distributed, jit, legacy, onnx  # noqa: E402 - (distributed, jit, onnx: in one process)
from . import serialization  # noqa: E402 - torch.serialization (the allowlist of load(weights_only=True))
from .legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,  # noqa: E402
                     HalfTensor, IntTensor, LongTensor, ShortTensor, as_tensor, is_storage, is_tensor)

from ._format import set_printoptions  # noqa: E402
from .ops.conversion import *  # noqa: E402, F403 - real, conj, angle... of real tensors
from .ops.inplace import clamp_, clip_, detach_, resize_as_  # noqa: E402
from .ops.spectral import istft, stft  # noqa: E402
from .amp import GradScaler  # noqa: E402 - torch.GradScaler is torch.amp.GradScaler
from . import export  # noqa: E402 - torch.export: each entry point raises, saying why
from .random import default_generator, initial_seed, seed, thread_safe_generator  # noqa: E402
from .dtypes import SHELLS as _SHELLS, dtype  # noqa: E402
from .typeinfo import *  # noqa: E402, F403 - finfo, iinfo, promote_types, can_cast, result_type, typename, is_*
from .settings import *  # noqa: E402, F403 - threads, determinism, matmul precision, autocast state...
from .batching import vmap  # noqa: E402
from .control import Event, Future, Stream, cond, fork, wait  # noqa: E402
from .creation_extra import *  # noqa: E402, F403 - range, asarray, windows, vander, block_diag... (not in __all__)
from .misc_names import *  # noqa: E402, F403
from .unsupported_names import *  # noqa: E402, F403 - names that can only raise, each saying why
from .unsupported_names import install_tensor_methods as _install_unsupported  # noqa: E402

globals().update(_SHELLS)  # complex64, qint8, uint16, float8_e4m3fn...: dtypes a program can name, not compute in
_install_unsupported(Tensor)

# NumPy's floating-point RuntimeWarnings (divide by zero, invalid value, overflow) raised inside our own code
# are not the user's business: the result is IEEE's (inf, nan), as in PyTorch, which prints nothing. The filter
# matches only warnings attributed to this package's modules, so the user's own NumPy code still warns, and it
# costs the op path nothing (an errstate context per op would cost ~1 us).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tinygrad_like(\.|$)")

half, float, double, long, int, short = float16, float32, float64, int64, int32, int16  # noqa: A001 - torch's aliases
inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None  # torch's constants (Python floats, None)

__all__ = [
    "nn", "optim", "utils", "datasets", "cuda", "linalg", "special", "save", "load",
    "accelerator", "amp", "backends", "autocast", "get_default_device", "set_default_device", "inference_mode",
    "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "install_as_torch", "uninstall_torch_alias",
    "Tensor", "Storage", "Layout", "Device", "DType", "Generator", "autograd", "events", "sites", "profile",
    "memory_timeline", "MemoryTimeline",
    "tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye", "rand", "randn",
    "randint", "randperm", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
    "randint_like", "cat", "concat", "concatenate", "stack", "where", "pad", "one_hot", "maximum", "minimum",
    "softmax", "log_softmax", "matmul", "broadcast_tensors", "broadcast_shapes", "nonzero",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "manual_seed", "get_rng_state",
    "set_rng_state", "live_storages", "device", "float16", "float32", "float64", "int32", "int64", "bool",
    "uint8", "int8", "int16", "bfloat16", "half", "float", "double", "long", "int", "short", "get_default_dtype",
    "set_default_dtype",
]
# the op families' free functions, so that ``from tinygrad_like import *`` has them too
__all__ += ["distributed", "jit", "onnx", "inf", "nan", "pi", "e", "newaxis", *legacy.__all__]
__all__ += ["return_types", "Size", "compile", *ops.rounding.__all__, *ops.transcendental.__all__,
            *ops.division.__all__, *ops.arithmetic.__all__, *ops.comparison.__all__, *ops.bitwise.__all__,
            *ops.sorting.__all__, *ops.scans.__all__,
            *ops.statistics.__all__, *ops.sampling.__all__, *ops.products.__all__, *ops.linalg.__all__,
            *ops.solvers.__all__, *ops.decompositions.__all__,
            *ops.shaping.__all__, *ops.scatter.__all__]
__all__ += nn.aten.__all__


_LAZY = ("distributions", "fft", "testing")  # torch imports these with the package; here on first use (~0.1 s)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib  # (the submodule imports the finished package's parts: loaded when first named)
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``tl.nn``: modules, parameters, initialisations and the functional API, shaped like ``torch.nn``.

>>> import tinygrad_like as tl
>>> model = tl.nn.Sequential(tl.nn.Linear(64, 32), tl.nn.ReLU(), tl.nn.Linear(32, 10))
>>> model
Sequential(
  (0): Linear(in_features=64, out_features=32, bias=True)
  (1): ReLU()
  (2): Linear(in_features=32, out_features=10, bias=True)
)
"""

from . import functional, init, utils
from .activation import *  # noqa: F403
from .activation import __all__ as _activation
from .containers import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import *  # noqa: F403
from .conv import __all__ as _conv
from .layers import *  # noqa: F403 - the basic layers and activations
from .layers import __all__ as _layers
from .loss import *  # noqa: F403
from .loss import __all__ as _loss
from .module import Buffer, Module, Parameter
from .normalization import *  # noqa: F403
from .normalization import __all__ as _normalization
from .padding import *  # noqa: F403
from .padding import __all__ as _padding
from .pairwise import *  # noqa: F403
from .pairwise import __all__ as _pairwise
from .pooling import *  # noqa: F403
from .pooling import __all__ as _pooling
from .resample import *  # noqa: F403
from .resample import __all__ as _resample
from .rnn import *  # noqa: F403
from .rnn import __all__ as _rnn
from .sparse import *  # noqa: F403
from .sparse import __all__ as _sparse
from .transformer import *  # noqa: F403
from .transformer import __all__ as _transformer
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .lazy import *  # noqa: F403
from .lazy import __all__ as _lazy
from . import parallel  # noqa: E402 - (after Module: it wraps one)
from .parallel import DataParallel  # noqa: E402


def factory_kwargs(kwargs: dict | None) -> dict:
    """torch's helper for modules that take ``device`` / ``dtype`` / ``memory_format`` (or a ``factory_kwargs``
    dict of them): the one dict of them, with a TypeError for anything else or for a key given twice."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "functional", "init", "utils", "parallel", *_layers, *_activation, *_normalization, *_padding, *_pairwise,
           *_loss, *_rnn, *_transformer, *_conv, *_pooling, *_resample, *_sparse, *_lazy, "Buffer", "Container",
           "AdaptiveLogSoftmaxWithLoss", "DataParallel", "factory_kwargs", "attention", "backends", "common_types",
           "cpp", "grad", "intrinsic", "modules", "parameter", "qat", "quantizable", "quantized"]

# torch.nn's submodules (modules re-exports the classes above, so it comes after __all__)
from . import attention, backends, common_types, cpp, grad, intrinsic, parameter, qat, quantizable  # noqa: E402
from . import modules, quantized  # noqa: E402

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
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import *  # noqa: F403
from .conv import __all__ as _conv
from .layers import *  # noqa: F403 - the basic layers and activations
from .layers import __all__ as _layers
from .loss import *  # noqa: F403
from .loss import __all__ as _loss
from .module import Module, Parameter
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
from . import parallel  # noqa: E402 - (after Module: it wraps one)

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "functional", "init", "utils", "parallel", *_layers, *_activation, *_normalization, *_padding, *_pairwise,
           *_loss, *_rnn, *_transformer, *_conv, *_pooling, *_resample, *_sparse]

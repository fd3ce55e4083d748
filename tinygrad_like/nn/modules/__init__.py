"""``torch.nn.modules``: every layer class, and the submodules torch defines them in (``torch.nn.modules.loss``,
``.batchnorm``, ``.conv``, ``.utils``, ...), for code that imports from there (``from torch.nn.modules.loss import
_Loss``)."""

from .. import __all__ as _nn_all
from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold,
               instancenorm, lazy, linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn, sparse,
               transformer, upsampling, utils)

__all__ = [n for n in _nn_all if n[:1].isupper()]


def _gather_classes() -> None:
    """The layer classes of ``tl.nn`` (its capitalised public names) as this package's names, as torch's."""
    import importlib  # (the parent package is still initialising when this runs; fetched by name, not imported)
    nn = importlib.import_module(__name__.rpartition(".")[0])
    globals().update({n: getattr(nn, n) for n in __all__})


_gather_classes()

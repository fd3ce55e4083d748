"""``torch.serialization``: ``save``/``load`` and the allowlist that ``load(weights_only=True)`` consults.

The containers and the policy live in :mod:`tinygrad_like.io` (see its docstring); this module gives them torch's
module path, so ``torch.serialization.add_safe_globals([argparse.Namespace])`` works under the torch alias.
"""

from __future__ import annotations

import pickle  # noqa: F401 (torch.serialization.pickle: the module torch pickles with by default)

from .io import (
    UNSAFE_MESSAGE,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    get_unsafe_globals_in_checkpoint,
    load,
    safe_globals,
    save,
)
from .unsupported import unsupported_function

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "skip_data", "DEFAULT_PROTOCOL", "UNSAFE_MESSAGE",
           "SourceChangeWarning", "default_restore_location", "location_tag"]

DEFAULT_PROTOCOL = 2  # torch's pickle protocol for torch.save


class SourceChangeWarning(Warning):
    """torch warns with it when a pickled module's source changed; kept for programs that filter it."""


def location_tag(storage) -> str:
    """The device a tensor (or storage) lives on, as the string torch records in a checkpoint (``'cpu'``)."""
    return str(storage.device)


def default_restore_location(storage, location: str):
    """torch's default ``map_location`` step: move ``storage`` (here a tensor) to ``location``."""
    return storage.to(location)


skip_data = unsupported_function(
    "torch.serialization.skip_data",
    "skip_data saves and loads checkpoints without their storage bytes for FakeTensor workflows, which tinygrad_like "
    "does not have; save and load normally")

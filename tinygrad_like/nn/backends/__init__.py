"""``torch.nn.backends``: the remnant of Lua torch's THNN backend selection. There is one backend here."""

from . import thnn

__all__ = ["thnn"]

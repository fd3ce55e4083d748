"""Padding a batch of sequences of different lengths, as ``torch.nn.utils.rnn``.

Packed sequences (``pack_padded_sequence``) are not implemented: the recurrent layers take padded batches, and a
padded batch with a mask shows more of what happens.

>>> import tinygrad_like as tl
>>> from tinygrad_like.nn.utils.rnn import pad_sequence
>>> pad_sequence([tl.tensor([1, 2, 3]), tl.tensor([4])], batch_first=True).tolist()
[[1, 2, 3], [4, 0, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence

from ...functions import pad, stack
from ...tensor import Tensor

__all__ = ["pad_sequence"]


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with ``batch_first``), filling
    the missing steps with ``padding_value``; differentiable with respect to every sequence."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence: expected a sequence of Tensors, but element {i} is {type(s).__name__}")
        if s.ndim == 0 or s.shape[1:] != sequences[0].shape[1:]:
            raise RuntimeError(f"pad_sequence: every sequence must have shape (L, *) with the same trailing dims; "
                               f"sequence 0 has {tuple(sequences[0].shape)} and sequence {i} {tuple(s.shape)}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        widths = [0, 0] * (s.ndim - 1) + ([0, missing] if padding_side == "right" else [missing, 0])
        padded.append(pad(s, widths, value=padding_value) if missing else s)
    return stack(padded, 0 if batch_first else 1)

"""Batches of sequences of different lengths, as ``torch.nn.utils.rnn``: padding and packing.

A *padded* batch is one (L, B, *) tensor (``batch_first``: (B, L, *)) whose short sequences are filled up; a
*packed* batch (:class:`PackedSequence`) keeps only the real steps, time-major: first step 0 of every sequence,
then step 1 of those at least 2 long, and so on, with ``batch_sizes[t]`` = how many sequences have a step ``t``.
The sequences are sorted longest first (``sorted_indices``; ``unsorted_indices`` undoes it), so the sequences
still running at step t are always the first ``batch_sizes[t]``. The recurrent layers take a PackedSequence and
then run each sequence only over its own steps.

Packing and unpacking are each one ``index_select`` (a gather of rows), so gradients flow back through them to the
padded input as torch's do (a scatter of the rows; zeros at the padding).

>>> import tinygrad_like as tl
>>> from tinygrad_like.nn.utils.rnn import pack_sequence, pad_packed_sequence, pad_sequence
>>> pad_sequence([tl.tensor([1, 2, 3]), tl.tensor([4])], batch_first=True).tolist()
[[1, 2, 3], [4, 0, 0]]
>>> packed = pack_sequence([tl.tensor([1.0, 2.0, 3.0]), tl.tensor([4.0])])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 3.]), tensor([2, 1, 1]))
>>> pad_packed_sequence(packed, batch_first=True)[0].tolist()
[[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ... import dtypes
from ...creation import arange, tensor
from ...functions import cat, pad, stack
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional: Tensor | None, fn: Callable[[Tensor], Tensor]) -> Tensor | None:
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The packed steps of a batch of sequences (see the module's docstring), as torch's NamedTuple.

    ``data`` (sum of lengths, *) lives on any device and in any dtype; ``batch_sizes`` is always a CPU int64
    tensor; ``sorted_indices`` / ``unsorted_indices`` (int64, on ``data``'s device, or None when the batch came
    sorted) say how the sequences were reordered. Made by :func:`pack_padded_sequence` and :func:`pack_sequence`,
    not by hand."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # torch's older form PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with(self, data: Tensor) -> PackedSequence:
        """``self`` with ``data`` replaced (``self`` itself when nothing changed); the permutations follow the data's
        device, ``batch_sizes`` stays on the CPU."""
        if data is self.data:
            return self

        def move(t: Tensor) -> Tensor:
            return t.to(data.device)

        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(...)`` (dtype and/or device); ``self`` when that changes nothing, as torch's."""
        return self._with(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self._with(self.data.cuda(*args, **kwargs))

    def cpu(self) -> PackedSequence:
        return self._with(self.data.cpu())

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dtypes.int32)

    def short(self) -> PackedSequence:
        return self._with(self.data.short())

    def char(self) -> PackedSequence:
        return self._with(self.data.char())

    def byte(self) -> PackedSequence:
        return self._with(self.data.byte())

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a CUDA device."""
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None stays None): ``out[permutation[i]] = i``."""
    if permutation is None:
        return None
    n = permutation.shape[0]
    return permutation.new_zeros(n).scatter(0, permutation, arange(n, dtype=permutation.dtype,
                                                                   device=permutation.device))


# ---- padding --------------------------------------------------------------------------------------------
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


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The inverse of :func:`pad_sequence`: a list of ``(lengths[i], *)`` tensors (views of the padded batch).

    torch transposes a time-major ``padded_sequences`` *in place* (``transpose_``) and leaves it so; this reads a
    transposed view instead and leaves the caller's tensor as it was."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lens = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if len(lens) != x.shape[0]:
        raise ValueError(f"zip() argument 2 is shorter than argument 1 (unpad_sequence: {x.shape[0]} sequences but "
                         f"{len(lens)} lengths)")
    return [seq[:max(0, min(int(n), x.shape[1]))] for seq, n in zip(x.unbind(0), lens)]


# ---- packing --------------------------------------------------------------------------------------------
def _lengths_list(lengths, input: Tensor) -> list[int]:
    """``lengths`` (a CPU tensor of any real dtype, truncated to int64 as torch's ``.to(torch.int64)``, or a
    sequence of numbers) -> Python ints, with torch's checks on the tensor."""
    if not isinstance(lengths, Tensor):
        return [int(v) for v in np.asarray(lengths).astype(np.int64).reshape(-1)]
    if lengths.device.type != "cpu" or lengths.ndim != 1:  # ("Long": torch converts the dtype before it checks)
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D "
                           f"{lengths.device} Long tensor")
    return [int(v) for v in lengths.to(dtypes.int64).tolist()]


def _batch_sizes(lengths: list[int], input: Tensor, batch_first: bool) -> list[int]:
    """torch's checks of a sorted batch's lengths, then ``batch_sizes``."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got 1) (pack_padded_"
                         f"sequence: input of shape {tuple(input.shape)} has no batch dim)")
    batch = input.shape[0 if batch_first else 1]
    steps = input.shape[1 if batch_first else 0]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:  # torch reads past the input here; we stop
        raise RuntimeError(f"pack_padded_sequence: the longest length is {lengths[0]}, but the input has only "
                           f"{steps} time steps (input of shape {tuple(input.shape)}, batch_first={batch_first})")
    counts = np.bincount(np.asarray(lengths), minlength=lengths[0] + 1)  # how many sequences end at each length
    return (len(lengths) - np.cumsum(counts)[:-1]).tolist()  # batch_sizes[t] = #{i: lengths[i] > t}


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, B, *) (``batch_first``: (B, L, *)) whose sequence ``i`` is ``lengths[i]`` long.

    With ``enforce_sorted`` the lengths must already be in decreasing order; otherwise the batch is sorted here and
    the PackedSequence remembers how (its ``unsorted_indices`` put every result back in the caller's order)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence(): argument 'input' must be Tensor, not {type(input).__name__}")
    lens = _lengths_list(lengths, input)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # stable, as torch's sort of small lengths
        lens = [lens[i] for i in order]
        sorted_indices = tensor(order, dtype=dtypes.int64, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    sizes = _batch_sizes(lens, input, batch_first)
    batch, steps = input.shape[0 if batch_first else 1], input.shape[1 if batch_first else 0]
    # row of step t of sequence b in the input seen as (L*B, *) (or (B*L, *))
    rows = [b * steps + t if batch_first else t * batch + b for t, n in enumerate(sizes) for b in range(n)]
    flat = input.reshape(batch * steps, *input.shape[2:])
    data = flat.index_select(0, tensor(rows, dtype=dtypes.int64, device=input.device))
    return PackedSequence(data, tensor(sizes, dtype=dtypes.int64, device="cpu"), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of :func:`pack_padded_sequence`: (padded batch, lengths), in the order the sequences had before
    packing; ``total_length`` pads the time dim further (e.g. back to the length of the batch packed)."""
    sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = sizes[0]
    # every (t, b) of the padded batch reads its row of data, or the padding row appended after the data
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    table = np.full((steps, batch), offsets[-1], np.int64)
    for t, n in enumerate(sizes):
        table[t, :n] = offsets[t] + np.arange(n)
    if batch_first:
        table = table.T
    fill = data.new_full((1, *data.shape[1:]), padding_value)
    rows = cat([data, fill]).index_select(0, tensor(table.reshape(-1), dtype=dtypes.int64, device=data.device))
    padded = rows.reshape(*table.shape, *data.shape[1:])
    lengths = (np.asarray(sizes)[:, None] > np.arange(batch)[None]).sum(0)
    lengths = tensor(lengths.astype(np.int64), device="cpu")
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (longest first, unless ``enforce_sorted=False``)."""
    lengths = [v.shape[0] for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of :func:`pack_sequence`: the list of (L_i, *) tensors, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

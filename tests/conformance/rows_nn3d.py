"""Conformance rows of the 3-D layers and packed sequences: values and gradients against torch for the functional
forms, inputs and weights both leaves.

conv_transpose3d (stride, padding, output_padding, groups, dilation, bias, unbatched, a non-contiguous input),
max/avg pooling in 3-D (padding, dilation, ceil_mode, count_include_pad, divisor_override, return_indices, ties),
adaptive average and max pooling in 3-D, max_unpool3d, interpolate on 5-D inputs (nearest, nearest-exact,
trilinear, area), and packing/unpacking of padded batches (``nn.utils.rnn``), whose gradients reach the padded input
(zeros at the padding). The recurrent layers with packed input are module tests (tests/test_api_nn_packed.py).
"""

from __future__ import annotations

from . import C, S, k

T5 = S((2, 4, 5, 3, 4), view="T")  # the op sees a transposed (non-contiguous) view of the leaf


def _f(m):
    return m.nn.functional


def _rnn(m):
    return m.nn.utils.rnn


CONV = [
    C("conv_transpose3d", lambda m, x, w, b: _f(m).conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
      S((2, 3, 3, 4, 3)), S((3, 2, 3, 2, 3)), S((2,))),
    C("conv_transpose3d-groups", lambda m, x, w: _f(m).conv_transpose3d(x, w, stride=(2, 1, 3), padding=(1, 0, 1),
                                                                         groups=2, dilation=(2, 1, 1),
                                                                         output_padding=(1, 0, 2)),
      T5, S((4, 3, 2, 3, 2))),
    C("conv_transpose3d-unbatched", lambda m, x, w, b: _f(m).conv_transpose3d(x, w, b, dilation=2, output_padding=1),
      S((3, 2, 3, 2)), S((3, 2, 2, 2, 2)), S((2,))),
]

POOL = [
    C("max_pool3d-ceil-indices", lambda m, x: _f(m).max_pool3d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
      S((2, 3, 5, 6, 7))),
    C("max_pool3d-dilation", lambda m, x: _f(m).max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), dilation=(2, 1, 2)),
      T5),
    C("max_pool3d-ties", lambda m, x: _f(m).max_pool3d(x, 2, 1, return_indices=True), k(S((3, 4, 4, 5)), "tie")),
    C("avg_pool3d-ceil-nopad", lambda m, x: _f(m).avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
      S((2, 3, 5, 6, 7))),
    C("avg_pool3d-divisor", lambda m, x: _f(m).avg_pool3d(x, (2, 3, 1), (1, 2, 3), (1, 1, 0), divisor_override=5),
      T5),
    C("avg_pool3d-unbatched", lambda m, x: _f(m).avg_pool3d(x, 2), S((3, 4, 5, 6))),
    C("adaptive_avg_pool3d", lambda m, x: _f(m).adaptive_avg_pool3d(x, (2, None, 3)), T5),
    C("adaptive_avg_pool3d-1", lambda m, x: _f(m).adaptive_avg_pool3d(x, 1), S((3, 4, 5, 6))),
    C("adaptive_max_pool3d", lambda m, x: _f(m).adaptive_max_pool3d(x, (3, 4, 5), return_indices=True),
      S((2, 3, 5, 6, 7))),
    C("adaptive_max_pool3d-tiles", lambda m, x: _f(m).adaptive_max_pool3d(x, (5, 1, 2), return_indices=True), T5),
    C("max_unpool3d", lambda m, x: _f(m).max_unpool3d(*_f(m).max_pool3d(x, 2, return_indices=True), 2,
                                                      output_size=(5, 7, 7)), S((2, 3, 5, 7, 7))),
]

RESAMPLE = [
    C("interpolate5d-nearest", lambda m, x: _f(m).interpolate(x, scale_factor=(1.5, 2, 0.7)), S((2, 3, 4, 3, 5))),
    C("interpolate5d-nearest-exact", lambda m, x: _f(m).interpolate(x, size=(3, 8, 5), mode="nearest-exact"), T5),
    C("interpolate5d-trilinear-ac", lambda m, x: _f(m).interpolate(x, size=(7, 4, 9), mode="trilinear",
                                                                   align_corners=True), S((1, 2, 4, 3, 5))),
    C("interpolate5d-trilinear-x2", lambda m, x: _f(m).interpolate(x, scale_factor=2, mode="trilinear"), T5),
    C("interpolate5d-area", lambda m, x: _f(m).interpolate(x, size=(2, 2, 3), mode="area"), S((2, 3, 4, 5, 7))),
]

PACKED = [
    C("pack_padded_sequence", lambda m, x: _rnn(m).pack_padded_sequence(x, [5, 3, 3, 1]).data, S((5, 4, 3))),
    C("pack_padded_sequence-unsorted-bf", lambda m, x: _rnn(m).pack_padded_sequence(
        x, m.tensor([2, 5, 1, 4], device="cpu"), batch_first=True, enforce_sorted=False).data, S((4, 5, 3))),
    C("pad_packed_sequence-roundtrip", lambda m, x: _rnn(m).pad_packed_sequence(
        _rnn(m).pack_padded_sequence(x, [3, 6, 2], batch_first=True, enforce_sorted=False), batch_first=True,
        padding_value=-1.5, total_length=7), S((3, 6, 2))),
    C("pack_sequence-unpack", lambda m, a, b, c: _rnn(m).unpack_sequence(_rnn(m).pack_sequence([a, b, c],
                                                                                               enforce_sorted=False)),
      S((2, 3)), S((4, 3)), S((1, 3))),
    C("pad_packed_sequence-2d", lambda m, x: _rnn(m).pad_packed_sequence(_rnn(m).pack_padded_sequence(x, [4, 4, 2]))[0],
      S((4, 3))),
]

CASES = CONV + POOL + RESAMPLE + PACKED

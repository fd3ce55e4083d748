"""Conformance rows of the convolution, pooling, resampling and patches family (issue 17): values and gradients
against torch for the functional forms (``m.nn.functional.*``), inputs and weights both leaves.

conv1d/conv2d/conv3d (groups, depthwise, dilation, 'same', stride, unbatched, non-contiguous input),
conv_transpose1d/2d (stride, padding, output_padding, groups, dilation), max/avg pooling in 1-D and 2-D (padding,
dilation, ceil_mode, count_include_pad, divisor_override, return_indices), adaptive average and max pooling,
max_unpool, interpolate (every mode, align_corners), pixel_shuffle/unshuffle, unfold/fold, embedding and
embedding_bag (the weight is the leaf).
"""

from __future__ import annotations

from . import C, S

T = S((2, 4, 6, 5), view="T")  # the op sees a transposed (non-contiguous) view of the leaf


def _f(m):
    return m.nn.functional


CONV = [
    C("conv1d", lambda m, x, w, b: _f(m).conv1d(x, w, b), S((2, 3, 9)), S((4, 3, 3)), S((4,))),
    C("conv1d-groups-same", lambda m, x, w: _f(m).conv1d(x, w, groups=2, padding="same", dilation=2),
      S((2, 4, 9)), S((6, 2, 4))),
    C("conv1d-unbatched-stride", lambda m, x, w: _f(m).conv1d(x, w, stride=2, padding=1), S((3, 9)), S((2, 3, 3))),
    C("conv2d-groups", lambda m, x, w, b: _f(m).conv2d(x, w, b, padding=1, groups=2), S((2, 4, 6, 5)),
      S((6, 2, 3, 3)), S((6,))),
    C("conv2d-depthwise", lambda m, x, w: _f(m).conv2d(x, w, groups=4, stride=(2, 1), dilation=(1, 2)), T,
      S((8, 1, 3, 2))),
    C("conv2d-same-even", lambda m, x, w: _f(m).conv2d(x, w, padding="same"), S((1, 2, 5, 6)), S((3, 2, 4, 2))),
    C("conv2d-plain-T", lambda m, x, w: _f(m).conv2d(x, w, padding=1), T, S((3, 4, 3, 3))),
    C("conv3d", lambda m, x, w, b: _f(m).conv3d(x, w, b, padding=1, stride=(2, 1, 1)), S((2, 2, 4, 4, 3)),
      S((3, 2, 2, 3, 2)), S((3,))),
    C("conv3d-groups", lambda m, x, w: _f(m).conv3d(x, w, groups=2, dilation=(2, 1, 1)), S((1, 4, 5, 3, 3)),
      S((2, 2, 2, 2, 2))),
    C("conv_transpose1d", lambda m, x, w, b: _f(m).conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
      S((2, 3, 5)), S((3, 4, 3)), S((4,))),
    C("conv_transpose2d", lambda m, x, w, b: _f(m).conv_transpose2d(x, w, b, stride=2, output_padding=1),
      S((2, 3, 4, 3)), S((3, 2, 3, 3)), S((2,))),
    C("conv_transpose2d-groups", lambda m, x, w: _f(m).conv_transpose2d(x, w, stride=(2, 3), padding=1, groups=2,
                                                                         dilation=2, output_padding=(1, 0)),
      T, S((4, 3, 3, 2))),
    C("conv_transpose2d-unbatched", lambda m, x, w: _f(m).conv_transpose2d(x, w, dilation=3, output_padding=2),
      S((3, 4, 3)), S((3, 2, 2, 2))),
]

POOL = [
    C("max_pool2d-ceil", lambda m, x: _f(m).max_pool2d(x, 3, 2, 1, ceil_mode=True), S((2, 3, 8, 7))),
    C("max_pool2d-dilation", lambda m, x: _f(m).max_pool2d(x, 3, 1, 1, dilation=2), T),
    C("max_pool2d-indices", lambda m, x: _f(m).max_pool2d(x, 2, ceil_mode=True, return_indices=True),
      S((3, 5, 7))),
    C("max_pool1d", lambda m, x: _f(m).max_pool1d(x, 3, 2, 1, ceil_mode=True), S((2, 3, 10))),
    C("max_pool1d-indices", lambda m, x: _f(m).max_pool1d(x, 2, return_indices=True), S((3, 9))),
    C("avg_pool2d-ceil-nopad", lambda m, x: _f(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
      S((2, 3, 8, 7))),
    C("avg_pool2d-divisor", lambda m, x: _f(m).avg_pool2d(x, (2, 3), (1, 2), (1, 1), divisor_override=4), T),
    C("avg_pool1d", lambda m, x: _f(m).avg_pool1d(x, 4, 3, 2, ceil_mode=True), S((2, 3, 10))),
    C("adaptive_avg_pool1d", lambda m, x: _f(m).adaptive_avg_pool1d(x, 4), S((2, 3, 10))),
    C("adaptive_avg_pool2d", lambda m, x: _f(m).adaptive_avg_pool2d(x, (3, None)), T),
    C("adaptive_max_pool1d", lambda m, x: _f(m).adaptive_max_pool1d(x, 4, return_indices=True), S((2, 3, 10))),
    C("adaptive_max_pool2d", lambda m, x: _f(m).adaptive_max_pool2d(x, (4, 3)), S((2, 3, 7, 8))),
    C("adaptive_max_pool2d-tiles", lambda m, x: _f(m).adaptive_max_pool2d(x, 2, return_indices=True), T),
    C("max_unpool2d", lambda m, x: _f(m).max_unpool2d(*_f(m).max_pool2d(x, 2, return_indices=True), 2), S((2, 3,
                                                                                                         6, 4))),
    C("max_unpool1d", lambda m, x: _f(m).max_unpool1d(*_f(m).max_pool1d(x, 3, 2, 1, return_indices=True), 3, 2, 1,
                                                      output_size=[9]), S((2, 3, 9))),
]

RESAMPLE = [
    C("interpolate-nearest", lambda m, x: _f(m).interpolate(x, scale_factor=1.7), S((2, 3, 5, 4))),
    C("interpolate-nearest-exact", lambda m, x: _f(m).interpolate(x, size=(7, 3), mode="nearest-exact"), T),
    C("interpolate-linear", lambda m, x: _f(m).interpolate(x, scale_factor=2.5, mode="linear"), S((2, 3, 5))),
    C("interpolate-linear-ac", lambda m, x: _f(m).interpolate(x, size=9, mode="linear", align_corners=True),
      S((3, 4, 6), view="step")),
    C("interpolate-bilinear", lambda m, x: _f(m).interpolate(x, size=(7, 3), mode="bilinear"), T),
    C("interpolate-bilinear-ac", lambda m, x: _f(m).interpolate(x, scale_factor=(1.5, 0.7), mode="bilinear",
                                                                align_corners=True), S((2, 3, 5, 4))),
    C("interpolate-bicubic", lambda m, x: _f(m).interpolate(x, scale_factor=2, mode="bicubic"), S((1, 2, 4, 5))),
    C("interpolate-trilinear", lambda m, x: _f(m).interpolate(x, size=(3, 5, 2), mode="trilinear"),
      S((1, 2, 2, 3, 4))),
    C("interpolate-area", lambda m, x: _f(m).interpolate(x, size=(2, 3), mode="area"), S((2, 3, 5, 7))),
    C("pixel_shuffle", lambda m, x: _f(m).pixel_shuffle(x, 2), S((2, 8, 3, 2))),
    C("pixel_unshuffle", lambda m, x: _f(m).pixel_unshuffle(x, 2), S((3, 4, 6), view="step")),
]

PATCHES = [
    C("unfold", lambda m, x: _f(m).unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), T),
    C("unfold-unbatched", lambda m, x: _f(m).unfold(x, 2), S((3, 4, 5))),
    C("fold", lambda m, x: _f(m).fold(x, (5, 6), 3, padding=1, stride=2), S((2, 18, 9))),
    C("fold-unbatched", lambda m, x: _f(m).fold(x, (4, 5), 2, stride=1), S((8, 12))),
    C("embedding-padding_idx", lambda m, w: _f(m).embedding(m.tensor([[1, 2, 2], [0, 4, 2]]), w, padding_idx=2),
      S((5, 3))),
    C("embedding-freq", lambda m, w: _f(m).embedding(m.tensor([1, 2, 2, 4, 2]), w, scale_grad_by_freq=True),
      S((5, 3))),
    C("embedding_bag-mean", lambda m, w: _f(m).embedding_bag(m.tensor([1, 2, 4, 3, 2, 0]), w, m.tensor([0, 2, 2]),
                                                             padding_idx=2), S((5, 3))),
    C("embedding_bag-max", lambda m, w: _f(m).embedding_bag(m.tensor([[1, 2, 4], [3, 2, 0]]), w, mode="max"),
      S((5, 3))),
    C("embedding_bag-sum-psw", lambda m, w, p: _f(m).embedding_bag(m.tensor([1, 2, 4, 3]), w, m.tensor([0, 1]),
                                                                   mode="sum", per_sample_weights=p),
      S((5, 3)), S((4,))),
]

CASES = CONV + POOL + RESAMPLE + PATCHES

"""The ops, one family per module: each holds the family's graph nodes (``Function`` subclasses), the Tensor methods
that apply them (the family's mixin, combined into ``Tensor`` by :mod:`tinygrad_like.tensor`) and its free functions
(``tl.<name>``, or ``tl.nn.functional.<name>`` for the layer families). The primitives the nodes call live in
:mod:`tinygrad_like.backends`.

- arithmetic a learner follows first: ``elementwise`` (``+ - * / **``, ``where``, exp, log, relu, tanh, sigmoid);
- the rest of the math: ``transcendental``, ``rounding``, ``division``, ``arithmetic`` (lerp, addcmul, in-place
  forms), ``bitwise``, ``comparison`` (``== <``, clamp, maximum, isclose);
- reductions and products: ``reduce`` (sum, max, softmax's nodes, ``@``), ``products`` (mm, bmm, einsum...),
  ``linalg`` (norms, SVD, diagonals), ``solvers`` (solve, inv, det, Cholesky, LU), ``decompositions`` (QR, eigh,
  eig, pinv, lstsq, matrix_exp), ``scans``, ``statistics``, ``sorting``, ``sampling``;
- shapes and indices: ``movement`` (views, cat, pad), ``shaping``, ``indexing``, ``scatter``;
- tensors themselves: ``conversion`` (dtype, device, pickling), ``factories`` (``new_zeros``...), ``inplace``;
- layers (``tl.nn.functional``): ``activation``, ``linear``, ``conv``, ``pooling``, ``normalization``, ``dropout``,
  ``loss``, ``attention``, ``embedding``, ``resample``, ``padding``, ``distance``.

``_util``, ``_math_util`` and ``_nn_args`` hold what several families share; ``_linalg_host`` what the solvers and
decompositions share (their checks, the host round trip, LU and LDL^T in NumPy).
"""

"""PyTorch's names for our graph nodes: class names (``AddBackward0``), input slots and ``_saved_*`` attributes.

Our op classes (``Add``, ``Matmul``...) are named after the op, and ``node.name`` keeps that short name; the views
show :func:`view_label` (torch's name without its ``Backward<N>``: ``Mm``, ``Transpose``). PyTorch names a node
after the derivative formula that computes it (``AddBackward0``, ``MmBackward0``), and programs and libraries read
those names (``type(z.grad_fn).__name__``, torchviz). Each of our op classes takes its PyTorch name as its class
name when it is defined (:func:`torch_name`: ``<Op>Backward0`` unless the table says otherwise). One class of ours
that stands for several of torch's formulas (``Sum`` for ``SumBackward0`` and ``SumBackward1``, ``Matmul`` for
``MmBackward0``/``MvBackward0``/``DotBackward0``/``BmmBackward0``...) gets one subclass per variant, and the node
takes the right one as its forward finishes (:func:`install_variants`: only these few classes pay for it, when a
node is recorded).

Deliberate differences, where our graph has another structure than torch's:

* a batched ``@`` is one ``BmmBackward0`` node (torch: ``UnsafeViewBackward0`` over ``BmmBackward0``); a 1-D @
  2-D matmul is ``SqueezeBackward4`` over ``MmBackward0`` over ``UnsqueezeBackward0``, as torch's;
* ``F.linear`` is one ``AddmmBackward0`` (``MmBackward0`` without a bias) over the weight itself: torch puts a
  ``TBackward0`` between (and a ``ViewBackward0`` on top for 3-D inputs);
* ``reshape`` of a non-contiguous tensor is ``ViewBackward0`` over ``CloneBackward0`` (torch:
  ``UnsafeViewBackward0`` over ``CloneBackward0``); ``std`` is ``StdBackward0`` over ``VarBackward0``;
  ``narrow`` is ``SliceBackward0``; ``cross_entropy`` and the losses are composed of the ops they use;
* one permutation node stands for ``t()``, ``.T``, ``transpose`` and ``permute``, named as torch names it after the
  method called: ``TBackward0`` (``t()``), ``TransposeBackward0`` (``transpose``, ``swapaxes``, ``.mT``),
  ``PermuteBackward0`` (``permute``, ``.T``, ``movedim``); ``split``/``chunk``'s slices are each a
  ``SplitBackward0`` (``SplitWithSizesBackward0`` for a list of sizes), ``unbind``'s an ``UnbindBackward0``
  (torch: one node with several outputs);
* ``number - x`` is ``SubBackward0`` (torch: ``RsubBackward1``);
* ``y[i] = v`` on a tensor that is not a view is ``IndexPutBackward0`` (torch: ``CopySlices``). (An autograd
  in-place op, ``y.add_(1)``, records the op's node alone, as torch: ``AddBackward0`` over ``y``'s node.)

``next_functions`` lists torch's inputs only (:data:`SLOTS`: our nodes also keep a ``None`` slot for each option
argument, ``dim``, ``keepdim``...), in torch's order. ``_saved_*`` attributes are properties made per class
(:func:`install_saved`): torch's names for the common ops (:data:`SAVED`), a generic rule for the others.
"""

from __future__ import annotations

import math

# our class name -> torch's, where it is not "<name>Backward0"
NAMES = {
    "Reshape": "ViewBackward0", "Contiguous": "CloneBackward0", "Permute": "PermuteBackward0",
    "Slice": "SliceBackward0", "Matmul": "MmBackward0", "Squeeze": "SqueezeBackward0", "Linear": "AddmmBackward0",
    "AddMatmul": "AddmmBackward0",
    "Sum": "SumBackward0", "Mean": "MeanBackward0", "Pow": "PowBackward0", "MaxMin": "AmaxBackward0",
    "MaxMinAll": "MaxBackward1", "MaxMinDim": "MaxBackward0", "StdFromVar": "StdBackward0",
    "Cast": "ToCopyBackward0", "ToDevice": "ToCopyBackward0", "Dropout": "MulBackward0",
    "LayerNorm": "NativeLayerNormBackward0", "Conv2d": "ConvolutionBackward0", "ConvTranspose2d":
    "ConvolutionBackward0", "MaxPool2d": "MaxPool2DWithIndicesBackward0", "Pad": "ConstantPadNdBackward0",
    "VectorNorm": "LinalgVectorNormBackward0", "Cross": "LinalgCrossBackward0", "Svd": "LinalgSvdBackward0",
    "LogSumExp": "LogsumexpBackward0", "Log1p": "Log1PBackward0", "Tri": "TrilBackward0", "Clamp": "ClampBackward1",
    "ClampTensors": "ClampBackward0", "Lerp": "LerpBackward0", "EmbeddingRows": "EmbeddingBackward0",
    "ViewOfBase": "AsStridedBackward0", "WriteThroughView": "CopySlices", "_AddC": "AddBackward0",
    "_Remainder": "RemainderBackward0", "Checkpoint": "CheckpointFunctionBackward", "EmbedSlice":
    "SliceBackwardBackward0", "CrossEntropy": "NllLossBackward0", "LSTMLayer": "MkldnnRnnLayerBackward0",
}

# our class name -> which of our input slots are torch's inputs, in torch's order (the others are options: dims,
# flags, indices). None: all of them.
SLOTS = {
    "BinaryCrossEntropyWithLogits": 2,
    "Sum": 1, "Mean": 1, "Reshape": 1, "Permute": 1, "Slice": 1, "Index": 1, "Expand": 1, "Squeeze": 1,
    "Unsqueeze": 1, "Softmax": 1, "LogSoftmax": 1, "MaxMinAll": 1, "MaxMinDim": 1, "MaxMin": 1, "Var": 1,
    "Gelu": 1, "LeakyRelu": 1, "Elu": 1, "Celu": 1, "Softplus": 1, "Threshold": 1, "Hardtanh": 1, "Dropout": 2,
    "Pad": 1, "Prod": 1, "VectorNorm": 1, "LogSumExp": 1, "Sort": 1, "Topk": 1, "Tri": 1, "Roll": 1, "Diagonal": 1,
    "IndexSelect": 1, "Round": 1, "Unfold": 1, "Clamp": 1, "Cast": 1, "ToDevice": 1, "Cumsum": 1, "Cumprod": 1,
    "LogCumSumExp": 1, "Repeat": 1, "Flip": 1, "MaskedFill": 1, "Gather": 1, "Addcmul": 3, "Addcdiv": 3,
    "Lerp": 2, "Where": (1, 2), "ScatterAdd": (0, 3), "LayerNorm": 3, "Conv2d": 3, "AddMatmul": 3,
    "ScaledDotProductAttention": 3, "Pow": lambda n: {"PowBackward0": (0,), "PowBackward2": (1,)}.get(
        type(n).__name__, (0, 1)), "Linear": lambda n: (2, 0, 1) if n.has_bias else (0, 1),
    "MaxPool2d": 1, "Cross": 2, "Logit": 1, "Kthvalue": 1, "Median": 1, "Mode": 1, "Cummax": 1, "Cummin": 1,
    "EmbeddingRows": 1, "Im2Col": 1, "Col2Im": 1, "DiagEmbed": 1, "ViewOfBase": 1, "Cat": -1, "Stack": -1,
    "LSTMLayer": 6, "GRULayer": 4, "RNNLayer": 4,
}


def torch_name(cls_name: str) -> str:
    """PyTorch's class name for the node of our op class ``cls_name``."""
    return NAMES.get(cls_name) or f"{cls_name.lstrip('_')}Backward0"


# ---- what the views call a node ------------------------------------------------------------------------------
#: Our op classes whose one node stands for several of torch's, where torch's name would name only a part of it:
#: the views show ours. ``F.linear`` is torch's ``TBackward0`` and ``AddmmBackward0`` (and ``ViewBackward0``s
#: around a 3-D input), ``cross_entropy`` its ``LogSoftmaxBackward0`` and ``NllLossBackward0``, a batched ``@``
#: (our ``BmmBackward0``) its ``ExpandBackward0``/``ViewBackward0``s around ``BmmBackward0`` and an
#: ``UnsafeViewBackward0``. An LSTM layer's node is torch's ``MkldnnRnnLayerBackward0`` (its name on the CPU): the
#: views say ``LSTMLayer``, which a learner can read.
OWN_LABELS = {"Linear": "Linear", "CrossEntropy": "CrossEntropy", "ScaledDotProductAttention":
              "ScaledDotProductAttention", "BmmBackward0": "Matmul", "LSTMLayer": "LSTMLayer"}
_labels: dict = {}  # node class -> its label


def view_label(node) -> str:
    """What the views call ``node``: torch's class name without its ``Backward<N>`` suffix, as ``print(y.grad_fn)``
    and PyTorch's tutorials name it (``TransposeBackward0``: ``"Transpose"``, ``ViewBackward0``: ``"View"``), except
    where our node stands for several of torch's (:data:`OWN_LABELS`); a user's own Function keeps its name."""
    cls = type(node)
    label = _labels.get(cls)
    if label is None:
        ours, theirs = str(getattr(cls, "name", cls.__name__)), cls.__name__
        if not getattr(cls, "_builtin", False):
            label = ours
        else:
            label = OWN_LABELS.get(ours) or OWN_LABELS.get(theirs) or _strip_backward(theirs) or ours
        if len(_labels) < 10_000:
            _labels[cls] = label
    return label


def _strip_backward(name: str) -> str:
    """``"AddBackward0"`` -> ``"Add"``, ``"CopySlices"`` -> ``"CopySlices"``."""
    head, sep, tail = name.rpartition("Backward")
    return head if sep and tail.isdigit() else name


# ---- variants: one class of ours, several of torch's -----------------------------------------------------------
def _sum(node, x, args) -> str:  # sum() over everything, or over dims
    return "SumBackward0" if not args or args[0] is None else "SumBackward1"


def _mean(node, x, args) -> str:
    return "MeanBackward0" if not args or args[0] is None else "MeanBackward1"


_MATMUL = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0", (1, 2): "MmBackward0"}


def matmul_name(a_ndim: int, b_ndim: int) -> str:
    """torch's node of ``a @ b`` for operands of these dims (ops/reduce.py's Matmul sets it in forward)."""
    return _MATMUL.get((a_ndim, b_ndim), "BmmBackward0")


def _matmul(node, x, args) -> str:
    return matmul_name(node.a_ndim, node.b_ndim)


def _permute(node, x, args) -> str:  # (torch names the node after the method: transpose and t pass their name)
    return args[1] if len(args) > 1 and args[1] else "PermuteBackward0"


def _slice(node, x, args) -> str:
    index = node.index if isinstance(node.index, tuple) else (node.index,)
    ints = [i for i in index if isinstance(i, int) and not isinstance(i, bool)]
    cut = [i for i in index if isinstance(i, slice) and i != slice(None)]
    return "SelectBackward0" if ints and not cut and len(ints) == 1 else "SliceBackward0"


def _pow(node, x, args) -> str:
    if node.value is not None:
        return "PowBackward0"
    if x._x.ndim == 0 and not x.requires_grad:  # (a number raised to a tensor power: torch's pow(Scalar, Tensor))
        return "PowBackward2"
    return "PowBackward1"


VARIANTS = {
    "Sum": _sum, "Mean": _mean,
    "Matmul": _matmul, "Permute": _permute, "Slice": _slice, "Pow": _pow,
    "MaxMin": lambda n, x, a: "AmaxBackward0" if n.is_max else "AminBackward0",
    "MaxMinAll": lambda n, x, a: "MaxBackward1" if n.is_max else "MinBackward1",
    "MaxMinDim": lambda n, x, a: "MaxBackward0" if a[2] else "MinBackward0",  # (forward(x, dim, keepdim, is_max, ...))
    "Linear": lambda n, x, a: "AddmmBackward0" if n.has_bias else "MmBackward0",
    "Tri": lambda n, x, a: "TriuBackward0" if n.upper else "TrilBackward0",
    "Squeeze": lambda n, x, a: "SqueezeBackward0" if not a or a[0] is None else "SqueezeBackward2" if isinstance(
        a[0], (tuple, list)) else "SqueezeBackward1",
    "AddMatmul": lambda n, x, a: "AddmvBackward0" if n.vec else "BaddbmmBackward0" if a[0].ndim == 3 and not n.batch_sum
    else "AddbmmBackward0" if n.batch_sum else "AddmmBackward0",
    "Lerp": lambda n, x, a: "LerpBackward0" if not hasattr(a[-1], "_x") else "LerpBackward1",
}


def install_variants(cls, make_name) -> None:
    """Give ``cls`` (an op class with variants) one subclass per torch name, and a ``_pick(node, x, args)`` that
    :meth:`Function.apply` calls once it records a node of ``cls`` (not under no_grad): the node moves to its
    variant's class (the node's attributes, and the arguments, tell which)."""
    pick = VARIANTS[cls._tl_base]
    default = cls.__name__
    classes = {default: cls}

    def variant(name: str) -> type:
        sub = classes.get(name)
        if sub is None:
            sub = classes[name] = type(cls)(name, (cls,), {"__slots__": (), "__module__": cls.__module__,
                                                          "_variant_of": cls, "__qualname__": name})
            sub.name = make_name(str(cls.name), name)
            install_saved(sub)
        return sub

    def move(node, x, args) -> None:
        if type(node) is cls:  # (not a subclass of ours with variants of its own)
            name = pick(node, x, args)
            if name != default:
                node.__class__ = classes.get(name) or variant(name)

    cls._pick = staticmethod(move)
    cls._variants = classes
    cls._variant = staticmethod(variant)  # (a name no rule picks: matmul's 1-D @ 2-D squeeze, SqueezeBackward4)


def torch_slots(node) -> tuple:
    """Which of ``node.next``'s slots are torch's inputs, in torch's order."""
    spec = SLOTS.get(getattr(type(node), "_tl_base", ""), None)
    n = len(node.next)
    if spec is None:
        return tuple(range(n))
    if callable(spec):
        spec = spec(node)
    if isinstance(spec, tuple):
        return tuple(i for i in spec if i < n)
    if spec < 0:
        return tuple(range(n + spec))
    return tuple(range(min(spec, n)))


# ---- _saved_* attributes ----------------------------------------------------------------------------------------
FREED_MESSAGE = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
                 "have already been freed). Saved intermediate values of the graph are freed when you call "
                 ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                 "graph a second time or if you need to access saved tensors after calling backward.")


def _saved(node, i):
    tensors = node._read_saved()
    return tensors[i] if -len(tensors) <= i < len(tensors) else None


def _number(node):
    from ..creation import tensor  # (creation is a higher layer: a module-level import would be a cycle)

    return tensor(node.value)


def _scaling(node, which: str):
    if getattr(node, "value", None) is not None:  # a * number: torch keeps the number as a 0-d tensor
        return None if which == "self" else _number(node)
    return _saved(node, 0 if which == "self" else 1)


def _sizes(node):
    shape = getattr(node, "in_shape", None)
    if shape is None:
        meta = node.input_meta()
        shape = meta[0][0] if meta and meta[0] is not None else None
    return None if shape is None else tuple(shape)


def _swapped(node) -> list:
    return [i for i, d in enumerate(node.dims) if i != d]


def _input_shape(node, i: int):
    t = _saved(node, i)
    if t is not None:
        return tuple(t.shape)
    meta = node.input_meta()
    return tuple(meta[i][0]) if i < len(meta) and meta[i] is not None else None


def _input_strides(node, i: int):
    # torch keeps an input's strides where that input needs a gradient (for the gradient's layout)
    if node.next[i] is None:
        return ()
    t = _saved(node, i)
    if t is not None:
        return tuple(t.stride())
    shape = _input_shape(node, i)
    if shape is None:
        return None
    out, step = [], 1
    for n in reversed(shape):  # (not kept: the strides of a contiguous tensor of its shape)
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


_BINARY = {"self": lambda n: _scaling(n, "self"), "other": lambda n: _scaling(n, "other")}
_RESULT = {"result": lambda n: _saved(n, -1)}
_MM = {"self": lambda n: _saved(n, 0), "mat2": lambda n: _saved(n, 1),
       "self_sym_sizes": lambda n: _input_shape(n, 0), "mat2_sym_sizes": lambda n: _input_shape(n, 1),
       "self_sym_strides": lambda n: _input_strides(n, 0), "mat2_sym_strides": lambda n: _input_strides(n, 1)}
_SUM = {"self_sym_sizes": _sizes}
_DIM = {"dim": lambda n: tuple(n.dims), "keepdim": lambda n: n.keepdim}
_MEAN = {"self_sym_sizes": _sizes, "self_sym_numel": lambda n: math.prod(_sizes(n) or ())}

SAVED = {
    "AddBackward0": {"alpha": lambda n: 1}, "SubBackward0": {"alpha": lambda n: 1},
    "MulBackward0": _BINARY, "DivBackward0": _BINARY,
    "PowBackward0": {"self": lambda n: _saved(n, 0), "exponent": lambda n: n.value},
    "PowBackward1": {"self": lambda n: _saved(n, 0), "exponent": lambda n: _saved(n, 1),
                     "result": lambda n: _saved(n, 2)},
    "PowBackward2": {"self": lambda n: _saved(n, 0), "exponent": lambda n: _saved(n, 1),
                     "result": lambda n: _saved(n, 2)},
    "ExpBackward0": _RESULT, "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "ReluBackward0": _RESULT,
    "SqrtBackward0": _RESULT, "LogBackward0": {"self": lambda n: _saved(n, 0)},
    "MmBackward0": _MM, "BmmBackward0": _MM, "MvBackward0": {"self": lambda n: _saved(n, 0),
                                                            "vec": lambda n: _saved(n, 1)},
    "DotBackward0": {"self": lambda n: _saved(n, 0), "tensor": lambda n: _saved(n, 1)},
    "BinaryCrossEntropyWithLogitsBackward0": {
        "self": lambda n: _saved(n, 0), "target": lambda n: _saved(n, 1), "weight": lambda n: _saved(n, 2),
        "pos_weight": lambda n: _saved(n, 3), "reduction": lambda n: ("none", "mean", "sum").index(n.reduction)},
    "AddmmBackward0": {"mat1": lambda n: _saved(n, 0), "alpha": lambda n: 1, "beta": lambda n: 1,
                       "mat2": lambda n: None if _saved(n, 1) is None else _saved(n, 1).mT},
    "SumBackward0": _SUM, "SumBackward1": {**_SUM, **_DIM},
    "MeanBackward0": _MEAN, "MeanBackward1": {**_MEAN, **_DIM},
    "ViewBackward0": _SUM, "ExpandBackward0": _SUM,
    "TransposeBackward0": {"dim0": lambda n: _swapped(n)[0], "dim1": lambda n: _swapped(n)[1]},
    "TBackward0": {}, "PermuteBackward0": {"dims": lambda n: tuple(n.dims)},
    "SoftmaxBackward0": {"dim": lambda n: n.dim, **_RESULT}, "LogSoftmaxBackward0": {"dim": lambda n: n.dim, **_RESULT},
    "NegBackward0": {}, "CatBackward0": {"dim": lambda n: n.dim},
}


def install_saved(cls) -> None:
    """Give ``cls`` torch's ``_saved_*`` attributes as properties: the names :data:`SAVED` lists for its torch
    name, or those of the generic rule (see :func:`saved_attribute`). Properties on the class, not a
    ``__getattr__``: a class with ``__getattr__`` loses CPython's fast attribute reads, on every op."""
    spec = SAVED.get(cls.__name__)
    if spec is not None:
        names = list(spec)
    else:
        names = ["self", "other", "result", "self_sym_sizes"]
        for klass in cls.__mro__:
            if klass.__name__ == "Function" and klass.__module__.endswith("autograd.function"):
                break
            names += [s for s in getattr(klass, "__slots__", ()) if not s.startswith("_")]
    for name in names:
        attr = "_saved_" + name
        if attr not in cls.__dict__:
            setattr(cls, attr, property(lambda node, attr=attr: saved_attribute(node, attr),
                                        doc=f"torch's ``{attr}``, computed when read"))


def saved_attribute(node, attr: str):
    """``node._saved_<name>`` as torch's node of that name answers it; AttributeError for a name it lacks.

    Without an entry in :data:`SAVED`, the generic rule: ``self``/``other`` are the first two saved tensors (for an
    op that saves its inputs), ``result`` the saved output (for an op that keeps it), ``self_sym_sizes`` the
    input's shape, and ``<attr>`` each of the op's own attributes (``dim``, ``keepdim``...)."""
    key = attr[len("_saved_"):]
    spec = SAVED.get(type(node).__name__)
    if spec is not None:
        get = spec.get(key)
    else:
        get = _generic(node, key)
    if get is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    value = get(node)
    if spec is None:  # (the generic rule: an attribute of our own is torch's kind of value or not there at all)
        value = tuple(value) if isinstance(value, list) else value
        try:
            hash(value)  # (torch's saved values are tensors, numbers, strings and tuples of them: all hashable)
        except TypeError:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}' (its own value is "
                                 f"{type(value).__name__}, not one torch saves)") from None
    return tuple(value) if key.endswith(("sym_sizes", "sym_strides")) and value is not None else value


def _generic(node, key: str):
    keeps_output = type(node).save_output
    if key == "result" and keeps_output:
        return lambda n: _saved(n, -1)
    if key in ("self", "other") and node.saved is not None:
        count = len(node.saved) - (1 if keeps_output else 0) if node.saved is not _freed() else 2
        i = 0 if key == "self" else 1
        if i < count:
            return lambda n: _saved(n, i)
    if key == "self_sym_sizes" and _sizes(node) is not None:
        return _sizes
    attrs = node.attributes()
    for name in (key, key + "s"):
        if name in attrs:
            return lambda n: n.attributes()[name]
    return None


def _freed():
    from .function import FREED  # (function imports this module: a module-level import would be a cycle)

    return FREED

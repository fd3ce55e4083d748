"""Names of PyTorch's surface that cannot do their job here: each exists, and using it raises a clear error.

A program that merely *mentions* such a name (``isinstance(x, torch.ScriptModule)``, a ``dtype=torch.qint8``
default, ``from torch import miopen_convolution``) keeps running; a program that *uses* one stops with an error that
says what the name is for in PyTorch and why tinygrad_like has no such thing, never an ``AttributeError`` or an
``ImportError``. The error is a ``NotImplementedError``, which is a ``RuntimeError``, the class torch raises for an
operation a build does not support.

Every object made here carries :data:`MARK`, so ``tools/torch_census.py`` counts these names apart from the ones
that work ("present, as a clear error").

>>> from tinygrad_like.unsupported import unsupported_function
>>> quantize = unsupported_function("torch.quantize_per_tensor", "quantized tensors are not supported")
>>> quantize(1.0)
Traceback (most recent call last):
...
NotImplementedError: torch.quantize_per_tensor(): quantized tensors are not supported
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

MARK = "__tinygrad_like_unsupported__"

# Reasons shared by families of names (one sentence each, so errors of one family read alike).
QUANTIZED = ("quantized tensors (qint8, quint8, ...) are not supported by tinygrad_like: it computes in floating "
             "point and integer dtypes only")
SPARSE = ("sparse tensors (COO, CSR, CSC, BSR, BSC layouts) are not supported by tinygrad_like: every tensor is "
          "dense (strided)")
TORCHSCRIPT = ("TorchScript's compiler internals (graphs, IR types, script classes) do not exist in tinygrad_like: "
               "torch.jit.script and torch.jit.trace return what they are given and run it eagerly")
VENDOR = ("a vendor library's kernel entry point (cuDNN, MIOpen, MKL-DNN, FBGEMM); tinygrad_like computes with NumPy "
          "on the CPU and with its own kernels on CUDA; call the torch.nn.functional op instead")
SYMBOLIC = ("symbolic shapes belong to torch.compile's tracer; tinygrad_like runs eagerly, so every size is a plain "
            "int")
COMPLEX = ("complex tensors (complex64, complex128) are not supported by tinygrad_like: it has real dtypes only, so "
           "transforms whose input or output is complex cannot be represented")


def _fail(qualname: str, reason: str) -> NoReturn:
    raise NotImplementedError(f"{qualname}(): {reason}")


def unsupported_function(qualname: str, reason: str) -> Callable[..., NoReturn]:
    """A function named ``qualname`` (``"torch.miopen_rnn"``) that raises ``NotImplementedError(reason)``."""

    def unsupported(*args: Any, **kwargs: Any) -> NoReturn:
        _fail(qualname, reason)

    module, _, name = qualname.rpartition(".")
    unsupported.__name__ = unsupported.__qualname__ = name
    unsupported.__module__ = module.replace("torch", "tinygrad_like", 1)
    unsupported.__doc__ = f"Not supported: {reason}."
    setattr(unsupported, MARK, reason)
    return unsupported


def unsupported_class(qualname: str, reason: str) -> type:
    """A class named ``qualname`` that a program may name (in ``isinstance``, annotations, ``except``) and never
    instantiate: constructing one raises ``NotImplementedError(reason)``."""
    module, _, name = qualname.rpartition(".")

    def __new__(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
        _fail(qualname, reason)

    return type(name, (), {"__new__": __new__, "__doc__": f"Not supported: {reason}.", MARK: reason,
                           "__module__": module.replace("torch", "tinygrad_like", 1)})


def is_unsupported(obj: object) -> bool:
    """True for a name made here (the census counts these apart)."""
    return getattr(obj, MARK, None) is not None
COMPLEX = ("complex tensors are not supported by tinygrad_like: every tensor is real (torch.real, conj and angle of "
           "a real tensor work as in torch)")
STORAGE = ("torch's typed and untyped storage classes are not part of tinygrad_like: a tensor's memory is its "
           "Storage (tensor.storage), which is not built from Python")
SERIALIZATION = ("TorchScript's archive reader/writer do not exist in tinygrad_like: torch.save and torch.load "
                 "write and read checkpoints")
BENCHMARK = ("torch's C++ throughput benchmark runs TorchScript modules in C++ threads, which tinygrad_like does "
             "not have")
DISPATCH = ("torch's dispatcher (dispatch keys, operator tags, torch function modes) does not exist in tinygrad_like: "
            "each op is one Python method")
EXPORT = ("torch.export traces a program into a graph for deployment; tinygrad_like runs eagerly and exports "
          "nothing")
FIRST_CLASS_DIMS = ("first-class dimensions (functorch.dim) are not supported by tinygrad_like: index a tensor with "
                    "[] instead")
NESTED = ("nested tensors are not supported by tinygrad_like: pad the sequences with "
          "torch.nn.utils.rnn.pad_sequence")
DISTRIBUTED = ("tinygrad_like runs a world of one process (torch.distributed with world size 1): sharding, RPC, "
               "elastic launch, pipelining and distributed checkpoints need several processes; the collectives and "
               "DistributedDataParallel work as torch's do on one process")

"""``torch.onnx``: importable, so that a program with an optional export runs; ``export`` itself raises an
:class:`OnnxExporterError` (which is also a ``NotImplementedError``) saying that export is not supported, and so do
the export paths of :class:`ExportableModule` and the classes of the exporter (``ONNXProgram``, ``InputObserver``).
The queries answer: ``is_in_onnx_export()`` is False.

>>> import tinygrad_like as tl
>>> tl.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

import inspect
from typing import Any

from ..nn.module import Module
from ..unsupported import EXPORT, unsupported_class
from . import errors, ops  # noqa: F401 - torch.onnx.errors / .ops
from .errors import ExportUnsupportedError, OnnxExporterError

__all__ = ["export", "is_in_onnx_export", "errors", "ops", "OnnxExporterError", "ONNXProgram", "ExportableModule",
           "InputObserver"]

_NO_EXPORT = ("ONNX export is not supported by tinygrad_like. To keep a trained model, save its weights with "
              "torch.save(model.state_dict(), path); to export to ONNX, load that state_dict into the same model "
              "under PyTorch and export from there.")


def is_in_onnx_export() -> bool:
    """False: no export ever runs here."""
    return False


def export(model: Any, args: tuple = (), f: Any = None, *, kwargs: dict | None = None, verbose: bool | None = None,
           input_names=None, output_names=None, opset_version: int | None = None, dynamo: bool = True,
           external_data: bool = True, dynamic_shapes=None, custom_translation_table=None, report: bool = False,
           optimize: bool = True, verify: bool = False, profile: bool = False, dump_exported_program: bool = False,
           artifacts_dir: Any = ".", export_params: bool = True, keep_initializers_as_inputs: bool = False,
           dynamic_axes=None, training: Any = None, operator_export_type: Any = None, do_constant_folding: bool = True,
           custom_opsets=None, export_modules_as_functions: Any = False, autograd_inlining: bool = True) -> None:
    """Not supported: raises NotImplementedError that says what to do instead."""
    raise ExportUnsupportedError(f"torch.onnx.export(): {_NO_EXPORT}")


class ExportableModule(Module):
    """torch's base class for a module that describes its own export (example arguments, dynamic shapes, names): a
    subclass is an ordinary module here, and its :meth:`to_onnx` raises, as :func:`export` does."""

    def example_arguments(self) -> tuple[tuple, dict | None]:
        raise NotImplementedError("ExportableModule.example_arguments(): a subclass returns (args, kwargs)")

    def dynamic_shapes(self) -> Any:
        return None

    def input_names(self) -> list[str] | None:
        return None

    def output_names(self) -> list[str] | None:
        return None

    def to_onnx(self, *args: Any, **kwargs: Any) -> None:
        raise ExportUnsupportedError(f"ExportableModule.to_onnx(): {_NO_EXPORT}")


ONNXProgram = unsupported_class("torch.onnx.ONNXProgram", "an ONNXProgram is what torch.onnx.export returns; "
                                + _NO_EXPORT)
InputObserver = unsupported_class("torch.onnx.InputObserver", "an InputObserver records a model's inputs to infer "
                                  "dynamic shapes for torch.export; " + EXPORT)
# (torch's parameters, so that inspect.signature of the names reads as torch's)
ONNXProgram.__signature__ = inspect.signature(lambda model, exported_program: None)
InputObserver.__signature__ = inspect.signature(lambda value_if_missing=None: None)

"""``torch.onnx``: importable, so that a program with an optional export runs; ``export`` itself raises.

>>> import tinygrad_like as tl
>>> tl.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export"]


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
    raise NotImplementedError("torch.onnx.export(): ONNX export is not supported by tinygrad_like. To keep a trained "
                              "model, save its weights with torch.save(model.state_dict(), path); to export to ONNX, "
                              "load that state_dict into the same model under PyTorch and export from there.")

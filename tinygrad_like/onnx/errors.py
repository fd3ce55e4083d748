"""``tl.onnx.errors``: torch's ONNX exporter's exception classes, to catch (export itself always raises here)."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "SymbolicValueError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """An error of the ONNX exporter: what ``torch.onnx.export`` raises here, since nothing is exported."""


class OnnxExporterWarning(UserWarning):
    """A warning of the ONNX exporter."""


class SymbolicValueError(OnnxExporterError):
    """An error about a value in the exported graph."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator the exporter cannot translate."""


class ExportUnsupportedError(OnnxExporterError, NotImplementedError):
    """``torch.onnx.export`` here: both torch's exporter error and ``NotImplementedError`` (not supported)."""

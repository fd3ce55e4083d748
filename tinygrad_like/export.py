"""``torch.export``: tracing a program into a graph for deployment. tinygrad_like runs eagerly and exports nothing;
``import torch.export`` works, and each entry point raises ``NotImplementedError`` saying so."""

from __future__ import annotations

from .unsupported import EXPORT, unsupported_class, unsupported_function

__tinygrad_like_unsupported__ = EXPORT  # (the census counts this module as present, as a clear error)

export = unsupported_function("torch.export.export", EXPORT)
save = unsupported_function("torch.export.save", EXPORT)
load = unsupported_function("torch.export.load", EXPORT)
ExportedProgram = unsupported_class("torch.export.ExportedProgram", EXPORT)
Dim = unsupported_function("torch.export.Dim", EXPORT)

__all__ = ["export", "save", "load", "ExportedProgram", "Dim"]

"""``tl.onnx.ops``: ONNX operators as torch ops for the exporter to translate, as clear errors: nothing is exported
here, so there is nothing for them to stand for. Use ``torch.nn.functional.scaled_dot_product_attention`` to
compute attention."""

from __future__ import annotations

from ..unsupported import unsupported_function

__all__ = ["aten_decompositions", "symbolic", "symbolic_multi_out", "rotary_embedding", "attention"]

ONNX_OPS = ("ONNX operators exist to be translated by torch.onnx.export, which tinygrad_like does not have (it runs "
            "eagerly and exports nothing)")

aten_decompositions, symbolic, symbolic_multi_out, rotary_embedding, attention = (
    unsupported_function(f"torch.onnx.ops.{name}", ONNX_OPS) for name in __all__)

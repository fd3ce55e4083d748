"""``torch.nn.intrinsic``: the modules of quantization-aware training and quantized inference. tinygrad_like has no
quantized tensors, so every public name here exists and raises when used (torch's quantization workflows cannot
run: train and infer in floating point)."""

from ...unsupported import QUANTIZED, unsupported_class

__all__: list[str] = []


def __getattr__(name: str):
    if not name[:1].isupper():  # (a class name: other lookups, such as pytest's hooks, find nothing)
        raise AttributeError(name)
    cls = unsupported_class(f"torch.nn.intrinsic.{name}", QUANTIZED)
    globals()[name] = cls
    return cls

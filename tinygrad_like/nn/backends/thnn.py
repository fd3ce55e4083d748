"""``torch.nn.backends.thnn``: torch keeps ``backend`` for old code; there is nothing to choose."""

__all__ = ["backend"]


def _get_thnn_function_backend():
    return backend


backend = None

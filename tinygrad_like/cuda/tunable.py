"""``tl.cuda.tunable``: PyTorch's TunableOp (GEMMs tuned by trying cuBLAS/hipBLASLt algorithms), which tinygrad_like
does not have: it is never enabled (the queries answer False), and turning it on raises a clear error. Our
matmul kernel is one fixed kernel."""

from __future__ import annotations

from ..unsupported import unsupported_function

__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "record_untuned_enable",
           "record_untuned_is_enabled", "set_max_tuning_duration", "get_max_tuning_duration",
           "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename", "get_filename", "get_results",
           "get_validators", "read_file", "tune_gemm_in_file", "mgpu_tune_gemm_in_file", "set_rotating_buffer_size",
           "get_rotating_buffer_size", "set_numerical_check_tolerances"]

TUNABLE = ("TunableOp tries vendor BLAS algorithms for each GEMM shape; tinygrad_like's CUDA backend has one matmul "
           "kernel of its own and nothing to tune")


def _switch(name: str):
    def switch(val: bool = True) -> None:
        if val:
            raise NotImplementedError(f"torch.cuda.tunable.{name}(True): {TUNABLE}")
    switch.__name__ = switch.__qualname__ = name
    switch.__doc__ = "Turning it off is a no-op (it is never on); turning it on raises."
    return switch


def _query(name: str):
    def query() -> bool:
        return False
    query.__name__ = query.__qualname__ = name
    query.__doc__ = "False: TunableOp never runs here."
    return query


enable, tuning_enable, record_untuned_enable = (_switch(n) for n in ("enable", "tuning_enable",
                                                                     "record_untuned_enable"))
is_enabled, tuning_is_enabled, record_untuned_is_enabled = (_query(n) for n in ("is_enabled", "tuning_is_enabled",
                                                                                "record_untuned_is_enabled"))
set_max_tuning_duration = unsupported_function("torch.cuda.tunable.set_max_tuning_duration", TUNABLE)
get_max_tuning_duration = unsupported_function("torch.cuda.tunable.get_max_tuning_duration", TUNABLE)
set_max_tuning_iterations = unsupported_function("torch.cuda.tunable.set_max_tuning_iterations", TUNABLE)
get_max_tuning_iterations = unsupported_function("torch.cuda.tunable.get_max_tuning_iterations", TUNABLE)
set_filename = unsupported_function("torch.cuda.tunable.set_filename", TUNABLE)
get_filename = unsupported_function("torch.cuda.tunable.get_filename", TUNABLE)
get_results = unsupported_function("torch.cuda.tunable.get_results", TUNABLE)
get_validators = unsupported_function("torch.cuda.tunable.get_validators", TUNABLE)
read_file = unsupported_function("torch.cuda.tunable.read_file", TUNABLE)
tune_gemm_in_file = unsupported_function("torch.cuda.tunable.tune_gemm_in_file", TUNABLE)
mgpu_tune_gemm_in_file = unsupported_function("torch.cuda.tunable.mgpu_tune_gemm_in_file", TUNABLE)
set_rotating_buffer_size = unsupported_function("torch.cuda.tunable.set_rotating_buffer_size", TUNABLE)
get_rotating_buffer_size = unsupported_function("torch.cuda.tunable.get_rotating_buffer_size", TUNABLE)
set_numerical_check_tolerances = unsupported_function("torch.cuda.tunable.set_numerical_check_tolerances", TUNABLE)

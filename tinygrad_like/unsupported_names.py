"""torch's top-level names that cannot do their job in tinygrad_like, made with :mod:`tinygrad_like.unsupported`:
each exists (so ``from torch import X`` and ``isinstance(x, torch.X)`` work), and using it raises a
``NotImplementedError`` that says why. One reason per family."""

from __future__ import annotations

from .unsupported import (
    BENCHMARK,
    COMPLEX,
    DISPATCH,
    FIRST_CLASS_DIMS,
    NESTED,
        QUANTIZED,
    SERIALIZATION,
    SPARSE,
    STORAGE,
    SYMBOLIC,
    TORCHSCRIPT,
    VENDOR,
    unsupported_class,
    unsupported_function,
)

_CLASSES = {
    TORCHSCRIPT: (
        "AliasDb AnyType Argument ArgumentSpec AwaitType BenchmarkConfig Block BoolType BufferDict CallStack Capsule "
        "ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType ConcreteModuleTypeBuilder "
        "DeepCopyMemoTable DeviceObjType DictType EnumType ErrorReport ExecutionPlan FileCheck FloatType "
        "FunctionSchema FutureType Gradient Graph GraphExecutorState IODescriptor InferredType IntType InterfaceType "
        "JITException ListType LiteScriptModule LockingLogger ModuleDict Node NoneType NoopLogger NumberType "
        "OperatorInfo OptionalType ParameterDict PyObjectType RRefType ScriptClass ScriptClassFunction ScriptDict "
        "ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator ScriptMethod "
        "ScriptModule ScriptModuleSerializer ScriptObject ScriptObjectProperty StaticModule StreamObjType StringType "
        "SymBoolType SymIntType TensorType TracingState TupleType Type UnionType Use Value BenchmarkExecutionStats"),
    STORAGE: ("BoolStorage ByteStorage CharStorage DoubleStorage FloatStorage IntStorage LongStorage ShortStorage "
              "TypedStorage UntypedStorage HalfStorage BFloat16Storage"),
    SERIALIZATION: "PyTorchFileReader PyTorchFileWriter DeserializationStorageContext SerializationStorageContext",
    BENCHMARK: "ThroughputBenchmark",
    DISPATCH: ("DispatchKey DispatchKeySet ExcludeDispatchKeyGuard DisableTorchFunction DisableTorchFunctionSubclass "
               "Tag"),
    SYMBOLIC: "SymInt SymFloat SymBool",
}

_FUNCTIONS = {
    TORCHSCRIPT: ("import_ir_module import_ir_module_from_buffer parse_ir parse_schema parse_type_comment "
                  "merge_type_from_type_comment unify_type_list"),
    QUANTIZED: ("quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic dequantize q_per_channel_axis "
                "q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point int_repr empty_quantized "
                "fake_quantize_per_channel_affine fake_quantize_per_tensor_affine fused_moving_avg_obs_fake_quant "
                "choose_qparams_optimized quantized_batch_norm quantized_gru_cell quantized_lstm_cell "
                "quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d quantized_rnn_relu_cell "
                "quantized_rnn_tanh_cell"),
    SPARSE: ("sparse_bsc_tensor sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor sparse_csc_tensor "
             "sparse_csr_tensor dsmm hsmm hspmm smm spmm sspaddmm saddmm resize_as_sparse_ ccol_indices_copy "
             "col_indices_copy crow_indices_copy indices_copy row_indices_copy values_copy"),
    VENDOR: ("cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu "
             "cudnn_convolution_relu cudnn_convolution_transpose cudnn_grid_sampler miopen_batch_norm "
             "miopen_convolution miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
             "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d mkldnn_convolution "
             "mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d mkldnn_rnn_layer "
             "fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
             "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 "
             "fbgemm_pack_quantized_matrix"),
    COMPLEX: "polar complex view_as_complex view_as_complex_copy",
    SYMBOLIC: "sym_constrain_range sym_constrain_range_for_size sym_fresh_size",
}

# Tensor methods of the same families (installed on tinygrad_like.Tensor by install_tensor_methods)
TENSOR_METHODS = {
    SPARSE: ("ccol_indices coalesce col_indices crow_indices dense_dim indices row_indices sparse_dim sparse_mask "
             "sparse_resize_ sparse_resize_and_clear_ to_dense to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo "
             "to_sparse_csc to_sparse_csr values resize_as_sparse_ smm sspaddmm"),
    QUANTIZED: "dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale "
               "q_zero_point qscheme",
    VENDOR: "to_mkldnn",
    FIRST_CLASS_DIMS: "index",
    NESTED: "to_padded_tensor",
}

__all__: list[str] = []
for _reason, _names in _CLASSES.items():
    for _name in _names.split():
        globals()[_name] = unsupported_class(f"torch.{_name}", _reason)
        __all__.append(_name)
for _reason, _names in _FUNCTIONS.items():
    for _name in _names.split():
        globals()[_name] = unsupported_function(f"torch.{_name}", _reason)
        __all__.append(_name)


def install_tensor_methods(cls: type) -> None:
    """Give ``cls`` (Tensor) the methods of the families above that it lacks, each raising with its reason."""
    for reason, names in TENSOR_METHODS.items():
        for name in names.split():
            if not hasattr(cls, name):
                f = unsupported_function(f"torch.Tensor.{name}", reason)
                setattr(cls, name, f)

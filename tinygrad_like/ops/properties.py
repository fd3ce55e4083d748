"""What a tensor tells about itself in torch's words: the device and layout predicates (``is_cpu``, ``is_sparse``,
``is_quantized``...), ``itemsize``, ``data_ptr``, ``dim_order``, ``is_nonzero``, ``is_same_size``, ``H``/``mH``, and
the methods of devices that do not exist here (``xpu``, ``ipu``, ``mtia``: each a clear error). One CPU process
answers most of them plainly: every tensor here is dense, unquantized, on ``cpu``, ``cuda`` or ``sim``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..tensor_base import TensorBase, _new

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

_SHARED: set[int] = set()  # ids of the storages share_memory_() marked (is_shared() answers from it)


class StorageBytes:
    """What ``Tensor.untyped_storage()`` returns: the size, address and device of a tensor's whole storage in bytes,
    as torch's ``UntypedStorage`` reports them (libraries such as torchinfo count memory with ``nbytes()``)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: TensorBase):
        self._tensor = tensor

    def nbytes(self) -> int:
        st = self._tensor._storage
        return st.numel * st.dtype.itemsize

    size = nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        t = self._tensor
        return t.data_ptr() - t._layout.offset * t.dtype.itemsize

    @property
    def device(self):
        return self._tensor.device

    def tolist(self) -> list[int]:
        st = self._tensor._storage
        return list(self._tensor.detach().cpu()._storage.host.view("uint8").tobytes()) if st.numel else []

    def __repr__(self) -> str:
        return f"<untyped storage of {self.nbytes()} bytes on {self.device}>"


class PropertiesMixin:
    """torch's predicates and properties of a tensor."""

    __slots__ = ()

    is_cpu = property(lambda self: self._dev.type == "cpu", doc="Whether the tensor lives on the CPU.")
    is_meta = property(lambda self: False, doc="False: tinygrad_like has no meta device (every tensor has data).")
    is_mps = property(lambda self: False, doc="False: there is no MPS device here.")
    is_xpu = property(lambda self: False, doc="False: there is no XPU device here.")
    is_xla = property(lambda self: False, doc="False: there is no XLA device here.")
    is_ipu = property(lambda self: False, doc="False: there is no IPU device here.")
    is_maia = property(lambda self: False, doc="False: there is no MAIA device here.")
    is_mtia = property(lambda self: False, doc="False: there is no MTIA device here.")
    is_vulkan = property(lambda self: False, doc="False: there is no Vulkan device here.")
    is_mkldnn = property(lambda self: False, doc="False: no tensor has MKL-DNN's opaque layout here.")
    is_sparse = property(lambda self: False, doc="False: every tensor is dense (strided).")
    is_sparse_csr = property(lambda self: False, doc="False: every tensor is dense (strided).")
    is_quantized = property(lambda self: False, doc="False: there are no quantized tensors here.")
    is_nested = property(lambda self: False, doc="False: there are no nested tensors here.")
    name = property(lambda self: None, doc="None: named tensors' dimension names are not kept (as an unnamed "
                                           "tensor in torch).")
    output_nr = property(lambda self: 0, doc="The index of this tensor among its node's outputs: 0 (every node here "
                                             "has one output per tensor).")

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` has: this tensor's own."""
        return self.dtype

    @property
    def volatile(self) -> bool:
        """Removed in torch (always False, with a warning), as ``Variable.volatile``."""
        import warnings  # (a removed name: its warning is the only reason to import it)
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    def reinforce(self, reward) -> None:
        raise RuntimeError("reinforce() was removed. Use torch.distributions instead (a policy's log_prob times "
                           "the reward, as a loss).")

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes (``element_size()``)."""
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (the storage's address plus the offset), as an int."""
        st = self._storage
        base = st.host if st.dev is None else st.dev
        ptr = getattr(base, "ctypes", None)
        if ptr is not None:
            return ptr.data + self._layout.offset * self.dtype.itemsize
        dev_ptr = getattr(base, "ptr", None)  # (a device buffer: its address, where the backend exposes one)
        if isinstance(dev_ptr, int):
            return dev_ptr + self._layout.offset * self.dtype.itemsize
        raise RuntimeError(f"data_ptr(): the {self._dev} backend does not expose addresses")

    const_data_ptr = data_ptr

    def untyped_storage(self) -> StorageBytes:
        """The bytes under this tensor, as torch's ``untyped_storage()`` describes them (``nbytes()``, ``data_ptr()``,
        ``device``): shared by every view of the same storage. Read-only: the memory is the tensor's Storage."""
        return StorageBytes(self)

    def get_device(self) -> int:
        """-1 for a CPU tensor, else the device's index (as torch)."""
        return -1 if self._dev.type == "cpu" else (self._dev.index or 0)

    def dim_order(self, *, ambiguity_check: bool = False) -> tuple:
        """The dims from outermost to innermost in memory (strides from largest to smallest)."""
        strides = self._layout.strides
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    def is_pinned(self, device=None) -> bool:
        """False: pinned (page-locked) host memory exists only for an accelerator's transfers."""
        return False

    def pin_memory(self, device=None) -> Tensor:
        """torch refuses when no accelerator is available; with CUDA available here, a copy (transfers read NumPy
        memory directly, so pinning changes nothing else)."""
        if self._dev.type != "cpu":
            raise RuntimeError(f"cannot pin '{self._dev}' memory: only CPU tensors can be pinned")
        from .. import cuda  # (cuda sits above the tensor layer: only asked when pinning)
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self.clone()

    def share_memory_(self) -> Tensor:
        """Marks the storage as shared (it lives in this one process, which every DataLoader worker here shares)."""
        _SHARED.add(self._storage.id)
        return self

    def is_shared(self) -> bool:
        return self._storage.id in _SHARED

    def is_distributed(self) -> bool:
        return False

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_nonzero(self) -> bool:
        """The truth value of a one-element tensor (torch's errors for other sizes)."""
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def is_same_size(self, other: Tensor) -> bool:
        return tuple(self.shape) == tuple(other.shape)

    def is_inference(self) -> bool:
        """False: tensors made under ``inference_mode`` are ordinary tensors here (without grad)."""
        return False

    def is_set_to(self, tensor: Tensor) -> bool:
        """Same storage, offset, shape and strides."""
        return self._storage is tensor._storage and self._layout == tensor._layout

    def record_stream(self, stream) -> None:
        """Streams order work on an accelerator's queue; on this library's devices every op is ordered already."""
        if stream is None:
            raise RuntimeError("record_stream(): unknown parameter type: expected a Stream, got None")

    def module_load(self, other: Tensor, assign: bool = False) -> Tensor:
        """What ``Module.load_state_dict`` puts in place of this parameter: ``other`` itself (``assign``), else
        ``other``'s values copied into this tensor; detached either way, as torch's default."""
        if assign:
            return other.detach()
        with grad_mode.no_grad():
            self.copy_(other)
        return self.detach()

    def as_subclass(self, cls: type) -> Tensor:
        """This tensor as an instance of ``cls`` (a subclass of Tensor), sharing its data and its history."""
        if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
        t = _new(cls)
        for s in TensorBase.__slots__:
            if s != "__weakref__":
                object.__setattr__(t, s, getattr(self, s))
        return t

    @property
    def H(self) -> Tensor:  # noqa: N802 - torch's name
        """The conjugate transpose of a matrix: for a real tensor, its transpose."""
        if self.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor. "
                               f"For batches of matrices, consider using tensor.mH")
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mH(self) -> Tensor:  # noqa: N802 - torch's name
        """The conjugate transpose of the last two dims: for a real tensor, ``mT``."""
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    def adjoint(self) -> Tensor:
        """``mH`` as a method."""
        return self.mH

    def xpu(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        raise RuntimeError("Torch not compiled with XPU enabled: tinygrad_like has cpu and cuda devices only")

    def ipu(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        raise RuntimeError("PyTorch is not linked with support for ipu devices: tinygrad_like has cpu and cuda "
                           "devices only")

    def mtia(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        raise RuntimeError("Torch not compiled with MTIA enabled: tinygrad_like has cpu and cuda devices only")

"""Two answers libraries ask of torch: ``torch.__version__`` under the alias (torch's API version, ours as a local
tag), and ``Tensor.untyped_storage()`` (its bytes, address and device, as torch's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")


def test_the_alias_reports_the_torch_api_version_and_gives_ours_back():
    code = ("import tinygrad_like as tl; own = tl.__version__\n"
            "from tinygrad_like.dropin import install_as_torch, uninstall_torch_alias\n"
            "install_as_torch(); import torch\n"
            "from packaging.version import parse\n"
            "v = parse(torch.__version__)\n"
            "assert v.release == (2, 13, 0) and v.local == 'tinygrad.like.' + own, torch.__version__\n"
            "uninstall_torch_alias(); assert tl.__version__ == own, tl.__version__\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "ok", r.stderr


def test_the_torch_api_version_is_the_censused_one():
    from tinygrad_like.dropin import TORCH_API_VERSION

    assert TORCH_API_VERSION == torch.__version__.split("+")[0]


@pytest.mark.parametrize("lib", [tl, torch], ids=["tl", "torch"])
def test_untyped_storage_reports_the_whole_storage(lib):
    x = lib.arange(6, dtype=lib.float32).reshape(2, 3)
    view = x[1]
    s = view.untyped_storage()
    assert (s.nbytes(), s.size(), len(s), s.element_size()) == (24, 24, 24, 1)
    assert s.data_ptr() == x.data_ptr() and view.data_ptr() == x.data_ptr() + 12
    assert s.tolist()[4:8] == list(b"\x00\x00\x80?")  # (the bytes of 1.0f, little-endian)
    assert str(s.device) == "cpu"


@pytest.mark.parametrize("lib", [tl, torch], ids=["tl", "torch"])
def test_pin_memory_without_an_accelerator_raises_as_torch(lib):
    if lib.cuda.is_available():
        pytest.skip("a GPU is here: pinning works")
    assert not lib.ones(2).is_pinned()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        lib.ones(2).pin_memory()


@pytest.mark.parametrize("lib", [tl, torch], ids=["tl", "torch"])
def test_layout_and_memory_format_constants_as_torch(lib):
    """torch's top level has these though its __all__ does not list them (safetensors checks
    ``v.layout != torch.strided`` before saving)."""
    x = lib.ones(2, 3)
    assert x.layout == lib.strided and not (x.layout != lib.strided) and x.layout != lib.sparse_coo
    assert (repr(lib.strided), repr(lib.channels_last)) == ("torch.strided", "torch.channels_last")
    assert type(lib.strided).__name__ == "layout" and lib.strided != lib.sparse_csr


@pytest.mark.parametrize("lib", [tl, torch], ids=["tl", "torch"])
def test_the_meta_device_can_be_named(lib):
    meta = lib.device("meta")
    assert meta.type == "meta" and lib.ones(1).device != meta


def test_the_meta_device_refuses_to_hold_tensors_clearly():
    with pytest.raises(RuntimeError, match="'meta' device holds no data"):
        tl.zeros(2, device="meta")
    assert tl.ones(2).layout == tl.ones(2).layout and tl.ones(2).layout != tl.ones(3).layout  # (our Layout's own)

"""The free functions ``tl.<name>`` generated from Tensor methods (``ops/_util.free_functions``): the method's
signature with ``input`` first, torch's TypeError for a non-tensor input, and picklable by reference (a module that
holds ``tl.softmax`` pickles, as one holding ``torch.softmax`` does)."""

from __future__ import annotations

import inspect
import pickle

import pytest

import tinygrad_like as tl
from tinygrad_like.ops._util import free_functions
from tinygrad_like.tensor import Tensor


def test_a_generated_function_has_its_methods_signature_and_calls_it():
    (gen,) = free_functions(Tensor, "clamp")
    assert list(inspect.signature(gen).parameters) == ["input", "min", "max"]
    assert gen(tl.tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0).tolist() == [-1.0, 0.5, 1.0]
    with pytest.raises(TypeError, match=r"^clamp\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        gen([1.0, 2.0])


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "sum", "maximum", "sin", "gelu", "reshape", "t",
                                  "swapaxes", "is_complex", "sort", "isfinite", "floor", "mm"])
def test_free_functions_pickle_by_reference(name):
    fn = getattr(tl, name)
    assert pickle.loads(pickle.dumps(fn)) is fn


def test_every_public_function_of_tl_pickles_by_reference():
    broken = []
    for name in dir(tl):
        fn = getattr(tl, name)
        if inspect.isfunction(fn) and not name.startswith("_"):
            try:
                ok = pickle.loads(pickle.dumps(fn)) is fn
            except (pickle.PicklingError, AttributeError):
                ok = False
            if not ok:
                broken.append(name)
    assert broken == []


def test_a_device_tensor_pickled_when_its_rebuild_lived_in_tensor_base_still_loads():
    # protocol 0 names the rebuild function as text: written as the pickles of earlier versions name it
    data = pickle.dumps(tl.tensor([1.0, 2.0], device="sim"), protocol=0)
    old = data.replace(b"tinygrad_like.ops.conversion", b"tinygrad_like.tensor_base")
    assert old != data
    t = pickle.loads(old)
    assert str(t.device) == "sim:0" and t.tolist() == [1.0, 2.0]

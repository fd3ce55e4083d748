"""Checkpoints: exact round trips in both formats, atomic writes, clear errors, pickles only as torch.load allows."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import io as tio
from tinygrad_like.io import CheckpointError, StateDictMismatchError, check_state_dict

FORMATS = ("safetensors", "npz")
DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool")


def _values(dtype: str) -> np.ndarray:
    """Awkward values per dtype: extremes, signed zero, NaN, infinities, subnormals."""
    np_dt = np.dtype(dtype)
    if np_dt.kind == "f":
        fi = np.finfo(np_dt)
        vals = [0.0, -0.0, 1.0, -1.5, np.nan, np.inf, -np.inf, fi.max, fi.min, fi.tiny, fi.smallest_subnormal,
                fi.eps, 1 / 3]
        return np.array(vals + [0.25] * 2, dtype=np_dt).reshape(3, 5)
    if np_dt.kind == "i":
        ii = np.iinfo(np_dt)
        return np.array([ii.min, ii.max, 0, -1, 1, 123456 % ii.max], dtype=np_dt).reshape(2, 3)
    return np.array([[True, False, True], [False, False, True]])


def _same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.fixture(params=FORMATS)
def fmt(request) -> str:
    return request.param


# ---- round trips ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips_bit_exactly(tmp_path, fmt, dtype):
    arr = _values(dtype)
    path = tmp_path / f"ckpt.{fmt}"
    tio.save({"x": tl.tensor(arr)}, path)
    out = tio.load(path)
    assert list(out) == ["x"]
    assert out["x"].dtype is getattr(tl, dtype)
    _same_bits(out["x"].numpy(), arr)


def test_all_dtypes_together_and_odd_shapes(tmp_path, fmt):
    sd = {f"{d}.w": tl.tensor(_values(d)) for d in DTYPES}
    sd["scalar"] = tl.tensor(2.5)
    sd["empty"] = tl.zeros(0, 3, dtype=tl.int32)
    sd["deep.nested/name"] = tl.ones(1, 1, 1, 2)
    path = tmp_path / f"all.{fmt}"
    tio.save(sd, path)
    out = tio.load(path)
    assert set(out) == set(sd)
    for k, t in sd.items():
        assert out[k].dtype is t.dtype, k
        _same_bits(out[k].numpy(), t.numpy())


def test_files_are_readable_by_the_reference_readers(tmp_path):
    from safetensors.numpy import load_file
    sd = {"w": tl.tensor(_values("float16")), "m": tl.tensor(_values("bool"))}
    tio.save(sd, tmp_path / "a.safetensors")
    tio.save(sd, tmp_path / "a.npz")
    ref = load_file(str(tmp_path / "a.safetensors"))
    with np.load(tmp_path / "a.npz", allow_pickle=False) as npz:
        for k, t in sd.items():
            _same_bits(ref[k], t.numpy())
            _same_bits(npz[k], t.numpy())


@pytest.mark.parametrize("make_view", [
    lambda b: b.T,                                  # transposed (non-contiguous)
    lambda b: b[1:, ::2],                           # offset + step
    lambda b: b[:, 1].unsqueeze(0).expand(3, 4),    # zero stride
    lambda b: b.permute(1, 0)[2:],                  # view of a view
    lambda b: b.narrow(1, 1, 2).flip(0),            # narrowed, then flipped
], ids=["transpose", "slice_step", "expand", "permute_slice", "narrow_flip"])
def test_views_save_their_logical_contents(tmp_path, fmt, make_view):
    base = tl.arange(20, dtype=tl.float64).reshape(4, 5)
    view = make_view(base)
    path = tmp_path / f"v.{fmt}"
    tio.save({"v": view}, path)
    out = tio.load(path)["v"]
    assert out.shape == view.shape
    np.testing.assert_array_equal(out.numpy(), np.asarray(view.numpy()))


def test_loaded_tensors_own_their_memory(tmp_path, fmt):
    src = tl.arange(6, dtype=tl.float32)
    path = tmp_path / f"c.{fmt}"
    tio.save({"a": src, "b": src[1:4]}, path)  # two entries over one storage
    src[0] = 100.0  # a write after saving does not reach the file
    a1, a2 = tio.load(path)["a"], tio.load(path)["a"]
    out = tio.load(path)
    assert a1.numpy()[0] == 0.0
    assert a1.storage is not a2.storage and out["a"].storage is not out["b"].storage
    assert a1.numpy().flags.writeable
    assert all(t.numpy().flags.owndata for t in out.values())  # not a window on the file's buffer
    a1[1] = -7.0
    assert a2.numpy()[1] == 1.0 and out["b"].numpy()[0] == 1.0 and src.numpy()[1] == 1.0
    assert not np.shares_memory(out["a"].numpy(), out["b"].numpy())


def test_requires_grad_and_graph_tensors_are_saved_as_values(tmp_path, fmt):
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    path = tmp_path / f"g.{fmt}"
    tio.save({"w": w, "y": w * 3}, path)
    out = tio.load(path)
    assert out["y"].tolist() == [3.0, 6.0]
    assert not out["w"].requires_grad and out["w"].grad_fn is None


def test_metadata_round_trips_and_is_separate_from_tensors(tmp_path, fmt):
    path = tmp_path / f"m.{fmt}"
    meta = {"epoch": "12", "note": "ünïcode ✓", "json": '{"lr": 0.1}'}
    tio.save({"w": tl.zeros(2)}, path, metadata=meta)
    assert tio.load_metadata(path) == meta
    assert list(tio.load(path)) == ["w"]
    tio.save({"w": tl.zeros(2)}, path)
    assert tio.load_metadata(path) == {}


@pytest.mark.parametrize("metadata", [{"epoch": 3}, {1: "x"}, ["a"]])
def test_metadata_must_be_str_to_str(tmp_path, fmt, metadata):
    with pytest.raises(TypeError, match="metadata"):
        tio.save({"w": tl.zeros(1)}, tmp_path / f"m.{fmt}", metadata=metadata)
    assert not os.listdir(tmp_path)


def test_reserved_and_odd_keys_are_saved_as_torch_saves_them(tmp_path, fmt):
    for sd in ({"__metadata__": tl.zeros(1)}, {"": tl.ones(1)}):  # (not plain array names: kept in the structure)
        tio.save(sd, tmp_path / f"r.{fmt}")
        out = tio.load(tmp_path / f"r.{fmt}")
        assert list(out) == list(sd) and out[next(iter(sd))].tolist() == next(iter(sd.values())).tolist()
    tio.save({"w": np.zeros(1)}, tmp_path / f"r.{fmt}")  # a NumPy array: pickled, as torch.save does
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        tio.load(tmp_path / f"r.{fmt}")
    assert tio.load(tmp_path / f"r.{fmt}", weights_only=False)["w"].tolist() == [0.0]
    with pytest.raises(ValueError, match="'__structure__' is reserved"):
        tio.save({"w": tl.zeros(1)}, tmp_path / f"s.{fmt}", metadata={"__structure__": "{}"})
    assert not (tmp_path / f"s.{fmt}").exists()


def test_names_that_collide_with_np_savez_keywords(tmp_path):
    sd = {"file": tl.zeros(1), "allow_pickle": tl.ones(1), "arr_0": tl.full((1,), 2.0)}
    tio.save(sd, tmp_path / "k.npz")
    assert {k: v.item() for k, v in tio.load(tmp_path / "k.npz").items()} == {"file": 0, "allow_pickle": 1,
                                                                               "arr_0": 2}


@pytest.mark.parametrize("name", ["model.pt", "model.pkl", "model", "model.npy", "model.safetensors.bak"])
def test_other_suffixes_are_written_as_safetensors(tmp_path, name):
    tio.save({"w": tl.ones(1)}, tmp_path / name)  # (torch's habits: .pt, .pth; never a pickle)
    assert (tmp_path / name).read_bytes()[8:9] == b"{"  # a safetensors header
    assert tio.load(tmp_path / name)["w"].tolist() == [1.0]


def test_suffix_is_case_insensitive_and_str_paths_work(tmp_path):
    p = str(tmp_path / "UPPER.NPZ")
    tio.save({"w": tl.ones(2)}, p)
    assert tio.load(p)["w"].tolist() == [1.0, 1.0]


def test_missing_file_is_file_not_found(tmp_path, fmt):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        tio.load(tmp_path / f"nothing.{fmt}")


def test_save_into_missing_directory_is_file_not_found(tmp_path, fmt):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tio.save({"w": tl.zeros(1)}, tmp_path / "no" / "such" / f"dir.{fmt}")
    assert os.listdir(tmp_path) == []


def test_new_file_gets_ordinary_permissions(tmp_path, fmt):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    old = os.umask(0o022)
    try:
        tio.save({"w": tl.zeros(1)}, tmp_path / f"p.{fmt}")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / f"p.{fmt}").st_mode & 0o777 == 0o644


# ---- atomic writes ------------------------------------------------------------------------------------
def _crash_halfway(real_writer):
    """A writer that writes the first half of what the real one would, then dies."""
    def writer(f, arrays, metadata):
        import io as _pyio
        buf = _pyio.BytesIO()
        real_writer(buf, arrays, metadata)
        data = buf.getvalue()
        f.write(data[: len(data) // 2])
        f.flush()
        raise OSError("simulated crash: disk full")
    return writer


def test_crash_mid_write_keeps_previous_checkpoint(tmp_path, fmt, monkeypatch):
    path = tmp_path / f"ckpt.{fmt}"
    tio.save({"w": tl.tensor([1.0, 2.0])}, path, metadata={"epoch": "1"})
    before = path.read_bytes()
    name = f"_write_{fmt}"
    monkeypatch.setattr(tio, name, _crash_halfway(getattr(tio, name)))
    with pytest.raises(OSError, match="simulated crash"):
        tio.save({"w": tl.tensor([3.0, 4.0, 5.0])}, path, metadata={"epoch": "2"})
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left behind
    assert path.read_bytes() == before
    assert tio.load(path)["w"].tolist() == [1.0, 2.0]
    assert tio.load_metadata(path) == {"epoch": "1"}


def test_crash_on_first_write_leaves_nothing(tmp_path, fmt, monkeypatch):
    name = f"_write_{fmt}"
    monkeypatch.setattr(tio, name, _crash_halfway(getattr(tio, name)))
    with pytest.raises(OSError):
        tio.save({"w": tl.zeros(3)}, tmp_path / f"new.{fmt}")
    assert os.listdir(tmp_path) == []


def test_interrupt_mid_write_cleans_up(tmp_path, fmt, monkeypatch):
    path = tmp_path / f"ckpt.{fmt}"
    tio.save({"w": tl.zeros(1)}, path)

    def interrupted(f, arrays, metadata):
        f.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(tio, f"_write_{fmt}", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tio.save({"w": tl.ones(1)}, path)
    assert os.listdir(tmp_path) == [path.name]
    assert tio.load(path)["w"].tolist() == [0.0]


def test_write_goes_through_fsynced_temp_file_in_same_directory(tmp_path, fmt, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(("fsync", fd)), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append(("replace", str(a), str(b))), real_replace(a, b))[1])
    path = tmp_path / f"ckpt.{fmt}"
    tio.save({"w": tl.ones(2)}, path)
    kinds = [c[0] for c in calls]
    assert "replace" in kinds and "fsync" in kinds[: kinds.index("replace")], calls
    _, src, dst = next(c for c in calls if c[0] == "replace")
    assert os.path.dirname(src) == os.path.dirname(dst) == str(tmp_path)
    assert src != dst and dst == str(path)
    assert tio.load(path)["w"].tolist() == [1.0, 1.0]


def test_overwrite_replaces_contents(tmp_path, fmt):
    path = tmp_path / f"o.{fmt}"
    tio.save({"a": tl.zeros(2)}, path)
    tio.save({"b": tl.ones(3, dtype=tl.int32)}, path)
    out = tio.load(path)
    assert list(out) == ["b"] and out["b"].dtype is tl.int32
    assert os.listdir(tmp_path) == [path.name]


# ---- damaged files --------------------------------------------------------------------------------------
def _good_bytes(tmp_path, fmt) -> bytes:
    p = tmp_path / f"good.{fmt}"
    tio.save({"w": tl.arange(64, dtype=tl.float32).reshape(8, 8), "b": tl.ones(8, dtype=tl.int64)}, p,
             metadata={"k": "v"})
    data = p.read_bytes()
    p.unlink()
    return data


@pytest.mark.parametrize("keep", [0, 4, 8, 20, 0.5, 0.9, -1])
def test_truncated_file_is_a_checkpoint_error(tmp_path, fmt, keep):
    data = _good_bytes(tmp_path, fmt)
    n = int(len(data) * keep) if isinstance(keep, float) else (len(data) + keep if keep < 0 else keep)
    path = tmp_path / f"t.{fmt}"
    path.write_bytes(data[:n])
    with pytest.raises(CheckpointError, match=r"t\." + fmt) as ei:
        tio.load(path)
    assert isinstance(ei.value, RuntimeError)
    assert str(path) in str(ei.value)


def test_corrupted_bytes_are_a_checkpoint_error(tmp_path, fmt):
    data = bytearray(_good_bytes(tmp_path, fmt))
    # safetensors has no checksum, so damage its header; npz members carry a CRC, so damage data
    pos = 30 if fmt == "safetensors" else len(data) // 2
    data[pos] ^= 0xFF
    path = tmp_path / f"c.{fmt}"
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="truncated or corrupted") as ei:
        tio.load(path)
    assert ei.value.__cause__ is not None  # chained to the parser's error, not hidden


@pytest.mark.parametrize("content", [b"", b"hello, not a checkpoint\n" * 5, b"PK\x03\x04garbage", b"\x00" * 64])
def test_non_checkpoint_files_are_a_checkpoint_error(tmp_path, fmt, content):
    path = tmp_path / f"x.{fmt}"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        tio.load(path)
    with pytest.raises(CheckpointError):
        tio.load_metadata(path)


def test_single_npy_array_named_npz(tmp_path):
    path = tmp_path / "one.npz"
    with open(path, "wb") as f:
        np.save(f, np.zeros(3))
    with pytest.raises(CheckpointError, match="single .npy array"):
        tio.load(path)


def test_unsupported_dtype_in_file(tmp_path):
    np.savez(tmp_path / "u.npz", w=np.zeros(3, np.uint16))
    with pytest.raises(CheckpointError, match="'w' has dtype uint16"):
        tio.load(tmp_path / "u.npz")


# ---- never unpickle -------------------------------------------------------------------------------------
UNPICKLED: list[str] = []


def _side_effect() -> int:
    UNPICKLED.append("ran")
    return 0


class _Payload:
    def __reduce__(self):
        return (_side_effect, ())


def test_object_array_npz_is_refused_and_never_unpickled(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, w=np.zeros(2), payload=np.array([_Payload()], dtype=object), allow_pickle=True)
    UNPICKLED.clear()
    with pytest.raises(CheckpointError, match="pickled object array") as ei:
        tio.load(path)
    assert "'payload'" in str(ei.value)
    assert UNPICKLED == []
    # the control: the payload is live, an unsafe loader would have run it
    with np.load(path, allow_pickle=True) as npz:
        npz["payload"]
    assert UNPICKLED == ["ran"]


def test_raw_pickle_named_npz_is_refused_and_never_unpickled(tmp_path):
    path = tmp_path / "evil.npz"
    path.write_bytes(pickle.dumps({"w": _Payload()}))
    UNPICKLED.clear()
    with pytest.raises(CheckpointError, match="not a checkpoint format"):
        tio.load(path)
    assert UNPICKLED == []


# ---- state dict comparison --------------------------------------------------------------------------------
def test_check_state_dict_passes_when_everything_matches():
    a = {"w": tl.zeros(2, 3), "b": tl.zeros(3, dtype=tl.int64)}
    check_state_dict(a, {"b": tl.ones(3, dtype=tl.int64), "w": tl.ones(2, 3)})  # order does not matter
    check_state_dict(a, {"w": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.int64)})  # NumPy arrays too
    check_state_dict({}, {})


def test_check_state_dict_lists_every_difference():
    expected = {"w": tl.zeros(2, 3), "b": tl.zeros(3), "gone1": tl.zeros(1), "gone2": tl.zeros(1),
                "steps": tl.zeros(1, dtype=tl.int64), "both": tl.zeros(2)}
    loaded = {"w": tl.zeros(3, 2), "b": tl.zeros(3, dtype=tl.float64), "extra": tl.zeros(1),
              "steps": tl.zeros(1, dtype=tl.int32), "both": tl.zeros(4, dtype=tl.float16)}
    with pytest.raises(StateDictMismatchError) as ei:
        check_state_dict(expected, loaded, what="model MLP")
    e = ei.value
    assert isinstance(e, RuntimeError)
    assert e.missing == ["gone1", "gone2"]
    assert e.unexpected == ["extra"]
    assert [tuple(m) for m in e.shape_mismatches] == [("w", (2, 3), (3, 2)), ("both", (2,), (4,))]
    assert [tuple(m) for m in e.dtype_mismatches] == [("b", "float32", "float64"), ("steps", "int64", "int32"),
                                                      ("both", "float32", "float16")]
    msg = str(e)
    assert msg.startswith("Error(s) in loading model MLP:")
    for piece in ["missing keys (2): 'gone1', 'gone2'", "unexpected keys (1): 'extra'",
                  "'w': expected shape (2, 3), got (3, 2)", "'both': expected shape (2,), got (4,)",
                  "'b': expected dtype float32, got float64", "'steps': expected dtype int64, got int32",
                  "'both': expected dtype float32, got float16"]:
        assert piece in msg, (piece, msg)


@pytest.mark.parametrize("case, attr", [
    ({"loaded": {}}, "missing"),
    ({"loaded": {"w": tl.zeros(2), "x": tl.zeros(1)}}, "unexpected"),
    ({"loaded": {"w": tl.zeros(3)}}, "shape_mismatches"),
    ({"loaded": {"w": tl.zeros(2, dtype=tl.float64)}}, "dtype_mismatches"),
])
def test_each_kind_of_mismatch_alone_is_caught(case, attr):
    with pytest.raises(StateDictMismatchError) as ei:
        check_state_dict({"w": tl.zeros(2)}, case["loaded"])
    for a in ("missing", "unexpected", "shape_mismatches", "dtype_mismatches"):
        assert bool(getattr(ei.value, a)) == (a == attr), a


def test_check_state_dict_rejects_non_mappings():
    with pytest.raises(TypeError, match="expected must be a mapping"):
        check_state_dict([tl.zeros(1)], {})
    with pytest.raises(TypeError, match="loaded must be a mapping"):
        check_state_dict({}, None)


def test_load_with_expected_checks_the_file(tmp_path, fmt):
    path = tmp_path / f"e.{fmt}"
    tio.save({"w": tl.zeros(2, 3), "b": tl.zeros(3), "old": tl.zeros(1)}, path)
    ok = tio.load(path, expected={"w": tl.ones(2, 3), "b": tl.ones(3), "old": tl.ones(1)})
    assert set(ok) == {"w", "b", "old"}
    with pytest.raises(StateDictMismatchError) as ei:
        tio.load(path, expected={"w": tl.ones(3, 2), "b": tl.ones(3, dtype=tl.float16), "new": tl.ones(1)})
    e = ei.value
    assert e.missing == ["new"] and e.unexpected == ["old"]
    assert e.shape_mismatches[0].key == "w" and e.dtype_mismatches[0].key == "b"
    assert str(path) in str(e)


def test_load_expected_accepts_anything_with_state_dict(tmp_path):
    class Model:
        def state_dict(self):
            return {"w": tl.zeros(2)}

    tio.save({"w": tl.ones(3)}, tmp_path / "m.npz")
    with pytest.raises(StateDictMismatchError, match=r"'w': expected shape \(2,\), got \(3,\)"):
        tio.load(tmp_path / "m.npz", expected=Model())


# ---- nested objects: optimizer state dicts and training checkpoints ------------------------------------------
def _assert_same(a, b, where="obj"):
    """Equal values of identical types all the way down; tensors bit for bit, floats by bits (nan, -0.0)."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, tl.Tensor):
        assert a.dtype is b.dtype, where
        _same_bits(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b), (where, list(a), list(b))  # same keys, same key types, same order
        for (ka, va), kb in zip(a.items(), b):
            assert type(ka) is type(kb), (where, ka, kb)
            _assert_same(va, b[kb], f"{where}[{ka!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes() or (a != a and b != b), (where, a, b)
    else:
        assert a == b, (where, a, b)


def _model():
    return tl.nn.Sequential(tl.nn.Linear(4, 6), tl.nn.BatchNorm1d(6), tl.nn.ReLU(), tl.nn.Linear(6, 2))


def _train(model, opt, steps, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = tl.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


def test_training_checkpoint_round_trips_and_resumes_bit_identically(tmp_path, fmt):
    model = _model()
    opt = tl.optim.Adam(model.parameters(), lr=1e-3, betas=(0.8, 0.99), amsgrad=True)
    _train(model, opt, 3)
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "lr": 1e-3,
            "input_shape": (8, 4), "best_loss": float("inf"), "worst": -float("inf"), "nan": float("nan"),
            "neg_zero": -0.0, "third": 1 / 3, "tiny": 5e-324, "big": 2**70, "note": "ünïcode ✓ / ~ \\", "none": None,
            "flags": [True, False], "empty": ([], (), {}), "nested": [(1, (2.5, [None])), {"k": ("v",)}]}
    path = tmp_path / f"ckpt.{fmt}"
    tio.save(ckpt, path, metadata={"run": "a"})
    out = tio.load(path)
    _assert_same(out, ckpt)
    assert type(out["model"]) is type(ckpt["model"])  # a module's OrderedDict stays one
    assert type(out["optimizer"]["param_groups"][0]["betas"]) is tuple
    assert tio.load_metadata(path) == {"run": "a"}
    # loaded tensors are fresh: nothing shares memory with the live model or optimizer
    assert not np.shares_memory(out["model"]["0.weight"].numpy(), model.state_dict()["0.weight"].numpy())

    model2 = _model()
    opt2 = tl.optim.Adam(model2.parameters(), lr=0.5)
    model2.load_state_dict(out["model"])
    opt2.load_state_dict(out["optimizer"])
    assert opt2.param_groups[0]["lr"] == 1e-3 and opt2.param_groups[0]["betas"] == (0.8, 0.99)
    _train(model, opt, 5, seed=1)
    _train(model2, opt2, 5, seed=1)
    for (ka, a), (kb, b) in zip(model.state_dict().items(), model2.state_dict().items()):
        assert ka == kb
        _same_bits(a.numpy(), b.numpy())


def test_int_and_str_keys_stay_apart(tmp_path, fmt):
    obj = {"d": {0: tl.tensor([0.0]), "0": tl.tensor([1.0]), 1: "int one", "1": "str one", -5: 7},
           7: {"x": tl.tensor([2.0])}, "7": {"x": tl.tensor([3.0])}}
    path = tmp_path / f"k.{fmt}"
    tio.save(obj, path)
    out = tio.load(path)
    _assert_same(out, obj)
    assert out["d"][0].item() == 0.0 and out["d"]["0"].item() == 1.0
    assert out[7]["x"].item() == 2.0 and out["7"]["x"].item() == 3.0
    assert out["d"][1] == "int one" and out["d"]["1"] == "str one"


def test_separators_in_keys_are_escaped(tmp_path):
    from safetensors.numpy import load_file
    obj = {"a/b": {"c": tl.tensor([1.0])}, "a": {"b/c": tl.tensor([2.0]), "b~1c": tl.tensor([3.0])},
           "s": [tl.tensor([4.0]), {"__metadata__": tl.tensor([5.0])}], "__metadata__": tl.tensor([6.0]),
           "": tl.tensor([7.0]), "n\x00ul\\": tl.tensor([8.0]), "epoch": 1}
    for ext in FORMATS:
        path = tmp_path / f"s.{ext}"
        tio.save(obj, path)
        _assert_same(tio.load(path), obj)
    names = load_file(str(tmp_path / "s.safetensors"))
    assert {k: v.item() for k, v in names.items() if k in ("a~1b/c", "a/b~1c", "a/b~01c", "s/0")} == {
        "a~1b/c": 1.0, "a/b~1c": 2.0, "a/b~01c": 3.0, "s/0": 4.0}
    assert len(names) == 8 and "__metadata__" not in names


def test_optimizer_state_dict_alone_round_trips(tmp_path, fmt):
    w = tl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = tl.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    path = tmp_path / f"opt.{fmt}"
    tl.save(sd, path)
    out = tl.load(path)
    _assert_same(out, sd)
    assert list(out["state"]) == [0] and out["param_groups"][0]["params"] == [0]


def test_objects_without_tensors_round_trip(tmp_path, fmt):
    obj = {"epoch": 3, "history": [0.5, 0.25]}
    tio.save(obj, tmp_path / f"n.{fmt}")
    _assert_same(tio.load(tmp_path / f"n.{fmt}"), obj)


class _Color(int):
    pass


# what torch.load(weights_only=True) accepts by default (checked against torch in test_save_load_policy.py)
@pytest.mark.parametrize("value, safe", [
    (np.zeros(2), False), (np.float32(1.5), False), ({1, 2}, True), (_Color(3), False), (b"bytes", True),
    (1 + 2j, True), (__import__("collections").defaultdict(list), False),
])
def test_values_beyond_the_json_structure_are_pickled(tmp_path, fmt, value, safe):
    obj = {"model": {"w": tl.zeros(2)}, "optimizer": {"state": {0: {"step": 1, "buf": value}}}}
    path = tmp_path / f"u.{fmt}"
    tio.save(obj, path)
    assert path.read_bytes()[:2] == b"PK" and os.listdir(tmp_path) == [path.name]
    back = tio.load(path, weights_only=False)
    got = back["optimizer"]["state"][0]["buf"]
    assert type(got) is type(value) and np.all(got == value)
    assert back["model"]["w"].tolist() == [0.0, 0.0]
    if safe:
        assert tio.load(path)["optimizer"]["state"][0]["buf"] == value
    else:
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            tio.load(path)


def test_odd_keys_and_cycles_are_pickled(tmp_path, fmt):
    tio.save({"a": {(1, 2): 3}, True: tl.zeros(1)}, tmp_path / f"b.{fmt}")
    out = tio.load(tmp_path / f"b.{fmt}")
    assert out["a"] == {(1, 2): 3} and out[True].tolist() == [0.0]
    loop: list = [1]
    loop.append({"again": loop})
    tio.save({"x": loop}, tmp_path / f"b.{fmt}")
    back = tio.load(tmp_path / f"b.{fmt}")["x"]
    assert back[0] == 1 and back[1]["again"] is back
    shared = [1, 2]
    tio.save({"a": shared, "b": shared}, tmp_path / f"b.{fmt}")  # shared, not cyclic: the JSON structure
    assert tio.load(tmp_path / f"b.{fmt}") == {"a": [1, 2], "b": [1, 2]}


def _header(path) -> dict:
    import json
    data = path.read_bytes()
    return json.loads(data[8:8 + int.from_bytes(data[:8], "little")])


def test_flat_dicts_are_plain_safetensors_in_their_own_order(tmp_path):
    from safetensors.numpy import load_file
    sd = {"w": tl.arange(6, dtype=tl.float32).reshape(2, 3), "step": tl.tensor(7), "a": tl.zeros(2, dtype=tl.int8)}
    arrays = {k: v.numpy() for k, v in sd.items()}
    for meta in (None, {"epoch": "3"}):
        tio.save(sd, tmp_path / "f.safetensors", metadata=meta)
        theirs = load_file(tmp_path / "f.safetensors")  # (the safetensors library reads it as it is)
        assert theirs.keys() == arrays.keys()
        assert all(theirs[k].dtype == a.dtype and np.array_equal(theirs[k], a) for k, a in arrays.items())
        assert list(tio.load(tmp_path / "f.safetensors")) == ["w", "step", "a"]  # (torch keeps a dict's order)
        header = _header(tmp_path / "f.safetensors")
        assert set(header) == {"w", "step", "a"} | ({"__metadata__"} if meta else set())
        assert header.get("__metadata__") == meta
        tio.save(sd, tmp_path / "f.npz", metadata=meta)
        with np.load(tmp_path / "f.npz", allow_pickle=False) as npz:
            assert npz.files == ["w", "step", "a"] + (["__metadata__"] if meta else [])
    # the control: anything else does carry a structure
    tio.save({"w": sd["w"], "epoch": 3}, tmp_path / "n.safetensors")
    assert "__structure__" in _header(tmp_path / "n.safetensors")["__metadata__"]
    tio.save({"w": sd["w"], "epoch": 3}, tmp_path / "n.safetensors", metadata={"epoch": "3"})
    assert tio.load_metadata(tmp_path / "n.safetensors") == {"epoch": "3"}


def test_nested_checkpoint_with_expected_is_refused_clearly(tmp_path, fmt):
    path = tmp_path / f"e.{fmt}"
    tio.save({"model": {"w": tl.zeros(2)}, "epoch": 1}, path)
    with pytest.raises(ValueError, match=r"holds a nested object \(keys 'model', 'epoch'\).*check_state_dict"):
        tio.load(path, expected={"w": tl.zeros(2)})


def _write_raw(path, fmt, arrays, metadata):
    with open(path, "wb") as f:
        getattr(tio, f"_write_{fmt}")(f, arrays, metadata)


@pytest.mark.parametrize("structure, arrays, match", [
    ('{"version":1,"root":{"dict":[["w",{"tensor":"w"}]]}}', {}, "refers to the array 'w', which the file does"),
    ('{"version":1,"root":{"dict":[["w",{"tensor":"w"}]]', {"w": np.zeros(1)}, "is not valid JSON"),
    ('{"version":1,"root":{"dict":[["x",NaN]]}}', {}, "is not valid JSON"),
    ('{"version":1,"root":{"dict":[]}}', {"w": np.zeros(1)}, "does not place 1 of the file's arrays"),
    ('{"version":1,"root":{"dict":[["a",{"tensor":"w"}],["b",{"tensor":"w"}]]}}', {"w": np.zeros(1)}, "twice"),
    ('{"version":1,"root":{"dict":[["a",{"what":1}]]}}', {}, "unrecognised node"),
    ('{"version":1,"root":{"dict":[["a",1],["a",2]]}}', {}, "the dict key 'a' twice"),
    ('{"version":1,"root":{"dict":[[1.5,1]]}}', {}, "malformed dict entry"),
    ('{"version":2,"root":{"dict":[]}}', {}, "has version 2"),
    ('{"version":true,"root":{"dict":[]}}', {}, "has version True"),
    ('[]', {}, "is not a"),
])
def test_damaged_structures_are_checkpoint_errors(tmp_path, fmt, structure, arrays, match):
    path = tmp_path / f"d.{fmt}"
    _write_raw(path, fmt, arrays, {"__structure__": structure})
    with pytest.raises(CheckpointError, match=match) as ei:
        tio.load(path)
    assert str(path) in str(ei.value)


def test_crash_mid_write_of_a_nested_checkpoint_keeps_the_previous_one(tmp_path, fmt, monkeypatch):
    path = tmp_path / f"ckpt.{fmt}"
    tio.save({"model": {"w": tl.ones(2)}, "epoch": 1}, path)
    before = path.read_bytes()
    name = f"_write_{fmt}"
    monkeypatch.setattr(tio, name, _crash_halfway(getattr(tio, name)))
    with pytest.raises(OSError, match="simulated crash"):
        tio.save({"model": {"w": tl.zeros(2)}, "epoch": 2}, path)
    assert os.listdir(tmp_path) == [path.name] and path.read_bytes() == before
    assert tio.load(path)["epoch"] == 1


def test_safetensors_names_and_metadata_load_in_the_same_order_in_every_process(tmp_path):
    """The safetensors library hands back hash-map order, which changes per process; load must not."""
    import subprocess
    import sys

    path = tmp_path / "order.safetensors"
    code = ("import tinygrad_like as tl, sys\n"
            "m = tl.nn.Sequential(tl.nn.Linear(2, 3), tl.nn.Linear(3, 1))\n"
            "p = sys.argv[1]\n"
            "if sys.argv[2] == 'save': tl.save(m.state_dict(), p, metadata={'z': '1', 'a': '2', 'm': '3'})\n"
            "print((list(tl.load(p)), list(tl.io.load_metadata(p))))\n")
    runs = {subprocess.run([sys.executable, "-c", code, str(path), "save" if i == 0 else "load"], check=True,
                           capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": str(i)}).stdout
            for i in range(4)}
    assert len(runs) == 1, runs
    names, meta = eval(runs.pop())  # noqa: S307 - our own subprocess printed two lists of strings
    assert sorted(names) == ["0.bias", "0.weight", "1.bias", "1.weight"] and meta == ["a", "m", "z"]

"""Checkpoints: ``save`` / ``load`` with torch.save / torch.load's policy, in three containers.

``save`` writes any object torch saves, in the first of these that can hold it:

1. a flat dict of name -> Tensor (a model's ``state_dict()``): ``.safetensors`` (``.npz`` when the name ends so),
   exactly those named arrays, so any safetensors or NumPy reader sees the same names;
2. tensors nested in plain values (int, float including inf and nan, bool, str, None, lists, tuples, dicts and
   OrderedDicts with str or int keys): ``optimizer.state_dict()``, or a training checkpoint such as
   ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}``. Each Tensor is stored as an
   array under a generated path-like name (``optimizer/state/0/exp_avg``) and the nesting as JSON in the file's
   metadata, in the same safetensors or ``.npz`` file, so :func:`load` rebuilds the same Python object (int keys
   stay ints, tuples stay tuples) and no pickle is involved;
3. anything else (a NumPy array, a set, ``argparse.Namespace``, a whole module or optimizer): a pickle in a zip,
   each tensor beside it as an ``.npy`` array (layout below, at ``_PICKLE_DIR``), as torch.save pickles.

``load`` also reads checkpoints written by PyTorch's own ``torch.save`` (a zip of ``data.pkl`` and raw
storages), under the same policy.

Loading follows torch 2.13: ``weights_only`` is True by default, and then a pickle is read by an unpickler that
resolves only the globals torch's weights-only unpickler allows by default (OrderedDict, Counter, set,
bytearray, complex, bytes, sizes, dtypes, devices) plus those allowlisted with :func:`add_safe_globals` or
``with safe_globals([...])`` (also in ``tinygrad_like.serialization``, torch's module path); any other global is
a ``pickle.UnpicklingError`` naming it, as torch's, and nothing of it runs. ``weights_only=False`` unpickles
everything. Containers 1 and 2 load either way. Checkpoints written before pickles were possible are
containers 1 and 2 and still load.

Writes are atomic (a temporary file beside the target, fsynced, then ``os.replace``: a crash mid-save leaves
the previous checkpoint intact) and a damaged file is reported as a :class:`CheckpointError` naming the file,
not as a parser traceback. All ten dtypes round-trip; bfloat16 is ``BF16`` in safetensors (as torch writes it)
and, in ``.npz``, the 2-byte void NumPy writes for ``ml_dtypes.bfloat16`` (as JAX's arrays save), which loads
back as bfloat16.

>>> import os, tempfile
>>> import tinygrad_like as tl
>>> from tinygrad_like import io
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "model.safetensors")
...     io.save({"w": tl.ones(2, 3), "step": tl.tensor(7)}, path)
...     sd = io.load(path)
>>> sorted(sd), sd["w"].shape, sd["step"].item()
(['step', 'w'], tl.Size([2, 3]), 7)
>>> w = tl.tensor([1.0, -1.0], requires_grad=True)
>>> opt = tl.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "ckpt.safetensors")
...     io.save({"optimizer": opt.state_dict(), "epoch": 3}, path)
...     ckpt = io.load(path)
>>> ckpt["epoch"], ckpt["optimizer"]["param_groups"][0]["betas"], ckpt["optimizer"]["state"][0]["exp_avg"]
(3, (0.9, 0.999), tensor([ 0.2000, -0.2000]))
>>> opt.load_state_dict(ckpt["optimizer"])
"""

from __future__ import annotations

import _compat_pickle
import codecs
import functools
import json
import math
import os
import pickle
import pickletools
import uuid
import warnings
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from io import BytesIO as _BytesIO
from typing import IO, Any, NamedTuple

import numpy as np

from . import dtypes
from .compat import Size
from .creation import from_numpy
from .device import get_device
from .nn.module import Parameter
from .tensor import Tensor

__all__ = ["save", "load", "load_metadata", "check_state_dict", "CheckpointError", "StateDictMismatchError",
           "Mismatch"]

PathLike = str | os.PathLike
_METADATA_KEY = "__metadata__"  # reserved: the safetensors header uses it, and so does our .npz layout
_STRUCTURE_KEY = "__structure__"  # reserved metadata key: the JSON layout of a nested (non-flat) object
_STRUCTURE_VERSION = 1
_FORMATS = {".safetensors": "safetensors", ".npz": "npz"}


class CheckpointError(RuntimeError):
    """A checkpoint file could not be read: truncated, corrupted, not a checkpoint, or holding pickles."""


class Mismatch(NamedTuple):
    """One entry whose shape or dtype differs: ``key``, what was ``expected``, what was ``got``."""

    key: str
    expected: Any
    got: Any


class StateDictMismatchError(RuntimeError):
    """Two state dicts disagree. The message lists every difference; the attributes hold them as data.

    ``missing`` (keys expected but absent), ``unexpected`` (keys present but not expected),
    ``shape_mismatches`` and ``dtype_mismatches`` (lists of :class:`Mismatch`).
    """

    def __init__(self, message: str, *, missing: list[str] | None = None, unexpected: list[str] | None = None,
                 shape_mismatches: list[Mismatch] | None = None, dtype_mismatches: list[Mismatch] | None = None):
        super().__init__(message)
        self.missing = list(missing or [])
        self.unexpected = list(unexpected or [])
        self.shape_mismatches = list(shape_mismatches or [])
        self.dtype_mismatches = list(dtype_mismatches or [])


# ---- comparing state dicts ------------------------------------------------------------------------
def _dtype_name(dt: Any) -> str:
    """``tl.float32``, ``np.float32`` and ``np.dtype('float32')`` all read as ``'float32'``."""
    if isinstance(dt, dtypes.DType):
        return dt.name
    try:
        return np.dtype(dt).name
    except TypeError:
        return str(dt)


def _as_entries(d: Any, role: str) -> Mapping:
    if isinstance(d, Mapping):
        return d
    raise TypeError(f"check_state_dict: {role} must be a mapping of name -> tensor, got {type(d).__name__}")


def check_state_dict(expected: Mapping[str, Any], loaded: Mapping[str, Any], *, what: str = "state_dict") -> None:
    """Raise :class:`StateDictMismatchError` listing every key, shape and dtype difference, or return None.

    Values may be Tensors or anything with ``.shape`` and ``.dtype`` (NumPy arrays too). Checking all
    entries before complaining means one run shows everything wrong with a checkpoint, not the first thing.

    >>> import tinygrad_like as tl
    >>> check_state_dict({"w": tl.zeros(2)}, {"w": tl.ones(2)})  # same names, shapes and dtypes: fine
    >>> try:
    ...     check_state_dict({"w": tl.zeros(2, 3), "b": tl.zeros(3)}, {"w": tl.zeros(3, 2), "extra": tl.zeros(1)})
    ... except StateDictMismatchError as e:
    ...     print(e)
    Error(s) in loading state_dict:
      missing keys (1): 'b'
      unexpected keys (1): 'extra'
      shape mismatches (1):
        'w': expected shape (2, 3), got (3, 2)
    """
    expected, loaded = _as_entries(expected, "expected"), _as_entries(loaded, "loaded")
    missing = [k for k in expected if k not in loaded]
    unexpected = [k for k in loaded if k not in expected]
    shapes: list[Mismatch] = []
    kinds: list[Mismatch] = []
    for k, want in expected.items():
        if k not in loaded:
            continue
        got = loaded[k]
        ws, gs = tuple(want.shape), tuple(got.shape)
        if ws != gs:
            shapes.append(Mismatch(k, ws, gs))
        wd, gd = _dtype_name(want.dtype), _dtype_name(got.dtype)
        if wd != gd:
            kinds.append(Mismatch(k, wd, gd))
    if not (missing or unexpected or shapes or kinds):
        return
    lines = [f"Error(s) in loading {what}:"]
    if missing:
        lines.append(f"  missing keys ({len(missing)}): {', '.join(map(repr, missing))}")
    if unexpected:
        lines.append(f"  unexpected keys ({len(unexpected)}): {', '.join(map(repr, unexpected))}")
    if shapes:
        lines.append(f"  shape mismatches ({len(shapes)}):")
        lines += [f"    {m.key!r}: expected shape {m.expected}, got {m.got}" for m in shapes]
    if kinds:
        lines.append(f"  dtype mismatches ({len(kinds)}):")
        lines += [f"    {m.key!r}: expected dtype {m.expected}, got {m.got}" for m in kinds]
    raise StateDictMismatchError("\n".join(lines), missing=missing, unexpected=unexpected,
                                 shape_mismatches=shapes, dtype_mismatches=kinds)


# ---- formats ------------------------------------------------------------------------------------
def _format_of(path: PathLike) -> str:
    """``.npz`` -> npz; any other name (``.safetensors``, and PyTorch's habits ``.pt``, ``.pth``, ``.ckpt``, none)
    -> safetensors. The suffix never means pickle here."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    return _FORMATS.get(suffix, "safetensors")


def _is_file_object(f: Any) -> bool:
    return not isinstance(f, (str, bytes, os.PathLike)) and (hasattr(f, "write") or hasattr(f, "read"))


def _host_copy(t: Tensor) -> np.ndarray:
    """A contiguous host copy, so views and non-contiguous tensors are written as what they show."""
    return np.array(t.detach().numpy(), copy=True, order="C")


def _is_flat(obj: Any) -> bool:
    """A flat state dict (str -> Tensor) is written as plain named arrays, exactly as other tools write them."""
    return isinstance(obj, Mapping) and all(isinstance(k, str) and k and k != _METADATA_KEY and isinstance(v, Tensor)
                                            for k, v in obj.items())


def _to_arrays(state_dict: Mapping[str, Tensor]) -> dict[str, np.ndarray]:
    """A flat state dict's entries as host arrays under their own names."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"save expects a dict of name -> Tensor, got {type(state_dict).__name__}")
    out: dict[str, np.ndarray] = {}
    for k, t in state_dict.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"state_dict keys must be non-empty strings (they name the arrays in the file), "
                            f"got {k!r}")
        if k == _METADATA_KEY:
            raise ValueError(f"the key {_METADATA_KEY!r} is reserved for checkpoint metadata; rename the entry")
        if not isinstance(t, Tensor):
            raise TypeError(f"state_dict[{k!r}] is a {type(t).__name__}, expected a Tensor")
        out[k] = _host_copy(t)
    return out


# ---- nested objects: tensors as named arrays, everything else as JSON --------------------------------
# The structure is JSON with one node per value. None, bool, str, int and finite floats are themselves;
# a list is a JSON array; every other node is an object with exactly one tag:
#   {"tensor": name}           the array stored under ``name``
#   {"float": "nan"|"inf"|"-inf"}  (JSON has no such numbers)
#   {"tuple": [...]}
#   {"dict": [[key, value], ...]} / {"odict": [...]}  (pairs keep int keys as ints, and key order)
# Because dicts are always tagged, a user's dict can never be mistaken for a tag.
_SUPPORTED = ("Tensor, int, float, bool, str, None, and lists, tuples and dicts (with str or int keys) of "
              "these")
_NAME_ESCAPES = (("~", "~0"), ("/", "~1"), ("\\", "~2"), ("\x00", "~3"))  # "/" separates path parts


def _typename(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _escape(part: str | int) -> str:
    """One path part of a generated array name; the escapes keep parts apart and zip member names intact."""
    out = str(part)
    for raw, esc in _NAME_ESCAPES:
        out = out.replace(raw, esc)
    return out


def _unsupported_hint(obj: Any) -> str:
    if isinstance(obj, np.ndarray):
        return " (wrap NumPy arrays in a Tensor: tl.tensor(a))"
    if isinstance(obj, np.generic):
        return " (convert NumPy scalars with int(), float() or bool())"
    if isinstance(obj, (set, frozenset)):
        return " (use a list or tuple)"
    if isinstance(obj, (int, float, str)):
        return (" (subclasses of int, float and str would load back as the base type; convert with int(), "
                "float() or str())")
    if isinstance(obj, Mapping):
        return " (only dict and OrderedDict load back as themselves; convert with dict())"
    if hasattr(obj, "state_dict") and hasattr(obj, "parameters"):
        return " (a whole module is pickled by PyTorch; save module.state_dict() instead)"
    if hasattr(obj, "state_dict") and hasattr(obj, "param_groups"):
        return " (save optimizer.state_dict() instead)"
    if isinstance(obj, (list, tuple)):
        return " (convert with list() or tuple())"
    return ""


class _Flattener:
    """Walk a nested object: tensors go to ``arrays`` under generated names, the rest becomes JSON nodes."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._open: set[int] = set()  # ids of the containers on the current path (a cycle would recurse forever)

    def _name(self, parts: tuple[str | int, ...]) -> str:
        base = "/".join(_escape(p) for p in parts)
        name, n = base, 1
        while not name or name == _METADATA_KEY or name in self.arrays:  # e.g. keys 0 and "0" side by side
            n += 1
            name = f"{base}#{n}"
        return name

    def node(self, obj: Any, where: str, parts: tuple[str | int, ...]) -> Any:
        t = type(obj)
        if isinstance(obj, Tensor):
            name = self._name(parts)
            self.arrays[name] = _host_copy(obj)
            return {"tensor": name}
        if obj is None or t in (bool, int, str):
            return obj
        if t is float:
            if math.isfinite(obj):
                return obj
            return {"float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if t in (list, tuple, dict, OrderedDict):
            if id(obj) in self._open:
                raise ValueError(f"cannot save {where}: it contains itself (a reference cycle)")
            self._open.add(id(obj))
            try:
                if t is list or t is tuple:
                    items = [self.node(v, f"{where}[{i}]", (*parts, i)) for i, v in enumerate(obj)]
                    return items if t is list else {"tuple": items}
                pairs = []
                for k, v in obj.items():
                    if type(k) not in (str, int):
                        raise TypeError(f"cannot save {where}: it has the key {k!r} of type {_typename(k)}; "
                                        f"dict keys must be str or int")
                    pairs.append([k, self.node(v, f"{where}[{k!r}]", (*parts, k))])
                return {"dict" if t is dict else "odict": pairs}
            finally:
                self._open.discard(id(obj))
        raise TypeError(f"cannot save {where}: it is a {_typename(obj)}{_unsupported_hint(obj)}. Checkpoints hold "
                        f"only {_SUPPORTED} (never pickles)")


def _flatten(obj: Any) -> tuple[dict[str, np.ndarray], str]:
    """``obj``'s tensors by generated name, and the JSON that puts them back in place."""
    flat = _Flattener()
    root = flat.node(obj, "state_dict", ())
    structure = json.dumps({"version": _STRUCTURE_VERSION, "root": root}, allow_nan=False, ensure_ascii=True,
                           separators=(",", ":"))
    return flat.arrays, structure


class _Rebuilder:
    """Turn a structure's JSON back into the object, taking each tensor from ``tensors`` exactly once."""

    def __init__(self, path: str, tensors: dict[str, Tensor]) -> None:
        self.path = path
        self.tensors = tensors
        self.used: set[str] = set()

    def fail(self, why: str) -> CheckpointError:
        return CheckpointError(f"cannot read checkpoint {self.path!r}: its {_STRUCTURE_KEY!r} metadata {why} "
                               f"(corrupted, or not written by tinygrad_like.save?)")

    def node(self, n: Any) -> Any:
        if n is None or type(n) in (bool, int, float, str):
            return n
        if type(n) is list:
            return [self.node(v) for v in n]
        if type(n) is dict and len(n) == 1:
            ((tag, val),) = n.items()
            if tag == "tensor" and type(val) is str:
                if val not in self.tensors:
                    raise self.fail(f"refers to the array {val!r}, which the file does not hold")
                if val in self.used:
                    raise self.fail(f"refers to the array {val!r} twice")
                self.used.add(val)
                return self.tensors[val]
            if tag == "float" and val in ("nan", "inf", "-inf"):
                return float(val)
            if tag == "tuple" and type(val) is list:
                return tuple(self.node(v) for v in val)
            if tag in ("dict", "odict") and type(val) is list:
                out: dict[Any, Any] = {} if tag == "dict" else OrderedDict()
                for pair in val:
                    if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                        raise self.fail(f"has a malformed dict entry {json.dumps(pair)[:80]}")
                    if pair[0] in out:
                        raise self.fail(f"has the dict key {pair[0]!r} twice")
                    out[pair[0]] = self.node(pair[1])
                return out
        raise self.fail(f"has an unrecognised node {json.dumps(n)[:80]}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _rebuild(path: str, structure: str, tensors: dict[str, Tensor]) -> Any:
    rebuilder = _Rebuilder(path, tensors)
    try:
        doc = json.loads(structure, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise rebuilder.fail(f"is not valid JSON: {e}") from e
    if not isinstance(doc, dict) or set(doc) != {"version", "root"}:
        raise rebuilder.fail("is not a {'version', 'root'} object")
    if doc["version"] != _STRUCTURE_VERSION or type(doc["version"]) is not int:
        raise rebuilder.fail(f"has version {doc['version']!r}; this tinygrad_like reads version "
                             f"{_STRUCTURE_VERSION} (written by a newer version?)")
    root = doc["root"]
    try:
        out = rebuilder.node(root)
    except RecursionError as e:
        raise rebuilder.fail("is nested too deeply") from e
    unused = [k for k in tensors if k not in rebuilder.used]
    if unused:
        raise rebuilder.fail(f"does not place {len(unused)} of the file's arrays ({', '.join(map(repr, unused[:5]))}"
                             f"{', ...' if len(unused) > 5 else ''})")
    return out


def _check_metadata(metadata: Mapping[str, str] | None) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict of str -> str, got {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must map str -> str (as safetensors requires); got {k!r}: {v!r}. "
                            f"Encode other values yourself, e.g. with json.dumps, or save them in the object "
                            f"itself: save({{'model': ..., 'epoch': 3}}, path)")
        if k == _STRUCTURE_KEY:
            raise ValueError(f"the metadata key {_STRUCTURE_KEY!r} is reserved (it holds the layout of nested "
                             f"objects); rename it")
    return dict(metadata)


_ST_CODES = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
             np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int16): "I16", np.dtype(np.int8): "I8",
             np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL", np.dtype(dtypes.bfloat16.np): "BF16"}


def _write_safetensors(f: IO[bytes], arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """The safetensors layout (8-byte little-endian header length, a JSON header padded with spaces to 8 bytes, then
    the raw little-endian data), written here rather than by the safetensors library, which lays tensors out sorted
    by dtype and name: a state_dict must come back in its own order, as torch's does."""
    header: dict[str, Any] = {_METADATA_KEY: metadata} if metadata else {}
    chunks, offset = [], 0
    for name, a in arrays.items():
        a = np.require(a, requirements="C")  # (not ascontiguousarray: it turns a 0-d array into 1-d)
        code = _ST_CODES.get(a.dtype)
        if code is None:
            raise TypeError(f"cannot save {name!r}: dtype {a.dtype} has no safetensors code")
        raw = (a if a.dtype.byteorder in "=|<" or a.dtype.itemsize == 1 else a.byteswap()).tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    f.write(len(text).to_bytes(8, "little"))
    f.write(text)
    for raw in chunks:
        f.write(raw)


def _write_npz(f: IO[bytes], arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """The layout ``np.savez`` writes (one ``name.npy`` per entry in an uncompressed zip), written member by
    member so that no entry name can collide with ``np.savez``'s own keywords (``file``, ``allow_pickle``)."""
    entries = dict(arrays)
    if metadata:
        entries[_METADATA_KEY] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for k, a in entries.items():
            with z.open(k + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, a, allow_pickle=False)


def _fsync_dir(directory: str) -> None:
    """Make the rename itself durable; not every platform can open a directory, and that is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # someone else's process, or a platform without signal 0: assume alive
        return True
    return True


def _remove_stale_temporaries(directory: str, name: str) -> None:
    """Delete the temporary files a crashed save of ``name`` left behind (full-size, and otherwise kept for
    good): those whose writer process is gone. The temporary of a save running now in another process stays.
    """
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        parts = entry[len(prefix):-len(".tmp")].split(".")
        if len(parts) != 2 or not parts[0].isdigit() or _pid_alive(int(parts[0])):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
        except OSError:
            pass


def _atomic_write(path: PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write to a temporary file beside ``path``, fsync it, then rename it over ``path`` in one step.

    A reader sees the old file or the new one, never half of one; on any error the temporary file is
    removed and the old file is untouched. ``os.open(..., 0o666)`` lets the umask set the permissions,
    as for any ordinary new file.
    """
    target = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(target)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot save checkpoint to {os.fspath(path)!r}: the directory {directory!r} does "
                                f"not exist")
    _remove_stale_temporaries(directory, name)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(directory)


# ---- everything else: a pickle in a zip, tensors beside it as .npy arrays -------------------------------------
# torch.save pickles any object; so do we when the JSON structure above cannot hold it (a NumPy array, a set, an
# argparse.Namespace, a whole module or optimizer, a reference cycle). The container is an uncompressed zip:
#   tinygrad_like_pickle/version      "1"
#   tinygrad_like_pickle/data.pkl     the object, pickled (protocol 2, as torch) with every Tensor replaced by a
#                                     persistent id ("tensor", key, requires_grad, is_parameter, device)
#   tinygrad_like_pickle/tensors/<key>.npy   each tensor's contents (no pickles inside: allow_pickle=False)
#   tinygrad_like_pickle/metadata.json       save(metadata=...), if given
# and is written atomically like the other formats. Loading it follows torch.load's policy: with weights_only
# (the default) the unpickler resolves only the globals torch allows by default (OrderedDict, Counter, set,
# bytearray, complex, bytes, sizes, dtypes, devices) and those allowlisted with serialization.add_safe_globals;
# anything else is a pickle.UnpicklingError naming the global, as torch's.
_PICKLE_DIR = "tinygrad_like_pickle"
_PICKLE_VERSION = "1"
_PICKLE_PROTOCOL = 2  # torch's DEFAULT_PROTOCOL: frozenset, slice, range pickle as globals, so the policy is torch's

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")


def _default_safe_globals() -> dict[str, Any]:
    """What torch's weights-only unpickler resolves without an allowlist, under the names our pickles use."""
    return {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter, "builtins.set": set,
            "builtins.bytearray": bytearray, "builtins.complex": complex, "_codecs.encode": codecs.encode,
            "tinygrad_like.compat.Size": Size, "tinygrad_like.dtypes._by_name": dtypes._by_name,
            "tinygrad_like.device.get_device": get_device}


_user_safe_globals: list[Any] = []  # torch keeps its allowlist per process too


def _global_name(entry: Any) -> str:
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
        return entry[1]
    return f"{entry.__module__}.{entry.__qualname__}"


def _user_globals() -> dict[str, Any]:
    return {_global_name(e): (e[0] if isinstance(e, tuple) else e) for e in _user_safe_globals}


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes and functions in ``load(weights_only=True)``, as ``torch.serialization.add_safe_globals``:
    each entry is the object, or ``(object, "module.name")`` when it is pickled under another name."""
    for e in safe_globals:
        if isinstance(e, tuple):
            if len(e) != 2 or not callable(e[0]) or not isinstance(e[1], str):
                raise ValueError(f"add_safe_globals: expected a callable or a (callable, 'module.name') pair, "
                                 f"got {e!r}")
        elif not callable(e):
            raise ValueError(f"add_safe_globals: expected classes or functions, got {e!r}")
    _user_safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The user's allowlist (a copy), as ``torch.serialization.get_safe_globals``."""
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    """Empty the user's allowlist, as ``torch.serialization.clear_safe_globals``."""
    _user_safe_globals.clear()


class safe_globals:  # noqa: N801 (torch's name)
    """``with safe_globals([cls, ...]):`` allowlists them for the block only, as ``torch.serialization``'s."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals
        self._before: list[Any] = []

    def __enter__(self) -> None:
        self._before = get_safe_globals()
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _user_safe_globals[:] = self._before


def _py3_name(module: str, name: str) -> str:
    """``module.name`` as Python 3 spells it (protocol 2 writes ``__builtin__.set``), as pickle itself maps it."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


def _unsupported_global(full: str) -> pickle.UnpicklingError:
    shown = full[len("builtins."):] if full.startswith("builtins.") else full
    message = (f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
               f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals("
               f"[{shown}])` context manager to allowlist this global if you trust this class/function. "
               f"(tinygrad_like.serialization has the same functions.)")
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
        f"only if you trust the source of the checkpoint. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
        f"with `weights_only=True` please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: {message}\n\nCheck the documentation of torch.load to learn more about types "
        f"accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


class _TensorIds:
    """Pickler mix-in: each distinct Tensor becomes one array in the zip; the pickle holds a persistent id."""

    arrays: dict[str, np.ndarray]

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return None
        key = self._keys.get(id(obj))
        if key is None:
            key = self._keys[id(obj)] = str(len(self._keys))
            self._alive.append(obj)  # (ids stay unique while the pickler runs)
            self.arrays[key] = _host_copy(obj)
        return ("tensor", key, bool(obj.requires_grad and obj.is_leaf), isinstance(obj, Parameter), str(obj.device))


def _pickle(obj: Any, pickle_module: Any, protocol: int) -> tuple[bytes, dict[str, np.ndarray]]:
    base = getattr(pickle_module, "Pickler", pickle.Pickler)
    cls = type("_Pickler", (_TensorIds, base), {})
    buf = _BytesIO()
    p = cls(buf, protocol)
    p.arrays, p._keys, p._alive = {}, {}, []
    p.dump(obj)
    return buf.getvalue(), p.arrays


def _write_pickle_zip(f: IO[bytes], data: bytes, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        z.writestr(f"{_PICKLE_DIR}/version", _PICKLE_VERSION)
        z.writestr(f"{_PICKLE_DIR}/data.pkl", data)
        for k, a in arrays.items():
            with z.open(f"{_PICKLE_DIR}/tensors/{k}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, a, allow_pickle=False)
        if metadata:
            z.writestr(f"{_PICKLE_DIR}/metadata.json", json.dumps(metadata))


def _is_pickle_zip(names: list[str]) -> bool:
    return f"{_PICKLE_DIR}/data.pkl" in names


class _Loader:
    """Unpickler mix-in: tensors from the zip's arrays (each once: shared tensors stay shared); with
    ``weights_only``, only allowlisted globals."""

    def persistent_load(self, pid: Any) -> Any:
        if self._torch_prefix is not None and type(pid) is tuple and pid and pid[0] == "storage":
            return self._torch_storage(pid)
        if (type(pid) is not tuple or len(pid) != 5 or pid[0] != "tensor" or type(pid[1]) is not str
                or type(pid[4]) is not str):
            raise pickle.UnpicklingError(f"cannot read checkpoint {self._path!r}: unrecognised persistent id "
                                         f"{pid!r}")
        _, key, requires_grad, is_param, device = pid
        if key not in self._tensors:
            member = f"{_PICKLE_DIR}/tensors/{key}.npy"
            try:
                with self._zip.open(member) as m:
                    a = np.lib.format.read_array(m, allow_pickle=False)
            except KeyError as e:
                raise CheckpointError(f"cannot read checkpoint {self._path!r}: the array {member!r} is missing "
                                      f"(truncated or corrupted?)") from e
            if a.dtype == _V2:
                a = a.view(dtypes.bfloat16.np)
            t = from_numpy(np.array(a, copy=True, order="C"))
            dev = self._device(device)
            if dev is not None:
                t = t.to(dev)
            t = Parameter(t, requires_grad=bool(requires_grad)) if is_param else t.requires_grad_(bool(requires_grad))
            self._tensors[key] = t
        return self._tensors[key]

    def _torch_storage(self, pid: tuple) -> np.ndarray:
        """A storage of a checkpoint written by PyTorch itself: its bytes as a flat array of its dtype."""
        _, kind, key, _location, _numel = pid
        if not isinstance(kind, _TorchStorage):
            raise pickle.UnpicklingError(f"cannot read checkpoint {self._path!r}: unsupported storage {kind!r}")
        if key not in self._storages:
            member = f"{self._torch_prefix}/data/{key}"
            try:
                raw = self._zip.read(member)
            except KeyError as e:
                raise CheckpointError(f"cannot read checkpoint {self._path!r}: the storage {member!r} is missing "
                                      f"(truncated or corrupted?)") from e
            order = "<" if self._byteorder == "little" else ">"
            if kind.dtype is dtypes.bfloat16:
                arr = np.frombuffer(raw, order + "u2").view(dtypes.bfloat16.np)
            else:
                arr = np.frombuffer(raw, np.dtype(kind.dtype.np).newbyteorder(order))
            self._storages[key] = arr
        return self._storages[key]

    def find_class(self, module: str, name: str) -> Any:
        full = _py3_name(module, name)
        if self._torch_prefix is not None and full in _TORCH_GLOBALS:
            return _TORCH_GLOBALS[full]()
        if not self._weights_only:
            return super().find_class(module, name)
        allowed = _default_safe_globals()
        if full in allowed:
            return allowed[full]
        user = _user_globals()
        if full in user:
            return user[full]
        raise _unsupported_global(full)


def _read_pickle_zip(path: str, z: zipfile.ZipFile, map_location: Any, pickle_module: Any, weights_only: bool,
                     pickle_load_args: dict[str, Any]) -> Any:
    base = pickle.Unpickler if weights_only else getattr(pickle_module, "Unpickler", pickle.Unpickler)
    cls = type("_Unpickler", (_Loader, base), {})
    names = z.namelist()
    torch_prefix = None if _is_pickle_zip(names) else _torch_zip_prefix(names)
    pkl = f"{_PICKLE_DIR}/data.pkl" if torch_prefix is None else f"{torch_prefix}/data.pkl"
    with z.open(pkl) as f:
        data = f.read()
    u = cls(_BytesIO(data), **pickle_load_args)
    target = _map_location(map_location)
    u._path, u._zip, u._tensors, u._weights_only = path, z, {}, weights_only
    u._torch_prefix, u._storages = torch_prefix, {}
    u._byteorder = "little"
    if torch_prefix is not None and f"{torch_prefix}/byteorder" in names:
        u._byteorder = z.read(f"{torch_prefix}/byteorder").decode().strip()
    _torch_target[0] = target
    u._device = (lambda saved: target) if map_location is not None else (
        lambda saved: None if saved == "cpu" else get_device(saved))
    return u.load()


def _zip_globals(data: bytes) -> list[str]:
    """The globals a protocol-2 pickle names (GLOBAL opcodes), in order, each once."""
    out: list[str] = []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            full = _py3_name(*str(arg).split(" ", 1))
            if full not in out:
                out.append(full)
    return out


def _torch_zip_prefix(names: list[str]) -> str | None:
    """The archive folder of a checkpoint written by PyTorch's torch.save (``<name>/data.pkl``), or None."""
    for n in names:
        if n.endswith("/data.pkl") and n.count("/") == 1:
            return n[:-len("/data.pkl")]
    return None


# ---- checkpoints written by PyTorch itself: its zip of data.pkl and raw storages ------------------------------------
# The globals torch.save writes for tensors, mapped to ours. torch's weights-only unpickler allows all of them by
# default, and so do we, for such files only (our own pickles never name them).
class _TorchStorage:
    """``torch.FloatStorage`` and its kin, as the persistent ids of a torch checkpoint name them."""

    def __init__(self, name: str, dtype: dtypes.DType) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_STORAGES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
             "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool"}
_torch_target: list[Any] = [None]  # the map_location device of the torch checkpoint being read


def _rebuild_tensor(storage: np.ndarray, storage_offset: int, size: tuple, stride: tuple,
                    requires_grad: bool = False, backward_hooks: Any = None, metadata: Any = None) -> Tensor:
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[storage_offset:], shape=tuple(size),
                                           strides=tuple(st * item for st in stride), writeable=False)
    t = from_numpy(np.array(view, copy=True, order="C").astype(view.dtype.newbyteorder("=")))
    if _torch_target[0] is not None:
        t = t.to(_torch_target[0])
    return t.requires_grad_(bool(requires_grad)) if requires_grad else t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None, state: Any = None) -> Any:
    return Parameter(data, requires_grad=bool(requires_grad))


def _rebuild_from_type_v2(func: Callable, new_type: type, args: tuple, state: Any) -> Any:
    out = func(*args)
    return Parameter(out) if new_type is Parameter and not isinstance(out, Parameter) else out


def _torch_device(type: str, index: int | None = None) -> Any:  # noqa: A002 (torch.device's parameter name)
    return get_device(type if index is None else f"{type}:{index}")


def _torch_globals() -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {
        "torch._utils._rebuild_tensor_v2": lambda: _rebuild_tensor,
        "torch._utils._rebuild_tensor": lambda: _rebuild_tensor,
        "torch._utils._rebuild_parameter": lambda: _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": lambda: _rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": lambda: _rebuild_from_type_v2,
        "torch.Tensor": lambda: Tensor, "torch.nn.parameter.Parameter": lambda: Parameter,
        "torch.Size": lambda: Size, "torch.device": lambda: _torch_device,
    }
    for name, dt in _STORAGES.items():
        out[f"torch.{name}Storage"] = functools.partial(_TorchStorage, f"{name}Storage", dtypes._by_name(dt))
    for dt in set(_STORAGES.values()):
        out[f"torch.{dt}"] = functools.partial(dtypes._by_name, dt)
    return out


_TORCH_GLOBALS = _torch_globals()


def _pickle_zip_of(source: Any, head: bytes) -> zipfile.ZipFile | None:
    """The open zip when ``source`` is a pickle checkpoint (ours, or PyTorch's own), else None (the other readers
    take it from there)."""
    if head[:2] != b"PK":
        return None
    try:
        z = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError):
        return None
    names = z.namelist()
    if _is_pickle_zip(names) or _torch_zip_prefix(names) is not None:
        return z
    z.close()
    return None


def get_unsafe_globals_in_checkpoint(f: PathLike | IO[bytes]) -> list[str]:
    """The globals in a checkpoint that ``load(weights_only=True)`` refuses by default (the user's allowlist is
    not consulted), as ``torch.serialization.get_unsafe_globals_in_checkpoint``. Files without a pickle: []."""
    raw = f.read() if _is_file_object(f) else open(os.fspath(f), "rb").read()  # noqa: SIM115
    if raw[:2] != b"PK":
        return []
    with zipfile.ZipFile(_BytesIO(raw)) as z:
        names = z.namelist()
        prefix = _PICKLE_DIR if _is_pickle_zip(names) else _torch_zip_prefix(names)
        if prefix is None:
            return []
        data = z.read(f"{prefix}/data.pkl")
    allowed = _default_safe_globals() | (_TORCH_GLOBALS if prefix != _PICKLE_DIR else {})
    return [g for g in _zip_globals(data) if g not in allowed]


def _weights_only_default(weights_only: bool | None, pickle_module: Any) -> bool:
    """torch.load's rule: unset means True unless a pickle_module is given; the environment variables
    TORCH_FORCE_WEIGHTS_ONLY_LOAD / TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD override as in torch."""
    unset = weights_only is None
    if unset:
        weights_only = pickle_module is None
    yes = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        weights_only = True
    elif force_no and unset:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return bool(weights_only)


def save(obj: Any, f: PathLike | IO[bytes], pickle_module: Any = None, pickle_protocol: int | None = None,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False, *,
         metadata: Mapping[str, str] | None = None) -> None:
    """Write ``obj`` to ``f`` atomically, as ``torch.save``: any object torch saves.

    ``f`` is a file name or a binary file object (``io.BytesIO``, an open file). Three containers, the first
    that can hold ``obj``:

    - a flat dict of str -> Tensor (a ``state_dict()``): exactly those named arrays, as safetensors (a name
      ending in ``.npz``: as ``.npz``), so any safetensors or NumPy reader sees the same names;
    - Tensors nested in int, float (inf and nan too), bool, str, None, lists, tuples, dicts and OrderedDicts
      with str or int keys (``optimizer.state_dict()``, ``{"model": ..., "epoch": 3}``, a lone Tensor): the
      tensors as arrays under generated names such as ``optimizer/state/0/exp_avg`` (``/`` and ``~`` inside
      keys escaped as ``~1`` and ``~0``) and the layout as JSON under the metadata key ``__structure__``, in
      the same safetensors or ``.npz`` file: still no pickle;
    - anything else (a NumPy array, a set, an ``argparse.Namespace``, a whole module or optimizer, a reference
      cycle): a pickle in a zip, tensors beside it as ``.npy`` arrays (see the module docstring), whatever the
      name's suffix. ``pickle_module`` and ``pickle_protocol`` (torch's default: 2) are used for it; an object
      pickle cannot save (a lambda) raises pickle's error and writes nothing.

    Values are copied as their logical (contiguous) contents, so views and transposes are saved as they read.
    ``metadata`` (ours) is a small dict of str -> str stored beside the tensors (read it back with
    :func:`load_metadata`). In the first two containers, entries that share storage are each written in full.

    >>> import os, tempfile
    >>> import tinygrad_like as tl
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "ckpt.npz")
    ...     save({"w": tl.arange(6).reshape(2, 3).T}, p, metadata={"epoch": "3"})
    ...     load(p)["w"].tolist(), load_metadata(p)
    ([[0, 3], [1, 4], [2, 5]], {'epoch': '3'})
    """
    to_file = _is_file_object(f)
    if to_file and not hasattr(f, "write"):
        raise TypeError(f"save: the file object {type(f).__name__} has no write(); open it in binary write mode")
    fmt = "safetensors" if to_file else _format_of(f)
    meta = _check_metadata(metadata)
    write: Callable[[IO[bytes]], None]
    if _is_flat(obj):
        arrays = _to_arrays(obj)
        writer = _write_safetensors if fmt == "safetensors" else _write_npz  # looked up per call (tests patch)
        write = lambda fh: writer(fh, arrays, meta)  # noqa: E731
    else:
        try:
            arrays, meta[_STRUCTURE_KEY] = _flatten(obj)
            writer = _write_safetensors if fmt == "safetensors" else _write_npz
            write = lambda fh: writer(fh, arrays, meta)  # noqa: E731
        except (TypeError, ValueError, RecursionError):  # beyond the JSON structure: pickle it, as torch does
            meta.pop(_STRUCTURE_KEY, None)
            data, arrays = _pickle(obj, pickle_module if pickle_module is not None else pickle,
                                   _PICKLE_PROTOCOL if pickle_protocol is None else pickle_protocol)
            write = lambda fh: _write_pickle_zip(fh, data, arrays, meta)  # noqa: E731
    if to_file:
        write(f)
        return
    _atomic_write(f, write)


_MAX_HEADER = 100_000_000  # the limit the safetensors reader itself enforces


def _header_length(path: str, head: bytes, size: int) -> int:
    """The JSON header's length from the first 8 bytes, checked against the file before anything is read."""
    if len(head) < 8:
        raise CheckpointError(f"cannot read checkpoint {path!r}: {size} bytes is too short for a .safetensors "
                              f"file (truncated?)")
    n = int.from_bytes(head[:8], "little")
    if n > min(_MAX_HEADER, size - 8):
        raise CheckpointError(f"cannot read checkpoint {path!r}: not a valid .safetensors file (its header claims "
                              f"{n} bytes but the file has {size}; truncated or corrupted?)")
    return n


def _safetensors_header(path: str, data: bytes) -> dict:
    try:
        header = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"cannot read checkpoint {path!r}: not a valid .safetensors file (its header is not "
                              f"JSON; truncated or corrupted?): {e}") from e
    if not isinstance(header, dict):
        raise CheckpointError(f"cannot read checkpoint {path!r}: not a valid .safetensors file (bad header)")
    return header


_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def _read_with_bfloat16(path: str, body: bytes, entries: dict) -> dict[str, np.ndarray]:
    """A valid safetensors file with bfloat16 tensors (the library's NumPy reader refuses the whole file): each BF16
    tensor's bytes are read as ``ml_dtypes.bfloat16`` (tinygrad_like's bfloat16), so it loads as a bfloat16
    tensor, as in torch; the other tensors load as they are."""
    out = {}
    for name, e in entries.items():
        dt, shape, (start, stop) = e.get("dtype"), tuple(e.get("shape", ())), e.get("data_offsets", (0, 0))
        raw = body[start:stop]
        count = int(np.prod(shape, dtype=np.int64))
        if dt == "BF16":
            if len(raw) != 2 * count:
                raise CheckpointError(f"cannot read checkpoint {path!r}: tensor {name!r} holds {len(raw)} bytes, "
                                      f"expected {2 * count} for bfloat16 of shape {shape}")
            out[name] = np.frombuffer(raw, "<u2").view(dtypes.bfloat16.np).reshape(shape)
        elif dt in _ST_DTYPES:
            arr = np.frombuffer(raw, np.dtype(_ST_DTYPES[dt]).newbyteorder("<"))
            if arr.size != count:
                raise CheckpointError(f"cannot read checkpoint {path!r}: tensor {name!r} holds {arr.size} "
                                      f"elements, expected {count} for shape {shape}")
            out[name] = arr.reshape(shape).astype(_ST_DTYPES[dt])
        else:
            raise CheckpointError(f"cannot read checkpoint {path!r}: tensor {name!r} has dtype {dt}, which "
                                  f"tinygrad_like does not support (supported: BF16, {', '.join(_ST_DTYPES)})")
    return out


def _read_safetensors(path: str, metadata_only: bool, raw: bytes | None = None) -> tuple[dict[str, np.ndarray], Any]:
    from safetensors.numpy import load as st_load  # (loaded at the first load: import tinygrad_like stays light)
    with (open(path, "rb") if raw is None else _BytesIO(raw)) as f:
        size = os.fstat(f.fileno()).st_size if raw is None else len(raw)
        head = f.read(8)
        n = _header_length(path, head, size)
        # metadata alone needs only the header: 8 bytes of length, then that much JSON
        data = head + (f.read(n) if metadata_only else f.read())
    header = _safetensors_header(path, data[8:8 + n])
    # the safetensors library returns names and metadata in hash-map order, which changes from process to
    # process: give them in one order every time (tensors as laid out in the file, metadata by key)
    meta = header.get(_METADATA_KEY) or {}
    meta = dict(sorted(meta.items())) if isinstance(meta, dict) else meta
    if metadata_only:
        return {}, meta
    entries = {k: v for k, v in header.items() if k != _METADATA_KEY and isinstance(v, dict)}
    if any(v.get("dtype") == "BF16" for v in entries.values()):
        arrays = _read_with_bfloat16(path, data[8 + n:], entries)
    else:
        try:
            arrays = st_load(data)
        except Exception as e:  # SafetensorError, and NumPy errors for dtypes it cannot hold
            raise CheckpointError(f"cannot read checkpoint {path!r}: not a valid .safetensors file "
                                  f"(truncated or corrupted?): {e}") from e
    offset = {k: v.get("data_offsets", [0])[0] for k, v in header.items() if k != _METADATA_KEY and isinstance(v, dict)}
    return {k: arrays[k] for k in sorted(arrays, key=lambda k: (offset.get(k, 0), k))}, meta


_V2 = np.dtype("V2")


def _read_npz(path: str, metadata_only: bool, raw: bytes | None = None) -> tuple[dict[str, np.ndarray], Any]:
    arrays: dict[str, np.ndarray] = {}
    meta: Any = {}
    try:
        npz = np.load(path if raw is None else _BytesIO(raw), allow_pickle=False)
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise CheckpointError(f"cannot read checkpoint {path!r}: it holds a single .npy array, not an .npz "
                                  f"archive of named arrays")
        with npz:
            for k in npz.files:
                if metadata_only and k != _METADATA_KEY:
                    continue
                try:
                    a = npz[k]
                except ValueError as e:
                    if "pickle" in str(e).lower():
                        raise CheckpointError(f"refusing to load checkpoint {path!r}: entry {k!r} is a pickled "
                                              f"object array, and loading it could run arbitrary code; "
                                              f"an .npz archive is read without unpickling") from e
                    raise
                if not isinstance(a, np.ndarray):
                    raise CheckpointError(f"cannot read checkpoint {path!r}: member {k!r} is not a NumPy array")
                if a.dtype == _V2:  # (bfloat16: NumPy's .npy format writes ml_dtypes' bfloat16 as 2-byte voids)
                    a = a.view(dtypes.bfloat16.np)
                if k == _METADATA_KEY:
                    meta = json.loads(a.tobytes().decode())
                else:
                    arrays[k] = a
    except CheckpointError:
        raise
    except ValueError as e:
        if "pickle" in str(e).lower():  # np.load's answer to a file that is neither zip nor .npy
            raise CheckpointError(f"cannot read checkpoint {path!r}: not an .npz archive (its bytes look like a "
                                  f"pickle or are unrecognised; a raw pickle is not a checkpoint format)") from e
        raise CheckpointError(f"cannot read checkpoint {path!r}: corrupted .npz file: {e}") from e
    except Exception as e:  # BadZipFile, CRC errors, zlib errors, EOFError, bad JSON metadata, ...
        raise CheckpointError(f"cannot read checkpoint {path!r}: not a valid .npz file (truncated or "
                              f"corrupted?): {type(e).__name__}: {e}") from e
    return arrays, meta


def _sniff(p: str, head: bytes, fmt: str, names: Callable[[], list[str]]) -> str:
    """The format from the bytes where the name does not say: a zip is an .npz archive, unless it is PyTorch's
    pickle checkpoint (refused: loading a pickle can run code); anything else is read as safetensors."""
    if head[:2] != b"PK":
        return fmt
    try:
        members = names()
    except (zipfile.BadZipFile, OSError):
        return fmt
    if any(m.endswith("data.pkl") or m.endswith(".pkl") for m in members):
        raise CheckpointError(f"refusing to load checkpoint {p!r}: it is a PyTorch pickle checkpoint (written by "
                              f"PyTorch's own torch.save), whose storage layout tinygrad_like does not read. "
                              f"Convert it once where you trust it, e.g. with safetensors' "
                              f"save_file(torch.load(path), 'model.safetensors'), then tl.load that file")
    return "npz"


def _read(path: PathLike | IO[bytes], metadata_only: bool = False) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    if _is_file_object(path):
        if not hasattr(path, "read"):
            raise TypeError(f"load: the file object {type(path).__name__} has no read(); open it in binary mode")
        raw = path.read()
        if isinstance(raw, str):
            raise TypeError("load: the file object returned text; open it in binary mode ('rb')")
        p = getattr(path, "name", None) or f"<{type(path).__name__}>"
        p = p if isinstance(p, str) else repr(p)
        fmt = _sniff(p, raw[:4], "safetensors", lambda: zipfile.ZipFile(_BytesIO(raw)).namelist())
        reader = _read_safetensors if fmt == "safetensors" else _read_npz
        arrays, meta = reader(p, metadata_only, raw)
    else:
        fmt = _format_of(path)
        p = os.fspath(path)
        if not os.path.exists(p):
            raise FileNotFoundError(f"no checkpoint at {p!r}")
        if os.path.splitext(p)[1].lower() not in _FORMATS:
            with open(p, "rb") as f:
                head = f.read(4)
            fmt = _sniff(p, head, fmt, lambda: zipfile.ZipFile(p).namelist())
        reader = _read_safetensors if fmt == "safetensors" else _read_npz
        arrays, meta = reader(p, metadata_only)
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise CheckpointError(f"cannot read checkpoint {p!r}: its metadata is not a dict of str -> str")
    return arrays, meta


def load(f: PathLike | IO[bytes], map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, expected: Mapping[str, Any] | Any | None = None,
         **pickle_load_args: Any) -> Any:
    """Read a checkpoint written by :func:`save`, as ``torch.load``: a dict of name -> fresh Tensor, the nested
    object, or (pickled) whatever was saved.

    ``f`` is a file name or a binary file object. ``map_location`` puts the tensors on a device (``"cpu"``,
    ``"cuda"``, a Device, or a dict whose ``"cpu"`` entry names one); a callable is accepted and leaves them on
    the CPU. Without one, tensors of a pickled checkpoint go back to the device they were saved from.
    ``mmap`` is accepted (files are read into memory). ``pickle_load_args`` (e.g. ``encoding``) go to the
    unpickler.

    ``weights_only`` is torch's policy: unset, it is True unless ``pickle_module`` is given (and the environment
    variables ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` override it as in torch).
    The safetensors and ``.npz`` containers hold no pickle and load either way. A pickled checkpoint loads with
    weights_only=True when it holds only tensors, the built-in containers and primitive types, and the globals
    torch allows by default (OrderedDict, Counter, set, bytearray, complex, bytes, sizes, dtypes, devices) or
    allowlisted with :func:`add_safe_globals` / :class:`safe_globals`; any other global (a NumPy array's
    ``numpy._core.multiarray._reconstruct``, ``argparse.Namespace``, a module's class) is a
    ``pickle.UnpicklingError`` naming it and how to allow it, and nothing of it runs. ``weights_only=False``
    unpickles everything: do it only for files you trust. A checkpoint written by PyTorch itself (its zip of
    ``data.pkl`` and raw storages) is read under the same policy: its tensors, parameters, sizes, dtypes and
    devices become ours; a whole PyTorch module in it names torch's classes, which are not ours to build.

    The tensors own their memory (nothing aliases the file or another tensor). A nested object comes
    back as it was saved, with fresh tensors in place: int keys stay ints, tuples stay tuples, an
    OrderedDict stays one. A file written by another tool (no ``__structure__`` metadata) loads as
    the flat dict of its arrays.

    With ``expected`` (ours: a dict of name -> Tensor, or anything with ``.state_dict()`` such as a module)
    a flat checkpoint is checked by :func:`check_state_dict` first, so a wrong checkpoint fails with
    every difference listed. A nested checkpoint has no single set of names to check, so ``expected``
    with one is a ValueError: load it without ``expected`` and check the part you need, e.g.
    ``check_state_dict(model.state_dict(), ckpt["model"])``.

    A truncated, corrupted or foreign file raises :class:`CheckpointError`, and so does a nested
    checkpoint whose structure is not valid JSON, refers to an array the file lacks, or leaves one out.

    >>> import os, tempfile
    >>> import tinygrad_like as tl
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.safetensors")
    ...     save({"w": tl.zeros(2, 2)}, p)
    ...     load(p, expected={"w": tl.ones(2, 2)})["w"].shape
    tl.Size([2, 2])
    """
    weights_only = _weights_only_default(weights_only, pickle_module)
    path: Any = f
    if _is_file_object(f):
        if not hasattr(f, "read"):
            raise TypeError(f"load: the file object {type(f).__name__} has no read(); open it in binary mode")
        raw = f.read()
        if isinstance(raw, str):
            raise TypeError("load: the file object returned text; open it in binary mode ('rb')")
        name = getattr(f, "name", None)
        path = _BytesIO(raw)
        path.name = name if isinstance(name, str) else f"<{type(f).__name__}>"
        z = _pickle_zip_of(_BytesIO(raw), raw[:2])
    else:
        p = os.fspath(f)
        if not os.path.exists(p):
            raise FileNotFoundError(f"no checkpoint at {p!r}")
        with open(p, "rb") as fh:
            head = fh.read(2)
        z = _pickle_zip_of(p, head)
    if z is not None:
        with z:
            obj = _read_pickle_zip(getattr(path, "name", None) or os.fspath(path), z, map_location, pickle_module,
                                   weights_only, pickle_load_args)
        if expected is not None:
            raise ValueError("load(expected=...) checks a flat name -> Tensor checkpoint, but this file holds a "
                             "pickled object; load it without expected and check the part you need with "
                             "check_state_dict")
        return obj
    arrays, meta = _read(path)
    if _is_file_object(path):
        name = getattr(path, "name", None)
        path = name if isinstance(name, str) else f"<{type(path).__name__}>"
    device = _map_location(map_location)
    out: dict[str, Tensor] = {}
    for k, a in arrays.items():
        try:
            dtypes.from_numpy(a.dtype)
        except TypeError as e:
            raise CheckpointError(f"cannot read checkpoint {os.fspath(path)!r}: entry {k!r} has dtype {a.dtype}, "
                                  f"which tinygrad_like does not support ({e})") from e
        out[k] = from_numpy(np.array(a, copy=True, order="C"))
        if device is not None:
            out[k] = out[k].to(device)
    if _STRUCTURE_KEY in meta:
        nested = _rebuild(os.fspath(path), meta[_STRUCTURE_KEY], out)
        if expected is not None:
            keys = list(nested) if isinstance(nested, Mapping) else []
            top = ", ".join(repr(k) for k in keys[:6]) + (", ..." if len(keys) > 6 else "")
            raise ValueError(f"load(expected=...) checks a flat name -> Tensor checkpoint, but "
                             f"{os.fspath(path)!r} holds a nested object (keys {top}); load it without expected "
                             f"and check the part you need, e.g. check_state_dict(model.state_dict(), "
                             f"ckpt['model'])")
        return nested
    if expected is not None:
        if not isinstance(expected, Mapping) and callable(getattr(expected, "state_dict", None)):
            expected = expected.state_dict()
        check_state_dict(expected, out, what=f"checkpoint {os.fspath(path)!r}")
    return out


def _map_location(map_location: Any) -> Any:
    """The device ``map_location`` names, or None for the CPU (where tensors load)."""
    if map_location is None or callable(map_location) and not isinstance(map_location, (str, Mapping)):
        return None
    if isinstance(map_location, Mapping):
        map_location = map_location.get("cpu", "cpu")

    dev = get_device(map_location if isinstance(map_location, str) or hasattr(map_location, "backend")
                     else str(map_location))
    return None if dev.type == "cpu" else dev


def load_metadata(path: PathLike) -> dict[str, str]:
    """The ``metadata`` dict given to :func:`save` (empty if none), without reading the tensors.

    >>> import os, tempfile
    >>> import tinygrad_like as tl
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.safetensors")
    ...     save({"w": tl.zeros(1)}, p, metadata={"note": "best so far"})
    ...     load_metadata(p)
    {'note': 'best so far'}
    """
    p = os.fspath(path)
    if os.path.exists(p):
        with open(p, "rb") as fh:
            z = _pickle_zip_of(p, fh.read(2))
        if z is not None:
            with z:
                names = z.namelist()
                return json.loads(z.read(f"{_PICKLE_DIR}/metadata.json")) if f"{_PICKLE_DIR}/metadata.json" in \
                    names else {}
    return {k: v for k, v in _read(path, metadata_only=True)[1].items() if k != _STRUCTURE_KEY}

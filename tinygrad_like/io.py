"""Checkpoints without pickle: ``save`` / ``load`` state dicts as ``.safetensors`` or ``.npz``.

Why these two formats: both hold plain typed arrays, so loading a file can never run code (a pickle
can). ``.safetensors`` is the format the wider ecosystem reads; ``.npz`` needs nothing but NumPy.
Writes are atomic (a crash mid-save leaves the previous checkpoint intact) and a damaged file is
reported as a :class:`CheckpointError` naming the file, not as a parser traceback. All ten dtypes round-trip;
bfloat16 is ``BF16`` in safetensors (as torch writes it) and, in ``.npz``, the 2-byte void NumPy writes for
``ml_dtypes.bfloat16`` (as JAX's arrays save), which loads back as bfloat16.

A flat dict of name -> Tensor (a model's ``state_dict()``) is written as exactly those named arrays,
so any safetensors or NumPy reader sees the same names. Nested objects work too:
``optimizer.state_dict()``, or a training checkpoint such as
``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}``. Each Tensor in them is
stored as an array under a generated path-like name (``optimizer/state/0/exp_avg``), and the nesting,
with every plain value (int, float including inf and nan, bool, str, None, lists, tuples, dicts
with str or int keys), is stored as JSON in the file's metadata, so :func:`load` rebuilds the same
Python object: int keys stay ints, tuples stay tuples. Still no pickle: anything else is a TypeError
at save time naming where in the object it is.

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

import json
import math
import os
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Mapping
from io import BytesIO as _BytesIO
from typing import IO, Any, NamedTuple

import numpy as np

from . import dtypes
from .creation import from_numpy
from .device import get_device
from .nn.module import Module
from .optim.optimizer import Optimizer
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


def _refuse_objects(obj: Any) -> None:
    """A whole module or optimizer is saved by PyTorch as a pickle (code and all): say what to save instead."""

    if isinstance(obj, Module):
        raise TypeError(f"save: cannot save a whole module ({type(obj).__name__}): PyTorch pickles it, and "
                        f"tinygrad_like never pickles (loading a pickle can run code). Save its weights instead: "
                        f"tl.save(model.state_dict(), path), and load them with "
                        f"model.load_state_dict(tl.load(path)).")
    if isinstance(obj, Optimizer):
        raise TypeError(f"save: cannot save a whole optimizer ({type(obj).__name__}); save "
                        f"optimizer.state_dict() instead and restore it with optimizer.load_state_dict(tl.load(path))")


def _host_copy(t: Tensor) -> np.ndarray:
    """A contiguous host copy, so views and non-contiguous tensors are written as what they show."""
    return np.array(t.detach().numpy(), copy=True, order="C")


def _is_flat(obj: Any) -> bool:
    """A flat state dict (str -> Tensor) is written as plain named arrays, exactly as other tools write them."""
    return isinstance(obj, Mapping) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())


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


def _write_safetensors(f: IO[bytes], arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    from safetensors.numpy import save as st_save  # (loaded at the first save: import tinygrad_like stays light)
    f.write(st_save(arrays, metadata=metadata or None))


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


def save(state_dict: Any, path: PathLike | IO[bytes], pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True, *, metadata: Mapping[str, str] | None = None) -> None:
    """Write ``state_dict`` to ``path`` atomically (``tl.save(obj, f)``, as ``torch.save``; never a pickle).

    ``path`` is a file name or a binary file object (``io.BytesIO``, an open file). A name ending in ``.npz``
    is written as ``.npz``; any other (``.safetensors``, ``.pt``, ``.pth``, no suffix) and a file object as
    safetensors. ``pickle_module``/``pickle_protocol`` are accepted and unused. ``obj`` is a dict (a state dict,
    a training checkpoint), or a Tensor, list or tuple; a whole ``nn.Module`` or optimizer is a TypeError
    saying to save its ``state_dict()`` instead (PyTorch pickles those, so loading could run code).

    Values are copied as their logical (contiguous) contents,
    so views and transposes are saved as they read. ``metadata`` is a small dict of str -> str stored
    beside the tensors (read it back with :func:`load_metadata`). Entries that share storage (tied
    weights) are each written in full; the tie itself is not recorded.

    A flat dict of str -> Tensor is written as exactly those named arrays and nothing else. Any other
    dict (``optimizer.state_dict()``, ``{"model": ..., "optimizer": ..., "epoch": 3}``) may nest Tensors,
    int, float (inf and nan too), bool, str, None, and lists, tuples, dicts and OrderedDicts with str or
    int keys: its tensors are written under generated names such as ``optimizer/state/0/exp_avg``
    (``/`` and ``~`` inside keys escaped as ``~1`` and ``~0``) and its layout as JSON under the
    metadata key ``__structure__``. Any other value (a NumPy array, a set, an object, a subclass of
    int) is a TypeError naming where it is, e.g. ``state_dict['optimizer']['state'][0]['exp_avg']``,
    and a container holding itself a ValueError.

    >>> import os, tempfile
    >>> import tinygrad_like as tl
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "ckpt.npz")
    ...     save({"w": tl.arange(6).reshape(2, 3).T}, p, metadata={"epoch": "3"})
    ...     load(p)["w"].tolist(), load_metadata(p)
    ([[0, 3], [1, 4], [2, 5]], {'epoch': '3'})
    """
    _refuse_objects(state_dict)
    to_file = _is_file_object(path)
    if to_file and not hasattr(path, "write"):
        raise TypeError(f"save: the file object {type(path).__name__} has no write(); open it in binary write mode")
    fmt = "safetensors" if to_file else _format_of(path)
    meta = _check_metadata(metadata)
    if not isinstance(state_dict, (Mapping, Tensor, list, tuple)):
        raise TypeError(f"save expects a dict of name -> Tensor, or a nested dict such as optimizer.state_dict() "
                        f"or {{'model': ..., 'optimizer': ..., 'epoch': 3}}, or a Tensor, list or tuple; got "
                        f"{_typename(state_dict)}{_unsupported_hint(state_dict)}")
    if _is_flat(state_dict):
        arrays = _to_arrays(state_dict)
    else:
        arrays, meta[_STRUCTURE_KEY] = _flatten(state_dict)
    writer = _write_safetensors if fmt == "safetensors" else _write_npz  # looked up per call (tests patch)
    if to_file:
        writer(path, arrays, meta)
        return
    _atomic_write(path, lambda f: writer(f, arrays, meta))


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
                                              f"tinygrad_like never unpickles") from e
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
                                  f"pickle or are unrecognised; tinygrad_like never unpickles)") from e
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
                              f"torch.save), and loading a pickle can run arbitrary code; tinygrad_like never "
                              f"unpickles. Convert it once where you trust it, e.g. with safetensors' "
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


def load(path: PathLike | IO[bytes], map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, expected: Mapping[str, Any] | Any | None = None,
         **pickle_load_args: Any) -> Any:
    """Read a checkpoint written by :func:`save`: a dict of name -> fresh CPU Tensor, or the nested object.

    ``tl.load(f, map_location=None, *, weights_only=None)`` as ``torch.load``: ``path`` is a file name or a
    binary file object. ``map_location`` puts the tensors on a device (``"cpu"``, ``"cuda"``, a Device, or a
    dict whose ``"cpu"`` entry names one); a callable is accepted and leaves them on the CPU. ``weights_only``,
    ``mmap`` and ``pickle_module`` are accepted: nothing is ever unpickled, so loading is always weights-only.
    A PyTorch pickle checkpoint (``torch.save`` output) is refused with a CheckpointError saying so.

    The tensors own their memory (nothing aliases the file or another tensor). A nested object comes
    back as it was saved, with fresh tensors in place: int keys stay ints, tuples stay tuples, an
    OrderedDict stays one. A file written by another tool (no ``__structure__`` metadata) loads as
    the flat dict of its arrays.

    With ``expected`` (a dict of name -> Tensor, or anything with ``.state_dict()`` such as a module)
    a flat checkpoint is checked by :func:`check_state_dict` first, so a wrong checkpoint fails with
    every difference listed. A nested checkpoint has no single set of names to check, so ``expected``
    with one is a ValueError: load it without ``expected`` and check the part you need, e.g.
    ``check_state_dict(model.state_dict(), ckpt["model"])``.

    A truncated, corrupted or pickle-bearing file raises :class:`CheckpointError`, and so does a nested
    checkpoint whose structure is not valid JSON, refers to an array the file lacks, or leaves one out.

    >>> import os, tempfile
    >>> import tinygrad_like as tl
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.safetensors")
    ...     save({"w": tl.zeros(2, 2)}, p)
    ...     load(p, expected={"w": tl.ones(2, 2)})["w"].shape
    tl.Size([2, 2])
    """
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
    return {k: v for k, v in _read(path, metadata_only=True)[1].items() if k != _STRUCTURE_KEY}

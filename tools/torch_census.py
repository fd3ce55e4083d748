"""A census of PyTorch's public surface: which of torch's names tinygrad_like has, and with which parameters.

The names come from torch itself, never from a list typed by hand. For each module in :data:`MODULES`:

* **torch's public names** are the module's ``__all__`` when it defines one, else ``dir(module)``; either without
  names that start with an underscore (``torch.utils.data`` exports ``_DatasetKind``). From either list we drop
  - module objects other than the module's own submodules (``math``, ``np`` and ``warnings`` imported into a
    module are not torch's surface; ``torch.nn.functional`` is a name of ``torch.nn``, and ``torch.backends.cudnn``
    one of ``torch.backends``, as ``import torch.backends.cudnn`` needs it). A package without ``__all__`` has its
    public submodules counted from its directory, imported or not: ``dir()`` lists only those something imported
    already, which would make the census depend on what ran before it;
  - classes and functions whose ``__module__`` is not ``torch`` or under ``torch.`` (re-exports of ``typing``,
    ``collections.abc``, ``datetime``...);
  - for a module without ``__all__`` only: plain values whose type is not defined in a public torch module
    (documentation dicts such as ``reproducibility_notes``, ``TYPE_CHECKING``, loggers, deprecated aliases of
    private types). Values listed in an ``__all__`` (``torch.pi``, the dtypes) are kept: torch publishes them.
  ``torch.Tensor``'s names are those of ``dir(torch.Tensor)`` without a leading underscore (methods and properties);
  likewise ``torch.nn.Module``'s and ``torch.optim.Optimizer``'s (:data:`CLASSES`), whose methods programs call as
  much as any module's functions.
* **the corresponding place** in tinygrad_like: ``torch.X.Y`` -> ``tinygrad_like.X.Y`` (a submodule, or a
  module-valued attribute, as the ``torch`` alias of ``tinygrad_like.dropin`` resolves them); ``torch.Tensor`` ->
  ``tinygrad_like.Tensor`` (its class, and the attributes an instance carries; the same for the other classes).
  When tinygrad_like lacks the module, every name in it counts as missing; so does a submodule found outside the
  imported package's directory (an editable install of another checkout supplies those).
* **parameters agree** when ``inspect.signature`` works on both objects and gives the same parameter names in the
  same order (a leading ``self`` dropped on both). A name is *mismatched* only when both signatures exist and differ;
  torch's C functions expose no signature, and a torch signature of bare ``*args, **kwargs`` says nothing, so those
  names are not compared and count as matching.
* **present as a clear error**: a name tinygrad_like has only so that using it raises an error saying why it cannot
  do its job here (``tinygrad_like/unsupported.py`` marks them). It counts as present, and the table shows how many
  of the present names are such, and the coverage without them.
* **learner-facing** modules (:data:`LEARNER_FACING`) are the ones a program that builds and trains a model touches:
  torch, Tensor, nn and its functional/init/utils, optim and its schedulers, autograd with functional and grad_mode,
  utils.data, linalg. The others (special, fft, distributions, the device and deployment modules) are counted, not
  held to the coverage goal.

Names deliberately not implemented are listed, each with its reason, in ``tests/torch_census/not_implemented.md``.

    python tools/torch_census.py                  # print the table
    python tools/torch_census.py --write          # and write tests/torch_census/coverage.{md,json}
    python tools/torch_census.py --missing torch.nn           # the names of one module tinygrad_like lacks
    python tools/torch_census.py --mismatches torch.nn        # torch's parameters against ours, name by name
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import pkgutil
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CENSUS_DIR = ROOT / "tests" / "torch_census"
TABLE_PATH = CENSUS_DIR / "coverage.md"
JSON_PATH = CENSUS_DIR / "coverage.json"
REASONS_PATH = CENSUS_DIR / "not_implemented.md"
UNSUPPORTED_MARK = "__tinygrad_like_unsupported__"  # (= tinygrad_like.unsupported.MARK; the package loads late)
TENSOR = "torch.Tensor"  # (a class, not a module: its names are its methods and properties)
# classes whose methods a program calls as much as any module's functions: name -> how to make one of ours
CLASSES = {
    TENSOR: "zeros(2, 2)",
    "torch.nn.Module": "nn.Linear(2, 2)",
    "torch.optim.Optimizer": "optim.SGD([nn.Parameter(zeros(2))], lr=0.1)",
}

LEARNER_FACING = (
    "torch", TENSOR, "torch.nn", "torch.nn.Module", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.utils.rnn", "torch.nn.utils.clip_grad", "torch.nn.utils.parametrizations", "torch.nn.utils.parametrize",
    "torch.optim", "torch.optim.Optimizer", "torch.optim.lr_scheduler", "torch.autograd", "torch.autograd.functional",
    "torch.autograd.grad_mode", "torch.utils.data", "torch.linalg",
)
OTHERS = (
    "torch.autograd.forward_ad", "torch.special", "torch.fft", "torch.distributions", "torch.testing", "torch.random",
    "torch.cuda", "torch.backends", "torch.amp", "torch.jit", "torch.distributed", "torch.nn.parallel", "torch.onnx",
    "torch.profiler", "torch.utils.hooks", "torch.utils.checkpoint",
)
MODULES = LEARNER_FACING + OTHERS


@dataclass
class ModuleCensus:
    """One module's census: torch's names, and how many of them tinygrad_like has, with which parameters."""

    module: str
    learner_facing: bool
    ours_imports: bool
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # present names whose object only raises a clear error (``tinygrad_like.unsupported``): they exist, do no work
    clear_error: list[str] = field(default_factory=list)
    # name -> (torch's parameter names, ours) for the present names whose parameters differ
    mismatched: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.present) + len(self.missing)

    @property
    def matching(self) -> int:
        """Present names whose parameters agree with torch's (or could not be compared)."""
        return len(self.present) - len(self.mismatched)

    def as_json(self) -> dict:
        return {"learner_facing": self.learner_facing, "imports": self.ours_imports, "total": self.total,
                "present": sorted(self.present), "missing": sorted(self.missing),
                "clear_error": sorted(self.clear_error), "mismatched": sorted(self.mismatched)}


def _is_torch_module_name(name: str | None) -> bool:
    return name is not None and (name == "torch" or name.startswith("torch."))


def _is_public_torch_module_name(name: str | None) -> bool:
    return _is_torch_module_name(name) and not any(part.startswith("_") for part in name.split("."))


def torch_public_names(module_name: str) -> dict[str, object]:
    """torch's public names of one module (or of ``torch.Tensor``), with their objects; the rule is the docstring's."""
    if module_name in CLASSES:  # (importlib imports torch only when asked, so --help works without it)
        module, _, cls_name = module_name.rpartition(".")
        cls = getattr(importlib.import_module(module), cls_name)
        return {name: getattr(cls, name) for name in dir(cls) if not name.startswith("_")}
    module = importlib.import_module(module_name)
    declared = getattr(module, "__all__", None)
    names = [n for n in (declared if declared is not None else dir(module)) if not n.startswith("_")]
    public: dict[str, object] = {}
    if declared is None and hasattr(module, "__path__"):
        # A package's submodules, from its directory rather than from ``dir()``: ``dir()`` lists only the ones
        # something has imported so far, so the census would depend on what ran before it. (Named, not imported:
        # importing every submodule of torch.distributed would be slow and could fail on optional dependencies.)
        for sub in pkgutil.iter_modules(module.__path__):
            if not sub.name.startswith("_"):
                public[sub.name] = types.ModuleType(f"{module_name}.{sub.name}")
        names = [n for n in names if not isinstance(getattr(module, n, None), types.ModuleType)]
    for name in names:
        if not hasattr(module, name):
            continue  # (an ``__all__`` entry the module does not define is not a name a program can use)
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            if obj.__name__ != f"{module_name}.{name}":
                continue  # (another package imported here: ``math``, ``np``, ``torch``)
        elif inspect.isclass(obj) or inspect.isroutine(obj):
            if not _is_torch_module_name(getattr(obj, "__module__", None)):
                continue
        elif declared is None and not _is_public_torch_module_name(type(obj).__module__):
            continue
        public[name] = obj
    return public


def _in_this_package(module: types.ModuleType | importlib.machinery.ModuleSpec) -> bool:
    """True when ``module``'s file lies in the imported tinygrad_like's directory.

    An editable install of another checkout answers for a submodule this checkout lacks (setuptools' finder maps
    ``tinygrad_like.X`` to that checkout's file), which would count another tree's names as this one's.
    """
    package_dir = Path(importlib.import_module("tinygrad_like").__file__).resolve().parent
    where = getattr(module, "__file__", None) or getattr(module, "origin", None)
    return where is None or Path(where).resolve().is_relative_to(package_dir)


def _resolve_ours(module_name: str) -> object | None:
    """tinygrad_like's counterpart of a torch module (or of ``torch.Tensor``); None when it has none."""
    rest = module_name.removeprefix("torch").lstrip(".")
    name = f"tinygrad_like.{rest}" if rest else "tinygrad_like"
    if module_name in CLASSES:
        module, _, cls_name = name.rpartition(".")
        return getattr(importlib.import_module(module), cls_name)
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None and not _in_this_package(spec):
            return None  # (another checkout's file, through an editable install: not this tree's, and not imported)
        module = importlib.import_module(name)
        return module if _in_this_package(module) else None
    except ModuleNotFoundError as e:
        if e.name is None or not (name == e.name or name.startswith(e.name + ".")):
            raise  # (a module that exists failed to import something else: show that error)
    parent, _, leaf = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(parent), leaf, None)
    except ModuleNotFoundError:
        return None
    return obj if isinstance(obj, types.ModuleType) else None


def _our_names(counterpart: object, module_name: str) -> set[str]:
    """The names tinygrad_like's counterpart answers to: a module's attributes, or a class's and an instance's."""
    names = set(dir(counterpart))
    if module_name in CLASSES:  # (attributes set in __init__ live on the instance only)
        import tinygrad_like  # (waits: the census imports the package under test only when it runs)
        names |= set(dir(eval(CLASSES[module_name], vars(tinygrad_like))))
    return names


def parameter_names(obj: object) -> tuple[str, ...] | None:
    """The parameter names of ``obj``'s signature, a leading ``self`` dropped; None when it has no signature."""
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None
    if params and params[0].name == "self":
        params = params[1:]
    return tuple(p.name for p in params)


def _says_nothing(params: tuple[str, ...], obj: object) -> bool:
    """A signature of only ``*args``/``**kwargs`` tells no parameter names, so it is not compared."""
    kinds = {p.kind for n, p in inspect.signature(obj).parameters.items() if n != "self"}
    return bool(params) and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def census_of(module_name: str) -> ModuleCensus:
    """The census of one module."""
    with warnings.catch_warnings():  # (deprecated names warn when touched; the census touches them all)
        warnings.simplefilter("ignore")
        theirs = torch_public_names(module_name)
        counterpart = _resolve_ours(module_name)
        result = ModuleCensus(module_name, module_name in LEARNER_FACING, counterpart is not None)
        ours = _our_names(counterpart, module_name) if counterpart is not None else set()
        for name, torch_obj in theirs.items():
            if isinstance(torch_obj, types.ModuleType):  # (as ``import torch.X.name`` under the alias finds it)
                has_it = counterpart is not None and _resolve_ours(f"{module_name}.{name}") is not None
            else:  # (hasattr: a module's lazy ``__getattr__`` answers names its dir() may not list)
                has_it = name in ours or (counterpart is not None and hasattr(counterpart, name))
            if not has_it:
                result.missing.append(name)
                continue
            result.present.append(name)
            our_obj = getattr(counterpart, name, None)
            if isinstance(torch_obj, types.ModuleType):
                our_obj = _resolve_ours(f"{module_name}.{name}")
            if getattr(our_obj, UNSUPPORTED_MARK, None) is not None:
                result.clear_error.append(name)
            torch_params, our_params = parameter_names(torch_obj), parameter_names(our_obj)
            if torch_params is None or our_params is None or _says_nothing(torch_params, torch_obj):
                continue
            if torch_params != our_params:
                result.mismatched[name] = (torch_params, our_params)
    result.present.sort()
    result.missing.sort()
    result.clear_error.sort()
    return result


def census(modules: tuple[str, ...] = MODULES) -> list[ModuleCensus]:
    """The census of every module asked for, in order."""
    import torch  # (waits: see torch_public_names)
    if not str(getattr(torch, "__file__", "")).endswith(str(Path("torch", "__init__.py"))) or hasattr(
            torch, "install_as_torch"):
        raise RuntimeError("`import torch` gives tinygrad_like's alias, not PyTorch: the census needs the real torch "
                           "(run it in a process where tinygrad_like.install_as_torch() was not called)")
    return [census_of(name) for name in modules]


def not_implemented(path: Path = REASONS_PATH) -> dict[tuple[str, str], str]:
    """``(module, name) -> reason`` from the reasons file's table (rows ``| module | name | reason |``)."""
    reasons: dict[tuple[str, str], str] = {}
    for line in path.read_text().splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) != 3 or cells[0] in ("module", "") or set(cells[0]) <= set(
                "-: "):
            continue
        reasons[(cells[0], cells[1])] = cells[2]
    return reasons


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def render_table(data: dict) -> str:
    """The markdown table of a census in its JSON form (so the committed table is a function of the committed JSON)."""
    lines = [
        "# PyTorch's public surface in tinygrad_like",
        "",
        f"Written by `python tools/torch_census.py --write` against torch {data['torch_version']}; "
        "`tests/test_torch_census.py` fails when it is stale. The rules (what counts as public, what "
        "\"matching parameters\" means, which modules are learner-facing) are in the script's docstring; names left "
        "out on purpose are in `not_implemented.md`.",
        "",
        "A name *present as a clear error* exists and raises an error that says why it cannot do its job here "
        "(quantized and sparse tensors, TorchScript internals, vendor kernels: `tinygrad_like/unsupported.py`); "
        "*working* counts the present names without those.",
        "",
        "| module | learner-facing | imports | names in torch | present | of which a clear error | working | "
        "with matching parameters | coverage | working coverage | with torch's parameters | "
        "not implemented, with reason |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    sums = {True: [0, 0, 0, 0, 0], False: [0, 0, 0, 0, 0]}
    for name, entry in data["modules"].items():
        total, present = entry["total"], len(entry["present"])
        matching = present - len(entry["mismatched"])
        reasoned = len(entry.get("not_implemented", []))
        clear = len(entry.get("clear_error", []))
        lines.append(f"| `{name}` | {'yes' if entry['learner_facing'] else 'no'} | "
                     f"{'yes' if entry['imports'] else 'no'} | {total} | {present} | {clear} | {present - clear} | "
                     f"{matching} | {_percent(present, total)} | {_percent(present - clear, total)} | "
                     f"{_percent(matching, total)} | {reasoned} |")
        for i, value in enumerate((total, present, matching, reasoned, clear)):
            sums[entry["learner_facing"]][i] += value
    for facing, label in ((True, "all learner-facing"), (False, "all others")):
        total, present, matching, reasoned, clear = sums[facing]
        lines.append(f"| **{label}** | | | {total} | {present} | {clear} | {present - clear} | {matching} | "
                     f"{_percent(present, total)} | {_percent(present - clear, total)} | "
                     f"{_percent(matching, total)} | {reasoned} |")
    return "\n".join(lines) + "\n"


def as_json(results: list[ModuleCensus], reasons: dict[tuple[str, str], str]) -> dict:
    """The census in the committed JSON form: per module, the sorted names present, missing and mismatched."""
    import torch  # (waits: see torch_public_names)
    modules = {}
    for r in results:
        entry = r.as_json()
        entry["not_implemented"] = sorted(name for (module, name) in reasons if module == r.module)
        modules[r.module] = entry
    return {"torch_version": torch.__version__.split("+")[0], "modules": modules}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE_PATH.name} and {JSON_PATH.name}")
    parser.add_argument("--missing", metavar="MODULE", help="print the names of MODULE that tinygrad_like lacks")
    parser.add_argument("--mismatches", metavar="MODULE", help="print torch's parameters and ours where they differ")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # (the worktree's tinygrad_like, not an installed one)
    for asked in (args.missing, args.mismatches):
        if asked is not None and asked not in MODULES:
            parser.error(f"unknown module {asked!r}; expected one of: {', '.join(MODULES)}")
    if args.missing or args.mismatches:
        result = census_of(args.missing or args.mismatches)
        if args.missing:
            reasons = not_implemented()
            for name in result.missing:
                reason = reasons.get((result.module, name))
                print(f"{name}: not implemented, {reason}" if reason else name)
        else:
            for name, (theirs, ours) in sorted(result.mismatched.items()):
                print(f"{name}\n  torch: ({', '.join(theirs)})\n  ours:  ({', '.join(ours)})")
        return 0
    data = as_json(census(), not_implemented())
    table = render_table(data)
    print(table, end="")
    if args.write:
        CENSUS_DIR.mkdir(parents=True, exist_ok=True)
        TABLE_PATH.write_text(table)
        JSON_PATH.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {TABLE_PATH.relative_to(ROOT)} and {JSON_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

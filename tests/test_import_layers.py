"""The core imports in one direction (DESIGN.md, "Where an op lives"): a module-level import never points up a layer.

Imports inside a function are how a lower layer reaches a higher one when it must; each carries a comment saying
why, on its line or the line above, and this test holds them to that too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tinygrad_like

ROOT = Path(tinygrad_like.__file__).parent
# lowest first; a module is in the layer of the longest prefix that names it
LAYERS = [
    ["dtypes", "events", "sites", "compat", "_format", "_cache", "random", "write_history", "unsupported",
     "hook_handles"],
    ["layout"],
    ["storage"],
    ["device", "backends"],
    ["autograd", "autograd.grad_mode", "autograd.inference", "autograd.gradcheck"],
    ["tensor_base"],
    ["autograd.function", "autograd.node_api", "autograd.engine", "autograd.ctx_function", "autograd.view_history",
     "autograd.tensor_methods"],
    ["ops"],
    ["tensor"],
    ["creation", "functions", "linalg", "nn", "optim", "utils", "io", "amp", "_cuda_amp", "datasets", "cuda",
     "accelerator", "profiler", "dropin", "run", "return_types", "legacy", "distributed", "jit", "onnx",
     "distributions", "testing", "fft", "special"],
    ["autograd.api", "autograd.functional", "autograd.variable", "autograd.forward_ad", "autograd.nested_io",
     "autograd.graph", ""],
]


def layer(module: str) -> int:
    best = max((p for names in LAYERS for p in names if module == p or module.startswith(p + ".") or p == ""),
               key=len)
    return next(i for i, names in enumerate(LAYERS) if best in names)


def modules():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "widgets" in parts:  # (the views, where a wheel installs them inside the package: not core)
            continue
        package = parts[:-1] if parts[-1] == "__init__" else parts[:-1]
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield path, name, package, path.name == "__init__.py"


def imported(node: ast.AST, package: tuple, is_package: bool) -> list[str]:
    """The package modules an import statement names, relative to the package root ("" is the root)."""
    if isinstance(node, ast.Import):
        return [a.name.removeprefix("tinygrad_like").lstrip(".") for a in node.names
                if a.name.split(".")[0] == "tinygrad_like"]
    if node.level == 0:
        if (node.module or "").split(".")[0] != "tinygrad_like":
            return []
        base = node.module.removeprefix("tinygrad_like").lstrip(".")
    else:
        up = package[:len(package) - node.level + 1]
        base = ".".join([*up, *(node.module.split(".") if node.module else [])])
    found = []
    for alias in node.names:  # `from . import x` imports the module x; `from .m import f` imports m
        sub = f"{base}.{alias.name}".lstrip(".")
        found.append(sub if (ROOT / sub.replace(".", "/")).with_suffix(".py").exists()
                     or (ROOT / sub.replace(".", "/")).is_dir() else base)
    return found


def is_type_checking(stmt: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` (imports for annotations only, never run)."""
    return isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING"


def test_no_module_level_import_points_up_the_layers():
    upward = []
    for path, name, package, is_package in modules():
        tree = ast.parse(path.read_text())
        top = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
               and not is_type_checking(stmt) for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in top:
            for target in sorted(set(imported(node, package, is_package))):
                if layer(target) > layer(name):
                    upward.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name or 'tinygrad_like'} "
                                  f"(layer {layer(name)}) imports {target} (layer {layer(target)})")
    assert upward == [], "imports that point up the layers:\n" + "\n".join(upward)


def test_the_module_level_imports_have_no_cycle():
    """Beyond the layers' order (which rules out cycles between layers): none inside a layer either. Importing
    ``a.b.c`` runs the packages ``a`` and ``a.b`` first, so those count as imported too, except a module's own
    packages (Python has started them before the module: that is how a package's ``__init__`` re-exports it)."""
    graph: dict[str, set[str]] = {}
    for path, name, package, is_package in modules():
        tree = ast.parse(path.read_text())
        top = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
               and not is_type_checking(stmt) for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))]
        targets = {t for n in top for t in imported(n, package, is_package)}
        with_packages = targets | {".".join(t.split(".")[:i]) for t in targets for i in range(1, t.count(".") + 1)}
        graph[name] = {t for t in with_packages if t and t != name and not name.startswith(t + ".")}
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> list[str] | None:
        if node in trail:
            return trail[trail.index(node):] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, trail + [node])
            if found:
                return found
        done.add(node)
        return None

    cycles = [c for c in (visit(m, []) for m in sorted(graph)) if c]
    assert cycles == [], "an import cycle: " + " -> ".join(cycles[0])


def test_every_import_inside_a_function_says_why():
    silent = []
    for path, _, _, _ in modules():
        lines = path.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                        if "#" not in here and not above.startswith("#"):
                            silent.append(f"{path.relative_to(ROOT)}:{node.lineno}: {here.strip()}")
    assert silent == [], "imports inside functions without a comment saying why:\n" + "\n".join(sorted(set(silent)))

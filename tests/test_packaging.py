"""Packaging: the wheel and the editable install both expose ``tinygrad_like.widgets`` and the CUDA
sources; CI and the README agree on the test command; the core imports no notebook library.

The wheel is built from a copy of the project files in a temporary folder (sdist first, then the wheel
from the sdist, as ``python -m build`` does), so the repository gets no ``build/`` or ``*.egg-info``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "tinygrad_like"
NOTEBOOK_LIBS = ("ipywidgets", "matplotlib", "IPython")
# what the sdist must carry for the wheel built from it to be complete
PROJECT_FILES = ("pyproject.toml", "setup.py", "README.md", "tinygrad_like", "widgets", "kernel_src")
# the files every install must have, as paths inside the wheel
MUST_SHIP = ("tinygrad_like/__init__.py", "tinygrad_like/widgets/__init__.py",
             "tinygrad_like/kernel_src/__init__.py", "tinygrad_like/kernel_src/fill.cu",
             "tinygrad_like/widgets/static/graph.js", "tinygrad_like/widgets/static/graph.css",
             "tinygrad_like/widgets/static/common.js", "tinygrad_like/widgets/static/common.css",
             "tinygrad_like/widgets/static/figure.js", "tinygrad_like/widgets/static/figure.css",
             "tinygrad_like/distributions/LICENSE-PyTorch.txt",  # (the licence of code ported from PyTorch)
             "tinygrad_like/backends/cuda_emu/include/cuda_fp16.h",  # (the cuda-emu device's header stand-ins)
             "tinygrad_like/backends/cuda_emu/include/cuda_emu.h")

# Run in a child interpreter, from a folder outside the repository: imports the package, the widgets
# subpackage and one kernel source as a resource, and prints where each came from.
PROBE = """
import json, tinygrad_like, tinygrad_like.widgets
from importlib.resources import files
cu = files("tinygrad_like.kernel_src").joinpath("fill.cu")
assert cu.is_file(), cu
print(json.dumps({"core": tinygrad_like.__file__, "widgets": tinygrad_like.widgets.__file__,
                  "fill_cu": str(cu), "version": tinygrad_like.__version__}))
"""


def run(cmd, *, cwd, env=None, timeout=600) -> subprocess.CompletedProcess:
    """Run ``cmd``; on failure, fail the test with its full output."""
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {p.returncode}\n"
                    f"--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    return p


def probe(cwd: Path, pythonpath: Path | None = None) -> dict:
    """Import the package in a fresh interpreter started in ``cwd`` (so the repository is not on sys.path)."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    out = run([sys.executable, "-c", PROBE], cwd=cwd, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def is_under(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# --- (a) the wheel --------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.other_process  # (a wheel build, and an import in a fresh interpreter)
def test_wheel_ships_widgets_and_kernels_and_imports_from_outside(tmp_path):
    src = tmp_path / "src"
    for name in PROJECT_FILES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(p, src / name)
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)], cwd=tmp_path)

    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in dist.iterdir())
    wheel = wheels[0]
    assert wheel.name.startswith(f"tinygrad_like-{pyproject_version()}-"), wheel.name

    with tarfile.open(sdists[0]) as tf:
        in_sdist = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for rel in ("widgets/__init__.py", "kernel_src/fill.cu", "tinygrad_like/__init__.py", "setup.py"):
        assert rel in in_sdist, f"{rel} missing from the sdist"

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for rel in MUST_SHIP:
        assert rel in names, f"{rel} missing from {wheel.name}"
    # every .cu under kernel_src/ and every .cuh header they include is shipped, nothing outside the package
    for cu in [*(ROOT / "kernel_src").glob("*.cu"), *(ROOT / "kernel_src").glob("*.cuh")]:
        assert f"tinygrad_like/kernel_src/{cu.name}" in names, f"{cu.name} missing from {wheel.name}"
    strays = sorted(n for n in names if not n.startswith(("tinygrad_like/", "tinygrad_like-")))
    assert not strays, f"files outside the package in {wheel.name}: {strays}"

    site = tmp_path / "site"
    run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
         "--target", str(site), str(wheel)], cwd=tmp_path)
    where = probe(cwd=tmp_path, pythonpath=site)
    for key in ("core", "widgets", "fill_cu"):
        assert is_under(where[key], site), f"{key} imported from {where[key]}, not from the wheel in {site}"


# --- (b) the editable install ---------------------------------------------------------------------
def test_editable_install_maps_widgets_and_kernel_src(tmp_path):
    from importlib import metadata

    try:
        installed = metadata.version("tinygrad_like")
    except metadata.PackageNotFoundError:
        pytest.fail(f"tinygrad_like is not installed in {sys.prefix}: run `make test` (or pip install -e .)")
    where = probe(cwd=tmp_path)
    assert is_under(where["core"], CORE), f"tinygrad_like imported from {where['core']}, not from {CORE}"
    assert Path(where["widgets"]).resolve() == (ROOT / "widgets" / "__init__.py").resolve(), where["widgets"]
    assert Path(where["fill_cu"]).resolve() == (ROOT / "kernel_src" / "fill.cu").resolve(), where["fill_cu"]
    # one version, stated in pyproject.toml, reported by the metadata and by the package
    assert where["version"] == installed == pyproject_version(), (where["version"], installed)


# --- (c) CI and README agree ----------------------------------------------------------------------
def test_ci_runs_make_test_and_nothing_else():
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    text = ci.read_text()
    assert text.startswith("#!"), ".ci/run needs a shebang"
    assert "set -euo pipefail" in text
    lines = [ln.strip() for ln in text.splitlines()]
    commands = [ln for ln in lines if ln and not ln.startswith(("#", "set ", "cd "))]
    assert commands == ["make test"], commands


def test_readme_shows_the_two_commands_first():
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)
    assert blocks, "README.md has no code block"
    first = [ln.split("#", 1)[0].strip() for ln in blocks[0].splitlines()]
    assert "make lab" in first and "make test" in first, f"first code block of README.md is {blocks[0]!r}"


# --- (d) the core never imports a notebook library ------------------------------------------------
def test_core_import_pulls_in_no_notebook_library(tmp_path):
    code = ("import sys, tinygrad_like; "
            f"bad = [m for m in {NOTEBOOK_LIBS!r} if m in sys.modules]; assert not bad, bad")
    run([sys.executable, "-c", code], cwd=tmp_path)


def test_core_sources_have_no_notebook_imports():
    offenders = []
    for py in sorted(CORE.rglob("*.py")):
        text = py.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text, filename=str(py))):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            offenders += [f"{py.relative_to(ROOT)}:{node.lineno}: {m}" for m in mods
                          if m.split(".")[0] in NOTEBOOK_LIBS]
        # dynamic imports too: importlib.import_module("matplotlib"), __import__("IPython")
        for m in re.finditer(r"(?:import_module|__import__)\(\s*['\"](\w+)", text):
            if m.group(1) in NOTEBOOK_LIBS:
                offenders.append(f"{py.relative_to(ROOT)}: dynamic import of {m.group(1)}")
    assert not offenders, "the core must not import notebook libraries:\n" + "\n".join(offenders)

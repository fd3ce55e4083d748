"""The Makefile: it picks the interpreter for a new venv (the newest Python >= 3.11 on the PATH, or a clear
message), and its ``make fuzz`` is the one the fuzzer's docstring describes.

Each interpreter test runs ``make`` with a PATH that holds only stand-in interpreters (small shell scripts that
answer the version question as the real one would), so the choice is checked without installing any Python.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="GNU make is not installed")

STAND_IN = """#!/bin/sh
# stands in for Python {ver}: answers the Makefile's version question and records any other call
case "$*" in
  *version_info*) echo {ver} ;;
  --version) echo "Python {ver}.1" ;;
  *) echo "$0 $*" >> "{log}" ;;
esac
"""
SHIM = """#!/bin/sh
# a pyenv shim of a version that is not active: it exists on the PATH but cannot run
echo "pyenv: $(basename "$0"): command not found" >&2
exit 127
"""


def _bin(tmp_path: Path, **pythons: str) -> Path:
    """A folder with one stand-in per name (``python3_13="3.13"``; ``"shim"`` for a broken pyenv shim)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, ver in pythons.items():
        exe = folder / name.replace("_", ".")
        exe.write_text(SHIM if ver == "shim" else STAND_IN.format(ver=ver, log=tmp_path / "calls.log"))
        exe.chmod(0o755)
    return folder


def _make(tmp_path: Path, folder: Path, *targets: str) -> subprocess.CompletedProcess:
    return subprocess.run([MAKE, "-s", "-C", str(ROOT), *targets], env={"PATH": str(folder), "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=60)


def test_a_lone_python3_of_a_newer_version_is_taken(tmp_path):
    for ver in ("3.12", "3.13"):
        sub = tmp_path / ver
        sub.mkdir()
        p = _make(sub, _bin(sub, python3=ver), "which-python")
        assert (p.returncode, p.stdout.strip()) == (0, "python3"), p.stderr


def test_the_newest_at_or_above_3_11_wins_and_broken_shims_are_passed_over(tmp_path):
    folder = _bin(tmp_path, python3="3.10", python3_11="3.11", python3_13="3.13", python3_12="shim",
                  python3_14="shim")
    p = _make(tmp_path, folder, "which-python")
    assert (p.returncode, p.stdout.strip()) == (0, "python3.13"), p.stderr


def test_none_new_enough_names_what_was_found_and_what_to_install(tmp_path):
    p = _make(tmp_path, _bin(tmp_path, python3="3.10", python3_9="3.9"), "which-python")
    assert p.returncode != 0
    first, second = p.stderr.splitlines()[:2]
    # (python3.9 is not a name the Makefile asks for)
    assert first == "make: tinygrad_like needs Python 3.11 or newer, and the PATH has: python3 (3.10)."
    assert "apt install python3.12" in second and "make PY=" in second


def test_no_python_at_all_is_said_plainly(tmp_path):
    p = _make(tmp_path, _bin(tmp_path), "which-python")
    assert p.returncode != 0
    said = p.stderr.splitlines()[0]
    assert said == "make: tinygrad_like needs Python 3.11 or newer, and the PATH has no python3 at all."


def test_the_chosen_interpreter_creates_the_venv(tmp_path):
    folder = _bin(tmp_path, python3="3.11", python3_13="3.13")
    p = _make(tmp_path, folder, f"VENV={tmp_path / 'venv'}", str(tmp_path / "venv" / ".stamp"))
    # (the stand-in makes no venv, so the pip step after it fails; the call it received is what counts)
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0] == f"{folder / 'python3.13'} -m venv {tmp_path / 'venv'}", (calls, p.stdout, p.stderr)
    assert f"creating {tmp_path / 'venv'} with python3.13 (Python 3.13.1)" in p.stdout


def test_py_on_the_command_line_still_decides(tmp_path):
    p = _make(tmp_path, _bin(tmp_path, python3="3.13"), "which-python", "PY=/opt/python3.11")
    assert (p.returncode, p.stdout.strip()) == (0, "/opt/python3.11")


def test_make_fuzz_runs_what_the_fuzzer_s_docstring_says():
    makefile = (ROOT / "Makefile").read_text()
    programs = re.search(r"^FUZZ_PROGRAMS \?= (\d+)$", makefile, re.M).group(1)
    seed = re.search(r"^FUZZ_SEED +\?= (\d+)$", makefile, re.M).group(1)
    doc = (ROOT / "tests" / "fuzz_torch.py").read_text()
    said = re.search(r"fuzz_torch\.py --programs (\d+) --seed (\d+) +# what ``make fuzz`` runs", doc)
    assert said and said.groups() == (programs, seed), (said and said.groups(), programs, seed)

"""tools/sz.py counts code lines (not blank lines, comments or docstrings) and reports the learner's core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))

import sz  # noqa: E402

SOURCE = '''"""A module docstring
over two lines."""

import os  # a comment after code counts: the line holds code

# a comment line


def f(x):
    """A function's docstring."""
    return (x +
            1)


class C:
    """A class docstring."""

    label = """a string that is not a docstring"""
'''


def test_code_lines_leave_out_blanks_comments_and_docstrings(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    # code: import os, def f, return (x +, 1), class C, label = ...  -> 6 of 18 lines
    assert sz.count(path) == (18, 6)


def test_the_core_line_names_the_figure_and_the_budget():
    out = subprocess.run([sys.executable, str(TOOLS / "sz.py"), "--core"], capture_output=True, text=True, check=True)
    line = out.stdout.strip()
    figure = sum(sz.count(sz.PACKAGE / name)[1] for name in sz.LEARNER_CORE)
    assert line.startswith(f"learner's core: {figure:,} code lines in 6 files (budget 1,500")

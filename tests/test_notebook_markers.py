"""nbval reads a cell's marker comment only when the comment is the marker alone (``# NBVAL_IGNORE_OUTPUT``): a reason
written on the same line turns it into a plain comment, and the cell's output is then compared after all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_nbval_comment_is_a_marker_nbval_reads(path):
    from nbval.plugin import comment_markers

    bad = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        for line in source.splitlines():
            line = line.strip()
            if cell["cell_type"] == "code" and line.startswith("#") and "NBVAL" in line:
                if line.lstrip("#").strip() not in comment_markers:
                    bad.append(f"cell {i}: {line!r}")
    assert not bad, "nbval ignores these (put the reason on the next line):\n" + "\n".join(bad)

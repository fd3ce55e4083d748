"""Line counts of the package, as tinygrad's ``sz.py``: what a learner reads to follow ``x * y`` and ``backward()``.

A *code line* is a line that holds code: blank lines, comment lines and docstrings do not count. The learner's
core is the six files that carry one op from ``x * y`` to ``loss.backward()``; its budget is 1,500 code lines.
This is a report, not a gate: ``make test`` prints its last line so that growth is seen.

    python tools/sz.py            # every module, then the learner's core
    python tools/sz.py --core     # only the learner's core, one line
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tinygrad_like"
LEARNER_CORE = ("storage.py", "layout.py", "tensor_base.py", "autograd/function.py", "autograd/engine.py",
                "ops/elementwise.py")
BUDGET = 1500
_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def docstring_lines(tree: ast.Module) -> set[int]:
    """The line numbers of every module, class and function docstring."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                  str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def count(path: Path) -> tuple[int, int]:
    """``(all lines, code lines)`` of one Python file."""
    source = path.read_text()
    skip = docstring_lines(ast.parse(source))
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _NOT_CODE:
            code.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in skip)
    return len(source.splitlines()), len(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--core", action="store_true", help="print only the learner's core figure")
    args = parser.parse_args()
    if not args.core:
        rows = sorted(((count(p), p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                       if "widgets" not in p.relative_to(PACKAGE).parts), key=lambda r: -r[0][1])
        print(f"{'code':>6} {'lines':>6}  module")
        for (lines, code), rel in rows:
            print(f"{code:6d} {lines:6d}  {rel}")
        print(f"{sum(r[0][1] for r in rows):6d} {sum(r[0][0] for r in rows):6d}  the package ({len(rows)} modules)\n")
        for name in LEARNER_CORE:
            lines, code = count(PACKAGE / name)
            print(f"{code:6d} {lines:6d}  {name}")
    total = sum(count(PACKAGE / name)[1] for name in LEARNER_CORE)
    print(f"learner's core: {total:,} code lines in {len(LEARNER_CORE)} files (budget {BUDGET:,}"
          f"{'' if total <= BUDGET else f', over by {total - BUDGET:,}'})")


if __name__ == "__main__":
    main()

"""``python -m tinygrad_like.run program.py [args...]``: run an unmodified PyTorch program on tinygrad_like.

Installs the ``torch`` alias (:func:`tinygrad_like.install_as_torch`) and runs the file as ``__main__``, with
``sys.argv`` as the program would see it (``sys.argv[0]`` is the program's path) and its directory first on
``sys.path``, as ``python program.py`` would. ``-m module`` runs a module instead of a file.
"""

from __future__ import annotations

import os
import runpy
import sys

from .dropin import install_as_torch

_USAGE = "usage: python -m tinygrad_like.run program.py [args...]  |  python -m tinygrad_like.run -m module [args...]"


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE)
        raise SystemExit(0 if argv else 2)
    install_as_torch()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    path = argv[0]
    if not os.path.exists(path):
        print(f"tinygrad_like.run: no such file: {path!r}", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()

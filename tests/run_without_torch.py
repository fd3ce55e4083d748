"""Run the test suite as on a machine without PyTorch: ``import torch`` fails and nothing else changes.

Tests that compare with the oracle skip (``tests/conftest.py`` says which and why); every other test must pass,
except those marked ``other_process``, which are left out: their work runs in another process or tool (a Jupyter
kernel, nvcc, a wheel build) where PyTorch is not hidden, so they would only repeat the main run.
``make test`` runs this after the main pytest run.

    .venv/bin/python tests/run_without_torch.py [extra pytest arguments, e.g. -n 2]
"""

from __future__ import annotations

import os
import sys


class NoTorch:
    """A meta-path finder that refuses ``torch`` and its submodules, as if it were not installed."""

    hides_torch_on_purpose = True  # (tests/skip_policy.py: the oracle's skips are expected here, even under CI)

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


HIDE_TORCH = "TL_HIDE_TORCH"  # set for the run, so that each pytest-xdist worker hides torch too (tests/conftest.py)


def hide_torch() -> None:
    """Refuse ``import torch`` in this process from now on (once per process)."""
    if "torch" in sys.modules:
        raise SystemExit("torch is already imported: hide it in a process of its own, before anything imports it")
    if not any(getattr(finder, "hides_torch_on_purpose", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, NoTorch())


if __name__ == "__main__":
    os.environ[HIDE_TORCH] = "1"
    hide_torch()
    import pytest

    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests", "--ignore=tests/browser", "-rfE", "--tb=short",
                          *sys.argv[1:]]))

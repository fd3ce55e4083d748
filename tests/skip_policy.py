"""Skips that mean "a tool is missing": counted, named, and under CI a failure.

A test that skips because PyTorch (the oracle), nvcc, the CUDA emulator's toolchain, Chromium or a Python package
is absent did not check anything, so it must never pass quietly:

* under ``CI`` (``CI=true``), such a skip fails the run, with a message naming the tool and how to install it, and a
  missing PyTorch stops the run before it starts (about 22,000 tests would otherwise skip and pytest exit 0);
* on a user's machine, each pytest run prints one plain line per kind of skip, and records its counts in
  ``test-artifacts/skips/`` so that ``make test`` can end with one line for all its steps
  (``python tests/skip_policy.py`` prints it).

The one exception is ``tests/run_without_torch.py``, which hides PyTorch on purpose (its finder carries
``hides_torch_on_purpose``): there the oracle's skips are the point of the run.

Skips for other reasons (no GPU here, a check that applies only on Linux or x86, a GPU machine's older torch) are
not tools and never fail; they are listed by their reason.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = Path(os.environ.get("TL_SKIP_RECORDS") or ROOT / "test-artifacts" / "skips")  # (tests set their own)


class Tool(NamedTuple):
    """A tool some tests need: its name, the skip reasons that mean it is missing, and how to install it."""

    name: str
    reason: re.Pattern
    install: str


TOOLS = (
    # (first: an import that failed because torch is absent is the oracle's skip, whatever module was imported)
    Tool("PyTorch (the test oracle)",
         re.compile(r"could not import 'torch(\.[\w.]+)?'|No module named 'torch'"
                    r"|needs PyTorch|PyTorch \(the test oracle\)"),
         "pip install -e '.[dev]' (it pins torch==2.13.0)"),
    Tool("nvcc", re.compile(r"nvcc not found|nvcc is not installed"),
         "install the CUDA toolkit and put nvcc on PATH"),
    Tool("the CUDA emulator's toolchain",
         re.compile(r"CUDA emulator unavailable|no toolchain for the CUDA emulator|cuda_fp16\.h not found"),
         "a C++ compiler (g++) and the CUDA headers (cuda_fp16.h; set CUDA_HOME)"),
    Tool("Chromium", re.compile(r"browser test cannot run|TL_SKIP_BROWSER"),
         "Debian's chromium (make test installs it with apt when run as root)"),
    Tool("GNU make", re.compile(r"GNU make is not installed"), "install make (apt install make)"),
    Tool("a Python package", re.compile(r"could not import '[\w.]+'"),
         "pip install -e '.[dev,notebook]'"),
)


def in_ci() -> bool:
    """``CI`` set to anything but empty/0/false/no, as CI services set it."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def torch_hidden_on_purpose() -> bool:
    """True inside ``tests/run_without_torch.py``, whose import hook refuses torch deliberately."""
    return any(getattr(finder, "hides_torch_on_purpose", False) for finder in sys.meta_path)


def classify(reason: str) -> Tool | None:
    """The missing tool a skip reason names, or None when the skip is not about a tool."""
    return next((tool for tool in TOOLS if tool.reason.search(reason)), None)


def _torch_missing() -> str | None:
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return str(e)
    return None


# ---- the pytest hooks (tests/conftest.py loads this module as a plugin) ------------------------------------------
_skips: Counter = Counter()  # (tool name or None, short reason, "test" or "module") -> count


def pytest_configure(config) -> None:
    if in_ci() and not torch_hidden_on_purpose() and (err := _torch_missing()) is not None:
        pytest.exit(f"CI needs PyTorch, the test oracle, and it is not installed ({err}); "
                    f"without it about 22,000 tests would skip and the run would prove nothing. "
                    f"Install it with: {TOOLS[0].install}", returncode=pytest.ExitCode.USAGE_ERROR)


def _reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _count(reason: str, unit: str) -> None:
    tool = classify(reason)
    _skips[(tool.name if tool else None, reason if tool is None else _short(reason), unit)] += 1


def pytest_runtest_logreport(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _count(_reason(report), "test")


_skipped_modules: set[str] = set()


def pytest_collectreport(report) -> None:
    """A module that skips as a whole (a module-level ``importorskip``) is reported here, not per test: once as
    tests and once as doctests (``--doctest-modules``), so it is counted once per path."""
    if report.skipped and report.nodeid not in _skipped_modules:
        _skipped_modules.add(report.nodeid)
        _count(_reason(report), "module")


def _short(reason: str) -> str:
    """The reason's first clause (an importorskip's module and error, an nvcc message without its hint)."""
    return reason.split("\n")[0].split(": install")[0][:160]


def _failing() -> Counter:
    """The skips that fail a CI run: missing tools, except the oracle where it is hidden on purpose."""
    hidden = torch_hidden_on_purpose()
    return Counter({k: n for k, n in _skips.items()
                    if k[0] is not None and not (hidden and k[0] == TOOLS[0].name)})


def _many(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'s' if n != 1 else ''}"


def summary_lines(skips: Counter, step: str) -> list[str]:
    """One plain line per kind of skip, e.g. '412 tests skipped in main: nvcc missing: nvcc not found -- install
    the CUDA toolkit and put nvcc on PATH' (no install hint where the oracle is hidden on purpose)."""
    install = {t.name: t.install for t in TOOLS}
    lines = []
    for (tool, reason, unit), n in sorted(skips.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        what = f"{tool} missing: {reason}" if tool else reason
        hint = f" -- {install[tool]}" if tool and not (tool == TOOLS[0].name and step == "without-torch") else ""
        lines.append(f"{_many(n, unit)} skipped in {step}: {what}{hint}")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    step = os.environ.get("TL_TEST_STEP", "pytest")
    for line in summary_lines(_skips, step):
        terminalreporter.write_line(line)
    if os.environ.get("TL_TEST_STEP"):  # (make test's steps: recorded for the one-line summary at its end)
        RECORDS.mkdir(parents=True, exist_ok=True)
        rows = [{"tool": t, "reason": r, "unit": u, "count": n} for (t, r, u), n in _skips.items()]
        (RECORDS / f"{step}.json").write_text(json.dumps(rows, indent=1))


def pytest_sessionfinish(session, exitstatus) -> None:
    failing = _failing()
    if in_ci() and failing:
        names = sorted({tool for tool, _, _ in failing})
        what = ", ".join(_many(sum(n for k, n in failing.items() if k[2] == u), u) for u in ("test", "module")
                         if any(k[2] == u for k in failing))
        sys.stderr.write(f"\nunder CI a skip because a tool is missing fails the run: {what} skipped for want of "
                         f"{', '.join(names)}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ---- make test's last line ---------------------------------------------------------------------------------------
def one_line(records: dict[str, list[dict]]) -> str:
    """Everything the steps skipped, in one line: tools first, then other reasons, or that nothing was skipped."""
    parts = []
    for step, rows in records.items():
        merged: Counter = Counter()  # (the oracle's several reasons read as one where it is hidden on purpose)
        for row in sorted(rows, key=lambda r: (r["tool"] is None, r["unit"] == "module", -r["count"])):
            on_purpose = step == "without-torch" and row["tool"] == TOOLS[0].name
            why = ("PyTorch hidden on purpose" if on_purpose else
                   f"{row['tool']} missing ({row['reason']})" if row["tool"] else row["reason"])
            merged[(why, row["unit"])] += row["count"]
        parts += [f"{_many(n, unit)} in {step}: {why}" for (why, unit), n in merged.items()]
    return "make test: skipped " + "; ".join(parts) if parts else "make test: nothing skipped"


def main() -> int:
    steps = sorted(RECORDS.glob("*.json"), key=lambda p: p.stat().st_mtime)  # (in the order make ran them)
    records = {p.stem: json.loads(p.read_text()) for p in steps}
    print(one_line(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

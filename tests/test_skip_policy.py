"""tests/skip_policy.py: a skip because a tool is missing is named, counted, and under CI fails the run.

Each run below is a child pytest over a throw-away test file, with the policy loaded as a plugin, so what is
checked is the exit status and the lines a person reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from skip_policy import TOOLS, classify, one_line, summary_lines

HERE = Path(__file__).resolve().parent

# a child interpreter in which `import torch` fails, like a machine without PyTorch: not on purpose (no flag), or
# on purpose, as tests/run_without_torch.py does, so that the other rules are checked the same whether or not the
# machine running these tests has torch
RUNNER = """
import sys, pytest
class NoTorch:
    hides_torch_on_purpose = {on_purpose}
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, NoTorch())
sys.exit(pytest.main(sys.argv[1:]))
"""
NO_TORCH, TORCH_NOT_THE_POINT = RUNNER.format(on_purpose=False), RUNNER.format(on_purpose=True)


def importorskip_reason(module: str) -> str:
    with pytest.raises(pytest.skip.Exception) as e:
        pytest.importorskip(module)
    return str(e.value)


@pytest.mark.parametrize("reason, tool", [
    ("needs PyTorch (the test oracle), which is not installed", "PyTorch (the test oracle)"),
    ("needs PyTorch as the oracle", "PyTorch (the test oracle)"),
    ("could not import 'safetensors.torch': No module named 'torch'", "PyTorch (the test oracle)"),
    ("nvcc not found: install the CUDA toolkit (nvcc on PATH) to compile kernel_src/*.cu", "nvcc"),
    ("nvcc is not installed", "nvcc"),
    ("CUDA emulator unavailable: cuda_fp16.h not found (looked in /usr/local/cuda/include)",
     "the CUDA emulator's toolchain"),
    ("no GPU and no toolchain for the CUDA emulator: g++ not found", "the CUDA emulator's toolchain"),
    ("browser test cannot run: /usr/bin/chromium is missing (skipped because TL_SKIP_BROWSER=1)", "Chromium"),
    ("CUDA is available on this machine", None),
    ("mallopt tuning is glibc (Linux) only", None),
    ("the oracle here, torch 2.11.0, cannot differentiate this row (boom)", None),
])
def test_each_skip_reason_the_suite_uses_is_classified(reason, tool):
    got = classify(reason)
    assert (got.name if got else None) == tool


def test_pytest_s_own_importorskip_message_is_read():
    assert classify(importorskip_reason("torch_is_not_this_name")).name == "a Python package"
    assert classify(importorskip_reason("no_such_package_anywhere")).name == "a Python package"


def _child(tmp_path: Path, body: str, *, ci: bool, no_torch: bool = False, step: str | None = None,
           args: tuple = ()):
    (tmp_path / "test_child.py").write_text("import pytest\n\n" + body)
    (tmp_path / "test_other.py").write_text("def test_that_runs():\n    pass\n")  # (so a run is never empty)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TL_TEST_STEP", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(HERE)
    env["TL_SKIP_RECORDS"] = str(tmp_path / "records")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # (the installed plugins are not what is tested; a faster start)
    if ci:
        env["CI"] = "true"
    if step:
        env["TL_TEST_STEP"] = step
    args = ["-p", "skip_policy", "-p", "no:cacheprovider", "-q", *args, str(tmp_path)]
    cmd = [sys.executable, "-c", NO_TORCH if no_torch else TORCH_NOT_THE_POINT, *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


NVCC_SKIP = "def test_kernel():\n    pytest.skip('nvcc not found: install the CUDA toolkit')\n"
GPU_SKIP = "def test_gpu():\n    pytest.skip('needs an NVIDIA GPU')\n"


def test_a_missing_tool_fails_under_ci_and_is_named(tmp_path):
    p = _child(tmp_path, NVCC_SKIP, ci=True)
    assert p.returncode == pytest.ExitCode.TESTS_FAILED, p.stdout + p.stderr
    assert "fails the run" in p.stderr and "nvcc" in p.stderr


def test_a_missing_tool_is_a_visible_skip_outside_ci(tmp_path):
    p = _child(tmp_path, NVCC_SKIP, ci=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 test skipped in pytest: nvcc missing: nvcc not found -- install the CUDA toolkit" in p.stdout


MODULE_SKIP = "pytest.importorskip('no_such_package_anywhere')\n\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n"


def test_a_module_that_skips_whole_for_want_of_a_package_fails_under_ci_and_is_counted_outside(tmp_path):
    p = _child(tmp_path, MODULE_SKIP, ci=True)
    assert p.returncode == pytest.ExitCode.TESTS_FAILED, p.stdout + p.stderr
    assert "1 module skipped for want of a Python package" in p.stderr
    p = _child(tmp_path, MODULE_SKIP, ci=False, step="main", args=("--doctest-modules",))  # (as make test: 2 reports)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 module skipped in main: a Python package missing: could not import 'no_such_package_anywhere'" in p.stdout
    rows = json.loads((tmp_path / "records" / "main.json").read_text())
    assert [(r["tool"], r["unit"], r["count"]) for r in rows] == [("a Python package", "module", 1)]


def test_a_skip_that_is_not_about_a_tool_passes_under_ci(tmp_path):
    p = _child(tmp_path, GPU_SKIP, ci=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 test skipped in pytest: needs an NVIDIA GPU" in p.stdout


def test_missing_pytorch_stops_a_ci_run_before_it_starts_naming_the_oracle(tmp_path):
    p = _child(tmp_path, "def test_x():\n    pass\n", ci=True, no_torch=True)
    assert p.returncode == pytest.ExitCode.USAGE_ERROR, p.stdout + p.stderr
    out = p.stdout + p.stderr
    assert "CI needs PyTorch, the test oracle" in out and "torch==2.13.0" in out
    assert "1 passed" not in out


def test_missing_pytorch_outside_ci_runs_and_says_so(tmp_path):
    body = "def test_oracle():\n    pytest.importorskip('torch')\n\ndef test_plain():\n    pass\n"
    p = _child(tmp_path, body, ci=False, no_torch=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 test skipped in pytest: PyTorch (the test oracle) missing" in p.stdout


def test_each_step_records_its_skips_for_make_test_s_last_line(tmp_path):
    p = _child(tmp_path, NVCC_SKIP + GPU_SKIP, ci=False, step="main")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = json.loads((tmp_path / "records" / "main.json").read_text())
    assert sorted((str(r["tool"]), r["unit"], r["count"]) for r in rows) == [("None", "test", 1), ("nvcc", "test", 1)]
    last = subprocess.run([sys.executable, str(HERE / "skip_policy.py")], capture_output=True, text=True,
                          env={**os.environ, "TL_SKIP_RECORDS": str(tmp_path / "records")}, timeout=60)
    assert last.stdout == ("make test: skipped 1 test in main: nvcc missing (nvcc not found); "
                           "1 test in main: needs an NVIDIA GPU\n")


def test_make_test_s_last_line():
    assert one_line({}) == "make test: nothing skipped"
    line = one_line({
        "main": [{"tool": "nvcc", "reason": "nvcc not found", "unit": "test", "count": 412},
                 {"tool": None, "reason": "CUDA is available on this machine", "unit": "test", "count": 2}],
        "without-torch": [{"tool": TOOLS[0].name, "reason": "needs PyTorch", "unit": "test", "count": 1300},
                          {"tool": TOOLS[0].name, "reason": "could not import 'torch'", "unit": "module", "count": 34},
                          {"tool": TOOLS[0].name, "reason": "PyTorch (the test oracle)", "unit": "test", "count": 9}],
    })
    assert line == ("make test: skipped 412 tests in main: nvcc missing (nvcc not found); "
                    "2 tests in main: CUDA is available on this machine; "
                    "1,309 tests in without-torch: PyTorch hidden on purpose; "
                    "34 modules in without-torch: PyTorch hidden on purpose")


def test_summary_lines_give_the_install_hint_except_where_torch_is_hidden_on_purpose():
    skips = Counter({(TOOLS[0].name, "needs PyTorch", "test"): 3})
    assert "pip install" in summary_lines(skips, "main")[0]
    assert "pip install" not in summary_lines(skips, "without-torch")[0]

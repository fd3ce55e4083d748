"""Learners' PyTorch programs (tests/programs/), run unmodified under PyTorch and under tinygrad_like.

Each program is written against the real ``torch`` API only (``import torch``, ``import torch.nn as nn``,
``from torch.utils.data import DataLoader``...). It seeds everything, draws its starting weights with NumPy and
loads them into its model, takes its data from NumPy or from a frozen copy of the README (``corpus.txt``), and
prints one JSON line per training step (plus a few summary lines); programs about printing also print plain text,
which must equal PyTorch's line for line (object addresses blanked). A program may import a sibling module of the
same kind (``zoo.py``: the four models of the library programs). The test runs each file twice in subprocesses:
``python prog.py`` (PyTorch) and tinygrad_like's runner, ``tinygrad_like.run.main([prog.py])`` (what
``python -m tinygrad_like.run prog.py`` calls, then a check that ``torch`` was tinygrad_like), and compares the
two outputs line by line.

Tolerance: every float a program prints (losses, learning rates, gradient norms...) must agree to
``RTOL = 1e-4`` relative (plus ``ATOL = 1e-7`` for values near zero). The programs are float32: one op differs
between the two libraries by a few ulps (~1e-7 relative, from summation order in matmuls and reductions), and
a few dozen optimizer steps let that grow to a few 1e-7 (measured: at most 2.5e-7 on a loss). 1e-4 leaves two orders of
magnitude of headroom for other BLAS builds, while a real difference (a wrong default, a gradient off by a
factor, a schedule off by one step) moves the losses by 1e-3 or more within a few steps. What depends on the
random-number generator (``torch.multinomial``'s draws) or on rounding at the 4th decimal (``f"{x:.4f}"``)
is checked for validity, not equality.

The subprocesses (two per program) run in parallel, single-threaded each, in a thread pool started by
the first test. Without PyTorch the module skips: there is nothing to compare with.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS_DIR = os.path.join(ROOT, "tests", "programs")
RTOL, ATOL = 1e-4, 1e-7
TIMEOUT_S = 180

# name -> None (must match) or the exact reason it fails under tinygrad_like today (xfail, strict)
PROGRAMS: dict[str, str | None] = {
    "char_gpt": None,
    "lstm_lm": None,
    "cnn_digits": None,
    "custom_function": None,
    "manual_backprop": None,
    # saving and resuming; torch.save of any object, torch.load's weights_only policy
    "save_resume": None,
    # samplers with replacement: makemore's RandomSampler(num_samples=int(1e10)) and its infinite loader
    "makemore_sampler": None,
    # nanoGPT's train.py on one process: torch.distributed and DDP imports, GradScaler, AdamW groups
    "nanogpt_ddp": None,
    "lbfgs_closure": None,
    "legacy_tensors": None,
    # printing shapes, tensors with grad_fn, modules (the text is compared line by line)
    "print_shapes": None,
    # PyTorch's autograd tutorial: next_functions, AccumulateGrad.variable, _saved_*, node hooks
    "graph_introspection": None,
    # the libraries of the README's list, on an MLP, a CNN, an LSTM and a transformer (tests/programs/zoo.py)
    "lib_torchinfo": None,
    "lib_torchviz": None,
    "lib_einops": None,
    "lib_tqdm": None,
    "lib_torchsummary": None,  # (older tutorials' Keras-style summary)
    # more of what tutorials, lectures and books write
    "rnn_names": None,
    "vae": None,
    "policy_gradient": None,
    "conv_autoencoder": None,
    "lr_schedulers": None,
    "grad_accum_clip": None,
    "dataset_workers": None,
    "hooks_init": None,
    "resnet_tiny": None,
}
# modules the programs import from beside them (plain PyTorch too, not programs themselves)
SIBLINGS = ("zoo",)
# printed values that legitimately differ between the two runs (RNG draws, 4-decimal formatting, sums that cancel
# to about zero, where float rounding is all that is left)
UNCOMPARED = {"sample", "text", "message", "sampled_loss", "ops", "update_loss"}
# the text a program prints (not JSON) is compared line by line, with object addresses blanked
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
LAUNCH = ("import sys; from tinygrad_like.run import main; main(sys.argv[1:]); "
          "print('LIBRARY', sys.modules['torch'].__name__, file=sys.stderr)")


def _env() -> dict:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"  # both runs single-threaded: they run in parallel with each other
    return env


def _run(name: str, lib: str, tmpdir: str) -> subprocess.CompletedProcess:
    prog = os.path.join(PROGRAMS_DIR, f"{name}.py")
    # the tinygrad_like run is `python -m tinygrad_like.run prog.py`, plus a last word on which `torch` it had
    cmd = [sys.executable, prog] if lib == "torch" else [sys.executable, "-c", LAUNCH, prog]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=tmpdir, env=_env(), timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -1, e.stdout or "", f"timed out after {TIMEOUT_S} s")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every program under both libraries, started together; ``runs[name, lib]`` waits for that one."""
    tmpdir = str(tmp_path_factory.mktemp("programs"))
    pool = ThreadPoolExecutor(max_workers=min(2 * len(PROGRAMS), max(4, 2 * (os.cpu_count() or 1))))
    futures = {(name, lib): pool.submit(_run, name, lib, tmpdir) for name in PROGRAMS for lib in ("torch", "tl")}
    yield {key: fut for key, fut in futures.items()}
    pool.shutdown(wait=True)


def _records(r: subprocess.CompletedProcess, who: str) -> list[dict]:
    assert r.returncode == 0, f"{who} failed (rc {r.returncode}):\n{r.stderr[-4000:]}"
    recs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert recs, f"{who} printed no JSON lines:\n{r.stdout[-2000:]}"
    return recs


def _close(a, b) -> bool:
    return abs(a - b) <= RTOL * max(abs(a), abs(b)) + ATOL


def _same(a, b) -> bool:
    """Equal, floats within the tolerance, through lists and dicts."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and _close(a, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _compare(ref: list[dict], ours: list[dict]) -> float:
    """Line by line, key by key; returns the largest relative difference of a ``loss``."""
    assert len(ours) == len(ref), f"{len(ours)} JSON lines, PyTorch printed {len(ref)}"
    worst = 0.0
    for i, (a, b) in enumerate(zip(ref, ours)):
        assert a.keys() == b.keys(), f"line {i}: keys {sorted(b)} != PyTorch's {sorted(a)}"
        for key in a.keys() - UNCOMPARED:
            va, vb = a[key], b[key]
            where = f"line {i} ({'step ' + str(a['step']) if 'step' in a else 'summary'}), {key!r}"
            assert _same(va, vb), f"{where}: tinygrad_like {vb!r} vs PyTorch {va!r}"
            if key == "loss" and isinstance(va, float):
                worst = max(worst, abs(va - vb) / max(abs(va), 1e-30))
    return worst


def _text(r: subprocess.CompletedProcess) -> list[str]:
    return [ADDRESS.sub("0x…", line) for line in r.stdout.splitlines() if not line.startswith("{")]


def _steps(recs: list[dict]) -> list[dict]:
    return [r for r in recs if "step" in r]


def _check_program(name: str, recs: list[dict]) -> None:
    """What each program must show on its own, whichever library ran it."""
    steps = _steps(recs)
    if steps:  # (a program that trains: enough steps, and the loss fell)
        loss = "loss" if "loss" in steps[0] else "sampled_loss"
        assert [r["step"] for r in steps] == list(range(len(steps))) and len(steps) >= 20
        assert steps[-1][loss] < steps[0][loss], "training did not lower the loss"
    last = recs[-1]
    if name == "char_gpt":
        assert len(last["sample"]) == 21 and all(0 <= i < last["vocab_size"] for i in last["sample"])
        assert len(last["text"]) == 21
        for r in recs:
            if "eval_step" in r:
                assert re.fullmatch(r"step \d+: train loss \d\.\d{4}, val loss \d\.\d{4}", r["message"])
    elif name == "cnn_digits":
        assert last["reloaded_same"] is True and last["accuracy"] > 0.5
    elif name == "custom_function":
        assert recs[0] == {"gradcheck": True, "x_grad_shape": [4, 3], "needs_input_grad": [True, False]}
    elif name == "manual_backprop":
        bad = [(r["step"], r["failed"]) for r in steps if not r["allclose"]]
        assert not bad, f"manual gradients differ from autograd at {bad}"
    elif name == "save_resume":
        assert last["resumed_equal"] is True and last["whole_model_same"] is True
    elif name == "makemore_sampler":
        assert last["fixed_loss_fell"] is True and last["num_samples"] == 10**10
    elif name == "dataset_workers":
        assert recs[1] == {"two_workers": [3, 5, 4, 6]}  # (torch's documented order for two workers)
    elif name == "vae":
        assert all(r["kl_matches"] for r in steps)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=why, strict=True)) if why else n for n, why in PROGRAMS.items()])
def test_program_matches_pytorch(runs, name):
    ref = _records(runs[name, "torch"].result(), f"{name}.py under PyTorch")
    _check_program(name, ref)
    r = runs[name, "tl"].result()
    ours = _records(r, f"{name}.py under tinygrad_like")
    assert "LIBRARY tinygrad_like" in r.stderr, "the run did not have tinygrad_like as torch"
    _check_program(name, ours)
    worst = _compare(ref, ours)
    assert _text(r) == _text(runs[name, "torch"].result()), "the printed text differs from PyTorch's"
    print(f"{name}: {len(_steps(ref))} steps, max relative loss difference {worst:.2e}")


def test_programs_are_plain_pytorch():
    """The programs import torch only as a learner would: no tinygrad_like, no test helpers."""
    for name in [*PROGRAMS, *SIBLINGS]:
        with open(os.path.join(PROGRAMS_DIR, f"{name}.py"), encoding="utf-8") as f:
            src = f.read()
        assert "tinygrad_like" not in src, name
        assert "import torch" in src or any(f"from {s} import" in src for s in SIBLINGS), name

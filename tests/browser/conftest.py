"""Real-browser tests: JupyterLab on 127.0.0.1 driven by Debian's Chromium through Python Playwright.

Run with ``pytest -m browser tests/browser`` (``make test`` does; the main ``pytest`` run deselects the
``browser`` marker). Every test here gets that marker.

* ``lab``: a JupyterLab server for the session -- a free port on 127.0.0.1, a random token, no browser,
  ``--allow-root``, its own temporary root, settings, workspace, runtime, config and IPython dirs. The
  notebooks of this folder and the tutorials of ``notebooks/`` are copied into its root. Killed (with its
  kernels) at teardown.
* ``browser``: one headless Chromium (``/usr/bin/chromium``, or ``$TL_CHROMIUM``) for the session, via
  ``launch_persistent_context`` with ``executable_path``. Never ``playwright install``: no browser is
  downloaded. Requests that leave 127.0.0.1 are aborted (no CDN is reachable here anyway).
* ``open_notebook(name)``: a fresh page on ``/lab/tree/NAME?reset`` with the kernel idle; the page gains
  ``run(command)``, ``wait_idle()``, ``notebook`` (the visible notebook's locator; its CSS selector is
  ``notebook_selector``), ``shot(name, locator=None)`` (a screenshot under ``test-artifacts/browser/``),
  ``cell_errors()`` and ``assert_no_widget_errors()``.

Chromium or Playwright missing is a *failure* with the reason (``make test`` installs Chromium with apt
when it is root). Outside CI, ``TL_SKIP_BROWSER=1`` turns it into a skip; under ``CI`` a skip in this
folder fails the run, so a browser test that did not run never counts as passing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TUTORIALS = HERE.parents[1] / "notebooks"
ARTIFACTS = HERE.parents[1] / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("TL_CHROMIUM") or "/usr/bin/chromium"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VISIBLE_NB = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
BAD_TEXTS = ("Error displaying widget", "Loading widget")
KERNEL_IDLE_JS = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle'; }"""

# user settings for the temporary Lab: no news/update popup; render every cell (no virtual scrolling,
# so off-screen outputs are in the DOM); no autosave racing the test
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}

LAB_START_S = 90
KERNEL_IDLE_MS = 90_000
COMMAND_MS = 90_000


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(msg: str) -> None:
    """Fail (the default, and always under CI); skip only when asked to with TL_SKIP_BROWSER=1 outside CI."""
    if os.environ.get("TL_SKIP_BROWSER") == "1" and not _in_ci():
        pytest.skip(f"{msg} (skipped because TL_SKIP_BROWSER=1)")
    pytest.fail(f"browser test cannot run: {msg}", pytrace=False)


# ---- markers and the no-skip rule -----------------------------------------------------------------
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


_skipped: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped and "browser" in report.keywords:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and _in_ci():
        sys.stderr.write(f"\nbrowser tests skipped under CI (counted as a failure): {', '.join(_skipped)}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ---- the JupyterLab server ----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server's process group (the server and its kernels), SIGKILL whatever is left after 15 s."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # kernels that outlived the server, if any
    except ProcessLookupError:
        pass
    if proc.poll() is None:
        proc.wait(timeout=15)


def _sigterm_to_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _unavailable("jupyterlab is not installed (pip install -e '.[dev,notebook]')")
    root = tmp_path_factory.mktemp("labroot")
    for nb in HERE.glob("*.ipynb"):
        shutil.copy(nb, root)
    for nb in TUTORIALS.glob("[0-9][0-9]_*.ipynb"):  # the course, beside the files it reads
        shutil.copy(nb, root)
    shutil.copytree(TUTORIALS / "kernels", root / "kernels")
    dirs = {name: tmp_path_factory.mktemp(name) for name in ("settings", "workspaces", "runtime", "config",
                                                             "data", "ipython", "logs")}
    for rel, value in LAB_SETTINGS.items():
        p = dirs["settings"] / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]), JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
               JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_DATA_DIR=str(dirs["data"]),
               IPYTHONDIR=str(dirs["ipython"]), PYTHONUNBUFFERED="1")
    port, token = _free_port(), secrets.token_hex(16)
    log_path = dirs["logs"] / "lab.log"  # outside the root, so it is not in Lab's file browser
    log = open(log_path, "w")  # noqa: SIM115 - closed at teardown
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--ServerApp.open_browser=False"]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
    # a SIGTERM (e.g. from `timeout` in the Makefile) becomes KeyboardInterrupt, so this teardown still runs
    old_term = signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    base = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    try:
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() - t0 > LAB_START_S:
                    raise RuntimeError(f"JupyterLab did not come up in {LAB_START_S} s "
                                       f"(exit code {proc.poll()}):\n{log_path.read_text()[-3000:]}") from None
                time.sleep(0.25)
        yield {"base": base, "token": token, "root": root, "log": log_path, "startup_s": time.monotonic() - t0}
    finally:
        _stop(proc)
        signal.signal(signal.SIGTERM, old_term)
        log.close()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(log_path, ARTIFACTS / "lab.log")


# ---- the browser -----------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} not found; install it with `apt-get update && apt-get install -y chromium` "
                     "(make test does this when run as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package `playwright` is not installed (it is in the dev extra: "
                     "pip install -e '.[dev,notebook]'; never `playwright install`)")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chrome-profile")), executable_path=CHROMIUM, headless=True,
            args=CHROME_ARGS, viewport={"width": 1280, "height": 1800}, timeout=60_000)
        ctx.set_default_timeout(30_000)
        ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort())
        try:
            yield ctx
        finally:
            ctx.close()


@pytest.fixture
def open_notebook(browser, lab):  # the browser first: a missing Chromium fails before Lab starts
    pages = []

    def _open(name: str):
        page = browser.new_page()
        pages.append(page)
        page.console_errors = []
        page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
        page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}", timeout=60_000)
        page.wait_for_function(KERNEL_IDLE_JS, timeout=KERNEL_IDLE_MS)
        page.notebook_selector = VISIBLE_NB
        page.notebook = page.locator(VISIBLE_NB)
        page.notebook.wait_for(state="visible", timeout=30_000)

        def run(command: str, args: dict | None = None, timeout_ms: int = COMMAND_MS):
            """A JupyterLab command; returns when the command's promise resolves (run-all: after the last
            cell), failing after ``timeout_ms`` (page.evaluate itself never times out)."""
            return page.evaluate(
                """([c, a, ms]) => Promise.race([window.jupyterapp.commands.execute(c, a || {}),
                     new Promise((_, no) => setTimeout(() => no(new Error(`${c}: no result in ${ms} ms`)), ms))])""",
                [command, args, timeout_ms])

        def wait_idle(timeout_ms: int = KERNEL_IDLE_MS):
            page.wait_for_function(KERNEL_IDLE_JS, timeout=timeout_ms)
            # no cell still queued or running
            page.wait_for_function(
                "sel => ![...document.querySelectorAll(sel + ' .jp-InputPrompt')]"
                ".some(p => p.textContent.includes('*'))", arg=VISIBLE_NB, timeout=timeout_ms)

        def shot(fname: str, locator=None):
            """A full-page screenshot, or one of ``locator``, into test-artifacts/browser/."""
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            if locator is None:
                page.screenshot(path=str(ARTIFACTS / fname), full_page=True)
            else:
                locator.scroll_into_view_if_needed()
                locator.screenshot(path=str(ARTIFACTS / fname))

        def cell_errors() -> list[str]:
            """Texts of error (traceback) and stderr outputs in the visible notebook."""
            return page.evaluate(
                """sel => [...document.querySelectorAll(sel + ' [data-mime-type="application/vnd.jupyter.error"], '
                           + sel + ' [data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.innerText)""",
                VISIBLE_NB)

        def assert_no_widget_errors():
            """No widget is stuck loading or failed to render, anywhere on the page."""
            body = page.locator("body").inner_text(timeout=10_000)
            for bad in BAD_TEXTS:
                assert bad not in body, f"{bad!r} is on the page"

        page.run, page.wait_idle, page.shot = run, wait_idle, shot
        page.cell_errors, page.assert_no_widget_errors = cell_errors, assert_no_widget_errors
        return page

    yield _open
    for page in pages:
        try:
            page.close()
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass
    # shut the kernels down through the REST API (the server's teardown kills whatever is left)
    try:
        req = urllib.request.Request(f"{lab['base']}/api/sessions", headers={"Authorization": f"token {lab['token']}"})
        for s in json.loads(urllib.request.urlopen(req, timeout=5).read()):
            urllib.request.urlopen(urllib.request.Request(
                f"{lab['base']}/api/sessions/{s['id']}", method="DELETE",
                headers={"Authorization": f"token {lab['token']}"}), timeout=10).read()
    except OSError:
        pass

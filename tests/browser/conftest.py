"""Real-browser tests: JupyterLab, Notebook 7 and Voila on 127.0.0.1, driven by Debian's Chromium through
Python Playwright.

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
  ``cell_errors()``, ``assert_no_widget_errors()``, ``set_theme("light" | "dark")`` and ``frontend``.
* ``notebook7`` and ``voila``: the same kind of session server (own temporary root and Jupyter dirs, free
  port, random token), started only when a test asks for it. Notebook 7 (``python -m notebook``) serves
  ``/notebooks/NAME`` and exposes ``window.jupyterapp`` like Lab; Voila (``python -m voila ROOT``, a
  directory) executes ``/voila/render/NAME`` itself when the page is requested and shows outputs only.
* ``open_notebook7(name)``: like ``open_notebook`` in Notebook 7. ``open_voila(name, theme="light")``: the
  rendered page once Voila has run every cell and the widget manager has drawn what it outputs; ``run``
  and ``wait_idle`` do not exist there (the page *is* the run), ``notebook`` is the rendered cells;
  ``cell_errors()`` still finds tracebacks and stderr (Voila renders both as application/vnd.jupyter.stderr;
  its stdout is text/plain there).
* ``kernel_repr(page, expr)`` and ``kernel_exec(page, code)``: an expression's repr, or silent code, in the page's
  kernel (no cell, no history), for a test that reads or drives a view from Python.
* ``open_frontend(frontend, name)``: any of the three (``"jupyterlab"``, ``"notebook7"``, ``"voila"``), with
  every cell run and the kernel idle -- a parametrised test's way in. ``open_page(browser, server, frontend,
  name)`` and ``close_page(page)`` are the same as plain functions, for module-scoped pages.

Chromium or Playwright missing is a *failure* with the reason (``make test`` installs Chromium with apt
when it is root). Outside CI, ``TL_SKIP_BROWSER=1`` turns it into a skip; under ``CI`` a skip in this
folder fails the run, so a browser test that did not run never counts as passing.
"""

from __future__ import annotations

import json
import os
import re
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
VOILA_CELLS = "#rendered_cells"
FRONTENDS = ("jupyterlab", "notebook7", "voila")
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
LOADING_TEXT = "Loading widget"
BAD_TEXTS = ("Error displaying widget", LOADING_TEXT)
WIDGET_LOADING_MS = 30_000  # how long a widget may show "Loading widget" before the test calls it stuck
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

LAB_START_S = 90  # any of the three servers
VOILA_RENDER_MS = 120_000  # Voila answers the page request only after running every cell
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


def _isolated_env(tmp_path_factory, prefix: str) -> tuple[dict, dict]:
    """Temporary settings, workspace, runtime, config, data, IPython and log dirs; the Lab user settings above."""
    dirs = {name: tmp_path_factory.mktemp(f"{prefix}-{name}") for name in ("settings", "workspaces", "runtime",
                                                                          "config", "data", "ipython", "logs")}
    for rel, value in LAB_SETTINGS.items():
        p = dirs["settings"] / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]), JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
               JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_DATA_DIR=str(dirs["data"]),
               IPYTHONDIR=str(dirs["ipython"]), PYTHONUNBUFFERED="1")
    return dirs, env


def _serve(tmp_path_factory, name: str, argv, *, tutorials: bool = False, ready_path: str = "/api/status"):
    """Start a server (``argv(port, token, root)`` is its command line) in its own process group with its own
    temporary root (this folder's notebooks; the tutorials too if asked) and Jupyter dirs; yield its info once
    ``ready_path`` answers; kill it (and its kernels) at the end and keep its log in test-artifacts/browser/."""
    root = tmp_path_factory.mktemp(f"{name}root")
    for nb in HERE.glob("*.ipynb"):
        shutil.copy(nb, root)
    if tutorials:
        for nb in TUTORIALS.glob("[0-9][0-9]_*.ipynb"):  # the course, beside the files it reads
            shutil.copy(nb, root)
        shutil.copytree(TUTORIALS / "kernels", root / "kernels")
    dirs, env = _isolated_env(tmp_path_factory, name)
    port, token = _free_port(), secrets.token_hex(16)
    log_path = dirs["logs"] / f"{name}.log"  # outside the root, so it is not in the file browser
    log = open(log_path, "w")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(argv(port, token, root), env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                            start_new_session=True)
    # a SIGTERM (e.g. from `timeout` in the Makefile) becomes KeyboardInterrupt, so this teardown still runs
    old_term = signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    base = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    try:
        while True:
            try:
                urllib.request.urlopen(f"{base}{ready_path}?token={token}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() - t0 > LAB_START_S:
                    raise RuntimeError(f"{name} did not come up in {LAB_START_S} s "
                                       f"(exit code {proc.poll()}):\n{log_path.read_text()[-3000:]}") from None
                time.sleep(0.25)
        yield {"name": name, "base": base, "token": token, "root": root, "log": log_path,
               "startup_s": time.monotonic() - t0}
    finally:
        _stop(proc)
        signal.signal(signal.SIGTERM, old_term)
        log.close()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(log_path, ARTIFACTS / f"{name}.log")


def _require(module: str, what: str) -> None:
    try:
        __import__(module)
    except ImportError:
        _unavailable(f"{what} is not installed (pip install -e '.[dev,notebook]')")


SERVER_ARGS = ["--no-browser", "--allow-root", "--ip=127.0.0.1", "--ServerApp.port_retries=0",
               "--ServerApp.open_browser=False"]


def lab_argv(port: int, token: str, root) -> list[str]:
    """JupyterLab's command line (also used by benchmarks/graph_browser.py)."""
    return [sys.executable, "-m", "jupyterlab", *SERVER_ARGS, f"--port={port}", f"--ServerApp.root_dir={root}",
            f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    _require("jupyterlab", "jupyterlab")
    yield from _serve(tmp_path_factory, "lab", lab_argv, tutorials=True)


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory):
    """Notebook 7 (``python -m notebook``): the Lab components in one-document pages, ``window.jupyterapp``."""
    _require("notebook", "notebook (Notebook 7)")
    yield from _serve(tmp_path_factory, "notebook7", lambda port, token, root: [
        sys.executable, "-m", "notebook", *SERVER_ARGS, f"--port={port}", f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}", "--JupyterNotebookApp.expose_app_in_browser=True"])


@pytest.fixture(scope="session")
def voila(tmp_path_factory):
    """Voila serving the root directory: ``/voila/render/NAME`` runs NAME in a new kernel and shows its outputs.
    The token is checked like Jupyter Server's (``?token=``); ``?theme=dark`` picks the dark theme."""
    _require("voila", "voila")
    yield from _serve(tmp_path_factory, "voila", lambda port, token, root: [
        sys.executable, "-m", "voila", str(root), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0", f"--token={token}", "--show_tracebacks=True"], ready_path="/")


SERVERS = {"jupyterlab": "lab", "notebook7": "notebook7", "voila": "voila"}


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


def _shutdown_kernels(server: dict) -> None:
    """Shut the server's kernels down through the REST API (the server's teardown kills whatever is left)."""
    auth = {"Authorization": f"token {server['token']}"}
    try:
        for what in ("sessions", "kernels"):
            req = urllib.request.Request(f"{server['base']}/api/{what}", headers=auth)
            for s in json.loads(urllib.request.urlopen(req, timeout=5).read()):
                urllib.request.urlopen(urllib.request.Request(
                    f"{server['base']}/api/{what}/{s['id']}", method="DELETE", headers=auth), timeout=10).read()
    except (OSError, ValueError):
        pass


def open_page(browser, server: dict, frontend: str, name: str, *, run_all: bool = False, theme: str = "light"):
    """A new page with notebook ``name`` open in ``frontend`` ("jupyterlab", "notebook7" or "voila") on
    ``server`` (the fixture's dict), with the kernel idle; with ``run_all`` every cell has run (Voila always
    runs them). The page gains the helpers listed at the top of this file. Close it with ``close_page``."""
    if frontend not in FRONTENDS:
        raise ValueError(f"unknown front-end {frontend!r}; one of {FRONTENDS}")
    page = browser.new_page()
    page.frontend, page.server = frontend, server
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    token = server["token"]

    def run(command: str, args: dict | None = None, timeout_ms: int = COMMAND_MS):
        """A JupyterLab command; returns when the command's promise resolves (run-all: after the last
        cell), failing after ``timeout_ms`` (page.evaluate itself never times out)."""
        if frontend == "voila":
            raise RuntimeError("Voila has no command registry: the page runs the notebook when it loads")
        return page.evaluate(
            """([c, a, ms]) => Promise.race([window.jupyterapp.commands.execute(c, a || {}),
                 new Promise((_, no) => setTimeout(() => no(new Error(`${c}: no result in ${ms} ms`)), ms))])""",
            [command, args, timeout_ms])

    def wait_idle(timeout_ms: int = KERNEL_IDLE_MS):
        if frontend == "voila":
            raise RuntimeError("Voila shows no kernel status: wait for what the page shows instead")
        page.wait_for_function(KERNEL_IDLE_JS, timeout=timeout_ms)
        # no cell still queued or running
        page.wait_for_function(
            "sel => ![...document.querySelectorAll(sel + ' .jp-InputPrompt')]"
            ".some(p => p.textContent.includes('*'))", arg=page.notebook_selector, timeout=timeout_ms)

    def goto_voila(theme_name: str):
        # Voila streams the page while it executes the cells: "load" is after the last one
        page.goto(f"{server['base']}/voila/render/{name}?token={token}&theme={theme_name}",
                  timeout=VOILA_RENDER_MS, wait_until="load")
        page.wait_for_selector(VOILA_CELLS, state="visible", timeout=60_000)
        # the spinner goes once the widget manager has rendered the outputs
        page.wait_for_function("() => !document.querySelector('#loading') || "
                               "getComputedStyle(document.querySelector('#loading')).display === 'none'",
                               timeout=60_000)

    def set_theme(which: str):
        """"light" or "dark": Lab and Notebook 7 switch live (apputils:change-theme; it is saved in the
        server's settings, so switch back before the test ends); Voila reloads with ?theme= (runs again)."""
        if frontend == "voila":
            goto_voila(which)
        else:
            run("apputils:change-theme", {"theme": THEMES[which]})
        page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=THEMES[which], timeout=30_000)
        # JupyterLab shows its splash (the logo) while a theme loads: wait until it has gone, or it is in the shots
        page.wait_for_function("() => !document.getElementById('jupyterlab-splash')", timeout=30_000)
        # let the theme's CSS variables reach every element before anything is measured or photographed
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

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
            page.notebook_selector)

    def assert_no_widget_errors():
        """No widget is stuck loading or failed to render, anywhere on the page. "Loading widget" is a stage every
        widget passes through (Voila draws the outputs one after another, after the spinner has gone, and a test
        waits only for the views it looks at), so it fails only if it stays for WIDGET_LOADING_MS."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            page.wait_for_function("t => !document.body.innerText.includes(t)", arg=LOADING_TEXT,
                                   timeout=WIDGET_LOADING_MS)
        except PlaywrightTimeout:
            pass  # the check below says what is on the page
        body = page.locator("body").inner_text(timeout=10_000)
        for bad in BAD_TEXTS:
            assert bad not in body, f"{bad!r} is on the page"

    page.run, page.wait_idle, page.shot, page.set_theme = run, wait_idle, shot, set_theme
    page.cell_errors, page.assert_no_widget_errors = cell_errors, assert_no_widget_errors
    page.notebook_selector = VOILA_CELLS if frontend == "voila" else VISIBLE_NB
    page.notebook = page.locator(page.notebook_selector)
    try:
        if frontend == "voila":
            goto_voila(theme)
            return page
        path = f"lab/tree/{name}?reset&" if frontend == "jupyterlab" else f"notebooks/{name}?"
        page.goto(f"{server['base']}/{path}token={token}", timeout=60_000)
        page.wait_for_function(KERNEL_IDLE_JS, timeout=KERNEL_IDLE_MS)
        page.notebook.wait_for(state="visible", timeout=30_000)
        if theme != "light":
            set_theme(theme)
        if run_all:
            run("notebook:run-all-cells", timeout_ms=VOILA_RENDER_MS)
            wait_idle(VOILA_RENDER_MS)
        return page
    except BaseException:
        close_page(page)
        raise


def close_page(page) -> None:
    """Close a page from ``open_page`` and shut its server's kernels down."""
    try:
        page.close()
    except Exception:  # noqa: BLE001 - the browser may be gone already
        pass
    _shutdown_kernels(page.server)


def light_then_dark(page, wait):
    """For ``with contextlib.closing(light_then_dark(page, wait)) as themes: for theme in themes: ...``: the page in
    the light theme, then in the dark one (the views drawn again, ``wait(page)``, with no widget or cell error), and
    the light theme back at the end, however the loop ends (Lab and Notebook 7 keep the theme in the server's
    settings, which the next tests share; Voila's is in the page's URL)."""
    try:
        yield "light"
        page.set_theme("dark")
        wait(page)  # Voila reloaded (and ran the notebook again); Lab and Notebook 7 did not
        page.assert_no_widget_errors()
        assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
        yield "dark"
    finally:
        if page.frontend != "voila":
            page.set_theme("light")


def drawn_page(request, browser, name: str, wait):
    """For a module-scoped fixture parametrised over ``FRONTENDS`` (``yield from drawn_page(...)``): notebook ``name``
    open in the front-end of ``request.param``, every cell run, ``wait(page)`` returned (the views drawn); closed
    after the module."""
    frontend = request.param
    page = open_page(browser, request.getfixturevalue(SERVERS[frontend]), frontend, name, run_all=True)
    try:
        wait(page)
        yield page
    finally:
        close_page(page)


def lab_page_run_all(browser, request, name: str, wait, render_ms: int):
    """For a module-scoped fixture (``yield from``): notebook ``name`` open in JupyterLab, every cell run, the kernel
    idle and ``wait(page)`` returned (the views drawn), ``page.drawn_s`` the seconds all that took; uncaught page
    errors collected from the start in ``page.page_errors``; closed after the module."""
    page = open_page(browser, request.getfixturevalue("lab"), "jupyterlab", name)
    page.page_errors = []
    page.on("pageerror", lambda e: page.page_errors.append(str(e)))
    try:
        t0 = time.monotonic()
        page.run("notebook:run-all-cells", timeout_ms=render_ms)
        page.wait_idle(render_ms)
        wait(page)
        page.drawn_s = time.monotonic() - t0
        yield page
    finally:
        close_page(page)


def views_js_errors(page, sources: str = r"tl-|anywidget|widget|graph|storage") -> list[str]:
    """Uncaught exceptions (``lab_page_run_all`` collects them), and console errors that come from the views
    (``sources``): Lab logs its own unrelated ones, e.g. for the requests to the internet the test browser aborts."""
    return page.page_errors + [m for m in page.console_errors if re.search(sources, m, re.I)]


def kernel_repr(page, expr: str) -> str | None:
    """``repr(expr)`` evaluated in the notebook's kernel, as a user expression (no cell is added or run). Lab and
    Notebook 7: Voila's page has no handle on its kernel, so None there."""
    if page.frontend == "voila":
        return None
    return page.evaluate(
        """async (expr) => {
             const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
             const reply = await k.requestExecute({code: '', silent: true, store_history: false,
                                                   user_expressions: {r: expr}}).done;
             const r = reply.content.user_expressions.r;
             return r.status === 'ok' ? r.data['text/plain'] : `${r.ename}: ${r.evalue}`; }""", expr)


def kernel_exec(page, code: str, timeout_ms: int = COMMAND_MS) -> None:
    """Run ``code`` in the notebook's kernel silently (no cell, no history, no Out entry), as a test's way to drive
    a view from Python (e.g. ``stepper.step(500)``); raises with the kernel's error if it fails. Lab and Notebook 7
    only."""
    if page.frontend == "voila":
        raise RuntimeError("Voila's page has no handle on its kernel")
    err = page.evaluate(
        """async ([code, ms]) => {
             const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
             const done = k.requestExecute({code, silent: true, store_history: false}).done;
             const reply = await Promise.race([done, new Promise((_, no) =>
               setTimeout(() => no(new Error(`no reply in ${ms} ms`)), ms))]);
             const c = reply.content;
             return c.status === 'ok' ? null : `${c.ename}: ${c.evalue}`; }""", [code, timeout_ms])
    if err is not None:
        raise RuntimeError(f"kernel_exec({code!r}) failed: {err}")


#: JavaScript for colour checks, to put at the start of an arrow function's body: ``paint(...layers)`` composites CSS
#: colours on a 1x1 canvas (so alpha, color-mix() and color(srgb ...) all work) and returns [r, g, b]; ``lum(rgb)``
#: is the WCAG relative luminance, ``contrast(x, y)`` the WCAG contrast ratio of two painted colours.
COLOUR_JS = """
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const cx = cv.getContext('2d', {willReadFrequently: true});
  const paint = (...layers) => { cx.clearRect(0, 0, 1, 1);
    for (const c of layers) { cx.fillStyle = '#000'; cx.fillStyle = c; cx.fillRect(0, 0, 1, 1); }
    const [r, g, b] = cx.getImageData(0, 0, 1, 1).data; return [r, g, b]; };
  const lum = rgb => { const f = v => (v /= 255, v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]); };
  const contrast = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
"""


_WORST_CONTRAST_JS = """([sel, texts]) => {""" + COLOUR_JS + """
  let worst = 99, what = "";
  for (const e of document.querySelectorAll(texts.map(t => sel + ' ' + t).join(', '))) {
    if (!e.textContent.trim()) continue;
    const chain = [];
    for (let p = e; p; p = p.parentElement) chain.unshift(getComputedStyle(p).backgroundColor);
    const bg = paint('#fff', ...chain);
    const c = contrast(bg, paint('#fff', ...chain, getComputedStyle(e).color));
    if (c < worst) { worst = c; what = e.className + ': ' + e.textContent.slice(0, 40); }
  }
  return [+worst.toFixed(2), what]; }"""


def worst_text_contrast(page, sel: str, texts: list[str]) -> tuple[float, str]:
    """The lowest WCAG contrast, and where, of the texts matching ``texts`` (selectors) inside ``sel``, each against
    the backgrounds painted under it (its ancestors' layered on white)."""
    worst, what = page.evaluate(_WORST_CONTRAST_JS, [sel, texts])
    return worst, what


def _page_factory(browser, server: dict, frontend: str, **defaults):
    pages = []

    def _open(name: str, **kwargs):
        page = open_page(browser, server, frontend, name, **{**defaults, **kwargs})
        pages.append(page)
        return page

    return _open, pages


def _close_all(pages) -> None:
    for page in pages:
        try:
            page.close()
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass
    if pages:
        _shutdown_kernels(pages[0].server)


@pytest.fixture
def open_notebook(browser, lab):  # the browser first: a missing Chromium fails before Lab starts
    opener, pages = _page_factory(browser, lab, "jupyterlab")
    yield opener
    _close_all(pages)


@pytest.fixture
def open_notebook7(browser, notebook7):
    opener, pages = _page_factory(browser, notebook7, "notebook7")
    yield opener
    _close_all(pages)


@pytest.fixture
def open_voila(browser, voila):
    opener, pages = _page_factory(browser, voila, "voila")
    yield opener
    _close_all(pages)


@pytest.fixture
def open_frontend(browser, request):
    """``open_frontend(frontend, name)``: ``name`` open in that front-end, every cell run, the kernel idle.
    Only the servers a test uses are started."""
    pages = []

    def _open(frontend: str, name: str, **kwargs):
        server = request.getfixturevalue(SERVERS[frontend])
        page = open_page(browser, server, frontend, name, run_all=True, **kwargs)
        pages.append(page)
        return page

    yield _open
    for page in pages:
        close_page(page)

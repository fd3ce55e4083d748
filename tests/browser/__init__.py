"""Real-browser tests (JupyterLab + Chromium through Playwright); see conftest.py. A package, so that this
folder's conftest does not shadow tests/conftest.py (the other tests import helpers from it as ``conftest``)."""

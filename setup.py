"""Package list for setuptools (all other configuration is in pyproject.toml).

`tinygrad_like` and every subpackage under it are discovered, and so are the top-level folders that
pyproject's `package-dir` maps into it (`widgets/` -> `tinygrad_like.widgets`, `kernel_src/` ->
`tinygrad_like.kernel_src`), with their own subpackages. A new subpackage needs no edit here.
"""

from setuptools import find_packages, setup

MAPPED = {"tinygrad_like.widgets": "widgets", "tinygrad_like.kernel_src": "kernel_src"}

packages = find_packages(include=["tinygrad_like", "tinygrad_like.*"])
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages)

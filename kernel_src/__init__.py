"""CUDA C sources (``*.cu``), shipped as package data of ``tinygrad_like.kernel_src``.

Read them with ``importlib.resources.files("tinygrad_like.kernel_src").joinpath("fill.cu")``. Every
kernel is declared ``extern "C"`` (so its name is not mangled) and the files include no host headers.
"""

"""The static picture every view puts next to its widget: what a saved notebook shows where no kernel runs the
widget (nbconvert, GitHub, a notebook opened before its kernel starts).

A view's ``_repr_mimebundle_`` returns the widget's bundle plus one picture of what it draws: an SVG
(:func:`add_svg`: the graph views, the Dashboard's Graph tab) or a PNG (:func:`add_png`: the storage and kernel
views, and the matplotlib figures of the training and gradcheck views). :func:`encode_png` is the small PNG encoder
(NumPy and zlib, no matplotlib) of the kernel timeline's picture. nbval compares these outputs with the saved
ones, so the same drawing must give the same bytes.
"""

from __future__ import annotations

import base64
import struct
import zlib

__all__ = ["add_png", "add_svg", "encode_png"]


def add_png(data: dict, png: bytes | None) -> dict:
    """``data`` (a mime bundle) with ``png`` as its ``image/png`` (base64 text, as Jupyter stores it); unchanged when
    there is no picture."""
    if png is not None:
        data["image/png"] = base64.b64encode(png).decode("ascii")
    return data


def add_svg(data: dict, svg: str | None) -> dict:
    """``data`` (a mime bundle) with the SVG document ``svg`` as its ``image/svg+xml``; unchanged when there is no
    picture."""
    if svg is not None:
        data["image/svg+xml"] = svg
    return data


def encode_png(rgba) -> bytes:
    """An ``(height, width, 4)`` uint8 array as an RGBA PNG file (8 bits a channel, no filter, zlib level 6)."""
    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))

"""The records of a storage's in-place writes: what the version-mismatch error and the storage view list.

A :class:`Bump` is a run of identical writes (sixteen optimizer steps are one record); :func:`summarize_writes`
merges them into :class:`Write` lines such as "add_ at cell In[7], line 6 (360×, by SGD.step())".
"""

from __future__ import annotations

from typing import NamedTuple


class Bump:
    """A run of identical in-place writes: same op, same user line, same optimizer, back to back.

    Sixteen optimizer steps make one record with ``count`` 16, not sixteen records. ``version`` is the
    newest version the run produced and ``first_version`` its first, so ``count`` is their span. A
    storage's newest record grows while the run goes on; :meth:`Storage.bumps_since` hands out copies.
    """

    __slots__ = ("version", "first_version", "op", "site", "optimizer")

    def __init__(self, version: int, op: str, site, optimizer: str | None = None, first_version: int | None = None):
        self.version, self.op, self.site, self.optimizer = version, op, site, optimizer
        self.first_version = version if first_version is None else first_version

    @property
    def count(self) -> int:
        """How many writes this record stands for."""
        return self.version - self.first_version + 1

    def __repr__(self) -> str:
        span = f"v{self.version}" if self.count == 1 else f"v{self.first_version}..v{self.version}"
        extra = ", ".join(x for x in (f"{self.count}×" if self.count > 1 else "",
                                      f"by {self.optimizer}.step()" if self.optimizer else "") if x)
        return f"<{span} by {self.op} at {self.site}{f' ({extra})' if extra else ''}>"


class Write(NamedTuple):
    """One distinct write (op, user line, optimizer) and how many times it ran: what error messages list."""

    op: str
    site: str | None  # the site's label, e.g. "cell In[7], line 6"
    count: int
    optimizer: str | None  # the optimizer class name when it ran inside ``step()``, else None

    def __str__(self) -> str:
        """"add_ at cell In[7], line 6 (360×, by SGD.step())": how errors and views name a write."""
        extra = ", ".join(x for x in (f"{self.count}×" if self.count > 1 else "",
                                      f"by {self.optimizer}.step()" if self.optimizer else "") if x)
        return f"{self.op} at {self.site or 'an unrecorded place'}" + (f" ({extra})" if extra else "")


def summarize_writes(bumps) -> list[Write]:
    """Merge records of the same write (alternating writes make separate runs), oldest first."""
    merged: dict[tuple, int] = {}
    for b in bumps:
        key = (b.op, None if b.site is None else str(b.site), b.optimizer)
        merged[key] = merged.get(key, 0) + b.count
    return [Write(op, site, n, opt) for (op, site, opt), n in merged.items()]

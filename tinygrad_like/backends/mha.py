"""``tl.backends.mha``: the switch of ``nn.MultiheadAttention``'s inference fast path.

Recorded only: our attention always takes the one (composed) path, whose values the fast path equals."""

from __future__ import annotations

_fastpath = {"enabled": True}


def get_fastpath_enabled() -> bool:
    return _fastpath["enabled"]


def set_fastpath_enabled(value: bool) -> None:
    _fastpath["enabled"] = bool(value)

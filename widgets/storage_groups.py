"""StorageView's folding: the named storages grouped by module path into a tree whose groups fold, so a model's
hundreds of storages (a nanoGPT after one Adam step has 311) read as an overview of its modules that opens where
the learner looks, instead of a scroll of thousands of pixels.

A storage belongs to the module of its parameter (``storage_model.module_of``): a weight, its gradient and its
optimizer state sit together in ``transformer.h.0.attn.c_attn``. Groups of one storage are dissolved into their
parent (nothing to fold), and a group holding nothing but one subgroup is replaced by it (``transformer`` ->
``transformer.h`` when ``h`` is all it holds). Which groups are open by default: all of them when few storages
match (:data:`SMALL`), else the model's structure (groups of groups), level by level from the top, while the drawing
stays within a height budget; a module's own storages are drawn when the learner opens it.

>>> rows = [{"id": i, "group": g, "kind": "param", "nbytes": 4}
...         for i, g in enumerate(["net.a", "net.a", "net.b", "net.b", "net.c", ""])]
>>> root = group_tree(rows)
>>> [(g.path, g.total) for g in root.walk()]
[('net', 5), ('net.a', 2), ('net.b', 2)]
>>> [it["id"] if isinstance(it, dict) else it.path for it in root.items]
['net', 5]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["Group", "group_tree", "visible", "default_open", "group_text", "SMALL"]

#: at most this many matching storages: every group starts open (a learner's small model is shown whole)
SMALL = 32

#: what each kind of storage is called in a group's summary, in the order it is listed
_KIND_WORDS = (("param", "parameters"), ("buffer", "buffers"), ("grad", "gradients"), ("state", "optimizer state"))


@dataclass(eq=False)
class Group:
    """A module path and what it holds, in the model's order: storage rows (dicts) and subgroups."""

    path: str
    items: list = field(default_factory=list)
    total: int = 0  # storages in it, subgroups included
    nbytes: dict = field(default_factory=dict)  # kind -> bytes, subgroups included

    def walk(self) -> Iterator[Group]:
        """Every group below this one, depth first, in order."""
        for it in self.items:
            if isinstance(it, Group):
                yield it
                yield from it.walk()

    def rows(self) -> Iterator[dict]:
        """Every storage row in it, subgroups included."""
        for it in self.items:
            if isinstance(it, Group):
                yield from it.rows()
            else:
                yield it


def group_tree(rows: Iterable[dict]) -> Group:
    """The root (path ``""``) of the tree of ``rows`` (``storage_model`` rows, in the order to draw them) by their
    ``group`` key; see the module's doc for the two simplifications."""
    root = Group("")
    nodes = {"": root}
    for r in rows:
        node = root
        parts = r["group"].split(".") if r.get("group") else []
        for i in range(1, len(parts) + 1):
            path = ".".join(parts[:i])
            child = nodes.get(path)
            if child is None:
                child = nodes[path] = Group(path)
                node.items.append(child)
            node = child
        node.items.append(r)
    _compress(root)
    return root


def _compress(node: Group) -> None:
    items = []
    for it in node.items:
        if isinstance(it, Group):
            _compress(it)
            while len(it.items) == 1 and isinstance(it.items[0], Group):
                it = it.items[0]  # nothing but one subgroup: the subgroup stands for it
            if it.total == 1:
                items.extend(it.items)  # one storage: nothing to fold
            else:
                items.append(it)
        else:
            items.append(it)
    node.items = items
    node.total, node.nbytes = 0, {}
    for it in items:
        if isinstance(it, Group):
            node.total += it.total
            for k, b in it.nbytes.items():
                node.nbytes[k] = node.nbytes.get(k, 0) + b
        else:
            node.total += 1
            node.nbytes[it.get("kind", "")] = node.nbytes.get(it.get("kind", ""), 0) + it.get("nbytes", 0)


def visible(root: Group, is_open: Callable[[str], bool]) -> list[tuple[int, Group | dict]]:
    """``(depth, group or row)`` of everything drawn, in order: a folded group hides what it holds."""
    out: list[tuple[int, Group | dict]] = []

    def walk(node: Group, depth: int) -> None:
        for it in node.items:
            out.append((depth, it))
            if isinstance(it, Group) and is_open(it.path):
                walk(it, depth + 1)

    walk(root, 0)
    return out


def default_open(root: Group, height_of: Callable[[Group | dict], float], budget: float,
                 small: int = SMALL) -> set[str]:
    """The groups open before the learner opens or folds any: all of them when the tree holds at most ``small``
    storages; else the model's structure: whole levels of the groups that hold groups, top down, as long as the
    drawing (``height_of`` each visible item) stays within ``budget`` px. A group of storages only (a module's
    parameters) stays folded: its row says what it holds, and a click draws it."""
    if root.total <= small:
        return {g.path for g in root.walk()}

    def structural(groups: Iterable) -> list[Group]:
        return [g for g in groups if isinstance(g, Group) and any(isinstance(c, Group) for c in g.items)]

    opened: set[str] = set()
    level = structural(root.items)
    while level:
        trial = opened | {g.path for g in level}
        if sum(height_of(it) for _, it in visible(root, trial.__contains__)) > budget:
            break
        opened = trial
        level = structural(c for g in level for c in g.items)
    return opened


def group_text(g: Group, format_bytes: Callable[[float], str]) -> str:
    """The summary after a group's name: ``48 storages · 1.69 MiB: parameters 432 KiB · gradients 432 KiB ·
    optimizer state 864 KiB``."""
    total = sum(g.nbytes.values())
    parts = [f"{word} {format_bytes(g.nbytes[k])}" for k, word in _KIND_WORDS if g.nbytes.get(k)]
    other = total - sum(g.nbytes.get(k, 0) for k, _ in _KIND_WORDS)
    if other and parts:
        parts.append(f"other {format_bytes(other)}")
    return f"{g.total} storages · {format_bytes(total)}" + (": " + " · ".join(parts) if len(parts) > 1 else "")

"""YAML whose nesting is bounded: a document nested too deeply is refused at its key path, while it is read.

PyYAML's scanner and parser keep their state in lists, but its composer builds the node tree by
recursion, three Python calls a level: a competition.yaml of 100,000 nested lists (``[[[...]]]``, 200 KB)
raises ``RecursionError`` there. ``BoundedSafeLoader`` counts the collections open around the node it
composes and refuses the one past ``MAX_YAML_DEPTH`` before composing it, so the recursion stays shallow
(PyYAML offers no such bound; this is the one place to add it). The refusal, ``NestedTooDeep``, names the
key path (``tasks[0].scorer_options.x[0][0]``) the way bundle problems are named.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: Collections nested in one another that a bundle may hold: a bundle's own keys go 6 deep, a scorer's
#: options a few more.
MAX_YAML_DEPTH = 32
#: Characters of a key shown in a key path.
KEY_SHOWN = 80


class NestedTooDeep(ComposerError):
    """A collection nested deeper than ``MAX_YAML_DEPTH``; ``path`` is its key path."""

    def __init__(self, path: str, mark: Any) -> None:
        self.path = path
        self.reason = f"nested deeper than {MAX_YAML_DEPTH} levels"
        self.where = f"line {mark.line + 1}, column {mark.column + 1}"
        super().__init__(None, None, f"{path}: {self.reason}", mark)


def _step(parent: Node | None, index: Any) -> str:
    """The part of a key path that leads from ``parent`` to its child at ``index`` (how PyYAML's composer
    names it: a position in a sequence; in a mapping the key's node, or None while the key itself is read)."""
    if isinstance(parent, SequenceNode):
        return f"[{index}]"
    if isinstance(parent, MappingNode):
        if isinstance(index, ScalarNode):
            key = str(index.value)
            return "." + (key if len(key) <= KEY_SHOWN else key[: KEY_SHOWN - 3] + "...")
        return ".(a key)" if index is None else ".(a key that is a collection)"
    return ""


class BoundedSafeLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing (``NestedTooDeep``) collections nested deeper than ``MAX_YAML_DEPTH``."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._steps: list[str] = []  # the key path of the node being composed, one step per open node

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._steps.append(_step(parent, index))
        try:
            # Every node on the path but this one is an open collection.
            if len(self._steps) > MAX_YAML_DEPTH and self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
                path = "".join(self._steps).removeprefix(".")
                raise NestedTooDeep(path, self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)
        finally:
            self._steps.pop()


def load_bounded(text: str) -> Any:
    """One YAML document as plain data, as ``yaml.safe_load`` reads it, its nesting bounded."""
    return yaml.load(text, Loader=BoundedSafeLoader)  # noqa: S506 (a SafeLoader)

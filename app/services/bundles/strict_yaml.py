"""Strict YAML for competition bundles: plain data only, no silent surprises.

PyYAML's safe loader is the base, with its nesting bounded (``codalab.bounded_yaml``: a collection nested
deeper than ``MAX_YAML_DEPTH`` is refused at its key path while the document is read, before PyYAML's
recursion could fail); three things are changed so that a typo cannot pass silently: times stay text
(they are checked by the bundle's own rules, not turned into naive datetimes), a key repeated in one
mapping is refused (PyYAML keeps the last one), and aliases (``*name``) are refused, so one line cannot
expand into a huge document and every value has a single key path.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

from codalab.bounded_yaml import BoundedSafeLoader

TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class StrictLoader(BoundedSafeLoader):
    """The safe loader, its nesting bounded, without timestamps, repeated keys or aliases."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise ComposerError(
                None, None, "aliases (*name) are not accepted in a bundle; write the value out", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                if key_node.value in seen:
                    raise ConstructorError(
                        None, None, f"the key {key_node.value!r} appears twice in one mapping", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


# A copy, so that yaml.SafeLoader itself keeps resolving timestamps for everyone else.
StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != TIMESTAMP_TAG]
    for first, resolvers in BoundedSafeLoader.yaml_implicit_resolvers.items()
}


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """``line L, column C: problem`` for a located error, else the error's own text."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    return str(exc)


def load_strict(text: str) -> Any:
    """Parse one YAML document with ``StrictLoader``; raises ``yaml.YAMLError``."""
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 (StrictLoader is a SafeLoader)

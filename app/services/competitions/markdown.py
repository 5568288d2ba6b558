"""Markdown to safe HTML for descriptions written by organizers.

Raw HTML in the source is not passed through, and the rendered HTML is cleaned by nh3 (an
allow-list sanitizer), so a description can never carry a script or an event handler.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough")


def render_markdown(text: str) -> str:
    """Safe HTML for ``text``; links get ``rel="noopener noreferrer"``."""
    return nh3.clean(_parser().render(text), link_rel="noopener noreferrer")

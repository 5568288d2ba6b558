"""``bench/RESULTS.md``: each benchmark owns one section (``## title``) and replaces only its own."""

from __future__ import annotations


def replace_section(document: str, section: str, body: str) -> str:
    """``document`` with the section titled ``section`` replaced by ``body`` (appended when missing);
    other sections are left as they are."""
    block = f"{section}\n\n{body.strip()}\n"
    if section not in document:
        return document.rstrip("\n") + "\n\n" + block
    before, rest = document.split(section, 1)
    after = rest.split("\n## ", 1)
    tail = "\n## " + after[1] if len(after) == 2 else ""
    return before + block + tail

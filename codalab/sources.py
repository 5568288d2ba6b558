"""Checking an uploaded program's Python sources at import: the files that will not compile, and those Python
warns about, each said once.

Compiling runs in the server's process, so it is bounded: at most ``MAX_FILES`` files of at most
``MAX_SOURCE_BYTES`` each and ``MAX_TOTAL_BYTES`` together, and the warnings the compiler gives
(``SyntaxWarning``, ``DeprecationWarning`` of invalid escapes...) are counted, never printed: a source made
to give a hundred thousand of them costs one line of the bundle's warnings, not a flood in the log.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

MAX_FILES = 500
MAX_SOURCE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
#: How much of a compiler warning's text is quoted.
MAX_MESSAGE_CHARS = 200


class _Counter:
    """A ``warnings.showwarning`` that counts the warnings and keeps the first."""

    def __init__(self) -> None:
        self.count = 0
        self.first: tuple[str, int | None] | None = None

    def __call__(self, message: Any, category: Any, filename: str, lineno: int | None, *rest: Any, **kw: Any) -> None:
        self.count += 1
        if self.first is None:
            self.first = (f"{category.__name__}: {message}"[:MAX_MESSAGE_CHARS], lineno)


def _compile(source: bytes, name: str) -> _Counter:
    """Compile ``source`` with every warning counted and none shown; raises ``SyntaxError``."""
    counter = _Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = counter
        compile(source, name, "exec", dont_inherit=True)
    return counter


def compile_warnings(root: Path, label: str) -> list[str]:
    """Python files of a program that do not compile here (a program written for Python 2, tabs mixed...) or
    that Python warns about, one line each."""
    out: list[str] = []
    checked = total = 0
    for file in sorted(root.rglob("*.py")):
        where = f"{label}/{file.relative_to(root).as_posix()}"
        try:
            if not file.is_file() or file.stat().st_size > MAX_SOURCE_BYTES:
                continue
            if checked >= MAX_FILES or total + file.stat().st_size > MAX_TOTAL_BYTES:
                out.append(f"{label}: only the first {checked} Python files were checked for errors")
                break
            source = file.read_bytes()
            checked, total = checked + 1, total + len(source)
            counter = _compile(source, where)
        except SyntaxError as exc:  # TabError and IndentationError included
            out.append(
                f"{where}, line {exc.lineno}: {exc.msg} ({type(exc).__name__}); "
                "the program will fail where Python 3 runs it"
            )
            continue
        except (ValueError, MemoryError, RecursionError, OSError):
            continue
        if counter.first is not None:
            text, line = counter.first
            times = "once" if counter.count == 1 else f"{counter.count} times"
            out.append(f"{where}: Python warns {times} when compiling it (first, line {line}: {text})")
    return out

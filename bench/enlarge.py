"""Writing a benchmark input many times over: each unit (a line, an entry) is serialised once with slots
where its ids go, and each copy fills them with the ids and a suffix of its own (``-c<k>``), so a
1.5 GB enlargement is written at the speed of the disk. Used by ``bench/score_inputs.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SLOT = re.compile(r"@@BENCH-ID-(\d+)@@")


def slot(index: int) -> str:
    """The placeholder for a unit's ``index``-th id in its serialised text."""
    return f"@@BENCH-ID-{index}@@"


def copy_suffix(copy: int, copies: int) -> str:
    """The id suffix of copy ``copy``: none when the file is written once, ``-c<k>`` otherwise."""
    return "" if copies == 1 else f"-c{copy}"


@dataclass(frozen=True)
class Record:
    """One unit's serialised text, cut at the places where its ids go."""

    parts: tuple[str, ...]
    ids: tuple[str, ...]

    @classmethod
    def of(cls, text: str, ids: Sequence[str]) -> Record:
        """Cut ``text`` at its ``slot(i)`` placeholders; ``ids[i]`` is what slot ``i`` stands for."""
        pieces = _SLOT.split(text)
        order = [int(i) for i in pieces[1::2]]
        if sorted(order) != list(range(len(ids))):
            raise ValueError(f"expected each of {len(ids)} id slots once in the text, found slots {order}")
        return cls(tuple(pieces[0::2]), tuple(ids[i] for i in order))

    def render(self, suffix: str) -> str:
        out = [self.parts[0]]
        for value, part in zip(self.ids, self.parts[1:], strict=True):
            out += (value, suffix, part)
        return "".join(out)


@dataclass(frozen=True)
class TextFile:
    """A file as ``head``, then every record of every copy with ``sep`` between them, then ``tail``."""

    name: str
    head: str
    records: tuple[Record, ...]
    sep: str
    tail: str

    def write(self, path: Path, copies: int) -> int:
        """Write ``copies`` renamed copies of the records; return the size in bytes."""
        size = 0
        with path.open("w", encoding="utf-8", newline="") as out:
            size += out.write(self.head)
            first = True
            for copy in range(copies):
                suffix = copy_suffix(copy, copies)
                for record in self.records:
                    size += out.write(record.render(suffix) if first else self.sep + record.render(suffix))
                    first = False
            size += out.write(self.tail)
        return size


@dataclass(frozen=True)
class BenchInputs:
    """The 1x gold and submission of one scorer, and what they hold, for people."""

    scorer: str
    gold: TextFile
    submission: TextFile
    description: str

    def write(self, folder: Path, copies: int) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        gold, submission = folder / self.gold.name, folder / self.submission.name
        self.gold.write(gold, copies)
        self.submission.write(submission, copies)
        return gold, submission


def dumps(value: Any) -> str:
    # ASCII with escapes, as the release files and Python's json module write it; one non-ASCII character
    # would make a decoded file take two or four bytes per character in memory.
    return json.dumps(value)


def escaped(key: str) -> str:
    """An id as it stands between the quotes of a JSON string."""
    return dumps(key)[1:-1]


def json_object(name: str, entries: Iterable[tuple[str, Any]]) -> TextFile:
    """A submission ``{id: value, ...}``, one record per entry."""
    records = tuple(Record.of(f'"{slot(0)}": {dumps(value)}', [escaped(key)]) for key, value in entries)
    return TextFile(name, "{", records, ", ", "}\n")


def json_lines(name: str, lines: Iterable[dict[str, Any]], id_key: str) -> TextFile:
    """A JSON Lines file whose objects carry their id under ``id_key``."""
    records = tuple(Record.of(dumps({**line, id_key: slot(0)}), [escaped(line[id_key])]) for line in lines)
    return TextFile(name, "", records, "\n", "\n")


def release_lines(path: Path, id_key: str) -> tuple[list[dict[str, Any]], TextFile]:
    """A release JSON Lines file's objects, and the file itself with slots for the ids, byte for byte.

    The lines are kept as released rather than written again, since their escapes (``\\/``, ``\\u201c``)
    and spacing are part of what a parser works through.
    """
    objects: list[dict[str, Any]] = []
    records: list[Record] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        value = json.loads(line)
        match = re.search(f'"{re.escape(id_key)}"\\s*:\\s*"({re.escape(escaped(value[id_key]))})"', line)
        if match is None:
            raise ValueError(f"{path}: cannot find the {id_key} of line {len(objects) + 1} in its text")
        text = line[: match.start(1)] + slot(0) + line[match.end(1) :]
        objects.append(value)
        records.append(Record.of(text, [match.group(1)]))
    return objects, TextFile("gold.jsonl", "", tuple(records), "\n", "\n")

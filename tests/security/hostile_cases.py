"""The hostile files of ``test_hostile_uploads``: each sent to a scorer's example phase, with the status it
must get and what the refusal must name, under the live server's small limits (2 MB uploads, 32 MB unzipped,
16 zip entries)."""

from __future__ import annotations

import json
import random
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.security import hostile_files as hostile
from tests.security.hostile_files import MB
from tests.security.seed_examples import Example

LIMIT = 2 * MB
UNZIPPED_LIMIT = 32 * MB
ZIP_ENTRIES = 16


@dataclass(frozen=True)
class Hostile:
    """A file sent to a scorer's example phase, the status it must get and what the message must name."""

    name: str
    scorer: str
    build: Callable[[Example], bytes]
    fragments: tuple[str, ...]
    status: int = 422
    filename: str = "submission.json"


def _first_uuid(ex: Example) -> str:
    return ex.gold.decode().splitlines()[1].split("\t")[5]


def _first_line(ex: Example) -> dict[str, Any]:
    return dict(json.loads(ex.gold.decode().splitlines()[0]))


def _absurd_candidates(ex: Example) -> bytes:
    # A million candidates for one query: 11 MB of JSON, 1.1 MB once compressed with bzip2.
    return hostile.zipped({"run.json": hostile.candidates_run(_first_uuid(ex), 1_000_000)}, zipfile.ZIP_BZIP2)


def _absurd_entities(ex: Example) -> bytes:
    doc = _first_line(ex)
    sentences = len(doc["sentences"])
    ner = [[[0, 0, "Method"]] * 50_000] + [[] for _ in range(sentences - 1)]
    return json.dumps({"doc_id": doc["doc_id"], "predicted_ner": ner, "predicted_relations": [[]] * sentences}).encode()


def _absurd_fillers(ex: Example) -> bytes:
    doc = _first_line(ex)
    frame = doc["templates"][0]["incident_type"]
    return json.dumps({doc["docid"]: [{"incident_type": frame, "Agent": [["someone"]] * 100_000}]}).encode()


HOSTILE = [
    Hostile("empty", "svident-detection", lambda ex: b"", ("empty",)),
    Hostile("utf-16", "svident-detection", lambda ex: '{"a": "1"}'.encode("utf-16"), ("UTF-8",)),
    Hostile("latin-1", "scier-ere", lambda ex: '{"doc_id": "Müller"}\n'.encode("latin-1"), ("UTF-8", "line 1")),
    Hostile("binary", "famus-sv", lambda ex: random.Random(7).randbytes(256 * 1024), ("UTF-8",)),
    Hostile("NUL bytes", "svident-detection", lambda ex: bytes(64 * 1024), ("not valid JSON",)),
    Hostile("nested arrays", "svident-disambiguation", lambda ex: hostile.nested_json(500_000), ("nested",)),
    Hostile(
        "nested objects on a line",
        "scier-re",
        lambda ex: b'{"doc_id": ' + hostile.nested_json(200_000, '{"a": ', "}") + b"}\n",
        ("nested", "line 1"),
    ),
    Hostile(
        "very long key",
        "svident-detection",
        lambda ex: json.dumps({"k" * (LIMIT - 100): "1"}).encode(),
        ("is not a uuid of a gold sentence",),
    ),
    Hostile(
        "very long line",
        "scier-ere",
        lambda ex: json.dumps({"doc_id": "d" * (LIMIT - 100), "predicted_ner": []}).encode(),
        ("line 1", "unknown doc_id"),
    ),
    Hostile("one line of garbage", "famus-cdae", lambda ex: b"{" * (LIMIT - 1000), ("not valid JSON",)),
    Hostile("over the limit", "svident-detection", lambda ex: bytes(3 * MB), ("The upload is too large",), 413),
    Hostile(
        "one byte over the limit",
        "svident-detection",
        lambda ex: bytes(LIMIT + 1),
        ("The file is 2,097,153 bytes; this phase accepts files of at most 2,097,152 bytes.",),
        413,
    ),
    Hostile(
        "zip bomb",
        "svident-detection",
        lambda ex: hostile.zip_bomb(256 * MB),
        ("zip archive", "unpacks to 268435456 bytes", f"the limit is {UNZIPPED_LIMIT}"),
    ),
    Hostile(
        "zip bomb with a lying header",
        "scier-ere",
        lambda ex: hostile.lying_zip_bomb(40 * MB, declared=10),
        ("zip archive", "'submission.json' cannot be unpacked"),
    ),
    Hostile(
        "zip with '..'",
        "famus-sv",
        lambda ex: hostile.zipped({"../../submission.json": ex.submission}),
        ("'..' path component",),
    ),
    Hostile(
        "zip with an absolute path",
        "famus-sv",
        lambda ex: hostile.zipped({"/tmp/submission.json": ex.submission}),
        ("absolute",),
    ),
    Hostile(
        "zip with a Windows path",
        "famus-sv",
        lambda ex: hostile.zipped({"..\\submission.json": ex.submission}),
        ("Windows path",),
    ),
    Hostile("zip with a link", "svident-detection", lambda ex: hostile.symlink_zip(), ("symbolic link",)),
    Hostile(
        "zip with many entries",
        "svident-detection",
        lambda ex: hostile.many_entries_zip(5000),
        ("holds 5000 entries", f"at most {ZIP_ENTRIES}"),
    ),
    Hostile(
        "zip with two files",
        "scier-re",
        lambda ex: hostile.zipped({"a.jsonl": ex.submission, "b.jsonl": ex.submission}),
        ("exactly one submission file",),
    ),
    Hostile("empty zip", "scier-re", lambda ex: hostile.zipped({}), ("holds 0 files",)),
    Hostile("encrypted zip", "famus-cdae", lambda ex: hostile.encrypted_zip(ex.submission), ("encrypted",)),
    Hostile(
        "corrupt zip",
        "famus-cdae",
        lambda ex: b"PK\x03\x04" + random.Random(3).randbytes(4096),
        ("zip archive", "cannot be read"),
    ),
    Hostile(
        "truncated zip",
        "svident-disambiguation",
        lambda ex: (data := hostile.zipped({"run.json": ex.submission}))[: len(data) // 2],
        ("zip archive",),
    ),
    Hostile(
        "a million candidates",
        "svident-disambiguation",
        _absurd_candidates,
        ("1000000 candidates", "max_candidates_per_query"),
        filename="run.zip",
    ),
    Hostile("50,000 entities in a sentence", "scier-ere", _absurd_entities, ("50000", "max_entities_per_sentence")),
    Hostile("100,000 fillers for a role", "famus-cdae", _absurd_fillers, ("100000", "max_fillers_per_role")),
    Hostile(
        "a run whose scores are words",
        "trec",
        lambda ex: ex.submission.replace(b" 99 perfect", b" high perfect", 1),
        ("line 1", "score 'high' is not a number"),
        filename="run.txt",
    ),
    Hostile(
        "a run ranking a document twice, far below any cut",
        "trec",
        lambda ex: ex.submission + b"\n" + ex.submission.split(b"\n")[0].replace(b" 99 ", b" -5 "),
        ("is ranked again", "first at line 1"),
        filename="run.txt",
    ),
    Hostile(
        "a label of a megabyte",
        "classification",
        lambda ex: ex.submission.replace(b'"positive"', b'"' + b"p" * MB + b'"', 1),
        ("is not one of",),
    ),
    Hostile("a NaN rating", "regression", lambda ex: ex.submission.replace(b"5.0", b"NaN", 1), ("NaN",)),
    # A scoring program reads a zip of result files: its names, links and size are checked at upload.
    Hostile("results that are not a zip", "program", lambda ex: b"cat\ndog\n", ("is a zip archive",)),
    Hostile(
        "a results zip bomb",
        "program",
        lambda ex: hostile.zip_bomb(256 * MB, "prediction.txt"),
        ("zip archive", f"unpacks to more than {UNZIPPED_LIMIT} bytes"),
        filename="results.zip",
    ),
    Hostile(
        "results with '..'",
        "program",
        lambda ex: hostile.zipped({"../../prediction.txt": b"cat"}),
        ("'../../prediction.txt' leaves its folder",),
        filename="results.zip",
    ),
    Hostile(
        "results with a link",
        "program",
        lambda ex: hostile.symlink_zip(),
        ("is a link or a special file",),
        filename="results.zip",
    ),
    Hostile(
        "results with a file that is also a folder",
        "program",
        lambda ex: hostile.file_and_folder_zip(),
        ("'prediction' and 'prediction/labels.txt' cannot both be unpacked", "'prediction' is a file"),
        filename="results.zip",
    ),
    Hostile(
        "results with a folder entry over a file",
        "program",
        lambda ex: hostile.file_and_folder_zip("prediction", "./prediction/"),
        ("'prediction' and './prediction/' cannot both be unpacked",),
        filename="results.zip",
    ),
    # What the program cannot score is refused at upload, from public facts only: an empty zip, a zip without
    # the files the phase names (result_files).
    Hostile(
        "an empty results zip",
        "program",
        lambda ex: hostile.zipped({}),
        ("the zip holds no files; this phase's scoring program reads prediction.txt",),
        filename="results.zip",
    ),
    Hostile(
        "results without the file the phase names",
        "program",
        lambda ex: hostile.zipped({"answers.txt": b"cat"}),
        ("the zip lacks prediction.txt (it holds answers.txt)",),
        filename="results.zip",
    ),
    Hostile(
        "results of too many files",
        "program",
        lambda ex: hostile.zipped({f"{i}": b"" for i in range(10_001)}, zipfile.ZIP_STORED),
        ("holds 10001 entries; at most 10000",),
        filename="results.zip",
    ),
]

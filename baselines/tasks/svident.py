"""SV-Ident files as the baselines read them: input sentences, labelled training sentences, variables.

Training files are recognised by their content, not their names:
- a TSV with the columns ``sentence`` and ``is_variable`` (and ``variable`` for Task 2) is the
  release's labelled sentences (``train.tsv``);
- a TSV with an id column (``id``, ``variable_id`` or ``variable``) and text columns (``label``,
  ``question``, ...) is a variable vocabulary, such as the trial data's ``vocabulary/<lang>.tsv``;
  a ``research_data`` column, where present, names each variable's study;
- a JSON object ``{research_data_id: {variable_id: {field: text or [texts]}}}`` is the release's
  ``variables_metadata.json``.
Other files (``document_languages.json``, READMEs) are left alone.

A variable's text is its vocabulary entry where the task has one, otherwise a profile: the
training sentences annotated with it. A sentence's candidates are the variables of the studies in
its ``research_data``; when it lists none with known variables, every known variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from baselines.base import RunContext
from baselines.errors import InvalidInputs
from baselines.io import (
    describe_files,
    dump_json,
    first_line,
    json_document,
    pick_file,
    require_columns,
    tsv_records,
)

#: The tag for a mention that annotators could not link to one variable; never a candidate.
UNKNOWN = "unk"
#: Vocabulary fields that say nothing about one variable (the same for a whole study).
_SKIPPED_FIELDS = frozenset({"study_title", "research_data", "lang"})
#: Names the id column of a vocabulary TSV may have (trial data: ``id``).
_ID_COLUMNS = ("id", "variable_id", "variable")


@dataclass(frozen=True)
class Sentence:
    """One input row: the text to label or link, and the studies it may refer to."""

    uuid: str
    text: str
    studies: tuple[str, ...]


@dataclass(frozen=True)
class LabelledSentence:
    text: str
    is_variable: bool
    variables: tuple[str, ...]


@dataclass
class Variable:
    """A survey variable: the texts that describe it and the studies it belongs to."""

    texts: list[str] = field(default_factory=list)
    studies: set[str] = field(default_factory=set)
    from_vocabulary: bool = False

    def document(self) -> str:
        """All of its text as one document (what BM25 indexes)."""
        return " ".join(self.texts)

    def passages(self) -> list[str]:
        """The texts to embed: the vocabulary entry as one passage, or each profile sentence on its own."""
        return [self.document()] if self.from_vocabulary else list(self.texts)


@dataclass(frozen=True)
class Training:
    sentences: list[LabelledSentence]
    vocabulary: dict[str, Variable]


def _split(field_value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in field_value.split(";") if part.strip())


def _looks_like_inputs(data: bytes) -> bool:
    header = first_line(data).split(b"\t")
    return b"sentence" in header and b"uuid" in header


def read_inputs(files: Mapping[str, bytes]) -> list[Sentence]:
    """The sentences of the phase's ``inputs.tsv`` in file order; repeated uuids are refused."""
    name, data = pick_file(files, "public inputs", (".tsv",), _looks_like_inputs)
    label = f"input file {name!r}"
    header, records = tsv_records(label, data)
    require_columns(label, header, ("sentence", "uuid", "research_data"))
    sentences, seen = [], set()
    for number, record in enumerate(records, start=2):
        uuid = record["uuid"].strip()
        if not uuid or uuid in seen:
            raise InvalidInputs(f"{label}, row {number}: {'empty' if not uuid else 'repeated'} uuid {uuid!r}")
        seen.add(uuid)
        sentences.append(Sentence(uuid, record["sentence"], _split(record["research_data"])))
    return sentences


def _labelled(label: str, records: list[dict[str, str]]) -> list[LabelledSentence]:
    out = []
    for number, record in enumerate(records, start=2):
        flag = record["is_variable"].strip()
        if flag not in ("0", "1"):
            raise InvalidInputs(f"{label}, row {number}: is_variable is {flag!r}; expected 0 or 1")
        variables = tuple(v for v in _split(record.get("variable", "")) if v != UNKNOWN)
        out.append(LabelledSentence(record["sentence"], flag == "1", variables))
    return out


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        if value.strip():
            yield value.strip()
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _is_metadata(document: Any) -> bool:
    return isinstance(document, dict) and bool(document) and all(isinstance(v, dict) for v in document.values())


def _metadata_vocabulary(label: str, document: dict[str, dict[str, Any]], vocabulary: dict[str, Variable]) -> None:
    for study, variables in document.items():
        for variable_id, fields in variables.items():
            if not isinstance(fields, dict):
                raise InvalidInputs(f"{label}, key {study!r} / {variable_id!r}: expected an object of fields")
            entry = vocabulary.setdefault(variable_id, Variable(from_vocabulary=True))
            entry.studies.add(study)
            entry.texts.extend(t for k, v in fields.items() if k not in _SKIPPED_FIELDS for t in _texts(v))


def _id_column(header: list[str]) -> str | None:
    return next((column for column in _ID_COLUMNS if column in header), None)


def _tsv_vocabulary(
    header: list[str], id_column: str, records: list[dict[str, str]], vocabulary: dict[str, Variable]
) -> None:
    text_columns = [column for column in header if column not in _SKIPPED_FIELDS and column != id_column]
    for record in records:
        variable_id = record[id_column].strip()
        if not variable_id:
            continue
        entry = vocabulary.setdefault(variable_id, Variable(from_vocabulary=True))
        entry.studies.update(_split(record.get("research_data", "")))
        entry.texts.extend(record[c].strip() for c in text_columns if record[c].strip())


def read_training(files: Mapping[str, bytes], context: RunContext) -> Training:
    """Labelled sentences and vocabulary entries from every training file that holds them."""
    sentences: list[LabelledSentence] = []
    vocabulary: dict[str, Variable] = {}
    for name in sorted(files):
        label = f"training file {name!r}"
        lowered = name.lower()
        if lowered.endswith(".tsv"):
            header, records = tsv_records(label, files[name])
            if "sentence" in header and "is_variable" in header:
                sentences.extend(_labelled(label, records))
                continue
            id_column = _id_column(header)
            if id_column is not None and len(header) > 1:
                _tsv_vocabulary(header, id_column, records, vocabulary)
                continue
        elif lowered.endswith(".json"):
            document = json_document(label, files[name])
            if _is_metadata(document):
                _metadata_vocabulary(label, document, vocabulary)
                continue
        context.log(f"ignoring {label}: neither labelled sentences nor a variable vocabulary")
    return Training(sentences, vocabulary)


def require_sentences(training: Training, files: Mapping[str, bytes]) -> list[LabelledSentence]:
    if not training.sentences:
        raise InvalidInputs(
            "no labelled training sentences: expected a TSV with the columns sentence and is_variable "
            f"among the training files ({describe_files(files)})"
        )
    return training.sentences


def binary_labels(labelled: list[LabelledSentence]) -> list[int]:
    """The 0/1 labels of the training sentences; a classifier needs examples of both."""
    labels = [int(s.is_variable) for s in labelled]
    if len(set(labels)) < 2:
        only = labels[0] if labels else "none"
        raise InvalidInputs(f"the training sentences all have is_variable {only}; a classifier needs both 0 and 1")
    return labels


def _id_parts(variable_id: str) -> set[str]:
    # Release ids look like "exploredata-ZA5254_Varanswer": the study id is one of the parts.
    return {part for part in re.split(r"[-_]", variable_id) if part}


def variables(training: Training, files: Mapping[str, bytes]) -> dict[str, Variable]:
    """Every known variable with its text: the vocabulary entry, else its training sentences."""
    known: dict[str, Variable] = {}
    for variable_id, entry in training.vocabulary.items():
        known[variable_id] = Variable(list(entry.texts), set(entry.studies) or _id_parts(variable_id), True)
    for sentence in training.sentences:
        for variable_id in sentence.variables:
            entry = known.setdefault(variable_id, Variable(studies=_id_parts(variable_id)))
            if not entry.from_vocabulary:
                entry.texts.append(sentence.text)
    known = {variable_id: entry for variable_id, entry in sorted(known.items()) if entry.texts}
    if not known:
        raise InvalidInputs(
            "no variables to rank: expected a variable vocabulary or training sentences annotated with "
            f"variables among the training files ({describe_files(files)})"
        )
    return known


class Candidates:
    """Which variables each sentence is ranked against (the variables of its studies)."""

    def __init__(self, known: Mapping[str, Variable]) -> None:
        self.ids = list(known)
        self._by_study: dict[str, list[int]] = {}
        for index, entry in enumerate(known.values()):
            for study in entry.studies:
                self._by_study.setdefault(study, []).append(index)
        self._everything = list(range(len(self.ids)))

    def of(self, sentence: Sentence) -> list[int]:
        chosen = sorted({i for study in sentence.studies for i in self._by_study.get(study, ())})
        return chosen or self._everything


def detection_submission(labels: Mapping[str, bool]) -> bytes:
    """``{uuid: "0" | "1"}``; strings, as the official Task 1 script compares them with the gold."""
    return dump_json({uuid: "1" if flag else "0" for uuid, flag in labels.items()})


def ranking_submission(rankings: Mapping[str, Mapping[str, float]]) -> bytes:
    return dump_json({uuid: dict(scores) for uuid, scores in rankings.items()})


def top_scores(ids: list[str], candidates: list[int], scores: Iterable[float], limit: int) -> dict[str, float]:
    """The ``limit`` best candidates by score (ties by id, so runs are reproducible), rounded for size."""
    pairs = sorted(zip(candidates, scores, strict=True), key=lambda pair: (-pair[1], ids[pair[0]]))
    return {ids[index]: round(float(score), 6) for index, score in pairs[:limit]}

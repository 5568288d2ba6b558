"""Benchmark inputs for the seed scorers: a test-size gold and submission from the release data, and enlargements.

``build_inputs(scorer, shared)`` makes the 1x pair from the release files in the shared folder and a
submission generated from the gold with a seeded random generator (perturbed labels, spans and mentions,
so that the scorer does the work a real run makes it do). ``BenchInputs.write(folder, copies)`` writes
the pair ``copies`` times over, each copy a new set of documents whose ids (uuids, doc ids, docids,
instance ids) end in ``-c<k>``, for gold and submission alike, as PERFORMANCE.md's 10x and 100x inputs
were made. Each unit is serialised once with slots where its ids go, so a 1.5 GB enlargement is written
at the speed of the disk.

The 1x inputs, as close as the release data allows to the test sets behind PERFORMANCE.md's official
times:

- SV-Ident: a seeded sample of train+val with the official test's size (1,724 sentences, 717 of them
  queries); Task 1 labels flipped with probability 0.1; Task 2 lists of 500 scored candidates per query
  (the relevant variables, some dropped, among distractors), about 15.5 MB as the official test run.
- SciER: the PLM ``test.jsonl`` (10 documents, 854 sentences); entities and relations dropped, relabelled,
  shifted and added; ``scier-re`` gets the relations only.
- FAMuS: the derived dev report gold (253 documents) with mentions dropped, truncated and added; the
  source-validation ``dev.jsonl`` (506 lines with their texts) with labels flipped with probability 0.15.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.enlarge import (
    BenchInputs,
    Record,
    TextFile,
    json_lines,
    json_object,
    release_lines,
    slot,
)
from bench.trec_inputs import trec_inputs

SCORERS = (
    "svident-detection",
    "svident-disambiguation",
    "scier-ere",
    "scier-re",
    "famus-cdae",
    "famus-sv",
    "trec",
)
#: The official SV-Ident test set's size (PERFORMANCE.md): sentences and, among them, Task 2 queries.
SVIDENT_TEST_SENTENCES = 1724
SVIDENT_TEST_QUERIES = 717
#: Candidates per query in a Task 2 run, as in the official test run of PERFORMANCE.md.
SVIDENT_CANDIDATES = 500
#: Distinct variable ids the distractors are drawn from (real ones of the release, then made-up ones).
SVIDENT_VARIABLE_POOL = 5000
SVIDENT_COLUMNS = ("sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang")

# -- SV-Ident ------------------------------------------------------------------------------------


def _tsv_field(value: str) -> str:
    # By hand because Python 3.11's csv writer leaves a bare carriage return unquoted when lines end
    # in "\n"; the release quotes a field as CSV does, doubling inner quotes.
    if any(c in value for c in '\t"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _svident_rows(shared: Path, rng: random.Random) -> list[dict[str, str]]:
    """A seeded sample of train+val with the official test's numbers of sentences and queries, in file order."""
    rows: list[dict[str, str]] = []
    for split in ("train", "val"):
        text = (shared / "data" / "svident" / f"{split}.tsv").read_text(encoding="utf-8")
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar='"')
        header = next(reader)
        rows += [dict(zip(header, row, strict=True)) for row in reader if row]
    queries = [i for i, row in enumerate(rows) if _variables(row)]
    queries_set = set(queries)
    others = [i for i in range(len(rows)) if i not in queries_set]
    chosen = rng.sample(queries, SVIDENT_TEST_QUERIES) + rng.sample(
        others, SVIDENT_TEST_SENTENCES - SVIDENT_TEST_QUERIES
    )
    return [rows[i] for i in sorted(chosen)]


def _variables(row: Mapping[str, str]) -> list[str]:
    """The relevant variables of a Task 2 query (none for a sentence that is not one)."""
    if row["is_variable"] != "1":
        return []
    return [v for v in row["variable"].split(";") if v and v != "unk"]


def _svident_gold(rows: Sequence[Mapping[str, str]]) -> TextFile:
    records = []
    for row in rows:
        if any(_tsv_field(row[key]) != row[key] for key in ("doc_id", "uuid")):
            raise ValueError(f"uuid or doc_id of sentence {row['uuid']!r} would need quoting")
        fields = {**row, "doc_id": slot(0), "uuid": slot(1)}
        text = "\t".join(_tsv_field(fields[name]) for name in SVIDENT_COLUMNS)
        records.append(Record.of(text, [row["doc_id"], row["uuid"]]))
    return TextFile("gold.tsv", "\t".join(SVIDENT_COLUMNS) + "\n", tuple(records), "\n", "\n")


def _svident_detection(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
    rows = _svident_rows(shared, rng)
    labels = (
        (row["uuid"], str(1 - int(row["is_variable"])) if rng.random() < 0.1 else row["is_variable"]) for row in rows
    )
    return BenchInputs(
        "svident-detection",
        _svident_gold(rows),
        json_object("submission.json", labels),
        f"SV-Ident train+val, seeded sample of {len(rows)} sentences; labels flipped with p=0.1",
    )


def _variable_pool(rows: Sequence[Mapping[str, str]], size: int) -> list[str]:
    """The release's variable ids, then made-up ids of its studies in the same shape, ``size`` in all."""
    pool = dict.fromkeys(v for row in rows for v in _variables(row))
    studies = sorted({s for row in rows for s in row["research_data"].split(";") if s}) or ["ZA0000"]
    number = 0
    while len(pool) < size:
        pool.setdefault(f"exploredata-{studies[number % len(studies)]}_Varv{number}", None)
        number += 1
    return list(pool)


def _svident_disambiguation(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
    candidates = candidates or SVIDENT_CANDIDATES
    rows = _svident_rows(shared, rng)
    pool = _variable_pool(rows, max(SVIDENT_VARIABLE_POOL, 2 * candidates))
    runs = []
    for row in rows:
        relevant = _variables(row)
        if not relevant:
            continue
        # A system finds most relevant variables and scores them high, among distractors scored lower.
        found = {v: round(rng.uniform(0.3, 1.0), 5) for v in relevant if rng.random() < 0.85}
        while len(found) < candidates:
            found.setdefault(rng.choice(pool), round(rng.uniform(0.0, 0.8), 5))
        runs.append((row["uuid"], dict(sorted(found.items(), key=lambda item: -item[1]))))
    return BenchInputs(
        "svident-disambiguation",
        _svident_gold(rows),
        json_object("submission.json", runs),
        f"SV-Ident train+val, seeded sample of {len(rows)} sentences, {len(runs)} queries; "
        f"{candidates} scored candidates per query",
    )


# -- SciER ---------------------------------------------------------------------------------------

SCIER_TYPES = ("Method", "Task", "Dataset")
SCIER_LABELS = (
    "Used-For",
    "Part-Of",
    "SubClass-Of",
    "Synonym-Of",
    "Evaluated-With",
    "Compare-With",
    "Benchmark-For",
    "SubTask-Of",
    "Trained-With",
)


def _unique(rows: Iterable[list[Any]]) -> list[list[Any]]:
    """Rows without repeats, in order (the scorers refuse a repeated predicted row)."""
    return [list(row) for row in dict.fromkeys(tuple(row) for row in rows)]


def _perturb_entities(gold: list[list[Any]], start: int, end: int, rng: random.Random) -> list[list[Any]]:
    out = []
    for s, e, kind in gold:
        draw = rng.random()
        if draw < 0.08:
            continue
        if draw < 0.13:
            kind = rng.choice([t for t in SCIER_TYPES if t != kind])
        elif draw < 0.18:
            e = e - 1 if e > s else min(e + 1, end)
        out.append([s, e, kind])
    if rng.random() < 0.1:
        s = rng.randint(start, end)
        out.append([s, min(s + rng.randint(0, 2), end), rng.choice(SCIER_TYPES)])
    return _unique(out)


def _perturb_relations(gold: list[list[Any]], entities: list[list[Any]], rng: random.Random) -> list[list[Any]]:
    out = []
    for s1, e1, s2, e2, label in gold:
        draw = rng.random()
        if draw < 0.15:
            continue
        if draw < 0.22:
            label = rng.choice([x for x in SCIER_LABELS if x != label])
        elif draw < 0.27:
            s1, e1, s2, e2 = s2, e2, s1, e1
        out.append([s1, e1, s2, e2, label])
    if len(entities) >= 2 and rng.random() < 0.1:
        (a1, b1, _), (a2, b2, _) = rng.sample(entities, 2)
        out.append([a1, b1, a2, b2, rng.choice(SCIER_LABELS)])
    return _unique(out)


def _scier(scorer: str, with_entities: bool) -> Callable[[Path, random.Random, int | None], BenchInputs]:
    def build(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
        documents, gold = release_lines(shared / "data" / "scier" / "PLM" / "test.jsonl", "doc_id")
        predictions = []
        for doc in documents:
            ner, relations, start = [], [], 0
            for tokens, entities, links in zip(doc["sentences"], doc["ner"], doc["relations"], strict=True):
                end = start + len(tokens) - 1
                predicted = _perturb_entities(entities, start, end, rng) if with_entities else entities
                ner.append(predicted)
                relations.append(_perturb_relations(links, predicted, rng))
                start = end + 1
            line: dict[str, Any] = {"doc_id": doc["doc_id"]}
            if with_entities:
                line["predicted_ner"] = ner
            line["predicted_relations"] = relations
            predictions.append(line)
        sentences = sum(len(doc["sentences"]) for doc in documents)
        return BenchInputs(
            scorer,
            gold,
            json_lines("submission.jsonl", predictions, "doc_id"),
            f"SciER PLM test.jsonl, {len(documents)} documents, {sentences} sentences; perturbed copy of the gold",
        )

    return build


# -- FAMuS ---------------------------------------------------------------------------------------


def _truncate(text: str, rng: random.Random) -> str:
    tokens = text.split()
    if len(tokens) < 2:
        return text
    return " ".join(tokens[1:] if rng.random() < 0.5 else tokens[:-1])


def _roles(template: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A gold template's roles and their entities; ``template-spans`` is bookkeeping, not a role."""
    return [(role, entities) for role, entities in template.items() if role not in ("incident_type", "template-spans")]


def _famus_cdae(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
    gold, gold_file = release_lines(shared / "data" / "famus" / "derived" / "dev_report_gold_iterx.jsonl", "docid")
    texts = [m[0] for line in gold for t in line["templates"] for _, entities in _roles(t) for e in entities for m in e]
    entries = []
    for line in gold:
        templates = []
        for template in line["templates"]:
            predicted: dict[str, Any] = {"incident_type": template["incident_type"]}
            for role, entities in _roles(template):
                fillers = []
                for entity in entities:
                    draw = rng.random()
                    if draw < 0.15:
                        continue
                    text = entity[0][0]
                    fillers.append([_truncate(text, rng) if draw < 0.3 else text])
                if rng.random() < 0.05:
                    fillers.append([rng.choice(texts)])
                predicted[role] = fillers
            templates.append(predicted)
        entries.append((line["docid"], templates))
    return BenchInputs(
        "famus-cdae",
        gold_file,
        json_object("submission.json", entries),
        f"FAMuS derived dev report gold, {len(gold)} documents; mentions dropped, truncated and added",
    )


def _famus_sv(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
    release = shared / "data" / "famus" / "FACTSlab_FAMuS" / "data" / "source_validation" / "dev.jsonl"
    gold, gold_file = release_lines(release, "instance_id")
    labels = ((line["instance_id"], int(line["valid_source"]) ^ (rng.random() < 0.15)) for line in gold)
    return BenchInputs(
        "famus-sv",
        gold_file,
        json_object("submission.json", labels),
        f"FAMuS source_validation dev.jsonl, {len(gold)} lines with texts; labels flipped with p=0.15",
    )


def _trec(shared: Path, rng: random.Random, candidates: int | None) -> BenchInputs:
    return trec_inputs(rng, candidates)


BUILDERS: dict[str, Callable[[Path, random.Random, int | None], BenchInputs]] = {
    "svident-detection": _svident_detection,
    "svident-disambiguation": _svident_disambiguation,
    "scier-ere": _scier("scier-ere", with_entities=True),
    "scier-re": _scier("scier-re", with_entities=False),
    "famus-cdae": _famus_cdae,
    "famus-sv": _famus_sv,
    "trec": _trec,
}


def build_inputs(scorer: str, shared: Path, *, candidates: int | None = None) -> BenchInputs:
    """The 1x inputs of ``scorer``, the same on every run (the generator is seeded with the scorer's name).

    ``candidates``: per query, the candidates of an SV-Ident Task 2 run or the documents of a TREC run (None: as
    the real test sets have them, 500 and 1,000)."""
    try:
        build = BUILDERS[scorer]
    except KeyError:
        raise ValueError(f"no benchmark inputs for scorer {scorer!r}; known: {', '.join(BUILDERS)}") from None
    return build(shared, random.Random(f"score-bench:{scorer}"), candidates)

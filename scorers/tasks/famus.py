"""FAMuS: cross-document argument extraction (``famus-cdae``) and source validation (``famus-sv``).

Official code: IterX ``src/iterx/metrics/famus/ceaf_rme.py`` (``sv/famus`` branch, the fork FAMuS
names), driven by FAMuS's ``src/metrics/compute_ceaf_metrics.py`` with its default options; source
validation as FAMuS's ``src/model_scripts/test_source_val.py`` (scikit-learn, binary average).

**famus-cdae** (CEAF-RME, ``scorers.families.ceaf``). Gold: JSON Lines, one
``{"docid", "templates": [{"incident_type": frame, role: [[mention, ...], ...]}]}`` per instance, a
mention being a list whose first element is its text (offsets after it are ignored; the key
``template-spans`` is bookkeeping, not a role; an entity without mentions is dropped, as the official
reader does). Submission: one JSON object ``{docid: [{"incident_type": frame, role: [filler, ...]}]}``
where a filler is ``[text, ...]``; a bare string is taken as the whole text. Documents left out count
as predicting nothing. Metrics: micro P/R/F1 under ``phi3`` (exact) and ``soft`` (token LCS).
Breakdowns: ``role`` (by role name across frames, since roles such as Place and Time recur in every
frame; only names that occur in the gold; the empty-document rule adds to no role) and ``document``.

Refused submissions: not a JSON object; a docid not in the gold (the official code would score an
empty unknown document as perfect); a repeated docid; a document value that is not a list of
templates; a template that is not an object or lacks a string ``incident_type``; a role value that
is not a list (the official code would score a string character by character); a filler that is
empty or whose first element is not a string (it would crash). Refused gold: a line that is not an
object with a string ``docid`` and a list ``templates``, a repeated docid, a malformed template or
mention, and a mention whose text is empty or only whitespace (the official soft similarity can
divide by zero on it).

Deliberate differences from the official code: refusals above instead of crashes or silent scores;
a bare-string filler is its whole text (officially its first character); substring-joining ties go
to code-point order (officially set order); identical gold templates are found by frame and roles in
order, ignoring where ``incident_type`` sits among the keys (the official ordered-dict comparison
also looks at that).

**famus-sv**. Gold: the source-validation release lines (``instance_id``, boolean ``valid_source``
(1 and 0 are read too), optionally ``frame``; other keys are ignored, a repeated id is refused).
Submission: ``{instance_id: label}`` with label 0, 1, ``true`` or ``false``. Accuracy, and precision,
recall and F1 of the valid-source class, zero division giving 0; breakdown ``frame``. Refused:
missing, unknown or repeated ids and any other label ("1", 1.0, 2, "yes", null); the official script
pairs labels by position instead.

Neither scorer names leaderboard breakdowns: FAMuS has 318 role names and 253 frames, too many for
columns; the tables stay in each score's breakdown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, Scorer, UnitStats
from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems
from scorers.families import binary
from scorers.families.ceaf import (
    SIMILARITIES,
    CeafRmeOptions,
    Template,
    clean_predicted_template,
    collapse_identical,
    micro_scores,
    role_scores,
    score_document,
)
from scorers.io import iter_json_lines, load_json
from scorers.registry import register

FRAME_KEY = "incident_type"
GOLD_BOOKKEEPING_KEYS = frozenset({FRAME_KEY, "template-spans"})
PREFIX = "ceaf_rme_"


def _quote(text: str, limit: int = 80) -> str:
    """A JSON-quoted, shortened string for messages (escapes anything unprintable)."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "...")


def _show(value: Any) -> str:
    """A short JSON rendering of a value for messages."""
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):  # nested too deeply to print; the type says enough
        return f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:40] + "..."


# -- famus-cdae ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CdaeGold:
    """Gold templates per docid (identical templates collapsed) and every role name the gold uses."""

    documents: dict[str, list[Template]]
    roles: frozenset[str]


def _parse_gold_template(raw: Any, where: str, problems: Problems) -> Template | None:
    if not isinstance(raw, dict):
        problems.add(where, f"a template must be an object with {_quote(FRAME_KEY)} and roles, not {_show(raw)}")
        return None
    frame = raw.get(FRAME_KEY)
    if not isinstance(frame, str):
        problems.add(where, f"the template needs a string {_quote(FRAME_KEY)} (the frame)")
        return None
    roles = []
    for role, value in raw.items():
        if role in GOLD_BOOKKEEPING_KEYS:
            continue
        # Locations are built only for problems: building them for every role costs more than the parse.
        if not isinstance(value, list):
            problems.add(
                f"{where}, role {_quote(role)}", f"a role value must be a list of entities, not {_show(value)}"
            )
            continue
        entities = []
        for e_index, entity in enumerate(value):
            if not isinstance(entity, list):
                problems.add(
                    f"{where}, role {_quote(role)}, entity {e_index}",
                    f"an entity must be a list of mentions, not {_show(entity)}",
                )
                continue
            mentions = []
            for m_index, mention in enumerate(entity):
                if not isinstance(mention, list) or not mention or not isinstance(mention[0], str):
                    message = f"a mention must be a list whose first element is its text, not {_show(mention)}"
                elif not mention[0].strip():
                    message = "the mention text is empty or only whitespace"
                else:
                    mentions.append(mention[0])
                    continue
                problems.add(f"{where}, role {_quote(role)}, entity {e_index}, mention {m_index}", message)
            if mentions:  # an entity without mentions is dropped, as the official reader does
                entities.append(tuple(mentions))
        roles.append((role, tuple(entities)))
    return Template(frame, tuple(roles))


def parse_cdae_gold(data: bytes) -> CdaeGold:
    """Read IterX-format gold lines; raise ``InvalidGold`` listing the problems."""
    problems = Problems(InvalidGold)
    documents: dict[str, list[Template]] = {}
    for number, line in iter_json_lines(data, problems, InvalidGold):
        where = f"line {number}"
        if not isinstance(line, dict):
            problems.add(where, 'expected an object with "docid" and "templates"')
            continue
        docid, raw_templates = line.get("docid"), line.get("templates")
        if not isinstance(docid, str):
            problems.add(where, 'key "docid" must be a string')
            continue
        if docid in documents:
            problems.add(where, f"docid {_quote(docid)} appears more than once in the gold")
            continue
        if not isinstance(raw_templates, list):
            problems.add(where, f'key "templates" of document {_quote(docid)} must be a list of templates')
            continue
        parsed = [
            _parse_gold_template(raw, f"{where}, templates[{index}]", problems)
            for index, raw in enumerate(raw_templates)
        ]
        documents[docid] = collapse_identical(t for t in parsed if t is not None)
    problems.raise_if_any()
    roles = frozenset(role for templates in documents.values() for t in templates for role, _ in t.roles)
    return CdaeGold(documents, roles)


def _filler_text(filler: Any) -> str | None:
    if isinstance(filler, str):
        return filler
    if isinstance(filler, list) and filler and isinstance(filler[0], str):
        return filler[0]
    return None


def _parse_submitted_template(raw: Any, document: str, index: int, problems: Problems, join: bool) -> Template | None:
    if not isinstance(raw, dict):
        problems.add(f"{document}, template {index}", f"a template must be an object, not {_show(raw)}")
        return None
    frame = raw.get(FRAME_KEY)
    if not isinstance(frame, str):
        problems.add(f"{document}, template {index}", f"the template needs a string {_quote(FRAME_KEY)} (the frame)")
        return None
    roles = []
    for role, fillers in raw.items():
        if role == FRAME_KEY:
            continue
        if not isinstance(fillers, list):
            problems.add(
                f"{document}, template {index}, role {_quote(role)}",
                f'a role value must be a list of fillers such as [["text"]], not {_show(fillers)}',
            )
            continue
        texts = []
        for f_index, filler in enumerate(fillers):
            text = _filler_text(filler)
            if text is None:
                problems.add(
                    f"{document}, template {index}, role {_quote(role)}, filler {f_index}",
                    f"a filler must be a non-empty list whose first element is the text, not {_show(filler)}",
                )
            else:
                texts.append(text)
        roles.append((role, texts))
    return clean_predicted_template(frame, roles, join=join)


def parse_cdae_submission(data: bytes, gold: CdaeGold, *, join: bool = True) -> dict[str, list[Template]]:
    """Read ``{docid: [template, ...]}`` and clean each template's fillers; raise ``InvalidSubmission``."""
    raw = load_json(data, InvalidSubmission)
    if not isinstance(raw, dict):
        got = "a list" if isinstance(raw, list) else _show(raw)
        raise InvalidSubmission(
            [Problem("", f"expected a JSON object mapping each docid to a list of templates; got {got}")]
        )
    problems = Problems(InvalidSubmission)
    documents: dict[str, list[Template]] = {}
    for docid, raw_templates in raw.items():
        where = f"document {_quote(docid)}"
        if docid not in gold.documents:
            problems.add(where, "is not a docid of the gold")
            continue
        if not isinstance(raw_templates, list):
            problems.add(where, f"the value must be a list of templates, not {_show(raw_templates)}")
            continue
        templates = []
        for t_index, template in enumerate(raw_templates):
            parsed = _parse_submitted_template(template, where, t_index, problems, join)
            if parsed is not None:
                templates.append(parsed)
        documents[docid] = templates
    problems.raise_if_any()
    return documents


@register
class FamusCdaeScorer(Scorer[CdaeGold, dict[str, list[Template]]]):
    name = "famus-cdae"
    version = "1.0"
    title = "FAMuS cross-document argument extraction (CEAF-RME)"
    description = (
        "Role-filler entity matching of predicted templates against the gold, with exact (phi3) and "
        "soft (token LCS) similarity, as the FAMuS paper's CEAF-RME scorer."
    )
    primary_metric = "ceaf_rme_soft_f1"
    secondary_metrics = ("ceaf_rme_phi3_f1",)
    metrics = tuple(
        MetricSpec(f"{PREFIX}{sim}_{part}", f"{label} of CEAF-RME with {what}")
        for sim, what in (("phi3", "exact mention match (phi-3)"), ("soft", "soft token-LCS match (phi-a)"))
        for part, label in (("p", "Micro precision"), ("r", "Micro recall"), ("f1", "Micro F1"))
    )
    options = (
        OptionSpec(
            "empty_document_rule",
            True,
            "A document with no gold template and no filled predicted template adds 1 to every sum (official).",
        ),
        OptionSpec(
            "join_substrings",
            True,
            "Join a predicted string into the entity of the shortest longer string of its role that contains it.",
        ),
        OptionSpec(
            "multilabel_frames",
            True,
            "Read a gold frame 'A / B' as alternatives, as the official code inherited from MUC-4 scoring.",
        ),
    )
    gold_format = "JSON Lines, one {docid, templates} object per instance (IterX format)"
    submission_format = 'JSON object {docid: [{"incident_type": frame, role: [["text"], ...]}, ...]}'
    submission_filename = "submission.json"
    unit = "document"
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ()

    @property
    def _ceaf_options(self) -> CeafRmeOptions:
        return CeafRmeOptions(
            SIMILARITIES,
            empty_document_rule=self.settings["empty_document_rule"],
            multilabel_frames=self.settings["multilabel_frames"],
        )

    def parse_gold(self, data: bytes) -> CdaeGold:
        return parse_cdae_gold(data)

    def parse_submission(self, data: bytes, gold: CdaeGold) -> dict[str, list[Template]]:
        return parse_cdae_submission(data, gold, join=self.settings["join_substrings"])

    def unit_stats(self, gold: CdaeGold, submission: dict[str, list[Template]]) -> dict[str, UnitStats]:
        options = self._ceaf_options
        out: dict[str, UnitStats] = {}
        for docid, templates in gold.documents.items():
            stats = score_document(templates, submission.get(docid, []), options)
            # Only gold role names are kept, so nothing a submission invents reaches stored results.
            stats["roles"] = {role: sums for role, sums in stats["roles"].items() if role in gold.roles}
            out[docid] = stats
        return out

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return micro_scores(stats, SIMILARITIES, PREFIX)

    def breakdown(
        self, gold: CdaeGold, submission: dict[str, list[Template]], stats: Mapping[str, UnitStats]
    ) -> Breakdown:
        return {
            "role": role_scores(stats.values(), SIMILARITIES, PREFIX),
            "document": {docid: self.aggregate([value]) for docid, value in stats.items()},
        }


# -- famus-sv ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SvGold:
    """Gold label (1 = valid source) per instance_id, and the frame of the instances that name one."""

    labels: dict[str, int]
    frames: dict[str, str]


def _label(value: Any) -> int | None:
    """1 or 0 for JSON true/false or the integers 1/0; None for anything else ("1", 1.0, 2, null)."""
    if isinstance(value, bool):
        return int(value)
    if type(value) is int and value in (0, 1):
        return value
    return None


def parse_sv_gold(data: bytes) -> SvGold:
    """Read source-validation release lines; raise ``InvalidGold`` listing the problems."""
    problems = Problems(InvalidGold)
    labels: dict[str, int] = {}
    frames: dict[str, str] = {}
    for number, line in iter_json_lines(data, problems, InvalidGold):
        where = f"line {number}"
        if not isinstance(line, dict):
            problems.add(where, 'expected an object with "instance_id" and "valid_source"')
            continue
        instance, label, frame = line.get("instance_id"), _label(line.get("valid_source")), line.get("frame")
        if not isinstance(instance, str):
            problems.add(where, 'key "instance_id" must be a string')
        elif instance in labels:
            problems.add(where, f"instance_id {_quote(instance)} appears more than once in the gold")
        elif label is None:
            problems.add(where, 'key "valid_source" must be true or false (or 1 or 0)')
        elif frame is not None and not isinstance(frame, str):
            problems.add(where, 'key "frame" must be a string when present')
        else:
            labels[instance] = label
            if frame is not None:
                frames[instance] = frame
    problems.raise_if_any()
    return SvGold(labels, frames)


def parse_sv_submission(data: bytes, gold: SvGold) -> dict[str, int]:
    """Read ``{instance_id: label}``; every gold id exactly once, labels 0/1/true/false."""
    raw = load_json(data, InvalidSubmission)
    if not isinstance(raw, dict):
        got = "a list (labels are matched by id, not by position)" if isinstance(raw, list) else _show(raw)
        raise InvalidSubmission([Problem("", f"expected a JSON object mapping each instance_id to 0 or 1; got {got}")])
    problems = Problems(InvalidSubmission)
    labels: dict[str, int] = {}
    for instance, value in raw.items():
        where = f"key {_quote(instance)}"
        label = _label(value)
        if instance not in gold.labels:
            problems.add(where, "is not an instance_id of the gold")
        elif label is None:
            problems.add(where, f"the label must be 0, 1, true or false, not {_show(value)}")
        else:
            labels[instance] = label
    for instance in gold.labels:
        if instance not in raw:
            problems.add(f"key {_quote(instance)}", "this gold instance_id has no label in the submission")
    problems.raise_if_any()
    return labels


@register
class FamusSvScorer(Scorer[SvGold, dict[str, int]]):
    name = "famus-sv"
    version = "1.0"
    title = "FAMuS source validation"
    description = "Is the candidate source a valid source for the report's event? Binary classification."
    primary_metric = "f1"
    secondary_metrics = ("accuracy",)
    metrics = (
        MetricSpec("accuracy", "Share of instances labelled correctly"),
        MetricSpec("precision", "Precision of the valid-source class"),
        MetricSpec("recall", "Recall of the valid-source class"),
        MetricSpec("f1", "F1 of the valid-source class"),
    )
    gold_format = "JSON Lines, source-validation release lines with instance_id and valid_source"
    submission_format = "JSON object {instance_id: 0 or 1} (true/false accepted)"
    submission_filename = "submission.json"
    unit = "instance"
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ()

    def parse_gold(self, data: bytes) -> SvGold:
        return parse_sv_gold(data)

    def parse_submission(self, data: bytes, gold: SvGold) -> dict[str, int]:
        return parse_sv_submission(data, gold)

    def unit_stats(self, gold: SvGold, submission: dict[str, int]) -> dict[str, UnitStats]:
        return {instance: binary.unit_stats(label, submission[instance]) for instance, label in gold.labels.items()}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return binary.binary_scores(stats)

    def breakdown(self, gold: SvGold, submission: dict[str, int], stats: Mapping[str, UnitStats]) -> Breakdown:
        # One row per instance says nothing a reader needs; frames group instances meaningfully.
        by_frame: dict[str, list[UnitStats]] = {}
        for instance, value in stats.items():
            frame = gold.frames.get(instance)
            if frame is not None:
                by_frame.setdefault(frame, []).append(value)
        if not by_frame:
            return {}
        return {"frame": {frame: self.aggregate(by_frame[frame]) for frame in sorted(by_frame)}}

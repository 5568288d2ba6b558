"""Reading FAMuS files: IterX gold lines and predicted templates (CDAE), release lines and labels (SV).

This module only validates and builds typed values; ``scorers.tasks.famus`` states the formats and
refusals and scores them. Every problem is collected with its place (line, document, template, role,
filler) and what was expected. Submissions are validated against the public view, the ids participants
are given (``PublicIds``: docids, instance ids), never against templates or labels. CDAE files are also
held to ``CdaeLimits``: the substring clean-up and the similarities do work that grows with pairs of
strings, so a submission's cost is bounded (``ceaf.role_work``, with the gold side at the limits every
gold is held to, not at the gold's own sizes) and refused before any of that work starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from scorers.base import PublicIds
from scorers.errors import InvalidGold, InvalidSubmission, Problem, Problems
from scorers.families.ceaf import (
    Template,
    TokenIds,
    clean_predicted_template,
    collapse_identical,
    gold_role_sizes,
    role_work,
)
from scorers.io import gc_paused, iter_json_lines, iter_json_object, load_json
from scorers.tasks.limits import SizeLimits, bound

FRAME_KEY = "incident_type"
GOLD_BOOKKEEPING_KEYS = frozenset({FRAME_KEY, "template-spans"})


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
#: A place in the file, worded only when a problem is reported there: wording one (JSON-quoting a docid or a
#: role) for every template would cost more than reading it.
Place = Callable[[], str]
GOLD_TEMPLATE_SHAPE = f"an object with {_quote(FRAME_KEY)} and roles"


def _document(docid: str) -> str:
    return f"document {_quote(docid)}"


@dataclass(frozen=True)
class CdaeLimits(SizeLimits):
    """Size limits of CDAE files. The release data and the published system outputs hold at most 2 templates
    in a document, 10 fillers in a role and fillers of 312 characters, and the gold at most 10 mentions of 40
    tokens in all for one role of a document. The first three apply to the gold too; the two ``gold_`` ones
    to the gold only; the budgets to submissions, bounding what they cost against any gold within those."""

    templates_per_document: int = bound(100, "templates accepted in one document (gold or predicted)")
    fillers_per_role: int = bound(500, "fillers accepted in one role of a template (gold: mentions)")
    filler_chars: int = bound(3_000, "characters accepted in one filler text (gold: mention text)")
    gold_mentions_per_role: int = bound(20, "mentions the gold may hold for one role of a document, all templates")
    gold_tokens_per_role: int = bound(
        100, "tokens the gold's mentions of one role of a document may hold in all (whitespace-separated)"
    )
    comparisons: int = bound(
        2_000_000,
        "string comparisons a submission may cost in all, at most: pairs of fillers of a role (substring "
        "clean-up), and each filler with max_gold_mentions_per_role gold mentions (similarities)",
    )
    token_pairs: int = bound(
        40_000_000,
        "token pairs the soft similarity may compare in all, at most: each filler's tokens times "
        "max_gold_tokens_per_role",
    )

    @property
    def gold_role(self) -> tuple[int, int]:
        """The most any gold holds for one role of a document: mentions, tokens (``ceaf.role_work``)."""
        return self.gold_mentions_per_role, self.gold_tokens_per_role


@dataclass(frozen=True)
class CdaeGold:
    """Gold templates per docid (identical templates collapsed), every role name the gold uses, and the token
    ids of its mentions (split once, for the limits and the similarities)."""

    documents: dict[str, list[Template]]
    roles: frozenset[str]
    tokens: TokenIds = field(default_factory=TokenIds, compare=False, repr=False)


def _template_frame(raw: Any, where: Place, problems: Problems, shape: str) -> str | None:
    """The frame of a template, or None (reported) when ``raw`` is not an object (``shape`` says which) or has
    no string frame."""
    if not isinstance(raw, dict):
        problems.add(where(), f"a template must be {shape}, not {_show(raw)}")
        return None
    frame = raw.get(FRAME_KEY)
    if not isinstance(frame, str):
        problems.add(where(), f"the template needs a string {_quote(FRAME_KEY)} (the frame)")
        return None
    # Frames and role names recur in every document, each parsed as a new string: one copy of each is kept.
    return intern(frame)


def _parse_gold_template(raw: Any, place: Place, problems: Problems, limits: CdaeLimits) -> Template | None:
    frame = _template_frame(raw, place, problems, GOLD_TEMPLATE_SHAPE)
    if frame is None:
        return None
    roles = []
    most_chars = limits.filler_chars
    for role, value in raw.items():
        if role in GOLD_BOOKKEEPING_KEYS:
            continue
        # Locations are built only for problems: building them for every role costs more than the parse.
        if not isinstance(value, list):
            problems.add(
                f"{place()}, role {_quote(role)}", f"a role value must be a list of entities, not {_show(value)}"
            )
            continue
        role = intern(role)
        entities = []
        for e_index, entity in enumerate(value):
            if not isinstance(entity, list):
                problems.add(
                    f"{place()}, role {_quote(role)}, entity {e_index}",
                    f"an entity must be a list of mentions, not {_show(entity)}",
                )
                continue
            mentions = []
            for m_index, mention in enumerate(entity):
                if isinstance(mention, list) and mention:  # the usual mention, accepted with the fewest tests
                    text = mention[0]
                    if isinstance(text, str) and text and not text.isspace() and len(text) <= most_chars:
                        mentions.append(text)
                        continue
                if not isinstance(mention, list) or not mention or not isinstance(mention[0], str):
                    message = f"a mention must be a list whose first element is its text, not {_show(mention)}"
                elif not mention[0].strip():
                    message = "the mention text is empty or only whitespace"
                elif len(mention[0]) > limits.filler_chars:
                    message = "the mention text has " + limits.exceeded("filler_chars", len(mention[0]), "characters")
                else:
                    mentions.append(mention[0])
                    continue
                problems.add(f"{place()}, role {_quote(role)}, entity {e_index}, mention {m_index}", message)
            if mentions:  # an entity without mentions is dropped, as the official reader does
                entities.append(tuple(mentions))
        count = sum(map(len, entities))
        if count > limits.fillers_per_role:
            problems.add(f"{place()}, role {_quote(role)}", limits.exceeded("fillers_per_role", count, "mentions"))
        roles.append((role, tuple(entities)))
    return Template(frame, tuple(roles))


@gc_paused()  # many small containers, no cycles: see scorers.io.gc_paused
def parse_cdae_gold(data: bytes, limits: CdaeLimits = CdaeLimits()) -> CdaeGold:
    """Read IterX-format gold lines; raise ``InvalidGold`` listing the problems."""
    problems = Problems(InvalidGold)
    documents: dict[str, list[Template]] = {}
    tokens = TokenIds()
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
        if len(raw_templates) > limits.templates_per_document:
            problems.add(
                f"{where}, document {_quote(docid)}",
                limits.exceeded("templates_per_document", len(raw_templates), "templates"),
            )
            continue
        parsed = [
            _parse_gold_template(raw, lambda: f"{where}, templates[{index}]", problems, limits)  # noqa: B023 (called at once)
            for index, raw in enumerate(raw_templates)
        ]
        documents[docid] = collapse_identical([t for t in parsed if t is not None])
        _check_gold_roles(documents[docid], lambda: f"{where}, document {_quote(docid)}", problems, limits, tokens)  # noqa: B023
    problems.raise_if_any()
    roles = frozenset(role for templates in documents.values() for t in templates for role, _ in t.roles)
    return CdaeGold(documents, roles, tokens)


def _check_gold_roles(
    templates: list[Template], where: Place, problems: Problems, limits: CdaeLimits, tokens: TokenIds
) -> None:
    """A document's roles, over its templates, within the gold-side limits that bound what submissions cost."""
    most_mentions, most_tokens = limits.gold_role
    for role, (mentions, words) in gold_role_sizes(templates, tokens.of).items():
        if mentions <= most_mentions and words <= most_tokens:
            continue
        for name, count, unit in (
            ("gold_mentions_per_role", mentions, "mentions"),
            ("gold_tokens_per_role", words, "tokens in its mentions"),
        ):
            if count > getattr(limits, name):
                problems.add(f"{where()}, role {_quote(role)}", limits.exceeded(name, count, unit))


def _filler_text(filler: Any) -> str | None:
    if isinstance(filler, str):
        return filler
    if isinstance(filler, list) and filler and isinstance(filler[0], str):
        return filler[0]
    return None


#: A predicted template as read, before clean-up: its frame and, per role, the distinct filler texts.
RawTemplate = tuple[str, list[tuple[str, set[str]]]]


def _read_submitted_template(raw: Any, place: Place, problems: Problems, limits: CdaeLimits) -> RawTemplate | None:
    frame = _template_frame(raw, place, problems, "an object")
    if frame is None:
        return None
    roles = []
    for role, fillers in raw.items():
        if role == FRAME_KEY:
            continue
        if not isinstance(fillers, list):
            problems.add(
                f"{place()}, role {_quote(role)}",
                f'a role value must be a list of fillers such as [["text"]], not {_show(fillers)}',
            )
            continue
        if len(fillers) > limits.fillers_per_role:
            problems.add(
                f"{place()}, role {_quote(role)}", limits.exceeded("fillers_per_role", len(fillers), "fillers")
            )
            continue
        texts = set()
        most_chars = limits.filler_chars
        for f_index, filler in enumerate(fillers):
            if isinstance(filler, list) and filler:  # the usual filler, accepted with the fewest tests
                text = filler[0]
                if isinstance(text, str) and len(text) <= most_chars:
                    texts.add(text)
                    continue
            text = _filler_text(filler)
            if text is None:
                message = f"a filler must be a non-empty list whose first element is the text, not {_show(filler)}"
            elif len(text) > limits.filler_chars:
                message = "the text has " + limits.exceeded("filler_chars", len(text), "characters")
            else:
                texts.add(text)
                continue
            problems.add(f"{place()}, role {_quote(role)}, filler {f_index}", message)
        roles.append((intern(role), texts))
    return frame, roles


#: Where a predicted role is: its docid, the template's index and the role name.
RolePlace = tuple[str, int, str]


class _Budget:
    """Sums what a submission's roles will cost (``ceaf.role_work``) and remembers the costliest role of each sum."""

    def __init__(self, limits: CdaeLimits, *, join: bool) -> None:
        self.limits = limits
        self.join = join
        self.comparisons = self.token_pairs = 0
        self.most_comparisons: tuple[int, RolePlace] = (0, ("", 0, ""))
        self.most_token_pairs: tuple[int, RolePlace] = (0, ("", 0, ""))

    def add(self, place: RolePlace, texts: set[str]) -> None:
        if not texts:  # an empty role costs nothing (role_work gives 0, 0)
            return
        comparisons, token_pairs = role_work(texts, self.limits.gold_role, join=self.join)
        self.comparisons += comparisons
        self.token_pairs += token_pairs
        if comparisons > self.most_comparisons[0]:
            self.most_comparisons = (comparisons, place)
        if token_pairs > self.most_token_pairs[0]:
            self.most_token_pairs = (token_pairs, place)

    def check(self, problems: Problems) -> None:
        for name, unit, total, (most, (docid, index, role)) in (
            ("comparisons", "string comparisons", self.comparisons, self.most_comparisons),
            ("token_pairs", "token pairs", self.token_pairs, self.most_token_pairs),
        ):
            if total > getattr(self.limits, name):
                what = f"{unit} in all, the most ({most}) for this role"
                problems.add(
                    f"document {_quote(docid)}, template {index}, role {_quote(role)}",
                    "the submission would cost " + self.limits.exceeded(name, total, what),
                )


@gc_paused()
def parse_cdae_submission(
    data: bytes, public: PublicIds, *, join: bool = True, limits: CdaeLimits = CdaeLimits()
) -> dict[str, list[Template]]:
    """Read ``{docid: [template, ...]}`` and clean each template's fillers; raise ``InvalidSubmission``.

    Everything is checked, the limits included, before the first template is cleaned up: the clean-up
    is the first step whose work grows faster than the file. The file is read one document at a time
    (``iter_json_object``, with the refusals of a whole parse), so its parsed objects are never held at once.
    """
    return _cdae_templates(iter_json_object(data, _not_cdae_object), public, join, limits)


def _not_cdae_object(raw: Any) -> InvalidSubmission:
    got = "a list" if isinstance(raw, list) else _show(raw)
    return InvalidSubmission(
        [Problem("", f"expected a JSON object mapping each docid to a list of templates; got {got}")]
    )


def _cdae_templates(
    pairs: Iterable[tuple[str, Any]], public: PublicIds, join: bool, limits: CdaeLimits
) -> dict[str, list[Template]]:
    """Check every document and the budgets in one pass over the file's documents, then clean the templates up.

    A refusal of the file itself (``iter_json_object``) comes from the loop, before any problem found here."""
    problems = Problems(InvalidSubmission)
    budget = _Budget(limits, join=join)
    documents: dict[str, list[RawTemplate]] = {}
    for docid, raw_templates in pairs:
        if docid not in public.known:
            problems.add(_document(docid), "is not a docid of the gold")
            continue
        if not isinstance(raw_templates, list):
            problems.add(_document(docid), f"the value must be a list of templates, not {_show(raw_templates)}")
            continue
        if len(raw_templates) > limits.templates_per_document:
            problems.add(_document(docid), limits.exceeded("templates_per_document", len(raw_templates), "templates"))
            continue
        templates = []
        for t_index, template in enumerate(raw_templates):
            place = lambda: f"{_document(docid)}, template {t_index}"  # noqa: B023, E731 (called at once)
            read = _read_submitted_template(template, place, problems, limits)
            if read is not None:
                templates.append(read)
                for role, texts in read[1]:
                    budget.add((docid, t_index, role), texts)
        documents[docid] = templates
    budget.check(problems)
    problems.raise_if_any()
    cleaned: dict[str, list[Template]] = {}
    for docid, templates in documents.items():
        cleaned[docid] = [clean_predicted_template(frame, roles, join=join) for frame, roles in templates]
        templates.clear()  # the texts as read are not held once cleaned
    return cleaned


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


@gc_paused()
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


@gc_paused()
def parse_sv_submission(data: bytes, public: PublicIds) -> dict[str, int]:
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
        if instance not in public.known:
            problems.add(where, "is not an instance_id of the gold")
        elif label is None:
            problems.add(where, f"the label must be 0, 1, true or false, not {_show(value)}")
        else:
            labels[instance] = label
    for instance in public.ids:
        if instance not in raw:
            problems.add(f"key {_quote(instance)}", "this gold instance_id has no label in the submission")
    problems.raise_if_any()
    return labels

"""Reading FAMuS CDAE gold: IterX lines, held to the part limits and the role limits (``famus_limits``), and the
figure the phase publishes from it, its largest role (``CdaeGold.largest_role``, ``CdaePublic``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from scorers.errors import InvalidGold, Problems
from scorers.families.ceaf_cost import gold_role_sizes
from scorers.families.ceaf_similarity import TokenIds
from scorers.families.ceaf_templates import RoleFillers, Template, collapse_identical
from scorers.io import gc_paused, iter_json_lines
from scorers.io.plain_json import Unsure, plain_lines
from scorers.tasks.famus_format import FRAME_KEY, GOLD_BOOKKEEPING_KEYS, Place, quote, show, template_frame
from scorers.tasks.famus_limits import DEFAULT_LIMITS, CdaeLimits, CdaePublic

GOLD_TEMPLATE_SHAPE = f"an object with {quote(FRAME_KEY)} and roles"


@dataclass(frozen=True)
class CdaeGold:
    """Gold templates per docid (identical templates collapsed), every role name the gold uses, the token ids of
    its mentions (split once, for the limits and the similarities) and its largest role: the most mentions, and
    the most tokens, that one role of a document holds over its templates (the phase's public figure)."""

    documents: dict[str, list[Template]]
    roles: frozenset[str]
    tokens: TokenIds = field(default_factory=TokenIds, compare=False, repr=False)
    largest_role: tuple[int, int] = (0, 0)

    def public(self) -> CdaePublic:
        """What participants are given: the docids, in the gold's order, and the largest role."""
        return CdaePublic(tuple(self.documents), self.largest_role)


def _parse_gold_template(
    raw: Any,
    place: Place,
    problems: Problems,
    limits: CdaeLimits,
    texts: dict[str, str],
    empty_roles: dict[str, RoleFillers],
) -> Template | None:
    """A gold template, each mention text the one object ``texts`` holds for it and each empty role the one pair
    ``empty_roles`` holds for its name (see ``_read_gold``)."""
    frame = template_frame(raw, place, problems, GOLD_TEMPLATE_SHAPE)
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
                f"{place()}, role {quote(role)}", f"a role value must be a list of entities, not {show(value)}"
            )
            continue
        role = intern(role)
        entities = []
        for e_index, entity in enumerate(value):
            if not isinstance(entity, list):
                problems.add(
                    f"{place()}, role {quote(role)}, entity {e_index}",
                    f"an entity must be a list of mentions, not {show(entity)}",
                )
                continue
            mentions = []
            for m_index, mention in enumerate(entity):
                if isinstance(mention, list) and mention:  # the usual mention, accepted with the fewest tests
                    text = mention[0]
                    if isinstance(text, str) and text and not text.isspace() and len(text) <= most_chars:
                        mentions.append(texts.setdefault(text, text))
                        continue
                if not isinstance(mention, list) or not mention or not isinstance(mention[0], str):
                    message = f"a mention must be a list whose first element is its text, not {show(mention)}"
                elif not mention[0].strip():
                    message = "the mention text is empty or only whitespace"
                elif len(mention[0]) > limits.filler_chars:
                    message = "the mention text has " + limits.exceeded("filler_chars", len(mention[0]), "characters")
                else:
                    mentions.append(texts.setdefault(mention[0], mention[0]))
                    continue
                problems.add(f"{place()}, role {quote(role)}, entity {e_index}, mention {m_index}", message)
            if mentions:  # an entity without mentions is dropped, as the official reader does
                entities.append(tuple(mentions))
        if entities:
            roles.append((role, tuple(entities)))
        else:  # a frame's many empty roles: one (role, ()) per role name, shared by every template
            pair = empty_roles.get(role)
            if pair is None:
                pair = empty_roles[role] = (role, ())
            roles.append(pair)
    return Template(frame, tuple(roles))


@gc_paused()  # many small containers, no cycles: see scorers.io.gc_paused
def parse_cdae_gold(data: bytes, limits: CdaeLimits = DEFAULT_LIMITS) -> CdaeGold:
    """Read IterX-format gold lines; raise ``InvalidGold`` listing the problems.

    The lines are parsed by orjson where it vouches for the strict decoder's values (``plain_lines``); a file it
    cannot vouch for, or one with any problem, is read again with the strict decoder, so that every refusal is
    worded, line and column, from the strict decoder's values.
    """
    try:
        return _read_gold(lambda problems: plain_lines(data), limits)
    except (Unsure, InvalidGold):
        pass
    return _read_gold(lambda problems: iter_json_lines(data, problems, InvalidGold), limits)


def _read_gold(lines: Callable[[Problems], Iterable[tuple[int, Any]]], limits: CdaeLimits) -> CdaeGold:
    problems = Problems(InvalidGold)
    documents: dict[str, list[Template]] = {}
    tokens = TokenIds()
    largest = [0, 0]
    # One object per distinct mention text: a text that recurs (an entity named in many documents, a place or a
    # date) is held once, not once per mention (each parsed as a new string).
    texts: dict[str, str] = {}
    empty_roles: dict[str, RoleFillers] = {}
    for number, line in lines(problems):
        where = f"line {number}"
        if not isinstance(line, dict):
            problems.add(where, 'expected an object with "docid" and "templates"')
            continue
        docid, raw_templates = line.get("docid"), line.get("templates")
        if not isinstance(docid, str):
            problems.add(where, 'key "docid" must be a string')
            continue
        if docid in documents:
            problems.add(where, f"docid {quote(docid)} appears more than once in the gold")
            continue
        if not isinstance(raw_templates, list):
            problems.add(where, f'key "templates" of document {quote(docid)} must be a list of templates')
            continue
        if len(raw_templates) > limits.templates_per_document:
            problems.add(
                f"{where}, document {quote(docid)}",
                limits.exceeded("templates_per_document", len(raw_templates), "templates"),
            )
            continue
        parsed = [
            _parse_gold_template(raw, lambda: f"{where}, templates[{index}]", problems, limits, texts, empty_roles)  # noqa: B023 (called at once)
            for index, raw in enumerate(raw_templates)
        ]
        documents[docid] = collapse_identical([t for t in parsed if t is not None])
        place = lambda: f"{where}, document {quote(docid)}"  # noqa: B023, E731 (called at once)
        _check_gold_roles(documents[docid], place, problems, limits, tokens, largest)
    problems.raise_if_any()
    roles = frozenset(role for templates in documents.values() for t in templates for role, _ in t.roles)
    return CdaeGold(documents, roles, tokens, (largest[0], largest[1]))


def _check_gold_roles(
    templates: list[Template],
    where: Place,
    problems: Problems,
    limits: CdaeLimits,
    tokens: TokenIds,
    largest: list[int],
) -> None:
    """A document's roles, over its templates, within the gold's role limits; ``largest`` (mentions, tokens) is
    raised to the document's largest role."""
    most_mentions, most_tokens = limits.gold_mentions_per_role, limits.gold_tokens_per_role
    for role, (mentions, words) in gold_role_sizes(templates, tokens.of).items():
        if mentions > largest[0]:
            largest[0] = mentions
        if words > largest[1]:
            largest[1] = words
        if mentions <= most_mentions and words <= most_tokens:
            continue
        for name, count, unit in (
            ("gold_mentions_per_role", mentions, "mentions"),
            ("gold_tokens_per_role", words, "tokens in its mentions"),
        ):
            if count > getattr(limits, name):
                problems.add(f"{where()}, role {quote(role)}", limits.exceeded(name, count, unit))

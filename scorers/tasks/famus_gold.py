"""Reading FAMuS CDAE gold: IterX lines, held to the part limits and the role limits (``famus_limits``), and the
figure the phase publishes from it, its largest role (``CdaeGold.largest_role``, ``CdaePublic``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from scorers.errors import InvalidGold, Problems
from scorers.families.ceaf_cost import gold_role_sizes
from scorers.families.ceaf_similarity import TokenIds
from scorers.families.ceaf_templates import (
    FlatTemplate,
    HeldTemplates,
    Template,
    document_templates,
    flat_entities,
    held_templates,
    unflatten,
)
from scorers.io import gc_paused, iter_json_lines
from scorers.io.plain_json import Unsure, plain_lines
from scorers.tasks.famus_format import FRAME_KEY, GOLD_BOOKKEEPING_KEYS, Place, quote, show, template_frame
from scorers.tasks.famus_limits import DEFAULT_LIMITS, CdaeLimits, CdaePublic

GOLD_TEMPLATE_SHAPE = f"an object with {quote(FRAME_KEY)} and roles"


@dataclass(frozen=True)
class CdaeGold:
    """Gold templates per docid (identical templates collapsed), each held flat (``FlatTemplate``: the memory of a
    large gold is its templates; a document's one template alone, ``HeldTemplates``), every role name the gold
    uses, the token ids of its mentions (split once, for the limits and the similarities) and its largest role: the
    most mentions, and the most tokens, that one role of a document holds over its templates (the phase's public
    figure)."""

    templates: dict[str, HeldTemplates]
    roles: frozenset[str]
    tokens: TokenIds = field(default_factory=TokenIds, compare=False, repr=False)
    largest_role: tuple[int, int] = (0, 0)

    @property
    def documents(self) -> Mapping[str, list[Template]]:
        """The templates of each docid as ``Template``s, made when a document is asked for."""
        return GoldDocuments(self.templates)

    def public(self) -> CdaePublic:
        """What participants are given: the docids, in the gold's order, and the largest role."""
        return CdaePublic(tuple(self.templates), self.largest_role)


class GoldDocuments(Mapping[str, list[Template]]):
    """``CdaeGold.documents``: each document's flat templates made ``Template``s when it is asked for."""

    __slots__ = ("_templates",)

    def __init__(self, templates: dict[str, HeldTemplates]) -> None:
        self._templates = templates

    def __getitem__(self, docid: str) -> list[Template]:
        return [unflatten(flat) for flat in document_templates(self._templates[docid])]

    def __iter__(self) -> Iterator[str]:
        return iter(self._templates)

    def __len__(self) -> int:
        return len(self._templates)


def _parse_gold_template(
    raw: Any,
    place: Place,
    problems: Problems,
    limits: CdaeLimits,
    texts: dict[str, str],
    names: set[str],
    tokens: Callable[[str], Sized],
    sizes: list[tuple[str, int, int]],
) -> FlatTemplate | None:
    """A gold template, held flat, each mention text the one object ``texts`` holds for it (see ``_read_gold``);
    ``names`` gets its role names, and ``sizes`` each filled role's name, mentions and tokens (``tokens``:
    ``TokenIds.of``, which numbers them for the similarities), in the order ``gold_role_sizes`` counts them."""
    frame = raw.get(FRAME_KEY) if isinstance(raw, dict) else None
    if isinstance(frame, str):  # the usual template, without a call (template_frame words the problems)
        frame = intern(frame)
    else:
        frame = template_frame(raw, place, problems, GOLD_TEMPLATE_SHAPE)
        if frame is None:
            return None
    flat: list[Any] = [frame]
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
        names.add(role)
        if not value:  # a frame's many empty roles
            flat += (role, ())
            continue
        if len(value) == 1:  # most filled roles: one entity of one usual mention, held as its text; fewest tests
            entity = value[0]
            if isinstance(entity, list) and len(entity) == 1:
                mention = entity[0]
                if isinstance(mention, list) and mention:
                    text = mention[0]
                    if isinstance(text, str) and text and not text.isspace() and len(text) <= most_chars:
                        text = texts.setdefault(text, text)
                        flat += (role, text)
                        sizes.append((role, 1, len(tokens(text))))
                        continue
        entities: list[tuple[str, ...]] = []
        words = 0
        for e_index, entity in enumerate(value):
            if isinstance(entity, list) and len(entity) == 1:  # the usual entity, one usual mention: fewest tests
                mention = entity[0]
                if isinstance(mention, list) and mention:
                    text = mention[0]
                    if isinstance(text, str) and text and not text.isspace() and len(text) <= most_chars:
                        text = texts.setdefault(text, text)
                        entities.append((text,))
                        words += len(tokens(text))
                        continue
            mentions = _entity_mentions(entity, place, problems, limits, texts, role, e_index)
            if mentions:  # an entity without mentions is dropped, as the official reader does
                entities.append(mentions)
                words += sum(map(len, map(tokens, mentions)))
        if entities:
            flat += (role, flat_entities(tuple(entities)))
            sizes.append((role, sum(map(len, entities)), words))
        else:  # a frame's many empty roles
            flat += (role, ())
    return tuple(flat)


def _entity_mentions(
    entity: Any, place: Place, problems: Problems, limits: CdaeLimits, texts: dict[str, str], role: str, e_index: int
) -> tuple[str, ...]:
    """An entity's mention texts, each the one object ``texts`` holds for it; its problems reported."""
    if not isinstance(entity, list):
        problems.add(
            f"{place()}, role {quote(role)}, entity {e_index}",
            f"an entity must be a list of mentions, not {show(entity)}",
        )
        return ()
    mentions = []
    for m_index, mention in enumerate(entity):
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
    return tuple(mentions)


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
    documents: dict[str, HeldTemplates] = {}
    tokens = TokenIds()
    largest = [0, 0]
    # One object per distinct mention text: a text that recurs (an entity named in many documents, a place or a
    # date) is held once, not once per mention (each parsed as a new string).
    texts: dict[str, str] = {}
    names: set[str] = set()
    of = tokens.of
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
        sizes: list[tuple[str, int, int]] = []
        if len(raw_templates) == 1:  # most documents: nothing to collapse, the sizes those of the template read
            flat = _parse_gold_template(
                raw_templates[0],
                lambda: f"{where}, templates[0]",  # noqa: B023 (called at once)
                problems,
                limits,
                texts,
                names,
                of,
                sizes,
            )
            documents[docid] = () if flat is None else flat
        else:
            parsed = [
                _parse_gold_template(
                    raw,
                    lambda: f"{where}, templates[{index}]",  # noqa: B023 (called at once)
                    problems,
                    limits,
                    texts,
                    names,
                    of,
                    sizes,
                )
                for index, raw in enumerate(raw_templates)
            ]
            # Identical templates collapse: the first of equals kept, in order (equal flat templates, equal
            # Templates); a role's sizes are summed over the templates left, counted again.
            kept = tuple(dict.fromkeys(flat for flat in parsed if flat is not None))
            documents[docid] = held_templates(kept)
            sizes = [(role, *counts) for role, counts in gold_role_sizes(map(unflatten, kept), of).items()]
        place = lambda: f"{where}, document {quote(docid)}"  # noqa: B023, E731 (called at once)
        _check_gold_roles(sizes, place, problems, limits, largest)
    problems.raise_if_any()
    # Every role name of the templates kept (a template dropped as a copy has the names of the one kept, and any
    # other template dropped refused the gold).
    return CdaeGold(documents, frozenset(names), tokens, (largest[0], largest[1]))


def _check_gold_roles(
    sizes: Iterable[tuple[str, int, int]], where: Place, problems: Problems, limits: CdaeLimits, largest: list[int]
) -> None:
    """A document's roles, ``(role, mentions, tokens)`` over its templates (``gold_role_sizes``), within the gold's
    role limits; ``largest`` (mentions, tokens) is raised to the document's largest role."""
    most_mentions, most_tokens = limits.gold_mentions_per_role, limits.gold_tokens_per_role
    for role, mentions, words in sizes:
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

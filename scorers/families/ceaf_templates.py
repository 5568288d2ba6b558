"""CEAF-RME's templates: what gold and predicted documents hold, and the clean-up of predictions.

A document has templates; a template has a frame and roles; a role holds entities; an entity is a tuple of
mention strings (``Template``). Predictions are cleaned up per template and role as the official FAMuS
scorer does (``clean_predicted_template``, ``join_substrings``); identical gold templates collapse
(``collapse_identical``). ``scorers.families.ceaf`` states the rules and scores documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

Entity = tuple[str, ...]
RoleFillers = tuple[str, tuple[Entity, ...]]
#: A template held flat: its frame, then each role's name and its entities, in order (an empty role's ``()``), a
#: role of one entity of one mention as that mention's text alone (most filled roles). The same as a ``Template``
#: (``unflatten``) in a third of its memory, for a large gold held while it is scored.
FlatTemplate = tuple[Any, ...]


@dataclass(frozen=True, slots=True)  # slots: a template without an instance dictionary, for large golds
class Template:
    """A frame and, in file order, each role with its entities (tuples of mention texts).

    Role names are unique. Equality looks at the frame and ``roles`` only; ``filled`` is a view computed once,
    because scoring visits every template many times and frames have many empty roles. The mentions per role are
    counted where they are needed (``mentions``) rather than held: a dictionary per template is a fifth of a
    large gold's memory, and each count is taken once or twice.
    """

    frame: str
    roles: tuple[RoleFillers, ...]
    #: The roles that hold at least one entity.
    filled: dict[str, tuple[Entity, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "filled", {role: entities for role, entities in self.roles if entities})

    @property
    def mentions(self) -> dict[str, int]:
        """Mentions per filled role."""
        return {role: sum(map(len, entities)) for role, entities in self.filled.items()}

    @property
    def entity_count(self) -> int:
        return sum(map(len, self.filled.values()))

    @property
    def mention_count(self) -> int:
        return sum(sum(map(len, entities)) for entities in self.filled.values())


#: A document's templates as held: its one template alone (most documents), else a tuple of them (none, or several).
HeldTemplates = tuple[Any, ...]


def held_templates(templates: Sequence[FlatTemplate]) -> HeldTemplates:
    """A document's flat templates as held: one alone, saving a tuple a document."""
    return templates[0] if len(templates) == 1 else tuple(templates)


def document_templates(held: HeldTemplates) -> tuple[FlatTemplate, ...]:
    """A document's flat templates from how they are held (a template's first item is its frame, a string)."""
    return (held,) if held and type(held[0]) is str else held


def flat_entities(entities: tuple[Entity, ...] | str) -> tuple[Entity, ...] | str:
    """A role's entities as a flat template holds them: one entity of one mention as its text."""
    return entities[0][0] if len(entities) == 1 and len(entities[0]) == 1 else entities


def unflatten(flat: FlatTemplate) -> Template:
    """The ``Template`` a flat one holds."""
    return Template(
        flat[0],
        tuple(
            (role, ((entities,),) if type(entities) is str else entities)
            for role, entities in zip(flat[1::2], flat[2::2], strict=True)
        ),
    )


def flat_roles(flat: FlatTemplate) -> Iterator[tuple[str, tuple[Entity, ...] | str]]:
    """Each role of a flat template with its entities as held (``FlatTemplate``), in order, empty ones too, without
    copying it."""
    pairs = iter(flat)
    next(pairs)  # the frame
    return zip(pairs, pairs, strict=True)  # a name, then its entities


def join_substrings(texts: Iterable[str]) -> list[Entity]:
    """Distinct strings grouped into entities: each string joins the shortest longer one containing it.

    Strings are visited from the shortest up; among equally short containers the first in code-point
    order wins. A string that already gathered shorter ones brings them along.
    """
    distinct = set(texts)
    if len(distinct) < 2:
        return [(text,) for text in distinct]
    ordered = sorted(distinct, key=lambda text: (len(text), text))
    entities: dict[str, list[str]] = {text: [text] for text in ordered}
    for i, short in enumerate(ordered):
        for longer in ordered[i + 1 :]:
            # Equal-length distinct strings never contain each other, so `in` finds only longer ones.
            if short in longer:
                entities[longer].extend(entities.pop(short))
                break
    return [tuple(entity) for entity in entities.values()]


def clean_predicted_template(
    frame: str,
    roles: Iterable[tuple[str, Iterable[str] | str]],
    *,
    join: bool = True,
    empty_roles: dict[str, RoleFillers] | None = None,
) -> Template:
    """A predicted template from role -> filler texts (one text may be given alone, a ``str``): duplicates dropped,
    substrings joined if ``join``.

    ``empty_roles`` holds one ``(role, ())`` per role name, shared by the templates of a file that leave it empty.
    """
    cleaned: list[RoleFillers] = []
    for role, texts in roles:
        if not texts and type(texts) is not str and empty_roles is not None:
            pair = empty_roles.get(role)
            if pair is None:
                pair = empty_roles[role] = (role, ())
            cleaned.append(pair)
        else:
            cleaned.append((role, clean_entities(texts, join)))
    return Template(frame, tuple(cleaned))


def clean_entities(texts: Iterable[str] | str, join: bool = True) -> tuple[Entity, ...]:
    """A predicted role's entities from its filler texts (one text may be given alone, a ``str``, even ``""``):
    duplicates dropped, substrings joined if ``join`` (``clean_predicted_template``)."""
    if type(texts) is str:  # most roles: one text, its own entity either way
        return ((texts,),)
    if type(texts) is tuple and len(texts) == 1:
        return ((texts[0],),)
    return tuple(join_substrings(texts) if join else [(text,) for text in sorted(set(texts))])


def collapse_identical(templates: Iterable[Template]) -> list[Template]:
    """Templates in order with later identical copies (same frame, roles in order, mentions) removed."""
    if isinstance(templates, Sequence) and len(templates) < 2:  # nothing to compare (and hash)
        return list(templates)
    seen: set[Template] = set()
    kept = []
    for template in templates:
        if template not in seen:
            seen.add(template)
            kept.append(template)
    return kept

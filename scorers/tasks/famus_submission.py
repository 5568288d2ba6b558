"""Reading FAMuS CDAE submissions: ``{docid: [template, ...]}``, checked against the public view (the docids and
the largest gold role, ``CdaePublic``), the part limits and the cost budgets (``famus_limits``) before the first
template is cleaned up."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from sys import intern
from typing import Any

from scorers.errors import InvalidSubmission, Problem, Problems
from scorers.families.ceaf_templates import (
    Entity,
    HeldTemplates,
    RoleFillers,
    Template,
    clean_entities,
    clean_predicted_template,
    document_templates,
    held_templates,
)
from scorers.io import gc_paused, iter_json_object
from scorers.tasks.famus_format import FRAME_KEY, Place, document, quote, show, template_frame
from scorers.tasks.famus_limits import DEFAULT_LIMITS, CdaeBudget, CdaeLimits, CdaePublic


def _filler_text(filler: Any) -> str | None:
    if isinstance(filler, str):
        return filler
    if isinstance(filler, list) and filler and isinstance(filler[0], str):
        return filler[0]
    return None


#: A predicted template as read, before clean-up, as it is held until it is scored: the frame, then each role's name
#: and its distinct filler texts, a tuple, or one text alone (most roles: a tuple each was a third of the memory).
FlatTemplate = tuple[Any, ...]


class CdaeSubmission(Mapping[str, list[Template]]):
    """A read submission's templates per docid, cleaned up when a document is asked for (``[docid]``, ``get``).

    Each template is held as read, one flat tuple (``FlatTemplate``; a document's one template alone), until its
    document is scored: a third of the memory of its cleaned ``Template``, which lives only while the document is
    scored. The clean-up has no refusals (everything is checked when the file is read), and asked twice it gives
    equal templates."""

    __slots__ = ("_documents", "_empty_roles", "_join")

    def __init__(self, documents: dict[str, HeldTemplates], *, join: bool) -> None:
        self._documents = documents
        self._join = join
        self._empty_roles: dict[str, RoleFillers] = {}  # a frame's many empty roles: one pair per name

    def __getitem__(self, docid: str) -> list[Template]:
        join, empty_roles = self._join, self._empty_roles
        return [
            clean_predicted_template(
                flat[0], zip(flat[1::2], flat[2::2], strict=True), join=join, empty_roles=empty_roles
            )
            for flat in document_templates(self._documents[docid])
        ]

    def get(self, docid: str, default: Any = None) -> Any:  # without Mapping.get's KeyError
        return self[docid] if docid in self._documents else default

    def filled(self, docid: str) -> list[tuple[str, dict[str, tuple[Entity, ...]]]]:
        """Each template of ``docid`` (none if the submission left it out) as its frame and its filled roles, the
        ``frame`` and ``filled`` of its clean-up (``[docid]``) without making the ``Template``: what scoring the usual
        document needs (``DocumentScorer.score_flat``)."""
        join = self._join
        found = []
        for flat in document_templates(self._documents.get(docid, ())):
            roles = iter(flat)
            frame = next(roles)
            found.append(
                (
                    frame,
                    {
                        role: clean_entities(texts, join)
                        for role, texts in zip(roles, roles, strict=True)
                        if texts or type(texts) is str
                    },
                )
            )
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._documents)

    def __len__(self) -> int:
        return len(self._documents)


def _read_submitted_template(
    raw: Any, place: Place, problems: Problems, limits: CdaeLimits, canonical: dict[str, str]
) -> FlatTemplate | None:
    """A template's frame and distinct filler texts per role (``FlatTemplate``), each text the one object
    ``canonical`` holds for it (a text that recurs across documents is held once, not once per filler)."""
    frame = raw.get(FRAME_KEY) if isinstance(raw, dict) else None
    if isinstance(frame, str):  # the usual template, without a call (template_frame words the problems)
        frame = intern(frame)
    else:
        frame = template_frame(raw, place, problems, "an object")
        if frame is None:
            return None
    flat: list[Any] = [frame]
    most_fillers, most_chars = limits.fillers_per_role, limits.filler_chars
    for role, fillers in raw.items():
        if role == FRAME_KEY:
            continue
        if not isinstance(fillers, list):
            problems.add(
                f"{place()}, role {quote(role)}",
                f'a role value must be a list of fillers such as [["text"]], not {show(fillers)}',
            )
            continue
        if len(fillers) > most_fillers:
            problems.add(f"{place()}, role {quote(role)}", limits.exceeded("fillers_per_role", len(fillers), "fillers"))
            continue
        if not fillers:
            flat += (intern(role), ())
            continue
        if len(fillers) == 1:  # most roles: one usual filler, accepted with the fewest tests
            filler = fillers[0]
            if isinstance(filler, list) and filler:
                text = filler[0]
                if isinstance(text, str) and len(text) <= most_chars:
                    flat += (intern(role), canonical.setdefault(text, text))
                    continue
        texts = set()
        for f_index, filler in enumerate(fillers):
            if isinstance(filler, list) and filler:  # the usual filler, accepted with the fewest tests
                text = filler[0]
                if isinstance(text, str) and len(text) <= most_chars:
                    texts.add(canonical.setdefault(text, text))
                    continue
            text = _filler_text(filler)
            if text is None:
                message = f"a filler must be a non-empty list whose first element is the text, not {show(filler)}"
            elif len(text) > limits.filler_chars:
                message = "the text has " + limits.exceeded("filler_chars", len(text), "characters")
            else:
                texts.add(canonical.setdefault(text, text))
                continue
            problems.add(f"{place()}, role {quote(role)}, filler {f_index}", message)
        # A tuple: a third of a small set's memory, held until clean-up; one text alone.
        flat += (intern(role), texts.pop() if len(texts) == 1 else tuple(texts))
    return tuple(flat)


@gc_paused()
def parse_cdae_submission(
    data: bytes, public: CdaePublic, *, join: bool = True, limits: CdaeLimits = DEFAULT_LIMITS
) -> CdaeSubmission:
    """Read ``{docid: [template, ...]}``, whose templates are cleaned up as each document is asked for
    (``CdaeSubmission``); raise ``InvalidSubmission``.

    Everything is checked, the limits included, before the first template is cleaned up: the clean-up
    is the first step whose work grows faster than the file. The file is read one document at a time
    (``iter_json_object``, with the refusals of a whole parse), so its parsed objects are never held at once.
    """
    # Each docid's index in the gold: a docid read is held as the gold's own object, and checked for a repeat by its
    # index (``iter_json_object``), so that the file's copies of the docids are not held.
    positions = {docid: index for index, docid in enumerate(public.ids)}
    pairs = iter_json_object(data, _not_cdae_object, positions=positions)
    return _cdae_templates(pairs, public, positions, join, limits)


def _not_cdae_object(raw: Any) -> InvalidSubmission:
    got = "a list" if isinstance(raw, list) else show(raw)
    return InvalidSubmission(
        [Problem("", f"expected a JSON object mapping each docid to a list of templates; got {got}")]
    )


def _cdae_templates(
    pairs: Iterable[tuple[str, Any]], public: CdaePublic, positions: Mapping[str, int], join: bool, limits: CdaeLimits
) -> CdaeSubmission:
    """Check every document and the budgets in one pass over the file's documents, keeping the templates as read.

    A refusal of the file itself (``iter_json_object``) comes from the loop, before any problem found here."""
    problems = Problems(InvalidSubmission)
    budget = CdaeBudget(limits, public.largest_role, join=join)
    documents: dict[str, HeldTemplates] = {}
    canonical: dict[str, str] = {}
    ids = public.ids  # the gold's own docid objects: the documents held are keyed by them, not by a copy of each
    for docid, raw_templates in pairs:
        index = positions.get(docid)
        if index is None:
            problems.add(document(docid), "is not a docid of the gold")
            continue
        known = ids[index]
        if not isinstance(raw_templates, list):
            problems.add(document(docid), f"the value must be a list of templates, not {show(raw_templates)}")
            continue
        if len(raw_templates) > limits.templates_per_document:
            problems.add(document(docid), limits.exceeded("templates_per_document", len(raw_templates), "templates"))
            continue
        templates = []
        for t_index, template in enumerate(raw_templates):
            place = lambda: f"{document(docid)}, template {t_index}"  # noqa: B023, E731 (called at once)
            flat = _read_submitted_template(template, place, problems, limits, canonical)
            if flat is not None:
                budget.add_template(docid, t_index, flat)
                templates.append(flat)
        documents[known] = held_templates(templates)  # a document's one template alone
    budget.check(problems)
    problems.raise_if_any()
    return CdaeSubmission(documents, join=join)

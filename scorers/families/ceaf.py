"""CEAF-RME: role-filler entity matching between gold and predicted templates.

A document has templates; a template has a frame and roles; a role holds entities; an entity is a
tuple of mention strings. This follows the IterX FAMuS scorer (``iterx/metrics/famus/ceaf_rme.py``
on the ``sv/famus`` branch, driven with its default options):

- Clean-up of predictions, per template and role (``clean_predicted_template``): identical strings
  count once; then, from the shortest string up, a string found inside a longer string of the same
  role joins the entity of the shortest such string, strings already joined moving with it. Ties
  between equally short candidates go to the first in code-point order (the official code leaves
  them to Python's set order). Identical gold templates collapse (``collapse_identical``).
- Similarity of a gold and a predicted entity of the same frame and role: ``phi3`` counts the
  predicted mentions equal to a gold mention; ``soft`` is the best, over mention pairs, of
  2·LCS / (|g| + |p|) on lowercased whitespace tokens (1 - edit distance / (|g| + |p|) with
  substitution cost 2). Entities of different roles or frames score 0.
- Alignment per document: one-to-one maximum-weight matching of entities inside each (gold template,
  predicted template) pair, then one-to-one matching of templates on those sums. Because entities of
  different roles never score, the entity matching splits exactly into one matching per role, which
  also gives the per-role share of each matched sum.
- Micro sums: matched similarity, predicted mentions, gold mentions. A document with no gold template
  and no predicted template holding an entity adds 1 to every sum (the official rule, optional).
- Multi-label gold frames (``A / B``, from the MUC-4 lineage of the code, optional): when the gold has
  such a template with mentions and the prediction any template, the template is tried under each
  label; only the label whose row of template similarities sums highest may match, and, as in the
  official code, every copy counts its gold mentions.

``score_document`` returns plain sums, so any multiset of documents aggregates by adding them.

The parts live in their own modules: ``ceaf_templates`` (templates and the clean-up), ``ceaf_similarity``
(phi3 and soft), ``ceaf_matching`` (the one-to-one matchings), ``ceaf_cost`` (what a predicted role costs,
counted before scoring) and ``ceaf_aggregation`` (micro scores from the sums); this module aligns a document.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scorers.families.ceaf_matching import best_matching_sum, matched_sum, max_assignment
from scorers.families.ceaf_similarity import EntitySimilarity, phi3, soft_similarity
from scorers.families.ceaf_templates import Entity, FlatTemplate, Template, flat_roles

SIMILARITIES = ("phi3", "soft")
#: Separator of the alternatives in a multi-label gold frame.
MULTILABEL_SEPARATOR = "/"


@dataclass(frozen=True)
class CeafRmeOptions:
    """What varies between tasks that use CEAF-RME; the defaults are the official FAMuS settings."""

    similarities: tuple[str, ...] = SIMILARITIES
    empty_document_rule: bool = True
    multilabel_frames: bool = True

    def __post_init__(self) -> None:
        unknown = [name for name in self.similarities if name not in SIMILARITIES]
        if unknown or not self.similarities:
            raise ValueError(f"similarities must be a non-empty subset of {SIMILARITIES}, not {self.similarities}")


DEFAULT_OPTIONS = CeafRmeOptions()


def template_similarity(
    gold: Template, predicted: Template, similarities: Sequence[EntitySimilarity]
) -> list[dict[str, float]]:
    """For each similarity, per role, the best one-to-one entity matching; all empty if the frames differ."""
    shares: list[dict[str, float]] = [{} for _ in similarities]
    if gold.frame != predicted.frame:
        return shares
    predicted_roles = predicted.filled
    pairs = list(zip(shares, similarities, strict=True))
    for role, gold_entities in gold.filled.items():
        predicted_entities = predicted_roles.get(role)
        if predicted_entities is None:
            continue
        single = len(gold_entities) == 1 and len(predicted_entities) == 1  # most roles: no matching to do
        for share, similarity in pairs:
            if single:
                value = similarity(gold_entities[0], predicted_entities[0])
            else:
                value = best_matching_sum([[similarity(g, p) for p in predicted_entities] for g in gold_entities])
            if value:
                share[role] = value
    return shares


def _split_multilabel(gold: Sequence[Template]) -> tuple[list[Template], list[list[int]]]:
    """Gold templates with each multi-label frame replaced by one copy per label, and the copies' rows."""
    expanded: list[Template] = []
    groups: list[list[int]] = []
    for template in gold:
        if MULTILABEL_SEPARATOR in template.frame and template.mention_count:
            labels = [label.strip() for label in template.frame.split(MULTILABEL_SEPARATOR)]
            groups.append(list(range(len(expanded), len(expanded) + len(labels))))
            expanded.extend(replace(template, frame=label) for label in labels)
        else:
            expanded.append(template)
    return expanded, groups


def _align(
    gold: Sequence[Template],
    predicted: Sequence[Template],
    similarities: Sequence[EntitySimilarity],
    groups: list[list[int]],
) -> list[tuple[float, dict[str, float]]]:
    """For each similarity, the matched sum of the best one-to-one template alignment, in total and per role."""
    if not gold or not predicted:
        return [(0.0, {}) for _ in similarities]
    cells = [[template_similarity(g, p, similarities) for p in predicted] for g in gold]
    if len(gold) == 1 and len(predicted) == 1:  # the usual FAMuS document: no matching to do
        return [(sum(share.values()), share) for share in cells[0][0]]
    results = []
    for k in range(len(similarities)):
        shares = [[cell[k] for cell in row] for row in cells]
        matrix = [[sum(share.values()) for share in row] for row in shares]
        for rows in groups:
            # Only the label whose row sums highest may match (first on ties), as the official code does.
            keep = max(rows, key=lambda row: sum(matrix[row]))
            for row in rows:
                if row != keep:
                    matrix[row] = [0.0] * len(predicted)
                    shares[row] = [{} for _ in predicted]
        matched_rows, matched_cols = max_assignment(matrix, ties=False)
        per_role: dict[str, float] = {}
        for i, j in zip(matched_rows, matched_cols, strict=True):
            for role, value in shares[i][j].items():
                per_role[role] = per_role.get(role, 0.0) + value
        results.append((matched_sum(matrix, matched_rows, matched_cols), per_role))
    return results


def score_document(
    gold: Sequence[Template],
    predicted: Sequence[Template],
    options: CeafRmeOptions = DEFAULT_OPTIONS,
    tokens: Callable[[str], Sequence[int]] | None = None,
) -> dict[str, Any]:
    """Sums of one document: ``predicted`` and ``gold`` mention counts, matched similarity per name,
    and ``roles`` with the same sums per role name (the empty-document rule adds to no role).

    ``tokens`` gives each text's token ids (``TokenIds.reader``, shared by the documents of a scoring); by
    default the document's texts are split here. ``DocumentScorer`` scores many documents."""
    return DocumentScorer(options, tokens)(gold, predicted)


class DocumentScorer:
    """``score_document`` for the documents of one scoring, with what they share made once: the similarity
    functions and, with ``roles``, only those role names kept and each distinct value of a role's sums one
    dictionary, shared (read-only) by the documents that have it. Most roles of most documents match their one
    filler exactly or not at all: the FAMuS release's 902 role sums hold 29 distinct values, and a dictionary
    each was a fifth of a large scoring's memory.

    With ``role_totals``, each document's role sums are added to it instead (per role name, ``[predicted, gold,
    *similarities]``, documents in the order they are scored, as ``CeafTotals.extend`` adds them: the same floats)
    and a document's ``roles`` is empty: what a report of the totals alone needs, without a dictionary per role of
    every document (a sixth of scoring the usual document)."""

    def __init__(
        self,
        options: CeafRmeOptions = DEFAULT_OPTIONS,
        tokens: Callable[[str], Sequence[int]] | None = None,
        roles: Collection[str] | None = None,
        role_totals: dict[str, list[float]] | None = None,
    ) -> None:
        self.options = options
        self.names = options.similarities
        self.keys = ("predicted", "gold", *self.names)
        self.memo: dict[tuple[str, str], float] = {}  # cleared for each document: its size stays a document's
        self.functions = [phi3 if name == "phi3" else soft_similarity(self.memo, tokens) for name in self.names]
        self.roles = roles
        self.role_totals = role_totals
        self.shared: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.soft = self.functions[1] if self.names == SIMILARITIES else None  # the default pair: see _one_to_one

    def __call__(self, gold: Sequence[Template], predicted: Sequence[Template]) -> dict[str, Any]:
        options, names = self.options, self.names
        filled = [template for template in predicted if template.filled]  # holding an entity
        if options.empty_document_rule and not gold and not filled:
            return {"predicted": 1, "gold": 1, **dict.fromkeys(names, 1.0), "roles": {}}
        if (
            len(gold) == 1
            and len(filled) == 1
            and self.soft is not None
            and not (options.multilabel_frames and MULTILABEL_SEPARATOR in gold[0].frame)
        ):
            return self._one_to_one(gold[0].frame, gold[0].filled.items(), filled[0].frame, filled[0].filled)
        groups: list[list[int]] = []
        # The official code splits only when the prediction lists any template, filled or not.
        if options.multilabel_frames and predicted:
            for template in gold:
                if MULTILABEL_SEPARATOR in template.frame:
                    gold, groups = _split_multilabel(gold)
                    break
        # Per role, in the order roles are first met (predicted templates first): [predicted, gold] mentions.
        counts: dict[str, list[int]] = {}
        totals = [0, 0]
        for side, templates in ((0, filled), (1, gold)):
            for template in templates:
                for role, entities in template.filled.items():
                    count = sum(map(len, entities)) if len(entities) > 1 else len(entities[0])
                    found = counts.get(role)
                    if found is None:
                        found = counts[role] = [0, 0]
                    found[side] += count
                    totals[side] += count
        stats: dict[str, Any] = {"predicted": totals[0], "gold": totals[1]}
        self.memo.clear()
        per_role = []
        for name, (total, matched) in zip(names, _align(gold, filled, self.functions, groups), strict=True):
            stats[name] = total
            per_role.append(matched)
        stats["roles"] = self._role_sums(counts, per_role)
        return stats

    def _role_sums(self, counts: dict[str, list[int]], matched: Sequence[dict[str, float]]) -> dict[str, Any]:
        """A document's ``roles``: per role of ``counts`` (its ``[predicted, gold]`` mentions) those counts and each
        similarity's matched value (``matched``, one mapping per similarity; 0.0 where a role has none); or, with
        ``role_totals``, nothing, those sums added there."""
        keep, totals = self.roles, self.role_totals
        if totals is not None:
            width = 2 + len(matched)
            for role, (predicted_count, gold_count) in counts.items():
                if keep is not None and role not in keep:
                    continue
                total = totals.get(role)
                if total is None:
                    total = totals[role] = [0.0] * width
                total[0] += predicted_count
                total[1] += gold_count
                if width == 4:  # both similarities, the default: spelled out
                    total[2] += matched[0].get(role, 0.0)
                    total[3] += matched[1].get(role, 0.0)
                    continue
                for k, found in enumerate(matched, 2):
                    total[k] += found.get(role, 0.0)
            return {}
        shared, keys = self.shared, self.keys
        pair = matched if len(matched) == 2 else None  # both similarities, the default: spelled out below
        roles: dict[str, dict[str, Any]] = {}
        for role, (predicted_count, gold_count) in counts.items():
            if keep is not None and role not in keep:
                continue
            # Each similarity's sum starts at 0.0 and adds the role's matched value, if any, once.
            if pair is not None:
                values: tuple[Any, ...] = (
                    predicted_count,
                    gold_count,
                    0.0 + pair[0].get(role, 0.0),
                    0.0 + pair[1].get(role, 0.0),
                )
            else:
                values = (predicted_count, gold_count, *[0.0 + found.get(role, 0.0) for found in matched])
            if keep is None:
                roles[role] = dict(zip(keys, values, strict=True))
                continue
            sums = shared.get(values)
            if sums is None:
                sums = shared[values] = dict(zip(keys, values, strict=True))
            roles[role] = sums
        return roles

    def score_flat(
        self, gold: FlatTemplate, predicted: Sequence[tuple[str, dict[str, tuple[Entity, ...]]]]
    ) -> dict[str, Any] | None:
        """``self([gold], predicted)`` for the usual document, from its one gold template held flat
        (``FlatTemplate``) and the predicted templates' frames and filled roles (``Template.frame``,
        ``Template.filled``): one filled predicted template, no multi-label frame to split, both similarities.
        None for any other document, which the caller scores as ``Template``s (``unflatten``)."""
        if self.soft is None:
            return None
        filled = [template for template in predicted if template[1]]
        if len(filled) != 1 or (self.options.multilabel_frames and MULTILABEL_SEPARATOR in gold[0]):
            return None
        frame, roles = filled[0]
        return self._one_to_one(gold[0], flat_roles(gold), frame, roles)

    def _one_to_one(
        self,
        frame: str,
        gold: Iterable[tuple[str, tuple[Entity, ...] | str]],
        predicted_frame: str,
        predicted_roles: dict[str, tuple[Entity, ...]],
    ) -> dict[str, Any]:
        """``__call__`` for the usual FAMuS document, one gold template (its ``frame`` and its roles, empty ones
        skipped, as a ``Template`` or a ``FlatTemplate`` holds them) and one filled predicted one (its frame and
        filled roles; no multi-label frame to split), under both similarities: the same sums, in the same order and
        types, without the general alignment's lists (a third of a large scoring's time). The roles are counted in
        the order they are first met, predicted first; each similarity's total is ``sum`` of the role values that
        are not zero (an ``int`` 0 when none is), as ``_align`` gives it for a single pair."""
        counts: dict[str, list[int]] = {}
        predicted_total = gold_total = 0
        for role, entities in predicted_roles.items():  # role names are unique in a template
            count = sum(map(len, entities)) if len(entities) > 1 else len(entities[0])
            counts[role] = [count, 0]
            predicted_total += count
        self.memo.clear()
        exact: dict[str, float] = {}
        soft: dict[str, float] = {}
        same_frame = frame == predicted_frame
        soft_similarity = self.soft
        assert soft_similarity is not None
        for role, held in gold:
            if not held:
                continue
            # One entity of one mention is held as its text (FlatTemplate).
            count = 1 if isinstance(held, str) else sum(map(len, held)) if len(held) > 1 else len(held[0])
            gold_total += count
            found = counts.get(role)
            if found is None:  # not a predicted role: nothing to match
                counts[role] = [0, count]
                continue
            found[1] += count
            if not same_frame:
                continue
            predicted_entities = predicted_roles[role]
            gold_entities = ((held,),) if isinstance(held, str) else held
            if len(gold_entities) == 1 and len(predicted_entities) == 1:
                g, p = gold_entities[0], predicted_entities[0]
                if len(g) == 1 and len(p) == 1 and g[0] == p[0]:  # phi3 and soft both 1.0
                    exact[role] = soft[role] = 1.0
                    continue
                value, nearest = phi3(g, p), soft_similarity(g, p)
            else:
                value = best_matching_sum([[phi3(g, p) for p in predicted_entities] for g in gold_entities])
                nearest = best_matching_sum(
                    [[soft_similarity(g, p) for p in predicted_entities] for g in gold_entities]
                )
            if value:
                exact[role] = value
            if nearest:
                soft[role] = nearest
        return {
            "predicted": predicted_total,
            "gold": gold_total,
            "phi3": sum(exact.values()),
            "soft": sum(soft.values()),
            "roles": self._role_sums(counts, (exact, soft)),
        }

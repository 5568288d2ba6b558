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

Cost. The clean-up tests every pair of distinct strings of a predicted role, the similarities look at
every (gold mention, predicted mention) pair of the same document and role, and the soft similarity's LCS
table has |g|·|p| cells, so a role with 100,000 fillers or fillers of a million tokens would run for hours.
``role_work`` counts that work for one predicted role before any of it is done, so that callers can refuse
a file beyond a budget; the rest of scoring (the matchings, whose matrices hold those pairs) is smaller.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from scorers.base import prf

Entity = tuple[str, ...]
RoleFillers = tuple[str, tuple[Entity, ...]]
EntitySimilarity = Callable[[Entity, Entity], float]

SIMILARITIES = ("phi3", "soft")
#: Separator of the alternatives in a multi-label gold frame.
MULTILABEL_SEPARATOR = "/"


@dataclass(frozen=True, slots=True)  # slots: a template without an instance dictionary, for large golds
class Template:
    """A frame and, in file order, each role with its entities (tuples of mention texts).

    Role names are unique. Equality looks at the frame and ``roles`` only; the other fields are views
    computed once, because scoring visits every template many times and frames have many empty roles.
    """

    frame: str
    roles: tuple[RoleFillers, ...]
    #: The roles that hold at least one entity.
    filled: dict[str, tuple[Entity, ...]] = field(init=False, repr=False, compare=False)
    #: Mentions per filled role.
    mentions: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        filled = {role: entities for role, entities in self.roles if entities}
        object.__setattr__(self, "filled", filled)
        object.__setattr__(self, "mentions", {role: sum(map(len, entities)) for role, entities in filled.items()})

    @property
    def entity_count(self) -> int:
        return sum(map(len, self.filled.values()))

    @property
    def mention_count(self) -> int:
        return sum(self.mentions.values())


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


# -- clean-up -------------------------------------------------------------------------------------
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


def clean_predicted_template(frame: str, roles: Iterable[tuple[str, Iterable[str]]], *, join: bool = True) -> Template:
    """A predicted template from role -> filler texts: duplicates dropped, substrings joined if ``join``."""
    cleaned: list[RoleFillers] = []
    for role, texts in roles:
        entities = join_substrings(texts) if join else [(text,) for text in sorted(set(texts))]
        cleaned.append((role, tuple(entities)))
    return Template(frame, tuple(cleaned))


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


# -- similarity -----------------------------------------------------------------------------------
def _indel() -> Any:
    """rapidfuzz's Indel metric, imported on first use (a ``from`` import per similarity costs more than the
    similarity itself)."""
    global _INDEL
    if _INDEL is None:
        from rapidfuzz.distance import Indel

        _INDEL = Indel
    return _INDEL


_INDEL: Any = None


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token lists (rapidfuzz's Indel distance, in C).

    The Indel distance is the edit distance with insertions and deletions only, |a| + |b| - 2·LCS.
    """
    distance: int = _indel().distance(a, b)
    return (len(a) + len(b) - distance) // 2


def token_similarity(gold: str, predicted: str) -> float:
    """2·LCS / (|g| + |p|) on lowercased whitespace tokens, the official 1 - distance / length.

    Two texts without any token (never so for gold that passed validation) count as equal.
    """
    # rapidfuzz's Indel normalized similarity, 1 - (|g| + |p| - 2·LCS) / (|g| + |p|): the same operations as the
    # official formula, so the same double (1.0 for two empty lists).
    ids = TokenIds()
    return float(_indel().normalized_similarity(ids.of(gold), ids.of(predicted)))


def _tokens(text: str) -> list[str]:
    # Lowercasing first splits the same (no character lowercases to or from whitespace) and is faster.
    return text.lower().split()


class TokenIds:
    """Each distinct text's lowercased whitespace tokens as numbers, split once and shared by everything that
    counts or compares tokens (the gold's limits, the soft similarity). ``vocabulary`` numbers each distinct
    token; ``ids`` holds the numbers of each text seen. Numbers, not strings: rapidfuzz compares the elements of a
    sequence by their hash, exact for small integers, where two distinct strings could share one. Lowercasing
    does not change how many tokens a text has (no character lowercases to or from whitespace), so
    ``len(of(text))`` is ``len(text.split())``."""

    __slots__ = ("ids", "vocabulary")

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.ids: dict[str, tuple[int, ...]] = {}

    def of(self, text: str) -> tuple[int, ...]:
        found = self.ids.get(text)
        if found is None:
            vocabulary = self.vocabulary
            found = self.ids[text] = tuple([vocabulary.setdefault(token, len(vocabulary)) for token in _tokens(text)])
        return found

    def reader(self) -> Callable[[str], tuple[int, ...]]:
        """Token ids of any text, numbered as these texts are, without changing this object (which may be shared
        by concurrent scorings): a token not in ``vocabulary`` gets a number past it, the same for every text
        read through this reader, so equal tokens get equal numbers and distinct ones distinct numbers."""
        known, vocabulary = self.ids, self.vocabulary
        more: dict[str, int] = {}
        seen: dict[str, tuple[int, ...]] = {}
        base = len(vocabulary)

        def number(token: str) -> int:
            found = vocabulary.get(token)
            if found is None:
                found = more.get(token)
                if found is None:
                    found = more[token] = base + len(more)
            return found

        def read(text: str) -> tuple[int, ...]:
            found = known.get(text)
            if found is None:
                found = seen.get(text)
                if found is None:
                    found = seen[text] = tuple([number(token) for token in _tokens(text)])
            return found

        return read


def phi3(gold: Entity, predicted: Entity) -> float:
    """Number of predicted mentions whose text is one of the gold entity's mentions."""
    wanted = set(gold)
    return float(sum(1 for text in predicted if text in wanted))


def soft_similarity(
    cache: dict[tuple[str, str], float] | None = None, tokens: Callable[[str], Sequence[int]] | None = None
) -> EntitySimilarity:
    """The ``soft`` entity similarity: best ``token_similarity`` over mention pairs (memoised in ``cache``).

    ``tokens`` gives a text's token ids (``TokenIds.reader``); by default each text is split once here."""
    memo = {} if cache is None else cache
    if tokens is None:
        tokens = TokenIds().of
    similarity = _indel().normalized_similarity

    def soft(gold: Entity, predicted: Entity) -> float:
        best = 0.0
        for g in gold:
            for p in predicted:
                value = memo.get((g, p))
                if value is None:
                    value = memo[(g, p)] = float(similarity(tokens(g), tokens(p)))
                if value > best:
                    best = value
        return best

    return soft


# -- cost -----------------------------------------------------------------------------------------
def gold_role_sizes(
    templates: Iterable[Template], tokens: Callable[[str], Sized] | None = None
) -> dict[str, tuple[int, int]]:
    """Per filled role of a document's gold templates: its mentions and their tokens, over all templates.

    ``tokens`` gives a text's tokens (``TokenIds.of``, which keeps them for the similarities); by default each
    text is split here."""
    count = _split_count if tokens is None else tokens
    sizes: dict[str, tuple[int, int]] = {}
    for template in templates:
        mention_counts = template.mentions
        for role, entities in template.filled.items():
            mentions, words = sizes.get(role, (0, 0))
            for entity in entities:
                words += sum(map(len, map(count, entity)))
            sizes[role] = (mentions + mention_counts[role], words)
    return sizes


def _split_count(text: str) -> list[str]:
    return text.split()


def role_work(texts: Collection[str], gold: tuple[int, int], *, join: bool = True) -> tuple[int, int]:
    """At most how many string comparisons and token pairs one predicted role of distinct ``texts`` costs.

    ``gold`` bounds the role's gold side in the document: so many mentions holding so many tokens (an entry of
    ``gold_role_sizes``, or the limits every gold is held to). Comparisons: the pairs of texts the substring
    clean-up tests (with ``join``), plus the (gold mention, text) pairs the similarities look at; token pairs:
    the cells of the soft similarity's LCS tables for those pairs. Frames are not looked at, so this is an upper
    bound, summed over the predicted templates of a document (a multi-label gold frame whose labels repeat aside).
    """
    n = len(texts)
    comparisons = n * (n - 1) // 2 if join else 0
    mentions, tokens = gold
    return comparisons + mentions * n, tokens * sum(map(len, map(str.split, texts)))


# -- alignment ------------------------------------------------------------------------------------
Matrix = Sequence[Sequence[float]]
#: Matchings small enough to find by trying every one-to-one assignment (at most this many of them).
EXHAUSTIVE_ASSIGNMENTS = 720
#: Two assignments whose sums are this close (relative) are a tie, which SciPy breaks as it always did.
TIE = 1e-9


def _max_assignment(matrix: Matrix, *, ties: bool) -> tuple[list[int], list[int]]:
    """Rows (ascending) and columns of a one-to-one maximum-weight matching.

    A small matrix is solved by trying every assignment: written by hand because SciPy's optimize package takes
    about 0.4 s to import, more than scoring a test-size file, and the release's matrices are tiny (at most 5
    entities of a role, 2 templates of a document). Where only the matched sum is wanted (``ties=True``), any
    best assignment gives it. Where the pairs matter too (``ties=False``), only a best assignment clear of every
    other by more than ``TIE`` is taken from the search: that is the one any exact solver finds, SciPy's
    included. Larger matrices, and those ties, go to SciPy's ``linear_sum_assignment``, as before.
    """
    found = _exhaustive_assignment(matrix, ties)
    if found is not None:
        return found
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(np.asarray(matrix, dtype=float), maximize=True)
    return rows.tolist(), cols.tolist()


def _exhaustive_assignment(matrix: Matrix, ties: bool) -> tuple[list[int], list[int]] | None:
    """The best assignment found by trying all (the first of equals); None when there are too many, or, unless
    ``ties``, when another is within ``TIE`` of the best."""
    transposed = len(matrix) > len(matrix[0])
    table = [list(column) for column in zip(*matrix, strict=True)] if transposed else matrix
    short, long = len(table), len(table[0])
    if math.perm(long, short) > EXHAUSTIVE_ASSIGNMENTS:
        return None
    best, runner_up = -math.inf, -math.inf
    chosen: tuple[int, ...] = ()
    for columns in itertools.permutations(range(long), short):
        total = sum(row[j] for row, j in zip(table, columns, strict=True))
        if total > best:
            best, runner_up, chosen = total, best, columns
        elif total > runner_up:
            runner_up = total
    if not ties and best - runner_up <= TIE * max(1.0, abs(best)):
        return None
    pairs = [(j, i) for i, j in enumerate(chosen)] if transposed else list(enumerate(chosen))
    pairs.sort()
    return [i for i, _ in pairs], [j for _, j in pairs]


def _matched_sum(matrix: Matrix, rows: Sequence[int], cols: Sequence[int]) -> float:
    """The weights of a matching added in row order, as NumPy adds a handful of numbers."""
    total = 0.0
    for i, j in zip(rows, cols, strict=True):
        total += matrix[i][j]
    return total


def best_matching_sum(weights: Matrix) -> float:
    """Total weight of a one-to-one maximum-weight matching (weights are non-negative)."""
    if not weights or not weights[0]:
        return 0.0
    if len(weights) == 1 or len(weights[0]) == 1:
        return float(max(max(row) for row in weights))
    rows, cols = _max_assignment(weights, ties=True)
    return _matched_sum(weights, rows, cols)


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
        matched_rows, matched_cols = _max_assignment(matrix, ties=False)
        per_role: dict[str, float] = {}
        for i, j in zip(matched_rows, matched_cols, strict=True):
            for role, value in shares[i][j].items():
                per_role[role] = per_role.get(role, 0.0) + value
        results.append((_matched_sum(matrix, matched_rows, matched_cols), per_role))
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
    default the document's texts are split here."""
    names = options.similarities
    filled = [template for template in predicted if template.filled]  # holding an entity
    if options.empty_document_rule and not gold and not filled:
        return {"predicted": 1, "gold": 1, **dict.fromkeys(names, 1.0), "roles": {}}
    groups: list[list[int]] = []
    # The official code splits only when the prediction lists any template, filled or not.
    if options.multilabel_frames and predicted and any(MULTILABEL_SEPARATOR in t.frame for t in gold):
        gold, groups = _split_multilabel(gold)

    roles: dict[str, dict[str, Any]] = {}
    totals = {"predicted": 0, "gold": 0}
    blank = {**totals, **dict.fromkeys(names, 0.0)}
    for key, templates in (("predicted", filled), ("gold", gold)):
        for template in templates:
            for role, count in template.mentions.items():
                sums = roles.get(role)
                if sums is None:
                    sums = roles[role] = blank.copy()
                sums[key] += count
                totals[key] += count
    stats: dict[str, Any] = dict(totals)
    cache: dict[tuple[str, str], float] = {}
    functions = [phi3 if name == "phi3" else soft_similarity(cache, tokens) for name in names]
    for name, (total, per_role) in zip(names, _align(gold, filled, functions, groups), strict=True):
        stats[name] = total
        for role, value in per_role.items():
            roles[role][name] += value
    stats["roles"] = roles
    return stats


# -- aggregation ----------------------------------------------------------------------------------
def micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> dict[str, float]:
    """Micro P/R/F1 per similarity from summed document (or role) sums: ``{prefix}{name}_p``, ``_r``, ``_f1``."""
    predicted = gold = 0.0
    matched = dict.fromkeys(similarities, 0.0)
    for item in stats:
        predicted += item["predicted"]
        gold += item["gold"]
        for name in similarities:
            matched[name] += item[name]
    out: dict[str, float] = {}
    for name, keys in zip(similarities, _metric_keys(tuple(similarities), prefix), strict=True):
        p, r, f = prf(matched[name], predicted, gold)
        out[keys[0]], out[keys[1]], out[keys[2]] = p, r, f
    return out


def unit_micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> list[dict[str, float]]:
    """``micro_scores`` of each item alone (the per-document breakdown), the same numbers without a loop per item."""
    keys = list(zip(similarities, _metric_keys(tuple(similarities), prefix), strict=True))
    out = []
    for item in stats:
        predicted, gold = 0.0 + item["predicted"], 0.0 + item["gold"]
        scores: dict[str, float] = {}
        for name, (p_key, r_key, f_key) in keys:
            scores[p_key], scores[r_key], scores[f_key] = prf(0.0 + item[name], predicted, gold)
        out.append(scores)
    return out


@functools.cache
def _metric_keys(similarities: tuple[str, ...], prefix: str) -> tuple[tuple[str, str, str], ...]:
    """The metric names of ``micro_scores``, written once: the breakdown asks for them once per document."""
    return tuple((f"{prefix}{name}_p", f"{prefix}{name}_r", f"{prefix}{name}_f1") for name in similarities)


def role_scores(
    stats: Iterable[Mapping[str, Any]],
    similarities: Sequence[str] = SIMILARITIES,
    prefix: str = "ceaf_rme_",
    roles: Iterable[str] | None = None,
) -> dict[str, dict[str, float]]:
    """Micro scores per role name over documents; only the names in ``roles`` when given."""
    wanted = None if roles is None else set(roles)
    names = tuple(similarities)
    # Each role's sums added in document order, as micro_scores adds them: the same floats, one pass.
    totals: dict[str, list[float]] = {}
    for item in stats:
        for role, sums in item["roles"].items():
            if wanted is None or role in wanted:
                total = totals.get(role)
                if total is None:
                    total = totals[role] = [0.0] * (2 + len(names))
                total[0] += sums["predicted"]
                total[1] += sums["gold"]
                for k, name in enumerate(names, 2):
                    total[k] += sums[name]
    keys = _metric_keys(names, prefix)
    out: dict[str, dict[str, float]] = {}
    for role in sorted(totals):
        total = totals[role]
        scores: dict[str, float] = {}
        for k, (p_key, r_key, f_key) in enumerate(keys, 2):
            scores[p_key], scores[r_key], scores[f_key] = prf(total[k], total[0], total[1])
        out[role] = scores
    return out

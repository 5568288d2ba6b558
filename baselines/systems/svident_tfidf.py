"""SV-Ident Task 1 baseline: TF-IDF n-gram features and logistic regression.

Trained on the task's labelled training sentences (``is_variable``), with class weights that
balance the two labels (positives are the minority), then applied to every input sentence.
liblinear with a fixed seed makes the run reproducible.
"""

from __future__ import annotations

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.registry import register
from baselines.tasks.svident import (
    binary_labels,
    detection_submission,
    read_inputs,
    read_training,
    require_sentences,
)
from scorers.base import OptionSpec

#: Sentences classified between two progress reports (and cancellation checks).
_BATCH = 512


@register
class SvidentTfidf(Baseline):
    name = "svident-tfidf-lr"
    version = "1"
    title = "TF-IDF + logistic regression"
    description = (
        "Word uni- and bigram TF-IDF features (sublinear term frequency) and a class-balanced logistic "
        "regression, trained on the task's labelled training sentences."
    )
    scorers = ("svident-detection",)
    options = (
        OptionSpec("ngram_max", 2, "longest word n-gram used as a feature"),
        OptionSpec("c", 1.0, "inverse regularisation strength of the logistic regression"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        labelled = require_sentences(read_training(inputs.training, context), inputs.training)
        labels = binary_labels(labelled)
        sentences = read_inputs(inputs.inputs)
        context.start(len(sentences))
        context.log(f"training on {len(labelled)} sentences ({sum(labels)} mention a variable)")
        vectorizer = TfidfVectorizer(ngram_range=(1, max(1, self.config["ngram_max"])), sublinear_tf=True)
        features = vectorizer.fit_transform([s.text for s in labelled])
        model = LogisticRegression(C=self.config["c"], class_weight="balanced", solver="liblinear", random_state=0)
        model.fit(features, labels)
        context.check()
        predicted: dict[str, bool] = {}
        for start in range(0, len(sentences), _BATCH):
            batch = sentences[start : start + _BATCH]
            flags = model.predict(vectorizer.transform([s.text for s in batch]))
            predicted.update((s.uuid, bool(flag)) for s, flag in zip(batch, flags, strict=True))
            context.advance(len(batch))
        context.log(f"{sum(predicted.values())} of {len(predicted)} input sentences labelled 1")
        return detection_submission(predicted)

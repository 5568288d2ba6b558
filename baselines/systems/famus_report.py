"""FAMuS CDAE-source baseline: the report's gold arguments, predicted as the source's.

This is the "Report Baseline" of FAMuS's ``src/metrics/compute_ceaf_metrics.py``
(``gold_instances_to_predicted_format``): for every input document, the report-side gold template
becomes the prediction, each entity reduced to its first mention's text, roles without fillers
left out, and a template without any filled role becomes no template. It needs the report gold,
an organizer-only resource in IterX format; it is meant for the source task (on the report task
it would copy the answers). Documents the report gold lacks get no template. Every template of a
document is converted (the original takes the first; FAMuS documents have exactly one).
"""

from __future__ import annotations

from typing import Any

from baselines.base import Baseline, BaselineInputs, RunContext
from baselines.io import dump_json
from baselines.registry import register
from baselines.tasks.famus import TEMPLATE_SPANS, pick_iterx_resource, read_cdae_items, read_iterx_gold
from scorers.base import OptionSpec

#: Documents converted between two progress reports (and cancellation checks).
_BATCH = 64


def as_prediction(template: dict[str, Any]) -> dict[str, Any] | None:
    """A gold template in submission form, or ``None`` when it fills no role."""
    out: dict[str, Any] = {"incident_type": template["incident_type"]}
    for role, entities in template.items():
        if role not in ("incident_type", TEMPLATE_SPANS) and entities:
            out[role] = [[entity[0][0]] for entity in entities]
    return out if len(out) > 1 else None


@register
class FamusReport(Baseline):
    name = "famus-cdae-report"
    version = "1"
    title = "Report arguments as source arguments"
    description = (
        "Predicts, for each source document, the arguments annotated in its report (FAMuS's report baseline). "
        "Needs the report-side gold as an organizer resource; meant for the source task."
    )
    scorers = ("famus-cdae",)
    needs = ("resources",)
    options = (
        OptionSpec("report_gold", "", "name of the resource holding the report gold (empty: the only IterX file)"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        items = read_cdae_items(inputs.inputs)
        name, data = pick_iterx_resource(inputs.resources, self.config["report_gold"])
        report = read_iterx_gold(f"resource {name!r}", data)
        context.start(len(items))
        predicted: dict[str, list[dict[str, Any]]] = {}
        for start in range(0, len(items), _BATCH):
            batch = items[start : start + _BATCH]
            for item in batch:
                templates = (as_prediction(t) for t in report.get(item.docid, []))
                predicted[item.docid] = [t for t in templates if t is not None]
            context.advance(len(batch))
        missing = sum(1 for item in items if item.docid not in report)
        if missing:
            context.log(f"{missing} of {len(items)} documents are not in the report gold and get no template")
        return dump_json(predicted)

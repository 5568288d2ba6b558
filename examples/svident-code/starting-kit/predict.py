"""A starting program for the code phase of svident-code: label a sentence 1 when it sounds like a survey
question, else 0. Usage: python predict.py INPUT_FOLDER OUTPUT_FOLDER (Podium runs it so)."""

import csv
import json
import sys
from pathlib import Path

CUES = ("respondent", "asked", "measured", "scale", "how often", "how much", "befragte", "gefragt", "skala")


def main(inputs: Path, output: Path) -> None:
    with (inputs / "inputs.tsv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file, delimiter="\t"))
    labels = {row["uuid"]: "1" if any(cue in row["sentence"].lower() for cue in CUES) else "0" for row in rows}
    (output / "predictions.json").write_text(json.dumps(labels), encoding="utf-8")
    print(f"labelled {len(labels)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

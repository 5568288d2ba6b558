"""A tiny CodaLab competition for the tests: a scoring program that counts matching lines, its gold and results."""

from __future__ import annotations

import io
import zipfile

from scorers.generic.program import pack_gold

#: Accuracy of ``res/prediction.txt`` against ``ref/truth.txt``, line by line, as a CodaLab program writes it.
SCORE_PY = b"""import os, sys
ref = open(os.path.join(sys.argv[1], "ref", "truth.txt")).read().split()
res_file = os.path.join(sys.argv[1], "res", "prediction.txt")
if not os.path.exists(res_file):
    sys.stderr.write("no prediction.txt in the submission\\n")
    sys.exit(3)
res = open(res_file).read().split()
print("scoring", len(res), "lines")
right = sum(1 for a, b in zip(ref, res) if a == b)
with open(os.path.join(sys.argv[2], "scores.txt"), "w") as out:
    out.write("accuracy: %s\\nlines: %d\\n" % (right / len(ref), len(res)))
with open(os.path.join(sys.argv[2], "detailed_results.html"), "w") as out:
    out.write("<h2>Details</h2><p>%d right</p><script>alert(1)</script>" % right)
"""
METADATA = b"command: python3 $program/score.py $input $output\n"
#: The program scorer's options for it, as an imported bundle gives them.
OPTIONS = {
    "metrics": [
        {"key": "accuracy", "title": "Accuracy", "higher_is_better": True},
        {"key": "lines", "title": "Lines", "higher_is_better": False},
    ],
    "image": "codalab/codalab-legacy:py3",
}


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def program(score_py: bytes = SCORE_PY, metadata: bytes = METADATA) -> bytes:
    return zip_of({"metadata": metadata, "score.py": score_py})


def gold(truth: list[str], score_py: bytes = SCORE_PY) -> bytes:
    return pack_gold(program(score_py), zip_of({"truth.txt": "\n".join(truth).encode()}))


def result(prediction: list[str]) -> bytes:
    return zip_of({"prediction.txt": "\n".join(prediction).encode()})

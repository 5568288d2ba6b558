"""The ``code:`` key of a phase: the phase takes programs, run in the sandbox on its hidden inputs.

```yaml
code:
  inputs: [{derive: inputs, from: gold}]     # required: file entries, mounted read-only at /input/<name>
  command: python predict.py /input /output  # default; a ``metadata`` file in the program's zip overrides it
  output: predictions.json                   # the prediction file in /output; absent: the folder, zipped
  runtime: py311                             # a runtime of the operator's table; default: the default one
  time_limit_s: 600                          # wall time of one run; at most PODIUM_CODE_MAX_TIME_S
  memory_mb: 4096                            # all the run's processes together; at most PODIUM_CODE_MAX_MEMORY_MB
  show_logs: false                           # the team reads its program's stdout and stderr
  starting_kit: starting-kit                 # a folder of the bundle: zipped, a public file and the sample
  gpu: false                                 # a run gets a GPU of its worker (PODIUM_CODE_ALLOW_GPU may forbid it)
  gpu_fallback_cpu: false                    # with gpu: a worker without a GPU runs it on the CPU instead of waiting
  ingestion_program: {path: ingestion.zip}   # scorer: program only: a CodaLab/Codabench ingestion program
```

With ``ingestion_program`` (what CodaLab and Codabench bundles are imported as), the team's zip is code that the
ingestion program imports: the inputs are its input data (``/app/input_data``), ``command`` and ``output`` do
not apply, and a zip of result files is scored as it is (``app.services.code.ingestion``).

Each problem is reported under its key path (``tasks[0].phases[0].code.output``). The operator's caps are
checked where the server puts the competition online (``CodeCaps.problems``, from ``catalog``), since only
the server knows them.
"""

from __future__ import annotations

from typing import Any, Protocol

from app.services.bundles.checks import Keys, key_path, kind
from app.services.bundles.files import FileFinder, FileProblem, check_file_name
from app.services.bundles.spec import BundleFile
from app.services.code.ingestion import program_problem, stored_inputs
from app.services.code.inputs import inputs_zip
from app.services.code.settings import DEFAULT_COMMAND, DEFAULT_MEMORY_MB, DEFAULT_TIME_S, CodeSettings
from scorers import Scorer

CODE_KEYS = (
    frozenset({"inputs"}),
    frozenset(
        [
            *("command", "output", "runtime", "time_limit_s", "memory_mb", "show_logs", "starting_kit"),
            *("ingestion_program", "gpu", "gpu_fallback_cpu"),
        ]
    ),
)
#: The longest command and runtime name a bundle may give.
MAX_COMMAND = 2000
MAX_RUNTIME = 100
#: The name of the starting kit's zip among the phase's public files.
STARTING_KIT = "starting-kit.zip"


class Reader(Protocol):
    """What of the bundle's reader (``loader._Reader``, a ``KeyPathChecker``) the code keys use."""

    finder: FileFinder

    def add(self, path: str, message: str) -> None: ...
    def mapping(self, value: Any, path: str, keys: Keys) -> dict[str, Any] | None: ...
    def items(self, m: dict[str, Any], key: str, path: str, *, required: bool = False) -> list[tuple[str, Any]]: ...
    def entry(self, value: Any, path: str, *, derived_ok: bool = False) -> dict[str, Any] | None: ...
    def file(self, m: dict[str, Any], path: str) -> BundleFile | None: ...
    def unique_name(self, name: str, where: str, names: dict[str, str]) -> bool: ...
    def text(
        self, m: dict[str, Any], key: str, path: str, *, optional: bool = False, max_length: int | None = None
    ) -> str: ...
    def positive(self, m: dict[str, Any], key: str, path: str) -> int | None: ...
    def flag(self, m: dict[str, Any], key: str, path: str, *, default: bool = False) -> bool: ...
    def inputs(
        self,
        entry: dict[str, Any],
        path: str,
        phase: str,
        gold: BundleFile | None,
        scorer: Scorer[Any, Any, Any] | None,
    ) -> BundleFile | None: ...


def read_code(
    reader: Reader,
    phase: dict[str, Any],
    path: str,
    slug: str,
    gold: BundleFile | None,
    scorer: Scorer[Any, Any, Any] | None,
) -> tuple[CodeSettings | None, tuple[BundleFile, ...], BundleFile | None]:
    """The phase's ``code`` settings, inputs and starting kit (zipped), or ``(None, (), None)`` for a phase without
    the key (or a bad one)."""
    if phase.get("code") is None:
        return None, (), None
    path = key_path(path, "code")
    m = reader.mapping(phase["code"], path, CODE_KEYS)
    if m is None:
        return None, (), None
    inputs: list[BundleFile] = []
    names: dict[str, str] = {}
    for where, item in reader.items(m, "inputs", path, required=True):
        entry = reader.entry(item, where, derived_ok=True)
        if entry is None:
            continue
        file = reader.inputs(entry, where, slug, gold, scorer) if "derive" in entry else reader.file(entry, where)
        if file is not None and reader.unique_name(file.name, where, names):
            inputs.append(file)
    command = reader.text(m, "command", path, optional=True, max_length=MAX_COMMAND).strip() or DEFAULT_COMMAND
    output = m.get("output")
    if output is not None:
        problem = check_file_name(output) if isinstance(output, str) else f"expected a file name, found {kind(output)}"
        if problem:
            reader.add(key_path(path, "output"), problem)
            output = None
    elif scorer is not None and not scorer.raw_submission:
        reader.add(
            key_path(path, "output"),
            f"{scorer.name} reads one prediction file: name the file the program writes in /output",
        )
    runtime = reader.text(m, "runtime", path, optional=True, max_length=MAX_RUNTIME).strip() or None
    kit = _starting_kit(reader, m.get("starting_kit"), key_path(path, "starting_kit"))
    gpu, fallback = reader.flag(m, "gpu", path), reader.flag(m, "gpu_fallback_cpu", path)
    if fallback and not gpu:
        reader.add(key_path(path, "gpu_fallback_cpu"), "applies only to a phase with gpu: true")
    ingestion = _ingestion_program(reader, m, key_path(path, "ingestion_program"), scorer)
    if ingestion is not None:
        inputs = list(stored_inputs(ingestion, inputs))
    settings = CodeSettings(
        command=command,
        output=output,
        runtime=runtime,
        time_limit_s=reader.positive(m, "time_limit_s", path) or DEFAULT_TIME_S,
        memory_mb=reader.positive(m, "memory_mb", path) or DEFAULT_MEMORY_MB,
        show_logs=reader.flag(m, "show_logs", path),
        starting_kit=kit.name if kit is not None else None,
        gpu=gpu,
        gpu_fallback_cpu=fallback,
        ingestion=ingestion is not None,
    )
    return settings, tuple(inputs), kit


def _ingestion_program(
    reader: Reader, m: dict[str, Any], path: str, scorer: Scorer[Any, Any, Any] | None
) -> BundleFile | None:
    """The ingestion program's zip, checked for a metadata file naming its command; None where there is none."""
    if m.get("ingestion_program") is None:
        return None
    if scorer is not None and scorer.name != "program":
        reader.add(path, "only a phase scored by a scoring program (scorer: program) runs an ingestion program")
        return None
    entry = reader.entry(m["ingestion_program"], path)
    file = reader.file(entry, path) if entry is not None else None
    if file is None:
        return None
    problem = program_problem(file.data)
    if problem:
        reader.add(path, problem)
        return None
    return file


def _starting_kit(reader: Reader, folder: Any, path: str) -> BundleFile | None:
    """The bundle's folder ``folder`` zipped as ``STARTING_KIT``; None where there is none (or a bad one)."""
    if folder is None:
        return None
    if not isinstance(folder, str):
        reader.add(path, f"expected a folder of the bundle, found {kind(folder)}")
        return None
    try:
        files = reader.finder.folder(folder)
    except FileProblem as exc:
        reader.add(path, str(exc))
        return None
    return inputs_zip([BundleFile(name, data, "") for name, data in files], STARTING_KIT)

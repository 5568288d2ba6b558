"""Competition bundles: one YAML file plus the files it names, checked and read into a ``CompetitionSpec``.

``load_bundle`` validates everything before anything is stored: the keys (unknown ones are refused, so
a typo cannot pass silently), slugs, times, limits, scorer names and options, the files (which may not
leave their base folder) and every phase's gold, parsed with its task's scorer. All mistakes are
collected and raised together in one ``BundleError``, each under its key path
(``tasks[1].phases[0].gold: file not found: data/gold.tsv``, ``tasks[0].scorer_options.measures[2]: unknown
trec_eval measure 'mapp'``). A bundle that loads can still carry warnings, each under its key path
(``CompetitionSpec.warnings``: a ``trec`` task that lets a run leave out its hardest queries). The format is
documented, key by key, in ``examples/README.md``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from app.services.bundles.board_keys import read_boards
from app.services.bundles.checks import KeyPathChecker, Keys, key_path, kind
from app.services.bundles.code_keys import read_code
from app.services.bundles.files import FileFinder, FileProblem, check_file_name
from app.services.bundles.spec import BundleError, BundleFile, CompetitionSpec, PhaseSpec, TaskSpec
from app.services.bundles.split_keys import SPLIT_KEYS, read_split
from app.services.bundles.strict_yaml import describe_yaml_error, load_strict
from app.storage.models import Competition, Participation, Selection, Visibility
from app.storage.types import column_length
from codalab.bounded_yaml import NestedTooDeep
from scorers import OptionsError, Scorer, ScorerError, UnknownScorer, ValidationError, scorer_class
from scorers.inputs import participant_inputs, renamable_formats

#: The file a bundle folder is read from when ``load_bundle`` is given the folder.
BUNDLE_FILE = "competition.yaml"
#: The YAML text holds descriptions, not data; anything larger is a mistake.
MAX_YAML_BYTES = 1024 * 1024
#: The values a bundle may give, the first being the default: the models' own.
PARTICIPATION = tuple(Participation)
VISIBILITY = tuple(Visibility)
SELECTION = tuple(Selection)
#: What a phase's public board shows of each team (``board``): every score, or the Ladder's.
BOARDS = ("plain", "ladder")
#: Competitions, tasks and phases hold their titles in columns of one size.
MAX_TITLE = column_length(Competition.title)


def _keys(required: str, optional: str) -> Keys:
    return frozenset(required.split()), frozenset(optional.split())


COMPETITION_KEYS = _keys(
    "slug title tasks", "description organizers participation storage_quota_bytes team_storage_quota_bytes"
)
TASK_KEYS = _keys("slug title scorer phases", "description scorer_options training_files resources")
PHASE_KEYS = _keys(
    "slug title gold",
    "description starts_at ends_at public_files daily_limit total_limit visibility selection max_upload_bytes "
    "opaque_ids intervals board boards execution_time_limit show_program_stderr ingestion_program code "
    + " ".join(SPLIT_KEYS),
)
FILE_KEYS = _keys("", "path data derive from name")


def load_bundle(path: Path, data_dir: Path | None = None, *, data_refusal: str | None = None) -> CompetitionSpec:
    """Read and check the bundle at ``path`` (its YAML file, or the folder holding ``competition.yaml``).

    ``path:`` entries are relative to the YAML file's folder, ``data:`` entries to ``data_dir``; with
    ``data_refusal`` every ``data:`` entry is refused with that message instead (see ``FileFinder``).
    Raises ``BundleError`` listing every problem found.
    """
    file = path / BUNDLE_FILE if path.is_dir() else path
    document = _read_yaml(file)
    reader = _Reader(FileFinder(file.parent, data_dir, data_refusal=data_refusal))
    spec = reader.competition(document)
    if reader.problems or spec is None:
        raise BundleError(reader.problems)
    return spec


def _read_yaml(file: Path) -> Any:
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise BundleError([("", f"bundle file not found: {file}")]) from None
    except OSError as exc:
        raise BundleError([("", f"cannot read the bundle file {file}: {exc.strerror or exc}")]) from None
    if len(data) > MAX_YAML_BYTES:
        raise BundleError([("", f"the bundle file is {len(data)} bytes; at most {MAX_YAML_BYTES} are accepted")])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BundleError([("", f"byte {exc.start}: the bundle file is not UTF-8 text")]) from None
    try:
        return load_strict(text)
    except NestedTooDeep as exc:
        raise BundleError([(exc.path, f"{exc.reason} ({exc.where})")]) from None
    except yaml.YAMLError as exc:
        raise BundleError([("", f"not valid YAML: {describe_yaml_error(exc)}")]) from None


class _Reader(KeyPathChecker):
    """Walks the parsed YAML level by level, building the specs and collecting every problem."""

    def __init__(self, files: FileFinder) -> None:
        super().__init__()
        self.finder = files
        #: ``(key path, message)`` of what loads but is probably a mistake (``CompetitionSpec.warnings``).
        self.warnings: list[tuple[str, str]] = []

    # -- files ----------------------------------------------------------------------------------------
    def entry(self, value: Any, path: str, *, derived_ok: bool = False) -> dict[str, Any] | None:
        """A file entry's mapping with exactly one source (``path``, ``data`` or, where allowed, ``derive``)."""
        if isinstance(value, str):
            self.add(path, f"expected a file entry such as {{path: {value}}} or {{data: {value}}}, found text")
            return None
        m = self.mapping(value, path, FILE_KEYS)
        if m is None:
            return None
        sources = [key for key in ("path", "data", "derive") if key in m]
        name = m.get("name")
        name_problem = None if name is None else check_file_name(name) if isinstance(name, str) else "expected text"
        if name_problem:
            self.add(key_path(path, "name"), name_problem)
        if len(sources) != 1:
            allowed = "path, data or derive" if derived_ok else "path or data"
            self.add(path, f"expected exactly one of {allowed}; found {', '.join(sources) or 'none'}")
            return None
        if sources == ["derive"]:
            return self.derive_entry(m, path, derived_ok) if not name_problem else None
        if "from" in m:
            self.add(key_path(path, "from"), "only a derive entry takes 'from'")
        return None if name_problem else m

    def derive_entry(self, m: dict[str, Any], path: str, derived_ok: bool) -> dict[str, Any] | None:
        if not derived_ok:
            self.add(
                key_path(path, "derive"), "only a phase's public_files may be derived; name a file with path or data"
            )
            return None
        ok = True
        if m["derive"] != "inputs":
            self.add(key_path(path, "derive"), f"expected inputs (the only derivation), found {kind(m['derive'])}")
            ok = False
        if m.get("from") != "gold":
            self.add(key_path(path, "from"), f"expected gold, found {kind(m.get('from'))}")
            ok = False
        return m if ok else None

    def file(self, m: dict[str, Any], path: str) -> BundleFile | None:
        """The file a ``path`` or ``data`` entry names, read into memory."""
        key = "path" if "path" in m else "data"
        relative = m[key]
        if not isinstance(relative, str):
            self.add(path, f"expected a file path after {key}:, found {kind(relative)}")
            return None
        try:
            real = self.finder.find(key, relative)
            data = self.finder.read(real)
        except FileProblem as exc:
            self.add(path, str(exc))
            return None
        return _bundle_file(m.get("name") or real.name, data)

    def files(self, m: dict[str, Any], key: str, path: str) -> tuple[BundleFile, ...]:
        """A list of file entries (training files, resources) with distinct names."""
        out: list[BundleFile] = []
        names: dict[str, str] = {}
        for where, value in self.items(m, key, path):
            entry = self.entry(value, where)
            file = self.file(entry, where) if entry is not None else None
            if file is not None and self.unique_name(file.name, where, names):
                out.append(file)
        return tuple(out)

    def unique_name(self, name: str, where: str, names: dict[str, str]) -> bool:
        if name in names:
            self.add(where, f"the file name {name!r} is already used by {names[name]}; give one of them a name")
            return False
        names[name] = where
        return True

    # -- levels ---------------------------------------------------------------------------------------
    def competition(self, document: Any) -> CompetitionSpec | None:
        m = self.mapping(document, "", COMPETITION_KEYS)
        if m is None:
            return None
        slug = self.slug(m, "", {})
        organizers: list[str] = []
        for where, name in self.items(m, "organizers", ""):
            if not isinstance(name, str) or not name.strip():
                self.add(where, f"expected a user name, found {kind(name)}")
            elif name in organizers:
                self.add(where, f"{name!r} is listed twice")
            else:
                organizers.append(name)
        taken: dict[str, str] = {}
        tasks = [self.task(value, where, taken) for where, value in self.items(m, "tasks", "", required=True)]
        return CompetitionSpec(
            slug=slug,
            title=self.text(m, "title", "", max_length=MAX_TITLE),
            description=self.text(m, "description", "", optional=True),
            organizers=tuple(organizers),
            participation=self.choice(m, "participation", "", PARTICIPATION),
            storage_quota_bytes=self.positive(m, "storage_quota_bytes", ""),
            team_storage_quota_bytes=self.positive(m, "team_storage_quota_bytes", ""),
            tasks=tuple(task for task in tasks if task is not None),
            warnings=tuple(self.warnings),
        )

    def scorer(self, m: dict[str, Any], path: str) -> tuple[str, Scorer[Any, Any, Any] | None, dict[str, Any]]:
        """The scorer's name, an instance with the options checked, and the options as given."""
        name = self.text(m, "scorer", path)
        given = m.get("scorer_options")
        given = {} if given is None else given
        if not name:
            return name, None, {}
        try:
            cls = scorer_class(name)
        except UnknownScorer as exc:
            self.add(key_path(path, "scorer"), str(exc))
            return name, None, {}
        where = key_path(path, "scorer_options")
        try:
            resolved = cls.resolve_options(given)
            scorer = cls(resolved)
        except OptionsError as exc:
            self.add(key_path(where, exc.key) if exc.key else where, exc.detail)
            return name, None, {}
        for key, message in cls.config_warnings(resolved):
            self.warnings.append((key_path(where, key), message))
        return name, scorer, {key: resolved[key] for key in given}

    def task(self, value: Any, path: str, taken: dict[str, str]) -> TaskSpec | None:
        m = self.mapping(value, path, TASK_KEYS)
        if m is None:
            return None
        slug = self.slug(m, path, taken)
        name, scorer, options = self.scorer(m, path)
        phase_slugs: dict[str, str] = {}
        phases = [
            self.phase(item, where, phase_slugs, scorer) for where, item in self.items(m, "phases", path, required=True)
        ]
        return TaskSpec(
            slug=slug,
            title=self.text(m, "title", path, max_length=MAX_TITLE),
            description=self.text(m, "description", path, optional=True),
            scorer=name,
            scorer_options=options,
            training_files=self.files(m, "training_files", path),
            resources=self.files(m, "resources", path),
            phases=tuple(phase for phase in phases if phase is not None),
        )

    def phase(
        self, value: Any, path: str, taken: dict[str, str], scorer: Scorer[Any, Any, Any] | None
    ) -> PhaseSpec | None:
        m = self.mapping(value, path, PHASE_KEYS)
        if m is None:
            return None
        slug = self.slug(m, path, taken)
        gold = self.gold(m, path, scorer)
        starts_at, ends_at = self.time(m, "starts_at", path), self.time(m, "ends_at", path)
        if starts_at and ends_at and ends_at <= starts_at:
            self.add(key_path(path, "ends_at"), "must be later than starts_at")
        public: list[BundleFile] = []
        names: dict[str, str] = {}
        for where, item in self.items(m, "public_files", path):
            entry = self.entry(item, where, derived_ok=True)
            if entry is None:
                continue
            file = self.inputs(entry, where, slug, gold, scorer) if "derive" in entry else self.file(entry, where)
            if file is not None and self.unique_name(file.name, where, names):
                public.append(file)
        # Every key is read before a phase with a bad gold is dropped, so that all problems show at once.
        title = self.text(m, "title", path, max_length=MAX_TITLE)
        description = self.text(m, "description", path, optional=True)
        daily_limit = self.positive(m, "daily_limit", path)
        total_limit = self.positive(m, "total_limit", path)
        max_upload_bytes = self.positive(m, "max_upload_bytes", path)
        visibility = self.choice(m, "visibility", path, VISIBILITY)
        selection = self.choice(m, "selection", path, SELECTION)
        opaque_ids = self.flag(m, "opaque_ids", path)
        # A scorer that takes the upload as it is (a scoring program) scores it as a whole: no documents to
        # resample, so its boards have no intervals, and asking for them is a mistake worth naming.
        whole = scorer is not None and scorer.raw_submission
        intervals = self.flag(m, "intervals", path, default=not whole)
        if whole and intervals:
            self.add(key_path(path, "intervals"), f"{scorer.name} scores a submission as a whole: no units to resample")
        board = self.choice(m, "board", path, BOARDS)
        boards = read_boards(self, m, path, scorer)
        if whole and board == "ladder" and scorer is not None:
            self.add(key_path(path, "board"), f"{scorer.name} scores a submission as a whole: no units to compare on")
        execution_time_limit = self.positive(m, "execution_time_limit", path)
        show_program_stderr = self.flag(m, "show_program_stderr", path)
        ingestion_program = self.flag(m, "ingestion_program", path)
        program = scorer is not None and scorer.name == "program"
        for key in ("execution_time_limit", "show_program_stderr", "ingestion_program"):
            if key in m and scorer is not None and not program:
                self.add(key_path(path, key), "only a phase scored by a scoring program (scorer: program) takes it")
        if opaque_ids and scorer is not None and scorer.name not in renamable_formats():
            self.add(
                key_path(path, "opaque_ids"),
                f"the ids of {scorer.name} cannot be replaced; they can for {', '.join(renamable_formats())}",
            )
        split = read_split(self, m, path, scorer)
        if split.frozen_at is not None and starts_at is not None and split.frozen_at <= starts_at:
            self.add(key_path(path, "frozen_at"), "must be later than starts_at")
        code, code_inputs, kit = read_code(self, m, path, slug, gold, scorer)
        if kit is not None and self.unique_name(kit.name, key_path(path, "code.starting_kit"), names):
            public.append(kit)
        if gold is None:
            return None
        return PhaseSpec(
            slug=slug,
            title=title,
            description=description,
            starts_at=starts_at,
            ends_at=ends_at,
            gold=gold,
            public_files=tuple(public),
            daily_limit=daily_limit,
            total_limit=total_limit,
            visibility=visibility,
            selection=selection,
            max_upload_bytes=max_upload_bytes,
            opaque_ids=opaque_ids,
            intervals=intervals,
            board=board,
            boards=boards,
            execution_time_limit=execution_time_limit,
            show_program_stderr=show_program_stderr,
            ingestion_program=ingestion_program,
            code=code,
            code_inputs=code_inputs,
            private_share=split.private_share,
            private_board=split.private_board,
            final_submissions=split.final_submissions,
            frozen_at=split.frozen_at,
        )

    def gold(self, m: dict[str, Any], path: str, scorer: Scorer[Any, Any, Any] | None) -> BundleFile | None:
        """The phase's gold, parsed with the task's scorer so that a bad gold is refused now, not at scoring."""
        if "gold" not in m:
            return None  # reported as a missing key
        where = key_path(path, "gold")
        entry = self.entry(m["gold"], where)
        gold = self.file(entry, where) if entry is not None else None
        if gold is None or scorer is None:
            return None
        try:
            scorer.parse_gold(gold.data)
        except ValidationError as exc:
            for problem in exc.problems:
                self.add(where, str(problem))
            if exc.total > len(exc.problems):
                self.add(where, f"... and {exc.total - len(exc.problems)} more problems")
            return None
        except ScorerError as exc:
            self.add(where, str(exc))
            return None
        return gold

    def inputs(
        self,
        entry: dict[str, Any],
        path: str,
        phase: str,
        gold: BundleFile | None,
        scorer: Scorer[Any, Any, Any] | None,
    ) -> BundleFile | None:
        """The participants' inputs derived from the gold (the answers removed)."""
        if gold is None or scorer is None:
            return None  # the gold's or the scorer's problem is already reported
        try:
            filename, data = participant_inputs(scorer.name, gold.data)
        except ScorerError as exc:
            self.add(path, f"cannot derive the inputs from the gold: {exc}")
            return None
        return _bundle_file(entry.get("name") or (f"{phase}-{filename}" if phase else filename), data, derived=True)


def _bundle_file(name: str, data: bytes, *, derived: bool = False) -> BundleFile:
    return BundleFile(name, data, hashlib.sha256(data).hexdigest(), derived)

"""``podium demo``: the example competitions and two demo accounts, idempotently.

The three seed competitions come from ``examples/<name>/release.yaml`` on the real releases when a
data folder is given, else from ``examples/<name>/competition.yaml`` on the small example data; the
example of each generic scorer (``trec``, ``classification``, ``regression``: invented data, configured
in the bundle) and the invitational example (approval, hidden phase) are always added, and so is the code
example (``svident-code``: teams upload programs) where this host can run them (bubblewrap installed; else
the report says why it was left out). A competition
that exists already is left as it is, and so is an account: the demo accounts get a password and a token when
they are made, printed once; running again never changes them (a password someone chose, a token in use).

With ``baselines``, every phase of these competitions also gets one run of each fast hosted baseline that
serves its scorer (those that need no GPU: TF-IDF, BM25, gazetteer, lemma, report), queued once (a phase
that has a run of that system, whatever its outcome, gets none again), so that the first leaderboards a
newcomer sees have marked baseline rows (not a code phase's: its inputs are hidden from a hosted baseline).
The runs are ordinary queued jobs: ``podium demo`` runs them before it returns, or the server's pool resumes
them.
"""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.baselines import runs
from app.services.bundles.loader import BUNDLE_FILE, load_bundle
from app.services.competitions import catalog
from app.storage.models import BaselineRun, Competition, CompetitionOrganizer, Task, TaskFileKind, User
from baselines import baselines_for
from sandbox.bwrap import BWRAP
from sandbox.runner import BWRAP_ENV

SEED = ("svident", "scier", "famus")
#: The examples of the scorers an organizer configures in the bundle, then the invitational example.
EXTRA = ("trec", "classification", "regression", "private-demo")
#: The examples whose phases take programs, loaded where the sandbox can run them.
CODE = ("svident-code",)
RELEASE_FILE = "release.yaml"
TOKEN_LABEL = "demo"  # noqa: S105  (a label, not a secret)


@dataclass(frozen=True)
class Account:
    role: str
    name: str
    #: The password and token made with the account; ``None`` for an account that was already there.
    password: str | None
    token: str | None


@dataclass(frozen=True)
class QueuedRun:
    id: int
    #: ``competition/task/phase``
    phase: str
    baseline: str


@dataclass
class DemoReport:
    competitions: list[tuple[str, bool]] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    baseline_runs: list[QueuedRun] = field(default_factory=list)
    #: One line for each example left out, saying why.
    notes: list[str] = field(default_factory=list)


def programs_can_run() -> bool:
    """Whether this host has bubblewrap, without which no code phase's run can start."""
    return shutil.which(BWRAP, path=BWRAP_ENV["PATH"]) is not None


def _account(session: Session, role: str, name: str, *, organizer: bool) -> tuple[User, Account]:
    """The demo account ``name``, made with a password and a token when missing, else left as it is."""
    user = users.find_user(session, name)
    if user is not None:
        return user, Account(role, name, None, None)
    password = secrets.token_urlsafe(12)
    user = users.create_user(session, name, password, is_organizer=organizer)
    return user, Account(role, name, password, users.issue_token(session, user, TOKEN_LABEL))


def _slug(bundle: Path) -> str | None:
    """The bundle's slug, read cheaply so that an existing competition is not loaded again."""
    try:
        document = yaml.safe_load(bundle.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    slug = document.get("slug") if isinstance(document, dict) else None
    return slug if isinstance(slug, str) else None


def bundles(examples: Path, data_dir: Path | None, *, programs: bool = True) -> list[Path]:
    """The bundle files ``seed`` loads, in order (the code examples only with ``programs``)."""
    chosen = []
    for name in SEED:
        release = examples / name / RELEASE_FILE
        chosen.append(release if data_dir is not None and release.is_file() else examples / name / BUNDLE_FILE)
    chosen += [examples / name / BUNDLE_FILE for name in EXTRA + (CODE if programs else ())]
    return chosen


def fast_baselines(task: Task) -> list[str]:
    """The hosted baselines for the task's scorer that need no GPU (no torch), are installed here and find
    what they read in it (training files, organizer resources), by name."""
    has = {"training": TaskFileKind.TRAINING, "resources": TaskFileKind.RESOURCE}
    kinds = {file.kind for file in task.files}
    return [
        cls.name
        for cls in baselines_for(task.scorer)
        if not cls.wants_gpu and not cls.missing() and all(has[need] in kinds for need in cls.needs)
    ]


def _queue_baselines(session: Session, organizer: User, competition: Competition) -> list[QueuedRun]:
    """One run of each fast baseline on each phase of ``competition`` that never had one of that system."""
    queued = []
    for task in competition.tasks:
        for phase in task.phases:
            if phase.code is not None:
                continue
            ran = set(session.scalars(select(BaselineRun.baseline).where(BaselineRun.phase_id == phase.id)))
            for name in fast_baselines(task):
                if name not in ran:
                    run = runs.start_run(session, organizer, phase, name)
                    queued.append(QueuedRun(run.id, f"{competition.slug}/{task.slug}/{phase.slug}", name))
    return queued


def seed(
    session: Session,
    examples: Path,
    data_dir: Path | None,
    *,
    baselines: bool = False,
    programs: bool | None = None,
) -> DemoReport:
    """Create what is missing (with ``baselines``, queue the fast baselines' runs; the code examples only with
    ``programs``, by default where ``programs_can_run``); raises ``BundleError`` for a bundle that does not load."""
    report = DemoReport()
    if programs is None:
        programs = programs_can_run()
    if not programs:
        report.notes += [
            f"{name} left out: bubblewrap (bwrap) is not installed, so programs cannot run" for name in CODE
        ]
    organizer, organizer_account = _account(session, "organizer", "demo-organizer", organizer=True)
    _, participant_account = _account(session, "participant", "demo-participant", organizer=False)
    report.accounts = [organizer_account, participant_account]
    for bundle in bundles(examples, data_dir, programs=programs):
        slug = _slug(bundle)
        competition = session.scalar(select(Competition).where(Competition.slug == slug)) if slug else None
        created = False
        if competition is None:
            spec = load_bundle(bundle, data_dir)
            competition, created = catalog.create_competition(session, spec, creator=organizer, if_exists="skip")
        if session.get(CompetitionOrganizer, (competition.id, organizer.id)) is None:
            session.add(CompetitionOrganizer(competition_id=competition.id, user_id=organizer.id))
            session.flush()
        report.competitions.append((competition.slug, created))
        if baselines:
            report.baseline_runs += _queue_baselines(session, organizer, competition)
    session.flush()
    return report

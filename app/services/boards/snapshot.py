"""A phase's ranked leaderboard as one class of viewer sees it, computed once from the stored scores.

``compute_snapshot`` reads the candidates (``app.services.boards.standings``), ranks them with the
phase's rules (``leaderboard.ranking``) and keeps numbers only where the viewer may see them: a
hidden phase shows them to its organizers only, until it is revealed. Whatever pages, exports and
the JSON API make of a snapshot is made once per snapshot (``BoardSnapshot.derived``). With the
ranking come the entries' confidence intervals and the comparisons of neighbours
(``app.services.boards.uncertainty``), under the same rule: none where the numbers are hidden.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy.orm import Session

from app.services.boards import ladder, private, standings, uncertainty
from app.services.boards.kept import Kept
from app.services.boards.private import RankedBy, SplitBoard
from app.services.boards.staleness import fingerprint
from app.services.code.settings import CodeSettings
from app.services.competitions.catalog import phase_state, task_description
from app.storage.models import Phase, Visibility
from leaderboard.ranking import Candidate, Entry, Rules, Selection, rank, utc
from leaderboard.uncertainty import BoardUncertainty, phase_seed
from scorers import ScorerDescription, get_scorer
from scorers.split import PrivateBoard

log = logging.getLogger(__name__)

PhaseRef = tuple[str, str, str]
#: The two classes of viewer: the public (anyone who does not organize the competition), and the
#: competition's organizers, who also see a hidden phase's numbers.
Viewers = Literal["public", "organizers"]


@dataclass(frozen=True)
class PhaseFacts:
    """The phase as a leaderboard page shows it, as plain values (usable after the session closed)."""

    id: int
    competition_id: int
    competition: str
    competition_title: str
    task: str
    task_title: str
    phase: str
    phase_title: str
    description: str
    selection: str
    visibility: str
    revealed_at: datetime | None
    starts_at: datetime | None
    ends_at: datetime | None
    #: The board shows intervals and comparisons (the bundle's ``intervals``).
    intervals: bool = True
    #: Imported with an ingestion program: code submissions run through it, result zips are scored as they are.
    ingestion_program: bool = False
    #: A code phase: how it runs programs (``CodeSettings.convention``), and whether its sample is a starting kit.
    program: str | None = None
    starting_kit: bool = False
    #: A private split (``app.services.boards.private``): the share of units kept private (None: no split) and
    #: what the board ranks by once the phase is revealed (``private`` or ``all`` units).
    private_share: float | None = None
    private_board: str = "private"
    #: ``ladder``: the public board shows each team's score as the Ladder does (``app.services.boards.ladder``).
    board: str = "plain"
    #: Further boards (``leaderboard.multi.BoardSpec.to_dict`` each), ranked by ``app.web.pages.further_boards``.
    boards: tuple[dict[str, Any], ...] = ()
    #: How many final submissions a team marks (None: none), and when the public board froze (None: never).
    final_submissions: int | None = None
    frozen_at: datetime | None = None

    @property
    def ref(self) -> PhaseRef:
        return (self.competition, self.task, self.phase)

    @property
    def metrics_public(self) -> bool:
        return self.visibility == Visibility.PUBLIC or self.revealed_at is not None

    @property
    def frozen(self) -> bool:
        """Whether the public board shows only what was submitted before ``frozen_at`` (until the reveal)."""
        return self.frozen_at is not None and self.revealed_at is None

    @property
    def ranked_by(self) -> RankedBy:
        """The units the phase's board ranks by: the public ones, until a phase with a split is revealed."""
        if self.private_share is None or self.revealed_at is None:
            return "public"
        return "all" if self.private_board == "all" else "private"

    def state(self, now: datetime) -> str:
        """upcoming, open or closed at ``now`` (``catalog.phase_state`` reads only the two times)."""
        return phase_state(cast(Phase, self), now)

    @classmethod
    def of(cls, phase: Phase) -> PhaseFacts:
        task = phase.task
        competition = task.competition
        code = CodeSettings.of(phase.code) if phase.code is not None else None
        return cls(
            id=phase.id,
            competition_id=competition.id,
            competition=competition.slug,
            competition_title=competition.title,
            task=task.slug,
            task_title=task.title,
            phase=phase.slug,
            phase_title=phase.title,
            description=phase.description,
            selection=phase.selection,
            visibility=phase.visibility,
            revealed_at=phase.revealed_at,
            starts_at=phase.starts_at,
            ends_at=phase.ends_at,
            intervals=phase.intervals,
            ingestion_program=phase.ingestion_program,
            program=code.convention() if code else None,
            starting_kit=bool(code and code.starting_kit),
            private_share=phase.private_share,
            private_board=phase.private_board,
            board=phase.board,
            boards=tuple(phase.boards or ()),
            final_submissions=phase.final_submissions,
            frozen_at=phase.frozen_at,
        )


@dataclass
class BoardSnapshot:
    """A phase's ranked leaderboard as one class of viewer sees it, at one generation."""

    facts: PhaseFacts
    viewers: Viewers
    #: ``True`` when this class of viewer may not see the phase's numbers (then nothing is ranked).
    hidden: bool
    description: ScorerDescription
    rules: Rules
    entries: tuple[Entry, ...]
    #: Every candidate with numbers this class may see (the chart of scores over time uses them).
    candidates: tuple[Candidate, ...]
    generation: int
    #: ``board_changes.fingerprint`` of the phase, read before the candidates.
    fingerprint: tuple[Any, ...]
    made_at: float
    #: When the fingerprint was last found unchanged (``time.monotonic()``).
    checked_at: float
    #: The entries' intervals, neighbour comparisons and tied groups, keyed by submission id; ``None`` when
    #: hidden, turned off, or nothing is ranked.
    uncertainty: BoardUncertainty[int] | None = None
    #: With a private split: the private board and each entrant's move, for its organizers before the reveal and
    #: for everyone after it (then ``entries`` are its entries); None otherwise.
    split: SplitBoard | None = None
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def derived(self, name: str, build: Callable[[], Any]) -> Any:
        """``build()``, made once per snapshot (an export's bytes, a chart, a rendered table)."""
        try:
            return self._derived[name]
        except KeyError:
            pass
        with self._lock:
            if name not in self._derived:
                self._derived[name] = build()
            return self._derived[name]

    def peek(self, name: str) -> Any | None:
        """What ``derived`` made under ``name``, or ``None`` if it was not made yet."""
        return self._derived.get(name)

    def entry_for(self, submission_id: int) -> Entry | None:
        """The entry whose counting submission this is, if any."""
        return next((e for e in self.entries if e.candidate.submission_id == submission_id), None)


def compute_snapshot(
    session: Session,
    phase: Phase,
    viewers: Viewers,
    generation_at_start: int,
    *,
    kept: Kept | None = None,
) -> BoardSnapshot:
    """Rank the phase as ``viewers`` see it (the numbers and rules of ``app.services.boards.standings``);
    ``kept`` holds what earlier boards read and computed (``app.services.boards.kept``)."""
    seen = fingerprint(session, phase.id)
    described = task_description(phase.task)
    rules = Rules.from_description(described, select=cast(Selection, phase.selection))
    hidden = viewers == "public" and not phase.metrics_public
    now = time.monotonic()
    read: list[Candidate] = []
    names: dict[int, standings.ScoreName] = {}  # each submission's newest score, read with the candidates
    if not hidden:
        breakdowns = described.leaderboard_breakdowns
        read = standings.candidates(session, phase, with_columns=breakdowns, kept=kept, names=names)
        if viewers == "public" and phase.frozen_at is not None and phase.revealed_at is None:
            # A frozen board: what came later is scored and shown to its team, not here, until the reveal.
            frozen_at = utc(phase.frozen_at)
            read = [c for c in read if utc(c.submitted_at) < frozen_at]
    shown = (
        ladder.on_ladder(session, phase, read, rules, described, kept, names) if phase.board == ladder.LADDER else read
    )
    entries = tuple(rank(shown, rules))
    split = None
    revealed = phase.private_share is not None and phase.revealed_at is not None
    if not hidden and phase.private_share is not None and (revealed or viewers == "organizers"):
        split = _split(session, phase, read, rules, revealed)
        if revealed:
            entries = split.entries
    uncertain = None
    if not hidden and phase.intervals and entries:
        ranked_by = phase.private_board if revealed else None
        uncertain = _uncertainty(session, phase, entries, rules.primary, kept, ranked_by, names)
    return BoardSnapshot(
        facts=PhaseFacts.of(phase),
        viewers=viewers,
        hidden=hidden,
        description=described,
        rules=rules,
        entries=entries,
        candidates=tuple(c for c in shown if c.rankable),
        generation=generation_at_start,
        fingerprint=seen,
        made_at=now,
        checked_at=now,
        uncertainty=uncertain,
        split=split,
    )


def _split(session: Session, phase: Phase, read: list[Candidate], rules: Rules, revealed: bool) -> SplitBoard:
    """The phase's private board beside its public one (``app.services.boards.private``)."""
    ids = [c.submission_id for c in read if c.rankable]
    return private.split_board(
        read,
        private.private_metrics(session, ids),
        rules,
        private_share=float(phase.private_share or 0.0),
        ranked_by="all" if phase.private_board == "all" else "private",
        revealed=revealed,
        final_submissions=phase.final_submissions,
    )


def _uncertainty(
    session: Session,
    phase: Phase,
    entries: tuple[Entry, ...],
    metric: str,
    kept: Kept | None,
    ranked_by: str | None = None,
    names: dict[int, standings.ScoreName] | None = None,
) -> BoardUncertainty[int] | None:
    """The board's intervals and comparisons; a failure costs them, never the board."""
    task = phase.task
    try:
        scorer = get_scorer(task.scorer, dict(task.scorer_options or {}))
        seed = phase_seed(task.competition.slug, task.slug, phase.slug)
        private_board: PrivateBoard | None = None
        if ranked_by is not None:
            private_board = "all" if ranked_by == "all" else "private"
        return uncertainty.of_board(
            session, scorer, entries, metric=metric, seed=seed, kept=kept, private_board=private_board, names=names
        )
    except Exception:
        log.exception("the intervals of phase %s could not be computed", phase.id)
        return None

"""Team names compared as they look: ``teams.name_key`` becomes the name's confusable skeleton.

The key was the name NFKC-normalized and casefolded; it is now the Unicode TS #39 skeleton of that (by
``disarm``), so that ``vіctim`` with a Cyrillic ``і`` and ``victim`` are one name, which the
unique index on ``(competition_id, name_key)`` keeps to one team. Every key is recomputed; teams whose
names now clash keep them in order of creation, the later ones get a suffix (`` (2)``, `` (3)``...), as in
0007. The keys are first set to values no name has (a leading space), so that no update meets a key of a
row not yet updated.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 23:00:00.000000
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from disarm import skeleton_key

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _casefolded(name: str) -> str:
    # The key of revision 0007.
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _skeleton(name: str) -> str:
    # app.storage.models.accounts.team_name_key as it is at this revision.
    return skeleton_key(_casefolded(name), digit_policy="tr39")


def _rekey(key: Callable[[str], str]) -> None:
    teams = sa.table(
        "teams",
        sa.column("id", sa.Integer),
        sa.column("competition_id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("name_key", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(teams.c.id, teams.c.competition_id, teams.c.name).order_by(teams.c.id)).all()
    taken: set[tuple[int, str]] = set()
    final: list[tuple[int, str, str, bool]] = []
    for team_id, competition_id, name in rows:
        new_name, n = name, 1
        while (competition_id, key(new_name)) in taken:
            n += 1
            new_name = f"{name[:90]} ({n})"
        taken.add((competition_id, key(new_name)))
        final.append((team_id, new_name, key(new_name), new_name != name))
    for team_id, _, _, renamed in final:
        placeholder = {"name_key": f" 0010 {team_id}", **({"name": f" 0010 {team_id}"} if renamed else {})}
        connection.execute(teams.update().where(teams.c.id == team_id).values(**placeholder))
    for team_id, name, name_key, _ in final:
        connection.execute(teams.update().where(teams.c.id == team_id).values(name=name, name_key=name_key))


def upgrade() -> None:
    _rekey(_skeleton)


def downgrade() -> None:
    _rekey(_casefolded)

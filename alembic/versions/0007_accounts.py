"""Accounts that hold: session versions, password reset links, login counters, normalized team names.

``users.session_version`` is carried by every browser session, so bumping it ends them all.
``password_resets`` holds the SHA-256 of one-time reset links. ``login_counters`` counts failed logins
per user name and per client address in the database, so that every process shares them and a
login reserves its attempt atomically. ``teams.name_key`` is the team name NFKC-normalized and
casefolded, unique per competition: names that differ only in case or Unicode form (``Équipe``,
``équipe``) are one name. Teams that already clash that way get a suffix (`` (2)``, `` (3)``...).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:50:00.000000
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _key(name: str) -> str:
    # A copy of app.storage.models.accounts.team_name_key as it is at this revision.
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _fill_team_keys() -> None:
    teams = sa.table(
        "teams",
        sa.column("id", sa.Integer),
        sa.column("competition_id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("name_key", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(teams.c.id, teams.c.competition_id, teams.c.name).order_by(teams.c.id))
    taken: set[tuple[int, str]] = set()
    for team_id, competition_id, name in rows.all():
        new_name, n = name, 1
        while (competition_id, _key(new_name)) in taken:
            n += 1
            new_name = f"{name[:90]} ({n})"
        taken.add((competition_id, _key(new_name)))
        connection.execute(teams.update().where(teams.c.id == team_id).values(name=new_name, name_key=_key(new_name)))


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("session_version", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name_key", sa.String(length=400), nullable=True))
    _fill_team_keys()
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.alter_column("name_key", existing_type=sa.String(length=400), nullable=False)
        batch_op.create_unique_constraint(
            batch_op.f("uq_teams_competition_id_name_key"), ["competition_id", "name_key"]
        )
    op.create_table(
        "password_resets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_password_resets_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_resets")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_password_resets_token_hash")),
    )
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_resets_user_id"), ["user_id"], unique=False)
    op.create_table(
        "login_counters",
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", "key", name=op.f("pk_login_counters")),
    )


def downgrade() -> None:
    op.drop_table("login_counters")
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_resets_user_id"))
    op.drop_table("password_resets")
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_teams_competition_id_name_key"), type_="unique")
        batch_op.drop_column("name_key")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("session_version")

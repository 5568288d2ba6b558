"""What a phase's public board shows of each team: ``phases.board``, ``plain`` (every score) or ``ladder`` (a
new score only past the paired standard error of the last shown one: the Ladder of Blum & Hardt).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 03:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("board", sa.String(length=16), nullable=False, server_default="plain"))


def downgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("board")

"""``phase_queues.scoring``: a phase scored by a program may send its scoring to its competition's own queue, whose
remote workers then receive the gold of that phase (the organizers' own) for the runs they score.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 05:55:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phase_queues") as batch:
        batch.add_column(sa.Column("scoring", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("phase_queues") as batch:
        batch.drop_column("scoring")

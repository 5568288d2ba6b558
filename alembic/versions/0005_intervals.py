"""Intervals on the boards: each score's interval of the primary metric, and a phase's switch for them.

``scores.interval`` holds the bootstrap interval computed when the score was recorded (null for scores
recorded before, whose interval the board computes from their units); ``phases.intervals`` turns a
phase's intervals and comparisons off (``intervals: false`` in the bundle).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 20:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("interval", sa.JSON(), nullable=True))
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("intervals", sa.Boolean(), server_default=sa.true(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("intervals")
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("interval")

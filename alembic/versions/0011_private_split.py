"""A private test split: a phase keeps part of its scoring units private until it is revealed; final
submissions and a frozen board.

``phases.private_share`` (null: no split), ``phases.split_secret`` (the key the unit ids are hashed with) and
``phases.private_board`` (what the board ranks by after the reveal: ``private`` or ``all`` units);
``scores.private_metrics`` and ``scores.private_units`` (the private board's metrics and the private units'
statistics; the score's other columns then hold the public units' report); ``phases.final_submissions`` (how
many submissions a team marks as final, in ``submissions.chosen``: the best of them on the private board counts
after the reveal) and ``phases.frozen_at`` (after it the public board stops changing until the reveal).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 02:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("private_share", sa.Float(), nullable=True))
        batch.add_column(sa.Column("split_secret", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("private_board", sa.String(length=16), server_default="private", nullable=False))
        batch.add_column(sa.Column("final_submissions", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("frozen_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_check_constraint(
            op.f("ck_phases_private_share"), "private_share IS NULL OR (private_share > 0 AND private_share < 1)"
        )
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("private_metrics", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("private_units", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("private_units")
        batch.drop_column("private_metrics")
    with op.batch_alter_table("phases") as batch:
        batch.drop_constraint(op.f("ck_phases_private_share"), type_="check")
        batch.drop_column("frozen_at")
        batch.drop_column("final_submissions")
        batch.drop_column("private_board")
        batch.drop_column("split_secret")
        batch.drop_column("private_share")

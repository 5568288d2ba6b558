"""``deleted_submissions``: what stays of a submission its team deleted, so that it still counts against the
phase's daily and total limits.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 03:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deleted_submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phases.id"], name=op.f("fk_deleted_submissions_phase_id_phases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_deleted_submissions_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deleted_submissions")),
    )
    with op.batch_alter_table("deleted_submissions") as batch:
        batch.create_index(batch.f("ix_deleted_submissions_phase_id"), ["phase_id"], unique=False)


def downgrade() -> None:
    op.drop_table("deleted_submissions")

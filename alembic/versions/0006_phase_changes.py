"""Organizers adjust phases and answer participation requests from the pages.

``phase_changes`` logs every change an organizer makes to a phase's window, limits, visibility or
description (who, when, the setting, the value before and after); ``participants.refused_at`` marks a
request an organizer refused, or a participant they removed.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 19:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "phase_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("field", sa.String(length=32), nullable=False),
        sa.Column("old_value", sa.Text(), nullable=True),
        sa.Column("new_value", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phases.id"], name=op.f("fk_phase_changes_phase_id_phases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_phase_changes_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phase_changes")),
    )
    with op.batch_alter_table("phase_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_phase_changes_phase_id"), ["phase_id"], unique=False)
    with op.batch_alter_table("participants", schema=None) as batch_op:
        batch_op.add_column(sa.Column("refused_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("participants", schema=None) as batch_op:
        batch_op.drop_column("refused_at")
    with op.batch_alter_table("phase_changes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_phase_changes_phase_id"))
    op.drop_table("phase_changes")

"""Where a code run may run: ``code_runs.waiting_for`` (while queued, the worker it waits for: one with a GPU,
one with a usable sandbox, and why) and ``code_runs.device`` (the GPU it ran on; null: the CPU).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 02:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("code_runs") as batch:
        batch.add_column(sa.Column("waiting_for", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("device", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("code_runs") as batch:
        batch.drop_column("device")
        batch.drop_column("waiting_for")

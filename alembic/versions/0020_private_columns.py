"""``scores.private_columns``: the private board's breakdown columns (per language, per relation label...), computed
on its units (the private units, or all units, as the phase says) as ``scores.breakdown`` is on the public ones, so
that the private board shows the breakdown columns the public board shows. Null where the phase has no split, and
for scores recorded before (a rescore computes them).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04 06:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("private_columns", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("private_columns")

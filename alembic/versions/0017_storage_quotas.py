"""Storage quotas of a competition: ``competitions.storage_quota_bytes`` (every team's uploads together) and
``competitions.team_storage_quota_bytes`` (each team's); null: the operator's default.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04 03:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("storage_quota_bytes", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("team_storage_quota_bytes", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("team_storage_quota_bytes")
        batch.drop_column("storage_quota_bytes")

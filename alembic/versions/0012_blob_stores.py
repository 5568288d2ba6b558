"""Blob stores: a blob's contents may live outside its row.

``blobs.store`` names the store that keeps a blob's contents (``db``: the row's ``data``, what every
existing row holds; ``disk``; ``s3``), and ``blobs.data`` may be null for the other two. Downgrading
needs every blob back in the database first (``podium storage migrate --to db``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 03:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("blobs") as batch:
        batch.add_column(sa.Column("store", sa.String(length=16), server_default="db", nullable=False))
        batch.alter_column("data", existing_type=sa.LargeBinary(), nullable=True)
        batch.create_check_constraint(op.f("ck_blobs_store"), "store IN ('db', 'disk', 's3')")


def downgrade() -> None:
    with op.batch_alter_table("blobs") as batch:
        batch.drop_constraint(op.f("ck_blobs_store"), type_="check")
        batch.alter_column("data", existing_type=sa.LargeBinary(), nullable=False)
        batch.drop_column("store")

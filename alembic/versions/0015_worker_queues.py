"""Compute workers that organizers bring: ``worker_queues`` (a competition's own queue), ``worker_credentials``
(what its remote workers present; only a SHA-256 stored) and ``phase_queues`` (a phase's code runs go there).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 02:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "worker_queues",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"],
            ["competitions.id"],
            name=op.f("fk_worker_queues_competition_id_competitions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_queues")),
        sa.UniqueConstraint("competition_id", "name", name=op.f("uq_worker_queues_competition_id_name")),
    )
    with op.batch_alter_table("worker_queues") as batch:
        batch.create_index(batch.f("ix_worker_queues_competition_id"), ["competition_id"], unique=False)
    op.create_table(
        "worker_credentials",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("queue_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_contact_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["queue_id"],
            ["worker_queues.id"],
            name=op.f("fk_worker_credentials_queue_id_worker_queues"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_credentials")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_worker_credentials_key_hash")),
    )
    with op.batch_alter_table("worker_credentials") as batch:
        batch.create_index(batch.f("ix_worker_credentials_queue_id"), ["queue_id"], unique=False)
    op.create_table(
        "phase_queues",
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("queue_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phases.id"], name=op.f("fk_phase_queues_phase_id_phases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["queue_id"], ["worker_queues.id"], name=op.f("fk_phase_queues_queue_id_worker_queues"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("phase_id", name=op.f("pk_phase_queues")),
    )
    with op.batch_alter_table("phase_queues") as batch:
        batch.create_index(batch.f("ix_phase_queues_queue_id"), ["queue_id"], unique=False)


def downgrade() -> None:
    op.drop_table("phase_queues")
    op.drop_table("worker_credentials")
    op.drop_table("worker_queues")

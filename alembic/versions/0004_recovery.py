"""Recovery in seconds: confirmed sends, counters of re-sent work, the broker's marker, idempotent uploads.

``sent_at`` on a job's row is copied from ``enqueued_at`` once the broker took the message: a row
stamped in its transaction but never confirmed (the process died between commit and send) is sent
again within seconds. ``job_counters`` sums what the sweepers re-sent and resumed, ``broker_markers``
holds the token each instance keeps in its broker (one that comes back without it lost its
messages), and ``idempotency_keys`` maps a user's ``Idempotency-Key`` to the submission it made.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 16:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JOB_TABLES = ("submissions", "baseline_runs")


def upgrade() -> None:
    for table in JOB_TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "job_counters",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", "kind", name=op.f("pk_job_counters")),
    )
    op.create_table(
        "broker_markers",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_broker_markers")),
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_idempotency_keys_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phases.id"], name=op.f("fk_idempotency_keys_phase_id_phases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_idempotency_keys_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "key", name=op.f("pk_idempotency_keys")),
    )


def downgrade() -> None:
    op.drop_table("idempotency_keys")
    op.drop_table("broker_markers")
    op.drop_table("job_counters")
    for table in reversed(JOB_TABLES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("sent_at")

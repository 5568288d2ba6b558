"""Hosted baseline runs, and when each submission was last handed to a queue.

A queued submission whose queue message was lost (a broker outage, a crash between commit and
send) is found by its old ``enqueued_at`` and sent again by the sweeper.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 18:12:12.077311
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "baseline_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("baseline", sa.String(length=100), nullable=False),
        sa.Column("baseline_version", sa.String(length=64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.Column("device", sa.String(length=32), nullable=True),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("progress_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("log_tail", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name=op.f("ck_baseline_runs_status")
        ),
        sa.ForeignKeyConstraint(
            ["phase_id"], ["phases.id"], name=op.f("fk_baseline_runs_phase_id_phases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["requested_by"], ["users.id"], name=op.f("fk_baseline_runs_requested_by_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_baseline_runs_submission_id_submissions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baseline_runs")),
    )
    op.create_index(op.f("ix_baseline_runs_phase_id_created_at"), "baseline_runs", ["phase_id", "created_at"])
    op.create_index(op.f("ix_baseline_runs_status"), "baseline_runs", ["status"])

    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_column("enqueued_at")

    op.drop_index(op.f("ix_baseline_runs_status"), table_name="baseline_runs")
    op.drop_index(op.f("ix_baseline_runs_phase_id_created_at"), table_name="baseline_runs")
    op.drop_table("baseline_runs")

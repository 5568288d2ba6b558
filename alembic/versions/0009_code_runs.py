"""Code phases: a phase that takes programs, and each program's run on the phase's hidden inputs.

A phase gets ``code`` (how its programs run: command, output, runtime, limits, whether teams read their
logs) and ``code_inputs_blob_id`` (the hidden inputs, one zip). ``code_runs`` is the job row of one
run, with how the program ended. A submission waits in the new status ``awaiting_run`` until its run
made the predictions that are scored.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 22:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES = "'queued', 'running', 'scored', 'failed'"


def _submission_statuses(values: str) -> None:
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_submissions_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_submissions_status"), f"status IN ({values})")


def upgrade() -> None:
    with op.batch_alter_table("phases", schema=None) as batch_op:
        batch_op.add_column(sa.Column("code", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("code_inputs_blob_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            op.f("fk_phases_code_inputs_blob_id_blobs"), "blobs", ["code_inputs_blob_id"], ["id"]
        )
    _submission_statuses(f"{STATUSES}, 'awaiting_run'")
    op.create_table(
        "code_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("program_blob_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("signal", sa.Integer(), nullable=True),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("out_of_memory", sa.Boolean(), nullable=False),
        sa.Column("wall_seconds", sa.Double(), nullable=True),
        sa.Column("peak_memory_bytes", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("stdout", sa.Text(), nullable=False),
        sa.Column("stderr", sa.Text(), nullable=False),
        sa.Column("stdout_bytes", sa.BigInteger(), nullable=False),
        sa.Column("stderr_bytes", sa.BigInteger(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name=op.f("ck_code_runs_status")
        ),
        sa.ForeignKeyConstraint(["program_blob_id"], ["blobs.id"], name=op.f("fk_code_runs_program_blob_id_blobs")),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_code_runs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_code_runs")),
        sa.UniqueConstraint("submission_id", name=op.f("uq_code_runs_submission_id")),
    )
    op.create_index(op.f("ix_code_runs_status"), "code_runs", ["status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_code_runs_status"), table_name="code_runs")
    op.drop_table("code_runs")
    op.execute("DELETE FROM submissions WHERE status = 'awaiting_run'")
    _submission_statuses(STATUSES)
    with op.batch_alter_table("phases", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("fk_phases_code_inputs_blob_id_blobs"), type_="foreignkey")
        batch_op.drop_column("code_inputs_blob_id")
        batch_op.drop_column("code")

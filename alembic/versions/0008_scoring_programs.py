"""Scoring programs of CodaLab and Codabench competitions: a phase's program settings and each run's logs.

A phase gets the wall time one program run may take (``execution_time_limit``, seconds; null: 10
minutes), whether a team reads the end of the program's stderr when its submission failed
(``show_program_stderr``) and whether the imported phase had an ingestion program (``ingestion_program``:
code submissions, not run yet). ``program_runs`` keeps, per scoring round, how the program ended and
the ends of its stdout and stderr, for organizers, and the sanitized ``detailed_results.html``.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 20:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phases", schema=None) as batch_op:
        batch_op.add_column(sa.Column("execution_time_limit", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("show_program_stderr", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("ingestion_program", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "program_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("signal", sa.Integer(), nullable=True),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("output_exceeded", sa.Boolean(), nullable=False),
        sa.Column("wall_seconds", sa.Double(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("stdout", sa.Text(), nullable=False),
        sa.Column("stderr", sa.Text(), nullable=False),
        sa.Column("stdout_bytes", sa.BigInteger(), nullable=False),
        sa.Column("stderr_bytes", sa.BigInteger(), nullable=False),
        sa.Column("detailed_html", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_program_runs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_program_runs")),
        sa.UniqueConstraint("submission_id", "round", name=op.f("uq_program_runs_submission_id_round")),
    )


def downgrade() -> None:
    op.drop_table("program_runs")
    with op.batch_alter_table("phases", schema=None) as batch_op:
        batch_op.drop_column("ingestion_program")
        batch_op.drop_column("show_program_stderr")
        batch_op.drop_column("execution_time_limit")

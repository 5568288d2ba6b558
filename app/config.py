"""Settings: every knob of the server, read from ``PODIUM_*`` environment variables.

This is the only module that reads the environment. Everything else receives a ``Settings``
object, so tests and commands build one explicitly (``Settings(database_url=...)``).
The README's "Settings" table lists the same fields; keep them in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MB = 1024 * 1024


class Settings(BaseSettings):
    """The server's configuration; field ``x`` is set by the variable ``PODIUM_X``."""

    model_config = SettingsConfigDict(env_prefix="PODIUM_", extra="ignore", frozen=True)

    database_url: str = Field(
        default="sqlite:///var/podium.sqlite3",
        description="SQLAlchemy URL of the database; a relative SQLite path is relative to the working folder.",
    )
    data_dir: Path | None = Field(
        default=None, description="Folder that bundle entries `{data: ...}` are relative to (competition create, demo)."
    )
    blob_store: Literal["db", "disk", "s3"] = Field(
        default="disk",
        description="Where new files go: `disk` (a folder, PODIUM_BLOB_DIR), `s3` (an S3-compatible bucket, "
        "PODIUM_S3_BUCKET and the standard AWS variables) or `db` (rows of the database). Files already stored "
        "stay readable wherever they are; `podium storage migrate` moves them.",
    )
    blob_dir: Path | None = Field(
        default=None,
        description="Folder of the disk store; by default `blobs` beside a SQLite database, else `var/blobs`. "
        "Every web and worker process must see the same folder.",
    )
    s3_bucket: str = Field(
        default="",
        validate_default=True,
        description="Bucket of the s3 store. The client reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
        "AWS_DEFAULT_REGION and AWS_ENDPOINT_URL (MinIO, R2, Ceph) like every S3 tool.",
    )
    s3_prefix: str = Field(default="", description="Prefix of the s3 store's object keys (e.g. `podium/`).")
    direct_upload_hours: float = Field(
        default=24,
        gt=0,
        description="With the s3 store: how long a direct upload (presigned multipart, the CLI's way for large "
        "files) may take from its start to its completion; its part links expire then, and a sweeper aborts "
        "one never completed and removes what it left.",
    )
    max_upload_bytes: int = Field(
        default=50 * MB, gt=0, description="Largest submission file accepted, unless a phase sets its own."
    )
    # Parsing JSON costs up to ~20x its size in objects, so this bound (not the upload limit) is what
    # caps a worker's memory for a zipped submission: 100 MB is far above any seed task's test run.
    max_unzipped_bytes: int = Field(
        default=100 * MB, gt=0, description="Largest size a zipped submission may unpack to."
    )
    max_zip_entries: int = Field(default=16, gt=0, description="Most entries a zipped submission may hold.")
    max_bundle_bytes: int = Field(
        default=500 * MB, gt=0, description="Largest competition bundle accepted over the API."
    )
    storage_quota_bytes: int = Field(
        default=0,
        ge=0,
        description="Most bytes every team's submissions to one competition may take together, unless the "
        "competition sets its own (storage_quota_bytes); 0: no limit. A deleted submission frees its bytes.",
    )
    team_storage_quota_bytes: int = Field(
        default=0,
        ge=0,
        description="Most bytes one team's submissions to a competition may take, unless the competition sets "
        "its own (team_storage_quota_bytes); 0: no limit.",
    )
    broker_url: str = Field(
        default="",
        description="Celery broker URL (`redis://...` or `amqp://...`); empty runs scoring jobs in the server process.",
    )
    queue_prefix: str = Field(
        default="",
        description="Prefix of the broker's queue names, so that several Podium instances can share one broker.",
    )
    broker_timeout_seconds: float = Field(
        default=3.0, gt=0, description="How long sending a job or checking the broker may wait for the broker."
    )
    sweep_seconds: float = Field(
        default=15.0, gt=0, description="How often each worker and web process looks for jobs to send again."
    )
    requeue_after_seconds: float = Field(
        default=300.0, gt=0, description="A job still queued this long after its message was sent is sent again."
    )
    transient_retries: int = Field(
        default=5, ge=0, description="Retries of a job step after a transient error (database unreachable)."
    )
    transient_backoff_seconds: float = Field(
        default=1.0, gt=0, description="Wait before the first retry; doubled for each further one."
    )
    transient_backoff_max_seconds: float = Field(
        default=30.0, gt=0, description="Longest wait between two retries after a transient error."
    )
    plugins: str = Field(
        default="", description="Comma-separated Python modules imported at start (they register extra scorers)."
    )
    workers: int = Field(
        default=2, ge=0, description="Threads of the embedded scoring pool (0: do not score in this process)."
    )
    lease_seconds: int = Field(
        default=60, gt=0, description="How long a claimed scoring job may go without a heartbeat before it is resumed."
    )
    max_attempts: int = Field(
        default=3, gt=0, description="Scoring attempts before an interrupted submission is failed."
    )
    secret_key: str = Field(
        default="", description="Key that signs session cookies; set a long random string in production."
    )
    cookie_secure: bool = Field(
        default=False, description="Send the session cookie over HTTPS only (set it when the server is behind HTTPS)."
    )
    password_hash_profile: Literal["rfc9106-low-memory", "cheapest"] = Field(
        default="rfc9106-low-memory",
        description="argon2 parameters of new password hashes: RFC 9106's low-memory profile, or `cheapest`, for "
        "test suites only (such hashes are cheap to break; `podium serve` warns).",
    )
    allow_registration: bool = Field(
        default=True, description="Whether anyone may create an account (`POST /api/v1/users`)."
    )
    gold_cache_size: int = Field(default=8, ge=0, description="Parsed gold files kept in memory per process.")
    board_check_seconds: float | None = Field(
        default=None,
        ge=0,
        description="How long a cached leaderboard is served before the database is asked whether another process "
        "changed it; default 0 (every read asks) with PODIUM_BROKER_URL, where workers write every score, else 2.",
    )
    public_url: str = Field(
        default="http://127.0.0.1:8000",
        description="The server's address as people reach it; `podium user reset-link` builds its links on it.",
    )
    program_runtimes: str = Field(
        default="",
        description='JSON object mapping the image a CodaLab bundle names to a Python environment folder; "*" is the '
        "default (else the server's own environment).",
    )
    program_sandbox: Literal["bwrap", "none"] = Field(
        default="bwrap",
        description="How scoring programs are isolated: bwrap (bubblewrap); none runs them unprotected and is only "
        "for operators who choose it deliberately.",
    )
    sandbox_allow_no_cgroup: bool = Field(
        default=False,
        description="Run scoring programs even where no cgroup of their own can be made, so that memory and "
        "processes are limited per process only (a program with children can take more); off by default.",
    )

    code_max_time_s: int = Field(
        default=3600,
        gt=0,
        description="The most wall time, in seconds, a code phase may give one run of a participant's program "
        "(its time_limit_s), and a phase its scoring program (its execution_time_limit); a bundle asking for more "
        "is refused.",
    )
    code_max_memory_mb: int = Field(
        default=16384,
        gt=0,
        description="The most memory, in MB, a code phase may give one run of a participant's program (all its "
        "processes together; its memory_mb); a bundle asking for more is refused.",
    )
    code_allow_gpu: bool = Field(
        default=True,
        description="Whether a code phase may ask for a GPU (`gpu: true`); off, a bundle whose programs need one "
        "(no `gpu_fallback_cpu: true`) is refused.",
    )
    gpu_devices: str = Field(
        default="",
        description="The NVIDIA GPUs this worker gives code runs, by minor number (`0,1`: /dev/nvidia0 and "
        "/dev/nvidia1), or `none`; empty: every /dev/nvidia<N> of the machine.",
    )
    gpu_lock_dir: Path | None = Field(
        default=None,
        description="Folder of the locks that give each GPU to one run at a time; every worker process sharing "
        "the machine's GPUs must see the same one (default: the system's temporary folder).",
    )

    @field_validator("program_runtimes")
    @classmethod
    def _runtime_table(cls, value: str) -> str:
        # The table is checked when the settings are read, so a typo stops the server at start, not a submission.
        from sandbox import RuntimeProblem, parse_runtimes

        try:
            parse_runtimes(value)
        except RuntimeProblem as exc:
            raise ValueError(f"PODIUM_PROGRAM_RUNTIMES: {exc}") from None
        return value

    @field_validator("gpu_devices")
    @classmethod
    def _gpu_devices(cls, value: str) -> str:
        from sandbox.gpus import GpuProblem, parse_setting

        try:
            parse_setting(value)
        except GpuProblem as exc:
            raise ValueError(f"PODIUM_GPU_DEVICES: {exc}") from None
        return value

    @field_validator("s3_bucket")
    @classmethod
    def _bucket_for_s3(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("blob_store") == "s3" and not value:
            raise ValueError("PODIUM_BLOB_STORE=s3 needs the bucket's name")
        return value

    @property
    def plugin_modules(self) -> tuple[str, ...]:
        """The modules named by ``plugins``, in order."""
        return tuple(name.strip() for name in self.plugins.split(",") if name.strip())

    @property
    def runtime_table(self) -> dict[str, Path]:
        """``program_runtimes`` as image name -> environment folder."""
        from sandbox import parse_runtimes

        return parse_runtimes(self.program_runtimes)


def load_settings() -> Settings:
    """Settings from the environment (the command line's entry point)."""
    return Settings()

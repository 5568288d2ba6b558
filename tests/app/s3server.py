"""A real S3-protocol server for the tests: moto's standalone server (``moto[server]``, installed with the test
tools). ``make test`` starts one for the run and names it in ``PODIUM_TEST_S3_ENDPOINT``; without it, a test
process starts its own on a free port. The S3 store talks to it through boto3 exactly as it would to AWS S3 or
MinIO, configured by the standard AWS variables (``environment``). Where moto is not installed the tests that
need it skip, unless ``PODIUM_TEST_REQUIRE_S3`` is set (CI), where they fail."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

MOTO = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "moto_server"


@dataclass(frozen=True)
class S3Server:
    endpoint: str

    def environment(self) -> dict[str, str]:
        """The variables every S3 client reads (boto3, the aws command, Podium's s3 store)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "podium-test",
            "AWS_SECRET_ACCESS_KEY": "podium-test-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def new_bucket(self) -> str:
        """A fresh, empty bucket."""
        import boto3

        name = f"podium-{uuid.uuid4().hex[:12]}"
        env = self.environment()
        boto3.session.Session(
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=env["AWS_DEFAULT_REGION"],
        ).client("s3", endpoint_url=self.endpoint).create_bucket(Bucket=name)
        return name


def _executable() -> str | None:
    if MOTO.is_file():
        return str(MOTO)
    beside = Path(sys.executable).parent / "moto_server"
    return str(beside) if beside.is_file() else shutil.which("moto_server")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


MISSING = "moto_server (pip install 'moto[server]') is not installed: no S3-protocol server to test against"


def _wait_until_it_answers(port: int, process: subprocess.Popen[bytes] | None) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
                raise RuntimeError(f"no S3 server answers on port {port}") from None
            time.sleep(0.1)


@contextmanager
def running_s3_server() -> Iterator[S3Server]:
    """The run's server (``PODIUM_TEST_S3_ENDPOINT``), or moto's server on a free port for as long as the
    context lasts; skips the test where moto is not installed (fails it under ``PODIUM_TEST_REQUIRE_S3``)."""
    given = os.environ.get("PODIUM_TEST_S3_ENDPOINT", "")
    if given:
        _wait_until_it_answers(int(given.rsplit(":", 1)[1].strip("/")), None)
        yield S3Server(given.rstrip("/"))
        return
    executable = _executable()
    if executable is None:
        if os.environ.get("PODIUM_TEST_REQUIRE_S3"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    port = _free_port()
    process = subprocess.Popen(
        [executable, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_until_it_answers(port, process)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        process.wait(timeout=10)


_shared: list[S3Server] = []


def shared_s3_server() -> S3Server | None:
    """One moto server for this test process, started on first use and stopped when the process exits;
    ``None`` where moto is not installed."""
    if not _shared:
        if _executable() is None and not os.environ.get("PODIUM_TEST_S3_ENDPOINT"):
            if os.environ.get("PODIUM_TEST_REQUIRE_S3"):
                pytest.fail(MISSING)
            return None
        stack = ExitStack()
        _shared.append(stack.enter_context(running_s3_server()))
        atexit.register(stack.close)
    return _shared[0]


def object_storage_settings(folder: Path) -> dict[str, str]:
    """The settings (and AWS variables) of processes that share an S3 store in a fresh bucket of the
    shared test server; where moto is not installed, a disk store in ``folder``."""
    server = shared_s3_server()
    if server is None:
        return {"PODIUM_BLOB_STORE": "disk", "PODIUM_BLOB_DIR": str(folder / "blobs")}
    return {"PODIUM_BLOB_STORE": "s3", "PODIUM_S3_BUCKET": server.new_bucket(), **server.environment()}


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-protocol server for the session (skips where moto is not installed)."""
    with running_s3_server() as server:
        yield server

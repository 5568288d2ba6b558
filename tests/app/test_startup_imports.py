"""A server and a worker start without the libraries only some of their work needs: numpy and SciPy (intervals and
comparisons on boards), boto3 (an S3 store), Celery and the broker clients (the distributed mode), markdownify
(translating a CodaLab bundle's pages). Each is imported where it is used; the test suite alone starts hundreds of
servers and workers. Each check runs in a fresh interpreter, since this one has loaded everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from app.storage.db import Database
from app.storage.migrate import upgrade

ROOT = Path(__file__).resolve().parents[2]

#: Loaded only where a board's intervals are computed or an uploaded bundle is translated.
SCORING_ONLY = ("numpy", "scipy", "markdownify", "bs4", "charset_normalizer")
#: Loaded only where the S3 store is used.
S3_ONLY = ("boto3", "botocore", "s3transfer")
#: Loaded only in the distributed mode (a broker).
BROKER_ONLY = ("celery", "kombu", "redis", "amqp", "billiard")

#: Prints, as JSON, which of the modules named on the command line the program before it loaded.
REPORT = "import json, sys\nprint(json.dumps(sorted(m for m in sys.argv[1:] if m in sys.modules)))\n"


def loaded(program: str, modules: tuple[str, ...], **env: str) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after running ``program`` (no PODIUM_ settings but
    ``env``'s)."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PODIUM_")}
    environment.update(env)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program) + REPORT, *modules],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: list[str] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_an_embedded_server_starts_and_answers_without_numpy_boto3_or_celery(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    database = Database(url)
    upgrade(database.engine)
    database.dispose()
    program = """
        import os
        from pathlib import Path
        from fastapi.testclient import TestClient
        import app.main
        from app.config import Settings

        settings = Settings(database_url=os.environ["URL"], data_dir=Path(os.environ["DATA"]), workers=1)
        with TestClient(app.main.create_app(settings)) as client:  # the lifespan starts the job pool and sweeper
            answer = client.get("/api/v1/health")
            assert answer.status_code == 200, answer.text
        """
    assert loaded(program, SCORING_ONLY + S3_ONLY + BROKER_ONLY, URL=url, DATA=str(tmp_path)) == []


def test_a_worker_module_and_its_celery_app_load_without_numpy_or_boto3() -> None:
    program = """
        import app.worker.run
        from app.config import Settings
        from app.worker.celery_app import make_celery

        make_celery(Settings(broker_url="redis://127.0.0.1:9/0"))
        """
    assert loaded(program, SCORING_ONLY + S3_ONLY + ("celery",)) == ["celery"]


def test_broker_errors_are_retried_once_their_client_is_loaded() -> None:
    # The retry policy names the broker clients' errors without importing them: an error of a client can only be
    # raised once the client is loaded, and then it is retried like a database's.
    program = """
        import sys
        from app.config import Settings
        from app.services.jobs.retry import GaveUp, with_retries

        assert "kombu" not in sys.modules and "redis" not in sys.modules
        import kombu.exceptions, redis.exceptions

        settings = Settings(transient_retries=2, transient_backoff_seconds=0.001, transient_backoff_max_seconds=0.001)
        from kombu.exceptions import OperationalError
        from redis.exceptions import ConnectionError, TimeoutError

        broker_errors = (OperationalError, ConnectionError, TimeoutError)
        for error in broker_errors:
            tries = []

            def step():
                tries.append(1)
                if len(tries) < 3:
                    raise error("the broker is away")
                return len(tries)

            assert with_retries(settings, "sending", step) == 3
        try:
            with_retries(settings, "sending", lambda: (_ for _ in ()).throw(redis.exceptions.ConnectionError("down")))
        except GaveUp as gave_up:
            assert "after 3 tries" in gave_up.reason, gave_up.reason
        else:
            raise AssertionError("a broker that stays away must end in GaveUp")
        try:
            with_retries(settings, "sending", lambda: (_ for _ in ()).throw(kombu.exceptions.DecodeError("bad")))
        except kombu.exceptions.DecodeError:
            pass  # not a transient error: it fails at once
        """
    assert loaded(program, ("kombu", "redis")) == ["kombu", "redis"]

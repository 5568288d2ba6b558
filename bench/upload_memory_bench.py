"""Peak memory of the web process for a large upload, per blob store.

A real ``podium serve`` (embedded mode, SQLite, no scoring threads) takes one program upload to the code
phase of ``examples/svident-code``: a zip holding one stored file of zeros (model weights, as a code
submission carries), written sparse on disk and generated on the fly, so a 2 GB run needs no 2 GB of
data. The client streams it (httpx reads the file in chunks). The server's peak resident memory
(``VmHWM`` of /proc) is read after start-up and a small upload, then after the large upload; the
difference is what the upload cost the web process. The ``db`` store keeps contents in a row, so it
must hold the file whole; ``disk`` and ``s3`` copy it in chunks (``s3`` on moto's server, if installed).
``s3-direct`` is the s3 store with the file sent as ``podium submit`` sends a large one (``app.cli.direct``):
straight to the bucket through presigned part links, then read back by the server to hash and check it.

``--worker`` measures the other side: a code run (``run_code_job``, in this process, the sandbox running the
program) whose program carries weights of each size, from each store; the process's peak resident memory is
reset (``/proc/self/clear_refs``) before the run and read after it.

    .venv/bin/python bench/upload_memory_bench.py --sizes 200,1000 --stores disk,s3,s3-direct,db
    .venv/bin/python bench/upload_memory_bench.py --sizes 1000 --stores disk,s3 --worker
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.cli import direct  # noqa: E402
from app.cli.client import api_request  # noqa: E402
from app.cli.retrying import new_key  # noqa: E402
from app.services.accounts import users  # noqa: E402
from app.services.bundles.loader import load_bundle  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402

EXAMPLE = ROOT / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"
PODIUM = str(Path(sys.executable).with_name("podium"))
MB = 1024 * 1024


#: The program of the worker's measure: it checks its weights are all there and writes the all-zero predictions.
PREDICT = b"""import csv, json, os, sys
assert os.path.getsize("weights.bin") > 0
with open(sys.argv[1] + "/inputs.tsv", encoding="utf-8", newline="") as file:
    uuids = [row["uuid"] for row in csv.DictReader(file, delimiter="\\t")]
json.dump({u: "0" for u in uuids}, open(sys.argv[2] + "/predictions.json", "w"))
"""


def sparse_zip(path: Path, size: int, program: bytes = b"print('hello')\n") -> None:
    """A zip holding ``predict.py`` and ``weights.bin`` (``size`` zero bytes, stored), the zeros a hole of the file."""
    crc = 0
    zeros = bytes(MB)
    left = size
    while left:
        crc = zlib.crc32(zeros[: min(left, MB)], crc)
        left -= min(left, MB)
    entries = [(b"predict.py", program, zlib.crc32(program), len(program)), (b"weights.bin", None, crc, size)]
    central = b""
    with path.open("wb") as out:
        for name, data, checksum, length in entries:
            offset = out.tell()
            out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, checksum, length, length, len(name), 0))
            out.write(name)
            if data is None:
                out.seek(length, os.SEEK_CUR)  # a hole: zeros that take no disk
            else:
                out.write(data)
            central += (
                struct.pack(
                    "<IHHHHHHIIIHHHHHII",
                    0x02014B50,
                    20,
                    20,
                    0,
                    0,
                    0,
                    0,
                    checksum,
                    length,
                    length,
                    len(name),
                    0,
                    0,
                    0,
                    0,
                    0,
                    offset,
                )
                + name
            )
        start = out.tell()
        out.write(central)
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), start, 0))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def prepare(work: Path) -> tuple[str, str]:
    """The database with the code example and a participant; the database URL and the participant's token."""
    database = Database(f"sqlite:///{work / 'podium.sqlite3'}")
    upgrade(database.engine)
    with database.session() as session:
        organizer = users.create_user(session, "bench-olga", "bench-password", is_organizer=True)
        catalog.create_competition(session, replace(load_bundle(EXAMPLE), organizers=(organizer.name,)))
        token = users.issue_token(session, users.create_user(session, "bench-ada", "bench-password"))
        session.commit()
    database.dispose()
    return database.url, token


def measure(store: str, sizes: list[int], work: Path, extra_env: dict[str, str]) -> list[tuple[int, int, int, float]]:
    """(upload MB, peak kB before, peak kB after, seconds) for each size, one server per size."""
    url, token = prepare(work)
    rows = []
    for size in sizes:
        program = work / f"program-{size}.zip"
        sparse_zip(program, size * MB)
        port = free_port()
        env = {
            **os.environ,
            **extra_env,
            "PODIUM_DATABASE_URL": url,
            "PODIUM_WORKERS": "0",
            "PODIUM_SECRET_KEY": "upload-memory-bench",
            "PODIUM_MAX_UPLOAD_BYTES": str(4096 * MB),
            "PODIUM_BLOB_STORE": store.removesuffix("-direct"),
            "PODIUM_BLOB_DIR": str(work / "blobs"),
            "TMPDIR": str(work),
        }
        log = work / "serve.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                [PODIUM, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-migrate"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                if server.poll() is not None:
                    raise RuntimeError(f"podium serve exited:\n{log.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("podium serve did not answer within 120 s")
                time.sleep(0.2)
            headers = {"Authorization": f"Bearer {token}"}
            small = work / "small.zip"
            sparse_zip(small, 1024)
            with small.open("rb") as file:
                answer = httpx.post(f"{base}{PHASE}/submissions", headers=headers, files={"file": ("p.zip", file)})
            assert answer.status_code == 202, answer.text
            before = peak_kb(server.pid)
            started = time.monotonic()
            if store.endswith("-direct"):
                answer = direct.submit(
                    api_request, f"{base}{PHASE}", program, headers, key=new_key(), method="", description="", retries=0
                )
            else:
                with program.open("rb") as file:
                    answer = httpx.post(
                        f"{base}{PHASE}/submissions", headers=headers, files={"file": ("p.zip", file)}, timeout=600
                    )
            took = time.monotonic() - started
            assert answer.status_code == 202, answer.text
            assert answer.json()["size"] == program.stat().st_size
            rows.append((size, before, peak_kb(server.pid), took))
        finally:
            server.terminate()
            server.wait(30)
            program.unlink()
    return rows


def table(sizes: list[int], stores: list[str]) -> list[str]:
    lines = [
        f"date -u: {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}, nproc {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.2f}",
        "| store | upload | web peak RSS before | after | added | upload time |",
        "|---|---|---|---|---|---|",
    ]
    for store in stores:
        extra: dict[str, str] = {}
        server = None
        if store.startswith("s3"):
            from tests.app.s3server import running_s3_server

            if not (shutil.which("moto_server") or Path(sys.executable).with_name("moto_server").is_file()):
                lines.append("| s3 | (moto_server is not installed) | | | | |")
                continue
            server = running_s3_server()
            s3 = server.__enter__()
            extra = {**s3.environment(), "PODIUM_S3_BUCKET": s3.new_bucket()}
        try:
            with tempfile.TemporaryDirectory(prefix="podium-upload-bench-") as folder:
                for size, before, after, took in measure(store, sizes, Path(folder), extra):
                    lines.append(
                        f"| {store} | {size} MB | {before / 1024:.0f} MB | {after / 1024:.0f} MB "
                        f"| {(after - before) / 1024:.0f} MB | {took:.1f} s |"
                    )
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    return lines


def worker_peak(store: str, size: int, work: Path) -> tuple[int, int, str]:
    """(peak kB before, peak kB after, how the run ended) of one code run whose program carries ``size`` MB."""
    from sqlalchemy import select

    from app.config import Settings
    from app.services.code.job import run_code_job
    from app.services.jobs.kinds import JobContext
    from app.services.scoring.gold import GoldCache
    from app.services.submissions import intake
    from app.services.submissions.limits import Limits
    from app.storage.blobs import Content
    from app.storage.models import CodeRun, User

    url, _ = prepare(work)
    settings = Settings(
        database_url=url,
        blob_store=store,
        blob_dir=work / "blobs",
        s3_bucket=os.environ.get("PODIUM_S3_BUCKET", ""),
        max_upload_bytes=4096 * MB,
    )
    database = Database.from_settings(settings)
    program = work / f"worker-program-{size}.zip"
    sparse_zip(program, size * MB, PREDICT)
    with program.open("rb") as file, Content.spool(file) as content, database.session() as session:
        user = session.scalar(select(User).where(User.name == "bench-ada"))
        ref = ("svident-code", "detection", "test")
        upload = intake.Upload(content, "program.zip")
        submission = intake.submit(session, user, ref, upload, limits=Limits.of(settings), gold_cache=GoldCache())
        session.commit()
        run_id = session.scalar(select(CodeRun.id).where(CodeRun.submission_id == submission.submission.id))
    program.unlink()
    assert run_id is not None
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from what is resident now
    before = peak_kb(os.getpid())
    run_code_job(JobContext(database, settings, GoldCache()), run_id)
    after = peak_kb(os.getpid())
    with database.session() as session:
        run = session.get(CodeRun, run_id)
        assert run is not None
        ended = f"{run.status.value}, exit {run.exit_code}"
    database.dispose()
    return before, after, ended


def worker_table(sizes: list[int], stores: list[str]) -> list[str]:
    lines = [
        f"date -u: {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}, nproc {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.2f}",
        "| store | program | worker peak RSS before | after | added | run |",
        "|---|---|---|---|---|---|",
    ]
    for store in stores:
        server = None
        if store == "s3":
            from tests.app.s3server import running_s3_server

            server = running_s3_server()
            s3 = server.__enter__()
            os.environ.update({**s3.environment(), "PODIUM_S3_BUCKET": s3.new_bucket()})
        try:
            for size in sizes:
                with tempfile.TemporaryDirectory(prefix="podium-worker-bench-") as folder:
                    before, after, ended = worker_peak(store, size, Path(folder))
                lines.append(
                    f"| {store} | {size} MB | {before / 1024:.0f} MB | {after / 1024:.0f} MB "
                    f"| {(after - before) / 1024:.0f} MB | {ended} |"
                )
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200", help="upload sizes in MB, comma-separated")
    parser.add_argument("--stores", default="disk,s3,db", help="blob stores, comma-separated")
    parser.add_argument("--worker", action="store_true", help="measure a code run's worker, not the web process")
    args = parser.parse_args()
    measured = worker_table if args.worker else table
    print("\n".join(measured([int(s) for s in args.sizes.split(",")], args.stores.split(","))))


if __name__ == "__main__":
    main()

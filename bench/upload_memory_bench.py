"""Peak memory of the web process for a large upload, per blob store.

A real ``podium serve`` (embedded mode, SQLite, no scoring threads) takes one program upload to the code
phase of ``examples/svident-code``: a zip holding one stored file of zeros (model weights, as a code
submission carries), written sparse on disk and generated on the fly, so a 2 GB run needs no 2 GB of
data. The client streams it (httpx reads the file in chunks). The server's peak resident memory
(``VmHWM`` of /proc) is read after start-up and a small upload, then after the large upload; the
difference is what the upload cost the web process. The ``db`` store keeps contents in a row, so it
must hold the file whole; ``disk`` and ``s3`` copy it in chunks (``s3`` on moto's server, if installed).

    .venv/bin/python bench/upload_memory_bench.py --sizes 200,1000 --stores disk,s3,db
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

from app.services.accounts import users  # noqa: E402
from app.services.bundles.loader import load_bundle  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402

EXAMPLE = ROOT / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"
PODIUM = str(Path(sys.executable).with_name("podium"))
MB = 1024 * 1024


def sparse_zip(path: Path, size: int) -> None:
    """A zip holding ``predict.py`` and ``weights.bin`` (``size`` zero bytes, stored), the zeros a hole of the file."""
    program = b"print('hello')\n"
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
            "PODIUM_BLOB_STORE": store,
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
        if store == "s3":
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200", help="upload sizes in MB, comma-separated")
    parser.add_argument("--stores", default="disk,s3,db", help="blob stores, comma-separated")
    args = parser.parse_args()
    print("\n".join(table([int(s) for s in args.sizes.split(",")], args.stores.split(","))))


if __name__ == "__main__":
    main()

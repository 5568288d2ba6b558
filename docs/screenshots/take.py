"""The screenshots of the main pages in docs/screenshots/: ``make screenshots``.

A real server on the example competitions: ``podium demo`` (the example data, its hosted baselines run) on
a fresh SQLite database, ``podium serve``, two uploads by the demo participant through the API (the
phase's sample file and a better one), then Debian's chromium (Playwright) at 1400 px and at 400 px on
the home page, a competition, a leaderboard, a submission and the organizers' page of a phase. The PNGs
are reduced to a palette of 64 colours (Pillow) to stay small in the repository.

    python docs/screenshots/take.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
PHASE = ("famus", "sv", "dev")
WIDTHS = {"wide": (1400, 900), "phone": (400, 860)}
COLOURS = 64


def podium() -> list[str]:
    script = Path(sys.executable).with_name("podium")
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def demo(env: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``podium demo``; the demo accounts' (password, token) by name, from what it prints."""
    printed = subprocess.run([*podium(), "demo"], env=env, check=True, capture_output=True, text=True).stdout
    accounts = re.findall(r"user (\S+)\s+password (\S+)\s+token (\S+)", printed)
    return {name: (password, token) for name, password, token in accounts}


def wait_healthy(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"podium serve exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("podium serve did not answer within 60 s")


def upload(url: str, token: str) -> int:
    """The phase's sample file, then the same with every instance called a valid source: two points on the
    chart; returns the second submission's id."""
    api = f"{url}/api/v1/competitions/{PHASE[0]}/tasks/{PHASE[1]}/phases/{PHASE[2]}"
    auth = {"Authorization": f"Bearer {token}"}
    sample = httpx.get(f"{api}/sample", headers=auth, timeout=30)
    sample.raise_for_status()
    better = re.sub(rb":\s*0\b", b": 1", sample.content)
    ids = []
    for name, data in (("sample", sample.content), ("all valid", better)):
        answer = httpx.post(
            f"{api}/submissions",
            headers=auth,
            files={"file": ("run.json", data)},
            data={"method_name": name},
            timeout=30,
        )
        answer.raise_for_status()
        ids.append(int(answer.json()["id"]))
        time.sleep(1.5)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        states = {httpx.get(f"{url}/api/v1/submissions/{i}", headers=auth, timeout=30).json()["status"] for i in ids}
        if not states & {"queued", "running"}:
            return ids[-1]
        time.sleep(0.5)
    raise SystemExit("the uploads were not scored within 2 minutes")


def log_in(page: Page, url: str, name: str, password: str) -> None:
    page.goto(f"{url}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url(f"{url}/")


def save(page: Page, path: Path) -> None:
    page.wait_for_load_state("networkidle")
    shot = Image.open(io.BytesIO(page.screenshot()))
    shot.convert("RGB").quantize(COLOURS, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  {path.stat().st_size // 1024} KiB")


def shoot(url: str, accounts: dict[str, tuple[str, str]], submission: int, out: Path) -> None:
    board = f"/c/{'/'.join(PHASE)}"
    public = {"home": "/", "competition": f"/c/{PHASE[0]}", "leaderboard": board}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"])
        for width_name, (width, height) in WIDTHS.items():
            visitor = browser.new_page(viewport={"width": width, "height": height})
            for name, path in public.items():
                visitor.goto(url + path)
                save(visitor, out / f"{name}-{width_name}.png")
            participant = browser.new_page(viewport={"width": width, "height": height})
            log_in(participant, url, "demo-participant", accounts["demo-participant"][0])
            participant.goto(f"{url}/submissions/{submission}")
            save(participant, out / f"submission-{width_name}.png")
            organizer = browser.new_page(viewport={"width": width, "height": height})
            log_in(organizer, url, "demo-organizer", accounts["demo-organizer"][0])
            organizer.goto(f"{url}{board}/organize")
            organizer.locator("table.organizer-submissions").scroll_into_view_if_needed()
            save(organizer, out / f"organize-{width_name}.png")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
        env.update(
            PODIUM_DATABASE_URL=f"sqlite:///{scratch}/podium.sqlite3",
            PODIUM_SECRET_KEY="screenshots-secret-key-of-some-length",  # noqa: S106  (a throwaway server)
            PODIUM_WORKERS="1",
        )
        accounts = demo(env)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with open(Path(scratch) / "server.log", "wb") as log:
            server = subprocess.Popen(
                [*podium(), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env, stdout=log, stderr=log
            )
            try:
                wait_healthy(url, server)
                submission = upload(url, accounts["demo-participant"][1])
                shoot(url, accounts, submission, out)
            finally:
                server.terminate()
                server.wait(15)


if __name__ == "__main__":
    main()

"""``make screenshots`` (docs/screenshots/take.py) end to end: a real server on the demo competitions, then
chromium at both widths; every page is captured at its width, small, and shows what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PIL import Image

from tests.app.web.browser import BROWSER_TEST
from tests.conftest import ROOT

pytestmark = BROWSER_TEST

PAGES = ("home", "competition", "leaderboard", "submission", "organize")
WIDTHS = {"wide": 1400, "phone": 400}


def test_the_script_captures_every_main_page_at_both_widths(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "screenshots" / "take.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shots = sorted(p.name for p in tmp_path.glob("*.png"))
    assert shots == sorted(f"{page}-{width}.png" for page in PAGES for width in WIDTHS)
    for name in shots:
        path = tmp_path / name
        with Image.open(path) as image:
            assert image.width == WIDTHS[name.removesuffix(".png").split("-")[1]]
            assert len(image.getcolors(256) or ()) > 4, f"{name} is not blank"
        assert path.stat().st_size < 120_000, f"{name} is small enough for the repository"
    # The README shows two of the committed ones.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = [name for name in shots if f"docs/screenshots/{name}" in readme]
    assert len(shown) == 2 and all((ROOT / "docs" / "screenshots" / name).is_file() for name in shown)

"""axe-core inside a page of the browser tests: the npm package (``tests/app/web/axe``, installed by ``make
test`` from the npm registry, never fetched by a test), injected into the page and run there.

``serious_violations(page)`` lists what axe finds of serious or critical impact, each with the elements it
names, so that an assertion on an empty list says what to fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

AXE_DIR = Path(__file__).with_name("axe")
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def _describe(violation: dict[str, Any]) -> str:
    targets = "; ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
    return f"{violation['impact']} {violation['id']}: {violation['help']} ({targets})"


def serious_violations(page: Page) -> list[str]:
    """axe's serious and critical violations on the page as it is now, one line each."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed: run `make test` or `npm ci --prefix {AXE_DIR}`")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated through the browser's debugging protocol: the pages' Content-Security-Policy (scripts
        # from the site only) holds for everything else and would refuse a <script> added to the page.
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [_describe(v) for v in found if v["impact"] in SERIOUS]

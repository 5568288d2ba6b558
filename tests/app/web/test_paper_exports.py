"""The leaderboard as a paper's table through the server: LaTeX (booktabs) and Markdown downloads linked from the
page, with the interval and the tied group, as the page shows them; anything else is not found."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from markdown_it import MarkdownIt

from app.storage.db import Database
from tests.app.builders import HALF, PERFECT
from tests.app.web.test_pages import BOARD, login, setup, submit, wait


def test_the_paper_tables_download_and_open_as_tables(db: Database, client: TestClient) -> None:
    setup(db, "ada", "bob")
    login(client, "ada")
    submit(client, HALF, method="coin & flip")
    login(client, "bob")
    submit(client, PERFECT, method="oracle")
    wait(client)
    client.cookies.clear()
    page = client.get(BOARD).text
    assert f'href="{BOARD}/leaderboard.tex"' in page and f'href="{BOARD}/leaderboard.md"' in page

    latex = client.get(f"{BOARD}/leaderboard.tex")
    assert latex.status_code == 200 and latex.headers["content-type"].startswith("text/x-tex")
    assert 'filename="comp-labels-dev-leaderboard.tex"' in latex.headers["content-disposition"]
    assert "\\toprule" in latex.text and "\\bottomrule" in latex.text and "coin \\& flip" in latex.text
    rows = [line for line in latex.text.splitlines() if line.endswith("\\\\")]
    assert [re.split(r"(?<!\\)&", r)[1].strip() for r in rows] == ["Team", "bob", "ada"]
    # Four labels: rough intervals (daggered), and too few to compare, so no group column.
    assert "Group" not in rows[0] and "\\textsuperscript{\\dag}" in latex.text

    markdown = client.get(f"{BOARD}/leaderboard.md")
    assert markdown.status_code == 200 and markdown.headers["content-type"].startswith("text/markdown")
    html = MarkdownIt("commonmark").enable("table").render(markdown.text)
    assert html.count("<tr>") == 3 and "100.00" in html and "50.00" in html
    assert "Too few documents to compare entries" in html
    assert client.get(f"{BOARD}/leaderboard.docx").status_code == 404

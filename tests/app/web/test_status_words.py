"""A submission's status as the pages write it (the ``status`` macro every list and page uses)."""

from __future__ import annotations

import pytest

from app.web.pages.render import make_environment


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("awaiting_run", "waiting for its run"),
        ("queued", "queued"),
        ("running", "running"),
        ("scored", "scored"),
        ("failed", "failed"),
    ],
)
def test_statuses_are_written_in_words(value: str, shown: str) -> None:
    template = make_environment().from_string("{% import '_macros.html' as m %}{{ m.status(value) }}")
    assert template.render(value=value) == f'<span class="status status-{value}">{shown}</span>'

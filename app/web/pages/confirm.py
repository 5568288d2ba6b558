"""The page that asks before an action that cannot be undone or costs much (revealing, scoring a phase again,
cancelling a baseline run, deleting a submission): its form posts the same action again with ``confirmed=yes``,
so no script is needed and nothing happens on one click."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request, Response

from app.storage.models import User
from app.web.pages.forms import ShortText
from app.web.pages.render import render

#: The form field that says the user confirmed the action.
Confirmed = ShortText


@dataclass(frozen=True)
class Question:
    """What the page that asks before an action says; ``{title}`` in ``question`` names what it acts on."""

    question: str
    details: list[str]
    button: str


def confirm_first(
    request: Request,
    viewer: User,
    confirmed: str,
    asking: Question,
    *,
    back: str,
    title: str = "",
    fields: dict[str, str] | None = None,
) -> Response | None:
    """``None`` once the form says ``confirmed=yes``; until then, the page that asks, whose form posts
    the same action again with the confirmation (and ``fields``, the action's own form fields, as they came)."""
    if confirmed == "yes":
        return None
    context = {
        "question": asking.question.format(title=title),
        "details": asking.details,
        "button": asking.button,
        "action": request.url.path,
        "back": back,
        "fields": fields or {},
    }
    return render(request, "confirm.html", context, viewer=viewer)

"""The fields of the pages' forms, declared once: every text field refuses a NUL and anything longer
than where it is stored (the same limits as the API's schemas, ``app.web.schemas.common``), so a
form can neither fail inside the database nor store text cut or as sent. A refused field comes back
as an error page naming it (``render.PageRoute``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Form
from sqlalchemy.orm import InstrumentedAttribute

from app.services.accounts.users import MAX_PASSWORD_LENGTH
from app.services.competitions.phase_edits import MAX_DESCRIPTION
from app.storage.models import BaselineRun, Team, User
from app.storage.types import column_length
from app.web.schemas.common import NO_NUL

#: Where to go after a form (a path on this site): as long as an address is worth keeping.
MAX_NEXT = 2048


def form_text(max_length: int) -> Any:
    """A form field of at most ``max_length`` characters, without NUL."""
    return Annotated[str, Form(max_length=max_length, pattern=NO_NUL)]


def form_for(column: InstrumentedAttribute[Any]) -> Any:
    """A form field stored in ``column``."""
    return form_text(column_length(column))


UserName = form_for(User.name)
Email = form_for(User.email)
Password = form_text(MAX_PASSWORD_LENGTH)
Next = form_text(MAX_NEXT)
TeamName = form_for(Team.name)
InviteCode = form_for(Team.invite_code)
BaselineName = form_for(BaselineRun.baseline)
#: A time as people type it, a number, or a choice among a few words.
ShortText = form_text(64)
Description = form_text(MAX_DESCRIPTION)

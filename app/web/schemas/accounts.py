"""Accounts, tokens and teams."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from app.services.accounts import users
from app.storage.models import ApiToken, Team, User
from app.storage.types import column_length
from app.web.schemas.common import Password, text_for

#: Any name that fits the column (logging in with one that cannot exist is a 401 like any other).
UserName = text_for(User.name)
Email = text_for(User.email)
TokenLabel = text_for(ApiToken.label)
TeamName = text_for(Team.name, min_length=1)
InviteCode = text_for(Team.invite_code)

#: The rules of ``app.services.accounts`` for a new account (it checks them again), as the document
#: declares them: a new name's pattern, a new password's length.
NewUserName = Annotated[
    str,
    Field(
        pattern=f"^{users.NAME_PATTERN.pattern}$",
        min_length=1,
        max_length=column_length(User.name),
        description="a letter or digit, then letters, digits, '_', '.' or '-'",
    ),
]
NewPassword = Annotated[Password, Field(min_length=users.MIN_PASSWORD_LENGTH)]


class UserCreate(BaseModel):
    name: NewUserName = Field(examples=["ada"])
    password: NewPassword
    email: Email | None = None


class PasswordChange(BaseModel):
    current_password: Password
    new_password: NewPassword


class SignedOut(BaseModel):
    """Every browser session of ``user`` ended and every API token of theirs revoked."""

    user: str
    tokens_revoked: int


class UserOut(BaseModel):
    id: int
    name: str
    is_organizer: bool
    is_admin: bool

    @classmethod
    def of(cls, user: User) -> UserOut:
        return cls(id=user.id, name=user.name, is_organizer=user.is_organizer, is_admin=user.is_admin)


class TokenCreate(BaseModel):
    name: UserName = Field(description="user name")
    password: Password
    label: TokenLabel = Field("", description="a note to tell your tokens apart")


class TokenOut(BaseModel):
    token: str = Field(description="shown only now; send it as 'Authorization: Bearer <token>'")
    user: str


class TeamCreate(BaseModel):
    name: TeamName


class TeamRename(BaseModel):
    name: TeamName


class TeamJoin(BaseModel):
    invite_code: InviteCode


class TeamOut(BaseModel):
    name: str
    solo: bool
    members: list[str]
    founder: str | None = Field(None, description="its earliest remaining member: may rename it and remove members")
    invite_code: str | None = Field(None, description="shown to members only; others join with it")

    @classmethod
    def of(cls, team: Team, members: list[User], viewer: User) -> TeamOut:
        """The team as ``viewer`` sees it: its invite code only for a member of a team of several."""
        names = [member.name for member in members]
        member = viewer.name in names and not team.is_solo
        return cls(
            name=team.name,
            solo=team.is_solo,
            members=names,
            founder=names[0] if names else None,
            invite_code=team.invite_code if member else None,
        )

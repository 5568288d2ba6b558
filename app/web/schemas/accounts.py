"""Accounts, tokens and teams."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.storage.models import ApiToken, Team, User
from app.web.schemas.common import Password, text_for

UserName = text_for(User.name)
Email = text_for(User.email)
TokenLabel = text_for(ApiToken.label)
TeamName = text_for(Team.name)
InviteCode = text_for(Team.invite_code)


class UserCreate(BaseModel):
    name: UserName = Field(examples=["ada"])
    password: Password
    email: Email | None = None


class PasswordChange(BaseModel):
    current_password: Password
    new_password: Password


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

"""The storage a competition uses (``GET /competitions/{c}/usage``), shaped from ``competitions.usage.Usage``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.services.competitions.usage import Amount, Holder, Usage


class AmountOut(BaseModel):
    files: int = Field(description="how many files")
    bytes: int = Field(description="their size in bytes, together")

    @classmethod
    def of(cls, amount: Amount) -> AmountOut:
        return cls(files=amount.files, bytes=amount.bytes)


class HolderOut(AmountOut):
    name: str = Field(description="the team's or the user's name")

    @classmethod
    def of_holder(cls, holder: Holder) -> HolderOut:
        return cls(name=holder.name, files=holder.files, bytes=holder.bytes)


class UsageOut(BaseModel):
    """What a competition stores (organizers and site admins)."""

    competition: str
    uploaded: AmountOut = Field(description="every submission's file as it was sent, baselines included")
    stored: AmountOut = Field(
        description="the distinct contents the competition refers to, each once: what it takes in the blob store"
    )
    competition_files: AmountOut = Field(
        description="the organizers' files: golds, task and phase files, code phases' inputs (distinct)"
    )
    teams: list[HolderOut] = Field(description="each team's submissions, largest first")
    users: list[HolderOut] = Field(description="each uploader's submissions, largest first")
    quota_bytes: int | None = Field(
        description="most bytes every team's submissions may take together (null: no limit)"
    )
    team_quota_bytes: int | None = Field(description="most bytes each team's submissions may take (null: no limit)")
    quota_used_bytes: int = Field(description="what the competition's quota counts: every team's submissions as sent")

    @classmethod
    def of(cls, usage: Usage) -> UsageOut:
        return cls(
            competition=usage.competition,
            uploaded=AmountOut.of(usage.uploaded),
            stored=AmountOut.of(usage.stored),
            competition_files=AmountOut.of(usage.competition_files),
            teams=[HolderOut.of_holder(h) for h in usage.teams],
            users=[HolderOut.of_holder(h) for h in usage.users],
            quota_bytes=usage.quota_bytes,
            team_quota_bytes=usage.team_quota_bytes,
            quota_used_bytes=usage.quota_used_bytes,
        )

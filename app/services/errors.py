"""The errors services raise; one handler in the web layer turns each into an HTTP answer.

Hierarchy (HTTP status in brackets)::

    ServiceError                    [400] anything a service refuses
    ├── InvalidInput                [422] a request or file that breaks the rules; lists ``problems``
    ├── NotAuthenticated            [401] no or wrong credentials
    ├── Forbidden                   [403] authenticated, but not allowed
    ├── NotFound                    [404] no such competition, task, phase, submission, ...
    ├── Conflict                    [409] the thing exists already, or the state forbids the change
    ├── PhaseClosed                 [409] the phase does not accept submissions now (says when it opens)
    ├── UploadTooLarge              [413] a file over the size limit
    ├── StorageQuotaExceeded        [413] a file the team's or the competition's storage quota has no room for
    ├── QuotaExhausted              [429] the team's limit is used up (says when it resets)
    └── Unavailable                 [503] the platform cannot do it now (a phase's gold no longer parses)

Every error has a short machine-readable ``code`` and a message meant for people.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar


class ServiceError(Exception):
    """Base of every refusal; ``status`` is the HTTP status the web layer answers with."""

    status: ClassVar[int] = 400
    default_code: ClassVar[str] = "bad_request"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "detail": self.message}

    def retry_after(self, now: datetime) -> int | None:
        """Whole seconds to wait before trying again (the ``Retry-After`` header), or ``None``: no wait helps."""
        return None


class InvalidInput(ServiceError):
    """Input that breaks the rules; ``problems`` names each mistake by place (line, key, field)."""

    status = 422
    default_code = "invalid_input"

    def __init__(
        self, message: str, problems: Iterable[Mapping[str, str]] = (), *, code: str | None = None, total: int = 0
    ) -> None:
        super().__init__(message, code=code)
        self.problems = [dict(p) for p in problems]
        self.total = max(total, len(self.problems))

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "detail": self.message, "problems": self.problems, "total": self.total}


class NotAuthenticated(ServiceError):
    status = 401
    default_code = "not_authenticated"


class Forbidden(ServiceError):
    status = 403
    default_code = "forbidden"


class NotFound(ServiceError):
    status = 404
    default_code = "not_found"


class Conflict(ServiceError):
    status = 409
    default_code = "conflict"


class PhaseClosed(ServiceError):
    """The phase is not open; ``opens_at`` or ``closed_at`` says when it opens or when it closed."""

    status = 409
    default_code = "phase_closed"

    def __init__(self, message: str, *, opens_at: datetime | None = None, closed_at: datetime | None = None) -> None:
        super().__init__(message)
        self.opens_at = opens_at
        self.closed_at = closed_at

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.opens_at is not None:
            out["opens_at"] = self.opens_at.isoformat()
        if self.closed_at is not None:
            out["closed_at"] = self.closed_at.isoformat()
        return out


class UploadTooLarge(ServiceError):
    status = 413
    default_code = "upload_too_large"

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "limit_bytes": self.limit}


class StorageQuotaExceeded(ServiceError):
    """An upload that would take a storage quota (``quota``: ``team`` or ``competition``) past its limit."""

    status = 413
    default_code = "storage_quota_exceeded"

    def __init__(self, message: str, *, quota: str, limit: int, used: int, size: int) -> None:
        super().__init__(message)
        self.quota, self.limit, self.used, self.size = quota, limit, used, size

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "quota": self.quota,
            "limit_bytes": self.limit,
            "used_bytes": self.used,
            "size_bytes": self.size,
        }


class QuotaExhausted(ServiceError):
    """The team's submissions for the phase are used up; ``resets_at`` is ``None`` for the total limit."""

    status = 429
    default_code = "quota_exhausted"

    def __init__(self, message: str, *, resets_at: datetime | None) -> None:
        super().__init__(message)
        self.resets_at = resets_at

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["resets_at"] = self.resets_at.isoformat() if self.resets_at is not None else None
        return out

    def retry_after(self, now: datetime) -> int | None:
        # Rounded up: a client that waits exactly this long finds the limit reset, never a second early.
        if self.resets_at is None:
            return None
        return max(1, math.ceil((self.resets_at - now).total_seconds()))


class Unavailable(ServiceError):
    """The platform's fault, not the caller's: say so plainly and let organizers see the cause in logs."""

    status = 503
    default_code = "unavailable"

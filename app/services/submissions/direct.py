"""Direct uploads of a submission: the file goes from the client straight to object storage, then takes the
ordinary path of an upload (``intake.submit``), so a direct upload ends as the same submission a normal one makes.

1. ``start``: the declared size and sha256, the file's name and description. Every check that needs no byte of
   the file runs first (``intake.precheck``: the phase open, the right to take part, the size limit, the team's
   submissions left, the storage quotas), so a refused upload costs nothing; then the store starts a multipart
   upload (``app.storage.direct``) and the answer holds a presigned link per part and a signed token naming the
   upload, its declarer and what was declared.
2. The client sends the parts to the links (the web process carries none of it).
3. ``complete``: the token (its signature, its age, the same user and phase) and the parts' ETags. The store puts
   the parts together; the object is read back in chunks, spooled to a temporary file and hashed as it comes
   (memory stays flat); a size or sha256 other than the declared ones is refused (an altered or incomplete
   upload). Then ``intake.submit`` runs as for any upload: the same checks again, the same validation, the
   quotas counted under the team's lock, and the contents stored under their sha256 once, copied inside the
   bucket (``Content.staged``). The staging object is removed whatever the outcome, and a refusal leaves no
   submission.

Only offered where new files go to the s3 store (``NotOffered``, a 409 ``direct_upload_unavailable``: the
client sends the file to the ordinary route instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from app.services.accounts.access import require_user
from app.services.competitions.catalog import get_phase
from app.services.errors import Conflict, InvalidInput
from app.services.scoring.gold import GoldCache
from app.services.scoring.handoff import ParsedSubmissions
from app.services.server_secrets import server_key
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.blobs import Content, stores_of
from app.storage.db import end_read_transaction
from app.storage.direct import DirectUploads, NotOffered, UploadIncomplete, direct_uploads
from app.storage.models import User
from app.storage.types import utcnow

_KEY = "direct_uploads"
_SALT = "podium.direct-upload"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Declared:
    """What the client says of its file before sending it."""

    size: int
    sha256: str
    filename: str
    method_name: str = ""
    method_description: str = ""


@dataclass(frozen=True)
class Started:
    token: str
    part_size: int
    urls: list[str]
    expires_at: datetime


def _serializer(session: Session) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(server_key(session, _KEY), salt=_SALT)


def _offered(session: Session) -> DirectUploads:
    try:
        return direct_uploads(stores_of(session))
    except NotOffered as exc:
        raise Conflict(str(exc), code="direct_upload_unavailable") from None


def _checked_declaration(declared: Declared) -> None:
    problems = []
    if not SHA256.match(declared.sha256):
        problems.append({"where": "sha256", "message": "the file's sha256, 64 lowercase hexadecimal digits"})
    if declared.size <= 0:
        problems.append({"where": "size", "message": "the file's size in bytes, more than 0"})
    if problems:
        raise InvalidInput("the direct upload's declaration was refused", problems)


def start(
    session: Session,
    user: User | None,
    ref: tuple[str, str, str],
    declared: Declared,
    *,
    limits: Limits,
    hours: float,
    now: datetime | None = None,
) -> Started:
    """Check what can be checked before the bytes arrive, then start the upload; its links and token."""
    now = now or utcnow()
    user = require_user(user)
    _checked_declaration(declared)
    described = intake.Upload(b"", declared.filename, declared.method_name, declared.method_description)
    intake.check_text(described)
    intake.precheck(session, user, ref, declared.size, limits, now)
    uploads = _offered(session)
    seconds = int(hours * 3600)
    staged = uploads.start(declared.size, seconds)
    token = _serializer(session).dumps(
        {
            "user": user.id,
            "ref": list(ref),
            "key": staged.key,
            "upload": staged.upload_id,
            "parts": len(staged.urls),
            "size": declared.size,
            "sha256": declared.sha256,
            "filename": declared.filename,
            "method_name": declared.method_name,
            "method_description": declared.method_description,
        }
    )
    return Started(token, staged.part_size, staged.urls, now + timedelta(seconds=seconds))


def _claims(session: Session, user: User, ref: tuple[str, str, str], token: str, hours: float) -> dict[str, object]:
    try:
        claims = _serializer(session).loads(token, max_age=int(hours * 3600))
    except SignatureExpired:
        raise InvalidInput(
            "this direct upload has expired; start a new one",
            [{"where": "upload", "message": f"a direct upload must be completed within {hours:g} hours"}],
            code="direct_upload_expired",
        ) from None
    except BadSignature:
        raise InvalidInput(
            "this is not a direct upload this server started",
            [{"where": "upload", "message": "send the token the start of the upload answered"}],
        ) from None
    if not isinstance(claims, dict) or claims.get("user") != user.id or tuple(claims.get("ref", ())) != ref:
        raise InvalidInput(
            "this direct upload was started by another user or for another phase",
            [{"where": "upload", "message": "complete an upload at the phase and with the token you started it"}],
        )
    return claims


def complete(
    session: Session,
    user: User | None,
    ref: tuple[str, str, str],
    token: str,
    etags: list[str],
    *,
    limits: Limits,
    hours: float,
    gold_cache: GoldCache,
    handoff: ParsedSubmissions | None = None,
    key: str | None = None,
) -> intake.Accepted:
    """Put the upload together, check it is what was declared, and submit it as any upload; the staging object
    is removed whatever the outcome."""
    user = require_user(user)
    uploads = _offered(session)
    claims = _claims(session, user, ref, token, hours)
    staged_key, upload_id = str(claims["key"]), str(claims["upload"])
    if key is not None:  # a completion sent again after a lost answer: the submission the first one made
        done = intake.replay(session, user.id, key, get_phase(session, *ref), str(claims["sha256"]), utcnow())
        if done is not None:
            return done
    end_read_transaction(session)  # nothing is held while the parts are put together and read back
    try:
        if len(etags) != claims["parts"]:
            raise InvalidInput(
                "the direct upload is incomplete",
                [{"where": "parts", "message": f"{len(etags)} parts were named; the upload has {claims['parts']}"}],
                code="direct_upload_incomplete",
            )
        try:
            uploads.complete(staged_key, upload_id, etags)
        except UploadIncomplete as exc:
            raise InvalidInput(
                "the direct upload is incomplete: the store could not put its parts together",
                [{"where": "parts", "message": str(exc)}],
                code="direct_upload_incomplete",
            ) from None
        with uploads.read(staged_key) as stream:
            content = Content.spool(stream)
        with content:
            _check_received(content, claims)
            content.staged = staged_key
            upload = intake.Upload(
                content, str(claims["filename"]), str(claims["method_name"]), str(claims["method_description"])
            )
            return intake.submit(
                session, user, ref, upload, limits=limits, gold_cache=gold_cache, key=key, handoff=handoff
            )
    finally:
        uploads.discard(staged_key, upload_id)


def _check_received(content: Content, claims: dict[str, object]) -> None:
    problems = []
    if content.size != claims["size"]:
        problems.append({"where": "size", "message": f"{content.size} bytes arrived; {claims['size']} were declared"})
    if content.sha256 != claims["sha256"]:
        problems.append(
            {"where": "sha256", "message": f"what arrived hashes to {content.sha256}; {claims['sha256']} was declared"}
        )
    if problems:
        raise InvalidInput(
            "the uploaded file is not the one declared: it was altered or cut short on its way",
            problems,
            code="direct_upload_mismatch",
        )

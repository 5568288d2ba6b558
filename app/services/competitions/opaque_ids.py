"""Opaque ids: a phase whose gold's ids (or their order) give the answers away publishes other ids.

A bundle's phase with ``opaque_ids: true`` is stored with its gold rewritten: each id replaced by an
opaque one and the lines sorted by the new ids (``scorers.inputs.rename_ids``); its derived inputs are
made again from that gold. So the mapping lives in the stored gold itself: the inputs people download,
the validation of their files and every word of a refusal, the scores and their per-unit statistics,
the hosted baselines all see only the opaque ids, and nothing after creation needs the secret or can
translate back by mistake. The release file keeps its ids, so ``podium score`` on it works as before.

An opaque id is the first 20 hex digits of HMAC-SHA256 over ``competition/task/phase`` and the id, keyed
by a secret the server makes once and keeps in its database (``ServerSecret``): unpredictable to
participants, unlinkable between phases, and the same in every process and after every restart, so the
same release in the same phase gets the same ids again (a competition loaded anew keeps the files its
participants downloaded). The database holds the gold anyway, so the key adds nothing to what a copy of
it reveals. Public files other than the derived inputs are published as given: name the inputs with
``{derive: inputs, from: gold}`` in such a phase.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace

from sqlalchemy.orm import Session

from app.services import server_secrets
from app.services.bundles.spec import BundleFile, PhaseSpec
from app.services.errors import InvalidInput
from scorers import ScorerError
from scorers.inputs import participant_inputs, rename_ids

SECRET_NAME = "opaque-ids"  # noqa: S105  (the name the key is kept under, not a secret)
#: Hex digits of an opaque id: 80 bits, so that ids of one gold do not collide (a collision is refused).
ID_DIGITS = 20


def server_key(session: Session) -> bytes:
    """The server's key for opaque ids, made on first use."""
    return server_secrets.server_key(session, SECRET_NAME)


def opaque_id(key: bytes, ref: tuple[str, str, str], real: str) -> str:
    """The opaque id of ``real`` in the phase ``ref`` (competition, task, phase slugs)."""
    message = "/".join(ref).encode() + b"\x00" + real.encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:ID_DIGITS]


def with_opaque_ids(session: Session, ref: tuple[str, str, str], scorer: str, phase: PhaseSpec) -> PhaseSpec:
    """``phase`` as stored: unchanged without ``opaque_ids``, else with its gold's ids replaced and its derived
    inputs made again from that gold."""
    if not phase.opaque_ids:
        return phase
    key = server_key(session)
    try:
        gold = rename_ids(scorer, phase.gold.data, lambda real: opaque_id(key, ref, real))
    except ScorerError as exc:
        where = f"{'/'.join(ref)}.gold"
        raise InvalidInput("the phase's ids cannot be replaced", [{"key": where, "message": str(exc)}]) from None
    public = tuple(_inputs(scorer, gold, file) if file.derived else file for file in phase.public_files)
    hidden = tuple(_inputs(scorer, gold, file) if file.derived else file for file in phase.code_inputs)
    return replace(phase, gold=_file(phase.gold.name, gold), public_files=public, code_inputs=hidden)


def _inputs(scorer: str, gold: bytes, derived: BundleFile) -> BundleFile:
    _, data = participant_inputs(scorer, gold)
    return replace(_file(derived.name, data), derived=True)


def _file(name: str, data: bytes) -> BundleFile:
    return BundleFile(name, data, hashlib.sha256(data).hexdigest())

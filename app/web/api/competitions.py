"""Competitions, tasks, phases and their public files; creating a competition from a bundle;
participation requests and organizer actions on a phase."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from starlette.status import HTTP_201_CREATED

from app.services.accounts import access
from app.services.bundles.uploads import bundle_from_upload
from app.services.code.settings import caps_of
from app.services.competitions import catalog, downloads, participation, phase_edits, samples, usage
from app.services.errors import InvalidInput, UploadTooLarge
from app.services.workers import queues
from app.storage.types import utcnow
from app.web.deps import CurrentUser, SessionDep, StateDep
from app.web.downloads import streamed
from app.web.schemas.common import ErrorOut
from app.web.schemas.competitions import (
    BundleWarningOut,
    CompetitionCreated,
    CompetitionList,
    CompetitionOut,
    CompetitionSummary,
    ParticipantList,
    ParticipationOut,
    PhaseChangeList,
    PhaseChangeOut,
    PhaseEdit,
    PhaseOut,
    TaskOut,
    competition_url,
)
from app.web.schemas.usage import UsageOut
from app.web.schemas.workers import OwnWorkersOut
from app.web.uploads import multipart_body, read_form

router = APIRouter(prefix="/competitions", tags=["competitions"])


def _attachment(name: str, data: bytes) -> Response:
    safe = name.replace('"', "").replace("\\", "")
    return Response(
        data,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{safe}"'},
    )


@router.get("", response_model=CompetitionList)
def list_competitions(session: SessionDep) -> CompetitionList:
    return CompetitionList(competitions=[CompetitionSummary.of(c) for c in catalog.list_competitions(session)])


_BUNDLE_BODY = multipart_body(
    "bundle",
    "a zip of the bundle folder (competition.yaml and its files), "
    "or competition.yaml alone when it names only server data files",
)


@router.post(
    "",
    status_code=HTTP_201_CREATED,
    response_model=CompetitionCreated,
    openapi_extra=_BUNDLE_BODY,
    responses={401: {"model": ErrorOut}, 403: {"model": ErrorOut}, 409: {"model": ErrorOut}, 422: {"model": ErrorOut}},
)
async def create_competition(
    request: Request, state: StateDep, session: SessionDep, user: CurrentUser
) -> CompetitionCreated:
    """Put a competition online from a bundle (organizers and site admins). Every mistake in the
    bundle is answered with its key path. Only site admins may name files of the server's data folder
    (`{data: ...}`); everyone else sends the files in the bundle zip."""
    access.require_creator(user)
    limit = state.settings.max_bundle_bytes
    form = await read_form(
        request,
        file_limit=limit,
        too_large=lambda size: UploadTooLarge(f"the bundle is larger than {limit} bytes", limit=limit),
    )
    if "bundle" not in form.contents:
        raise InvalidInput("no bundle was sent", [{"where": "bundle", "message": "attach the bundle as 'bundle'"}])
    data = form.contents["bundle"][1].read()
    bundle = await run_in_threadpool(
        bundle_from_upload, data, data_dir=state.settings.data_dir, max_bytes=limit, may_read_data=user.is_admin
    )

    def store() -> CompetitionCreated:
        competition, created = catalog.create_competition(
            session, bundle.spec, creator=user, code_caps=caps_of(state.settings)
        )
        return CompetitionCreated(
            slug=competition.slug,
            created=created,
            url=competition_url(competition.slug),
            format=bundle.format,
            warnings=[BundleWarningOut(key=key, message=message) for key, message in bundle.warnings],
        )

    return await run_in_threadpool(store)


@router.get("/{competition}", response_model=CompetitionOut)
def get_competition(competition: str, session: SessionDep, state: StateDep) -> CompetitionOut:
    competition_row = catalog.get_competition(session, competition)
    return CompetitionOut.of(session, competition_row, state.limits, utcnow())


@router.get("/{competition}/tasks/{task}", response_model=TaskOut)
def get_task(competition: str, task: str, session: SessionDep, state: StateDep) -> TaskOut:
    task_row = catalog.get_task(session, competition, task)
    return TaskOut.of(session, task_row, competition, state.limits, utcnow())


@router.get("/{competition}/tasks/{task}/phases/{phase}", response_model=PhaseOut)
def get_phase(competition: str, task: str, phase: str, session: SessionDep, state: StateDep) -> PhaseOut:
    phase_row = catalog.get_phase(session, competition, task, phase)
    now = utcnow()
    out = PhaseOut.of(session, phase_row, phase_row.task, competition, state.limits, now)
    out.format_notes = list(samples.format_notes(session, state.gold_cache, phase_row))
    if (unserved := queues.phase_unserved(session, phase_row.id, now=now)) is not None:
        out.own_workers = OwnWorkersOut.of(unserved, now)
    return out


_ORGANIZER_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut},
    403: {"model": ErrorOut},
    404: {"model": ErrorOut},
    422: {"model": ErrorOut},
}


@router.patch("/{competition}/tasks/{task}/phases/{phase}", response_model=PhaseOut, responses=_ORGANIZER_ERRORS)
def edit_phase(
    competition: str, task: str, phase: str, edit: PhaseEdit, session: SessionDep, state: StateDep, user: CurrentUser
) -> PhaseOut:
    """Change the phase's window, limits, visibility, description, board freeze (`frozen_at`), final
    submissions (`final_submissions`, a phase with a private split), `board` or further `boards` (as the
    bundle's keys) (its organizers). Send only what
    changes; `null` unsets a time or a limit (`"ends_at": null` keeps the phase open for good). The
    whole change is refused, every bad field named, or made and logged setting by setting."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    phase_edits.edit_phase(session, user, phase_row, edit.changes())
    return PhaseOut.of(session, phase_row, phase_row.task, competition, state.limits, utcnow())


@router.get(
    "/{competition}/tasks/{task}/phases/{phase}/changes", response_model=PhaseChangeList, responses=_ORGANIZER_ERRORS
)
def phase_changes(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> PhaseChangeList:
    """Every change organizers made to the phase's settings, newest first (its organizers)."""
    phase_row = catalog.get_phase(session, competition, task, phase)
    return PhaseChangeList(changes=[PhaseChangeOut.of(c) for c in phase_edits.phase_changes(session, user, phase_row)])


@router.get("/{competition}/tasks/{task}/files/{name}", response_class=Response)
def download_training_file(competition: str, task: str, name: str, session: SessionDep) -> Response:
    """A training file of the task."""
    return streamed(session, name, downloads.training_file(session, competition, task, name))


@router.get("/{competition}/tasks/{task}/phases/{phase}/files/{name}", response_class=Response)
def download_phase_file(competition: str, task: str, phase: str, name: str, session: SessionDep) -> Response:
    """A public input file of the phase (never its gold)."""
    return streamed(session, name, downloads.phase_file(session, competition, task, phase, name))


@router.get(
    "/{competition}/tasks/{task}/phases/{phase}/sample",
    response_class=Response,
    responses={404: {"model": ErrorOut, "description": "no such phase, or its scorer cannot build a sample"}},
)
def download_sample(competition: str, task: str, phase: str, session: SessionDep, state: StateDep) -> Response:
    """A sample submission: a valid file in the phase's submission format, built from its public inputs only
    (every label 0, every candidate scored 0, empty predictions). Uploading it is accepted and scored."""
    sample = samples.sample_submission(session, state.gold_cache, competition, task, phase)
    return _attachment(sample.filename, sample.data)


@router.post("/{competition}/participation", response_model=ParticipationOut)
def request_participation(competition: str, session: SessionDep, user: CurrentUser) -> ParticipationOut:
    """Ask to take part (approved at once in an ``open`` competition)."""
    row = participation.request_participation(session, user, catalog.get_competition(session, competition))
    return ParticipationOut.of(user.name, row)


@router.get("/{competition}/participants", response_model=ParticipantList)
def list_participants(competition: str, session: SessionDep, user: CurrentUser) -> ParticipantList:
    """Participation requests (organizers)."""
    rows = participation.list_participants(session, user, catalog.get_competition(session, competition))
    return ParticipantList(participants=[ParticipationOut.of(u.name, p) for u, p in rows])


@router.get("/{competition}/usage", response_model=UsageOut)
def competition_usage(competition: str, state: StateDep, session: SessionDep, user: CurrentUser) -> UsageOut:
    """The files and bytes the competition stores, in all and per team and uploader, and its storage quotas
    (organizers and site admins)."""
    return UsageOut.of(usage.competition_usage(session, user, competition, state.limits))


@router.post("/{competition}/participants/{name}/approve", response_model=ParticipationOut)
def approve_participant(competition: str, name: str, session: SessionDep, user: CurrentUser) -> ParticipationOut:
    """Let a user take part in an ``approval`` competition (organizers)."""
    competition_row = catalog.get_competition(session, competition)
    return ParticipationOut.of(name, participation.approve_participant(session, user, competition_row, name))


@router.post("/{competition}/participants/{name}/refuse", response_model=ParticipationOut)
def refuse_participant(competition: str, name: str, session: SessionDep, user: CurrentUser) -> ParticipationOut:
    """Decline a request, or take back an approval: the user may not take part nor ask again (organizers)."""
    competition_row = catalog.get_competition(session, competition)
    return ParticipationOut.of(name, participation.refuse_participant(session, user, competition_row, name))


@router.delete("/{competition}/participants/{name}", status_code=204, response_class=Response)
def remove_participant(competition: str, name: str, session: SessionDep, user: CurrentUser) -> Response:
    """Forget a user's request: they no longer take part in an approval-only competition and may ask
    again (organizers)."""
    participation.remove_participant(session, user, catalog.get_competition(session, competition), name)
    return Response(status_code=204)

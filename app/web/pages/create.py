"""Putting a competition online from the pages: the bundle (a zip of its folder, or its YAML alone)
uploaded through a form, read by the same loader as ``POST /api/v1/competitions`` and ``podium
competition create``, with every problem shown beside the form under its key path, and what loads but
is probably a mistake (a scorer's warnings) shown after it."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.services.accounts.access import require_creator
from app.services.bundles.spec import BundleError
from app.services.bundles.uploads import spec_from_upload
from app.services.competitions import catalog
from app.services.errors import InvalidInput, ServiceError, UploadTooLarge
from app.storage.models import User
from app.web import sessions
from app.web.csrf import CsrfRefused, check_token
from app.web.deps import SessionDep, StateDep
from app.web.pages import urls
from app.web.pages.render import PageRoute, redirect, render
from app.web.sessions import LoggedIn
from app.web.uploads import read_form

router = APIRouter(route_class=PageRoute, include_in_schema=False)
NEW = "/competitions/new"


@router.get(NEW)
def new_competition(request: Request, viewer: LoggedIn) -> Response:
    """The upload form (organizers and site admins)."""
    require_creator(viewer)
    return render(request, "new_competition.html", {"error": None}, viewer=viewer)


@router.post(NEW)
async def create_competition(request: Request, state: StateDep, session: SessionDep, viewer: LoggedIn) -> Response:
    require_creator(viewer)
    limit = state.settings.max_bundle_bytes
    try:
        form = await read_form(
            request,
            file_limit=limit,
            too_large=lambda size: UploadTooLarge(f"the bundle is larger than {limit} bytes", limit=limit),
        )
        check_token(request, form.fields.get("csrf_token"))
        name, data = form.files.get("bundle", ("", b""))
        if not (name or data):  # the form sends an empty part when no file was chosen
            raise InvalidInput("no bundle was chosen", [{"where": "bundle", "message": "choose a .zip or .yaml file"}])
        spec = await run_in_threadpool(
            spec_from_upload, data, data_dir=state.settings.data_dir, max_bytes=limit, may_read_data=viewer.is_admin
        )

        def store() -> str:
            competition, _ = catalog.create_competition(session, spec, creator=viewer)
            return competition.slug

        slug = await run_in_threadpool(store)
    except CsrfRefused:
        raise
    except ServiceError as exc:  # the bundle's problems (by key path), a taken slug, a file too large
        return await run_in_threadpool(_refused, request, session, viewer, exc)
    sessions.flash(request, f"The competition {spec.title} is online; you are one of its organizers.")
    _flash_warnings(request, spec.warnings)
    return redirect(urls.competition(slug))


#: Warnings shown one by one after the upload (the session keeps five messages; one is the success).
SHOWN_WARNINGS = 3


def _flash_warnings(request: Request, warnings: Sequence[tuple[str, str]]) -> None:
    """What loaded but is probably a mistake, each under its key path, as the API's ``warnings`` say."""
    for key, message in warnings[:SHOWN_WARNINGS]:
        sessions.flash(request, f"Warning: {key}: {message}" if key else f"Warning: {message}", "warning")
    if len(warnings) > SHOWN_WARNINGS:
        more = len(warnings) - SHOWN_WARNINGS
        sessions.flash(request, f"… and {more} more warning(s): POST /api/v1/competitions lists them all.", "warning")


def _refused(request: Request, session: Session, viewer: User, error: ServiceError) -> Response:
    session.rollback()  # nothing of a refused bundle is kept
    if isinstance(error, BundleError):  # its problems as the page's list shows them: key path and message
        problems = [{"key": key, "message": message} for key, message in error.problems]
        error = InvalidInput(error.summary().splitlines()[0], problems, code=error.code)
    return render(request, "new_competition.html", {"error": error}, viewer=viewer, status=error.status)

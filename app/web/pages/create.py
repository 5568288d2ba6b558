"""Putting a competition online from the pages: the bundle (a zip of its folder, or its YAML alone)
uploaded through a form, read by the same loader as ``POST /api/v1/competitions`` and ``podium
competition create`` (a Podium bundle, or a CodaLab 1.5 or Codabench v2 one), with every problem shown
beside the form under its key path, and every warning (what the import could not map, what loads but is
probably a mistake) listed once the competition is online."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.services.accounts.access import require_creator
from app.services.bundles.spec import BundleError
from app.services.bundles.uploads import bundle_from_upload
from app.services.code.settings import caps_of
from app.services.competitions import catalog
from app.services.errors import InvalidInput, ServiceError, UploadTooLarge
from app.storage.models import User
from app.web import sessions
from app.web.csrf import CsrfRefused, check_token
from app.web.deps import SessionDep, StateDep
from app.web.pages import urls
from app.web.pages.render import PageRoute, form_again, redirect, render
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
        bundle = await run_in_threadpool(
            bundle_from_upload, data, data_dir=state.settings.data_dir, max_bytes=limit, may_read_data=viewer.is_admin
        )

        def store() -> str:
            competition, _ = catalog.create_competition(
                session, bundle.spec, creator=viewer, code_caps=caps_of(state.settings)
            )
            return competition.slug

        slug = await run_in_threadpool(store)
    except CsrfRefused:
        raise
    except ServiceError as exc:  # the bundle's problems (by key path), a taken slug, a file too large
        return await run_in_threadpool(_refused, request, session, viewer, exc)
    imported = (
        f" (imported from a {FORMATS.get(bundle.format, bundle.format)} bundle)" if bundle.format != "podium" else ""
    )
    done = f"The competition {bundle.spec.title} is online{imported}; you are one of its organizers."
    if not bundle.warnings:
        sessions.flash(request, done)
        return redirect(urls.competition(slug))
    # Every warning is shown, on a page of its own (more than a few would not fit in the session's messages).
    context = {"done": done, "slug": slug, "warnings": bundle.warnings}
    return render(request, "competition_created.html", context, viewer=viewer, status=201)


#: How the page names the formats ``bundle_from_upload`` tells apart.
FORMATS = {"codalab-1.5": "CodaLab 1.5", "codabench-2": "Codabench v2"}


def _refused(request: Request, session: Session, viewer: User, error: ServiceError) -> Response:
    """The form again with the refusal; nothing of a refused bundle is kept."""
    if isinstance(error, BundleError):  # its problems as the page's list shows them: key path and message
        problems = [{"key": key, "message": message} for key, message in error.problems]
        error = InvalidInput(error.summary().splitlines()[0], problems, code=error.code)
    return form_again(request, session, "new_competition.html", {}, error, viewer=viewer)

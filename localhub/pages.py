"""The web pages the forge's `html_url`s name, read-only: a pull request (`/<owner>/<repo>/pull/<n>`:
title, state, body, files with their diffs, reviews) and the repository it links to
(`/<owner>/<repo>`: its open pull requests), so every URL memrepo prints opens something, as
GitHub's would. HTML from the Jinja templates in `templates/localhub/`, escaped, with no script
(a Content-Security-Policy forbids any). A private repository is shown only to a caller who may
read it, as the API does; anyone else gets the same 404 as for a repository that is not there.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from flask import Blueprint, Response, g

from localhub import git_shapes, merging, messages, shapes
from localhub.errors import ApiError
from localhub.hub import Hub, current_hub

TEMPLATES = "localhub"
# No script, no frame, no form, nothing fetched: the pages are text and an inline style.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                               "form-action 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

bp = Blueprint("localhub_pages", __name__)


@cache
def _environment() -> jinja2.Environment:
    """The project's `templates/` (a source checkout's, else the installed copy's data)."""
    source = Path(__file__).resolve().parent.parent / "templates"
    root = source if source.is_dir() else Path(str(importlib.resources.files("bot.templates")))
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(root / TEMPLATES)), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _page(name: str, status: int = 200, **context: Any) -> Response:
    html = _environment().get_template(name).render(**context)
    return Response(html, status=status, mimetype="text/html", headers=SECURITY_HEADERS)


RESERVED_OWNERS = ("api",)  # /api/v3 and the like stay the API's (its JSON 404); logins never start with "_"


def _readable(hub: Hub, owner: str, name: str) -> Any:
    """The repository, if this caller may see it (no caller: public repositories only)."""
    row = hub.visible_repo(owner, name)
    if getattr(g, "user", None) is None and row["private"]:
        raise ApiError(404, messages.NOT_FOUND)
    return row


def _not_found() -> Response:
    return _page("not_found.html.j2", 404, message=messages.NOT_FOUND)


@bp.get("/<owner>/<name>/pull/<int:number>")
def pull_page(owner: str, name: str, number: int) -> Response:
    hub = current_hub()
    if owner in RESERVED_OWNERS or owner.startswith("_"):
        raise ApiError(404, messages.NOT_FOUND)
    try:
        row = _readable(hub, owner, name)
        pull = hub.pull(row, number)
    except ApiError:
        return _not_found()
    git = hub.git(row)
    files = [git_shapes.diff_entry(hub, row, pull["head_sha"], change)
             for change in merging.range_changes(git, pull["base_sha"], pull["head_sha"])]
    reviews = [shapes.review(hub, row, r) for r in hub.store.all(
        "SELECT * FROM reviews WHERE repo_id = ? AND number = ? ORDER BY id", row["id"], number)]
    return _page("pull.html.j2", pull=git_shapes.pull_request(hub, pull), files=files, reviews=reviews,
                 repository=hub.full_name(row), repository_url=f"{hub.web_url()}/{hub.full_name(row)}")


@bp.get("/<owner>/<name>")
def repository_page(owner: str, name: str) -> Response:
    hub = current_hub()
    if owner in RESERVED_OWNERS or owner.startswith("_"):
        raise ApiError(404, messages.NOT_FOUND)
    try:
        row = _readable(hub, owner, name)
    except ApiError:
        return _not_found()
    pulls = [git_shapes.pull_request(hub, p) for p in hub.store.all(
        "SELECT * FROM pulls WHERE repo_id = ? AND state = 'open' ORDER BY number DESC", row["id"])]
    return _page("repository.html.j2", repository=hub.full_name(row), pulls=pulls,
                 repository_url=f"{hub.web_url()}/{hub.full_name(row)}")

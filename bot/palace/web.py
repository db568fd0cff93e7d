"""The palace's pages over HTTP: a Flask blueprint of thin views over `source.Palace` and the
view-models of `model.py`, rendered from `templates/palace/`, and `create_app` for
`memrepo palace` (one memory, gated by `gate.Gate`).

The blueprint is the unit another server mounts: `blueprint(resolve, authorize=...)` with a
URL prefix carrying the memory's name (`/palace/<owner>/<repo>`, `key_args=("owner", "repo")`);
`resolve` maps those values to a Palace (None: 404) and `authorize` checks the viewer before any
page is read (a response refuses, None lets in). Every route is read-only (GET and HEAD).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Callable
from functools import cache
from typing import Any

import jinja2
from flask import Blueprint, Flask, Response, abort, g, redirect, request, url_for
from markupsafe import Markup

from bot.dates import BadDateError
from bot.errors import MemrepoError
from bot.identity import ROLES
from bot.memfs import BeforeHistoryError, PathNotInMemoryError
from bot.palace import gate, model
from bot.palace.source import Palace
from bot.templating import environment, templates_root

PALACE_REFUSED = ("this palace needs its token: open it once with ?token=TOKEN, or send 'Authorization: Bearer "
                  "TOKEN'")
PALACE_WRONG_HOST = ("this palace answers only at a loopback name (127.0.0.1, localhost, [::1]); start it with "
                     "--host and --token to serve other names")
PALACE_NOT_FOUND = "not a page of the palace: /, /why, /file, /log and /at are"
PALACE_INTERNAL = "the palace failed to show this page ({error}); the log of `memrepo palace` has the details"

log = logging.getLogger("memrepo.palace")

POLL_MS = 3000
ASSETS = {"palace.js": "text/javascript; charset=utf-8", "palace.css": "text/css; charset=utf-8",
          "favicon.svg": "image/svg+xml"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

Resolve = Callable[[dict[str, Any]], Palace | None]
Authorize = Callable[[Any], Response | None]


# ------------------------------------------------------------------------------------ rendering
def _number(value: int) -> str:
    return f"{value:,}"


def _when(stamp: str | None) -> str:
    return (stamp or "").replace("T", " ")


@cache
def _environment() -> jinja2.Environment:
    env = environment().overlay(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(number=_number, when=_when, short=model.short)
    env.globals.update(url_for=url_for, roles=ROLES)
    return env


def fragment(name: str, **context: Any) -> str:
    return _environment().get_template(f"palace/{name}").render(poll_ms=g.get("palace_poll_ms", POLL_MS),
                                                                 title=g.get("palace_title", ""),
                                                                 events=g.get("palace_events", False), **context)


def render(name: str, status: int = 200, **context: Any) -> Response:
    return Response(fragment(name, **context), status=status, mimetype="text/html")


def _kept(name: str, key: tuple[Any, ...], make: Callable[[], str]) -> Response:
    """A page rendered once per key (main's commit and the query), under this mount's URLs."""
    html = _palace().memo((name, request.script_root, url_for(".index"), g.palace_title, *key), make)
    return Response(html, mimetype="text/html")


@cache
def _asset(name: str) -> bytes:
    return (templates_root() / "palace" / name).read_bytes()


# ------------------------------------------------------------------------------------ errors
def _failure(exc: MemrepoError) -> Response:
    """A refusal the viewer can act on: 400 for a query the palace cannot use, 404 for a path,
    line or moment memory does not have."""
    status = 400 if isinstance(exc, model.PalaceInputError | BadDateError) else 404
    if isinstance(exc, PathNotInMemoryError | BeforeHistoryError) or exc.details.get("exit_code") == 6:
        status = 404
    head = _palace().head()
    return render("error.html.j2", status=status, head=head, status_code=status, problem=str(exc))


def _palace() -> Palace:
    return g.palace


# ------------------------------------------------------------------------------------ the blueprint
def blueprint(resolve: Resolve, *, authorize: Authorize | None = None, name: str = "palace",
              url_prefix: str | None = None, key_args: tuple[str, ...] = (), poll_ms: int = POLL_MS,
              title: Callable[[dict[str, Any]], str] | None = None, events: bool = False) -> Blueprint:
    """The palace's pages for the memories `resolve` finds (see the module's docstring).
    `events`: the server answers `<mount>/events` with the memory's event stream, which an
    open page then follows instead of asking head.json every `poll_ms`."""
    bp = Blueprint(name, __name__, url_prefix=url_prefix)

    @bp.url_value_preprocessor
    def _take_key(endpoint: str | None, values: dict[str, Any] | None) -> None:
        g.palace_key = {k: (values or {}).pop(k, None) for k in key_args}

    @bp.url_defaults
    def _give_key(endpoint: str, values: dict[str, Any]) -> None:
        for k in key_args:
            values.setdefault(k, g.get("palace_key", {}).get(k))

    @bp.before_request
    def _admit() -> Response | None:
        if authorize is not None:
            refused = authorize(request)
            if refused is not None:
                return refused
        found = resolve(g.get("palace_key", {}))
        if found is None:
            abort(404)
        g.palace = found
        g.palace_poll_ms = poll_ms
        g.palace_events = events
        g.palace_title = title(g.palace_key) if title is not None else found.name()
        return None

    @bp.after_request
    def _headers(response: Response) -> Response:
        for header, value in SECURITY_HEADERS.items():
            response.headers.setdefault(header, value)
        if request.endpoint and request.endpoint.endswith(".asset"):
            response.headers["Cache-Control"] = "max-age=300"
        else:
            response.headers["Cache-Control"] = "no-store"
        return response

    @bp.errorhandler(MemrepoError)
    def _refused(exc: MemrepoError) -> Response:
        return _failure(exc)

    @bp.route("/")
    def index() -> Response:
        palace = _palace()
        view = palace.overview()
        mount = (request.script_root, url_for(".index"))

        def memory() -> Markup:
            # Each block is rendered once per version of its file, the tree once per listing: a
            # commit that changes one block renders one block.
            file_limit = view["sizes"]["file_limit"]
            blocks = [palace.memo(("block", *mount, b["path"], b["blob"], file_limit, i),
                                  lambda b=b, i=i: Markup(fragment("block.html.j2", b=b, index=i)))
                      for i, b in enumerate(view["blocks"], 1)]
            tree = palace.memo(("tree", *mount, view["tree"]["key"]),
                               lambda: Markup(fragment("tree.html.j2", tree=view["tree"])))
            return Markup(fragment("index_memory.html.j2", v=view, blocks=blocks, tree=tree))

        html = palace.memo(("index", *mount, view["head"]), memory)
        return render("index.html.j2", head=view["head"], v=view, memory=html)

    @bp.route("/core.txt")
    def core_text() -> Response:
        return Response(_palace().core_text(), mimetype="text/plain")

    @bp.route("/file")
    def file() -> Response:
        view = _palace().file(model.parse_path(request.args.get("path")))
        return render("file.html.j2", head=view["head"], v=view)

    @bp.route("/why")
    def why() -> Response:
        raw = request.args.get("path")
        if not (raw or "").strip() and request.args.get("line") is None:
            return render("why_form.html.j2", head=_palace().head())
        path = model.parse_path(raw)
        line = model.parse_line(request.args.get("line"))
        if line is None:
            return redirect(url_for(".file", path=path), code=303)
        report = model.why_view(_palace().why(path, line))
        return render("why.html.j2", head=report["head"], r=report)

    @bp.route("/log")
    def history() -> Response:
        f = model.parse_log_filter(request.args)
        palace = _palace()
        head = palace.head()

        def make() -> str:
            view = palace.log(f)
            return fragment("log.html.j2", head=view["head"], v=view)

        return _kept("log", (head, tuple(sorted(f.query().items()))), make)

    @bp.route("/at")
    def then() -> Response:
        date = (request.args.get("date") or "").strip()
        if not date:
            return render("at_form.html.j2", head=_palace().head())
        raw_path = (request.args.get("path") or "").strip()
        path = model.parse_path(raw_path) if raw_path else None
        palace = _palace()

        def make() -> str:
            view = palace.at(date, path)
            return fragment("at.html.j2", head=view["head"], v=view)

        return _kept("at", (palace.head(), date, path), make)

    @bp.route("/head.json")
    def head_json() -> Response:
        return Response(json.dumps({"head": _palace().head()}), mimetype="application/json")

    @bp.route("/assets/<name>")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            abort(404)
        return Response(_asset(name), mimetype=ASSETS[name].split(";")[0], content_type=ASSETS[name])

    return bp


# ------------------------------------------------------------------------------------ memrepo palace
def gatekeeper(check: gate.Gate) -> Authorize:
    """`authorize` for the blueprint from a Gate: refusals in one line, the ?token= visit
    answered with a redirect that drops the token and sets the cookie."""

    def authorize(req: Any) -> Response | None:
        decision = check.decide(host=req.host, authorization=req.headers.get("Authorization"),
                                query_token=req.args.get("token"), cookie=req.cookies.get(gate.COOKIE))
        if decision == gate.ALLOW:
            return None
        if decision == gate.REMEMBER:
            query = urllib.parse.urlencode([(k, v) for k, v in req.args.items(multi=True) if k != "token"])
            target = req.path + (f"?{query}" if query else "")
            response = redirect(target, code=303)
            response.set_cookie(gate.COOKIE, check.cookie_value(), httponly=True, samesite="Strict",
                                path=req.script_root or "/")
            return response
        text = PALACE_WRONG_HOST if decision == gate.WRONG_HOST else PALACE_REFUSED
        status = 403 if decision == gate.WRONG_HOST else 401
        response = Response(text + "\n", status=status, mimetype="text/plain")
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="memrepo palace"'
        for header, value in SECURITY_HEADERS.items():
            response.headers.setdefault(header, value)
        return response

    return authorize


def create_app(repo_root: Any, *, token: str | None = None, forge: Any = None, transcripts: Any = None,
               home: Any = None, poll_ms: int = POLL_MS, palace: Palace | None = None) -> Flask:
    """The palace of one memory as a WSGI app: `token` None serves loopback names only (the
    caller checks the address with gate.check_start first); `forge`, `transcripts` and `home` as
    Palace takes them."""
    found = palace or Palace(repo_root, forge=forge, transcripts=transcripts, home=home)
    app = host_app()
    app.register_blueprint(blueprint(lambda _key: found, authorize=gatekeeper(gate.Gate(token)), poll_ms=poll_ms))
    app.extensions["memrepo_palace"] = found
    return app


def host_app() -> Flask:
    """A Flask app to register the palace's blueprint on: a page it does not have is a plain
    404, a failure a plain 500 that names the error and logs it (never a traceback to the viewer)."""
    app = Flask(__name__, template_folder=None, static_folder=None)

    @app.errorhandler(404)
    def _not_found(_exc: Exception) -> Response:
        return Response(PALACE_NOT_FOUND + "\n", status=404, mimetype="text/plain")

    @app.errorhandler(Exception)
    def _bug(exc: Exception) -> Response:
        if hasattr(exc, "code") and hasattr(exc, "get_response"):
            return exc.get_response()  # an HTTP answer werkzeug made (405 and the like)
        log.exception("palace: %s", exc)
        return Response(PALACE_INTERNAL.format(error=type(exc).__name__) + "\n", status=500,
                        mimetype="text/plain")

    return app

"""The forge's state and the operations every endpoint shares: accounts, tokens (and the
operator credential), repositories (bare git repositories under `repos/`), who may do what on
them, URLs, and the event bus that webhooks listen on."""

from __future__ import annotations

import hmac
import secrets
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from flask import current_app, g, has_request_context, request

from localhub import access, merging, messages
from localhub.errors import ApiError, not_found, or_404
from localhub.operator import ensure_operator_token
from localhub.store import Store, now, token_hash

Listener = Callable[["Event"], None]
PACK_REFS_EVERY = 32
EXTENSION = "localhub"  # app.extensions key of the app's Hub


@dataclass(frozen=True)
class Event:
    """Something happened that GitHub would send a webhook for. `data` holds ids and values
    the payload builder needs (pull number, before/after shas, ...), read again when built."""

    name: str
    action: str | None
    repo_id: int
    sender_id: int
    data: dict[str, Any] = field(default_factory=dict)


class Hub:
    def __init__(self, data_dir: Path, public_url: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # private repositories live here
        self.repos_dir = self.data_dir / "repos"
        self.repos_dir.mkdir(exist_ok=True)
        self.store = Store(self.data_dir / "localhub.sqlite3")
        self.operator_token = ensure_operator_token(self.data_dir)
        self.public_url = public_url.rstrip("/") if public_url else None
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self._ref_moves: dict[int, int] = {}
        self._ref_moves_lock = threading.Lock()
        self.on_close: list[Callable[[], None]] = []

    def close(self) -> None:
        """Stop background work (webhook delivery, mergeability) and close the database."""
        for stop in list(self.on_close):
            stop()
        self.store.close()

    # ------------------------------------------------------------------ URLs
    def web_url(self) -> str:
        if self.public_url:
            return self.public_url
        if has_request_context():
            return request.host_url.rstrip("/")
        raise RuntimeError(messages.NO_PUBLIC_URL)

    def api_url(self) -> str:
        return self.web_url() + "/api/v3"

    # ------------------------------------------------------------------ accounts
    def user(self, user_id: int) -> Any:
        return or_404(self.store.one("SELECT * FROM users WHERE id = ?", user_id))

    def user_by_login(self, login: str) -> Any | None:
        return self.store.one("SELECT * FROM users WHERE login = ?", login)

    def account(self, login: str, kind: str = "User") -> tuple[Any, bool]:
        """The account named `login` (any case), made when missing, and whether it was made
        now: one transaction, so of two requests for a new name only one makes it."""
        with self.store.tx() as db:
            row = db.execute("SELECT * FROM users WHERE login = ?", (login,)).fetchone()
            if row is not None:
                return row, False
            user_id = self.store.next_id(db, "user", 1001)
            db.execute("INSERT INTO users (id, login, type, created_at) VALUES (?, ?, ?, ?)",
                       (user_id, login, kind, now()))
            return db.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone(), True

    def account_by_email(self, email: str | None) -> Any | None:
        """The account a commit's author or committer address belongs to, as GitHub links
        commits to accounts: a no-reply address (by its id when it has one, else its login),
        or the email the account set; None for anyone else."""
        noreply = merging.noreply_account(email or "")
        if noreply is not None and noreply[0] is not None:
            return self.store.one("SELECT * FROM users WHERE id = ?", noreply[0])
        if noreply is not None:
            return self.user_by_login(noreply[1])
        return self.store.one("SELECT * FROM users WHERE email = ? COLLATE NOCASE", email) if email else None

    def ensure_user(self, login: str, kind: str = "User") -> Any:
        return self.account(login, kind)[0]

    def issue_token(self, user_id: int, *, installation_id: int | None = None,
                    ttl: float | None = None, prefix: str = "ghp_") -> tuple[str, float | None]:
        """A new token (kept only as its hash) and when it expires (None: never)."""
        token = prefix + secrets.token_hex(18)
        expires = now() + ttl if ttl else None
        with self.store.tx() as db:
            db.execute("INSERT INTO tokens (token_hash, user_id, installation_id, expires_at, created_at)"
                       " VALUES (?, ?, ?, ?, ?)", (token_hash(token), user_id, installation_id, expires, now()))
        return token, expires

    def token_for(self, login: str) -> str:
        """A new token for `login`, its account made when missing: what the operator may ask
        for over HTTP, for callers in this process (`serve --local`, the demo)."""
        return self.issue_token(self.ensure_user(login)["id"])[0]

    def token_user(self, token: str) -> tuple[Any, Any] | None:
        """(user row, token row) for a live token, else None."""
        row = self.store.one("SELECT * FROM tokens WHERE token_hash = ?", token_hash(token))
        if row is None or (row["expires_at"] is not None and row["expires_at"] < now()):
            return None
        return self.user(row["user_id"]), row

    def is_operator(self, secret: str) -> bool:
        """Whether `secret` is this localhub's operator credential (compared in constant time)."""
        return hmac.compare_digest(secret.encode(), self.operator_token.encode())

    def current_user(self) -> Any:
        user = getattr(g, "user", None)
        if user is None:
            raise ApiError(401, "Requires authentication")
        return user

    # ------------------------------------------------------------------ repositories
    def find_repo(self, owner: str, name: str) -> Any | None:
        """The repository row, or None (also for names that are not valid)."""
        return self.store.one(
            "SELECT repos.* FROM repos JOIN users ON users.id = repos.owner_id "
            "WHERE users.login = ? AND repos.name = ?", owner, name.removesuffix(".git"))

    def repo(self, owner: str, name: str) -> Any:
        """The repository row, or GitHub's 404 (also for names that are not valid)."""
        return or_404(self.find_repo(owner, name))

    def role(self, user: Any, repo: Any, token: Any = None) -> str:
        """`user`'s role on `repo` (localhub.access), acting with `token` (its token
        row) when given. An installation token acts for its installation only: it writes to the
        repositories of the account the App is installed on, and reads public ones."""
        installation = token["installation_id"] if token is not None else None
        if installation is not None:
            granted = access.APP_ROLE if self._installed_on(repo, "installations.id = ?", installation) else "none"
        else:
            granted = self.account_role(user, repo)
        return access.highest(granted, "none" if repo["private"] else access.PUBLIC_ROLE)

    def account_role(self, user: Any, repo: Any) -> str:
        """The role `repo` grants the account itself: owner, collaborator, or the `[bot]`
        account of an App installed on the owner's account (as the collaborator permission
        endpoint answers for it)."""
        if user["id"] == repo["owner_id"]:
            return "admin"
        row = self.store.one("SELECT permission FROM collaborators WHERE repo_id = ? AND user_id = ?",
                             repo["id"], user["id"])
        if row is not None:
            return access.COLLABORATOR_ROLES.get(row["permission"], "read")
        return access.APP_ROLE if self._installed_on(repo, "apps.bot_user_id = ?", user["id"]) else "none"

    def _installed_on(self, repo: Any, which: str, value: int) -> bool:
        """Whether an installation (`which` picks it) is on `repo`'s owner's account."""
        return self.store.one(
            "SELECT 1 AS ok FROM installations JOIN apps ON apps.id = installations.app_id "
            f"WHERE installations.account_id = ? AND {which}", repo["owner_id"], value) is not None

    def may(self, needed: str, user: Any, repo: Any, token: Any = None) -> bool:
        """Whether `user` (with `token`) has at least the role `needed` on `repo`."""
        return access.at_least(self.role(user, repo, token), needed)

    def can_read(self, user: Any, repo: Any, token: Any = None) -> bool:
        """Whether `user` (with `token`, its token row) may see `repo`, as GitHub decides:
        anyone signed in sees a public repository; a private one is seen by its owner, its
        collaborators, and installation tokens of an App installed on its owner's account."""
        return self.may("read", user, repo, token)

    def can_admin(self, user: Any, repo: Any) -> bool:
        """Whether `user` may manage `repo`'s collaborators: its owner or an admin collaborator."""
        return self.may("admin", user, repo)

    def caller_role(self, repo: Any) -> str:
        """The role on `repo` of this request's signed-in caller."""
        return self.role(self.current_user(), repo, getattr(g, "token", None))

    def caller_may(self, needed: str, repo: Any) -> bool:
        """Whether this request's signed-in caller has at least the role `needed` on `repo`."""
        return access.at_least(self.caller_role(repo), needed)

    def add_collaborator(self, repo_id: int, user_id: int, permission: str = "push") -> None:
        with self.store.tx() as db:
            db.execute("INSERT INTO collaborators (repo_id, user_id, permission, created_at) VALUES (?, ?, ?, ?) "
                       "ON CONFLICT (repo_id, user_id) DO UPDATE SET permission = excluded.permission",
                       (repo_id, user_id, permission, now()))

    def visible_repo(self, owner: str, name: str) -> Any:
        """The repository row if the caller may see it, else GitHub's 404 (a private
        repository the caller cannot read is "Not Found", never "Forbidden")."""
        row = self.repo(owner, name)
        user = getattr(g, "user", None)
        if user is not None and not self.can_read(user, row, getattr(g, "token", None)):
            raise not_found()
        return row

    def repo_by_id(self, repo_id: int) -> Any:
        return or_404(self.store.one("SELECT * FROM repos WHERE id = ?", repo_id))

    def find_pull(self, repo: Any, number: int) -> Any | None:
        """The pull request numbered `number`, or None (a webhook payload whose pull request
        is gone is not sent)."""
        return self.store.one("SELECT * FROM pulls WHERE repo_id = ? AND number = ?", repo["id"], number)

    def pull(self, repo: Any, number: int) -> Any:
        """The pull request numbered `number`, or GitHub's 404. Issues and pull requests share
        numbers on GitHub, and pull requests are localhub's only issues."""
        return or_404(self.find_pull(repo, number))

    def repo_path(self, repo: Any) -> Path:
        owner = self.user(repo["owner_id"])["login"]
        return self.repos_dir / owner / f"{repo['name']}.git"

    def git(self, repo: Any) -> pygit2.Repository:
        return pygit2.Repository(str(self.repo_path(repo)))

    def full_name(self, repo: Any) -> str:
        return f"{self.user(repo['owner_id'])['login']}/{repo['name']}"

    def refs(self, repo: Any) -> dict[str, str]:
        """Every branch and tag of a repository: ref name -> sha."""
        git = self.git(repo)
        return {name: str(git.references[name].resolve().target)
                for name in git.references if name.startswith(("refs/heads/", "refs/tags/"))}

    def ref_moved(self, repo: Any, ref: str, before: str | None, after: str | None, sender_id: int) -> None:
        """A branch or tag changed (push over git, a REST ref update, a merge): record it and
        emit GitHub's `push` event. `None` stands for "did not exist"."""
        with self.store.tx() as db:
            db.execute("UPDATE repos SET pushed_at = ?, updated_at = ? WHERE id = ?", (now(), now(), repo["id"]))
        self._count_ref_move(repo)
        self.emit("push", None, repo["id"], sender_id, ref=ref, before=before, after=after)

    def _count_ref_move(self, repo: Any) -> None:
        """Pack a repository's refs every PACK_REFS_EVERY moves. Every branch, tag and pull
        request ref is a loose file until packed, and listing hundreds of them (each push
        payload and status event does) costs twenty times more loose than packed. git's own
        `pack-refs` is safe while other processes update refs."""
        with self._ref_moves_lock:
            moves = self._ref_moves[repo["id"]] = self._ref_moves.get(repo["id"], 0) + 1
        if moves % PACK_REFS_EVERY == 0:
            subprocess.run(["git", "--git-dir", str(self.repo_path(repo)), "pack-refs", "--all", "--prune"],
                           capture_output=True, timeout=60)

    # ------------------------------------------------------------------ events
    def subscribe(self, listener: Listener, *, first: bool = False) -> None:
        """Listen to every event; `first` puts the listener ahead of those already there (one
        that installs webhooks must run before the one that delivers them)."""
        with self._listeners_lock:
            self._listeners.insert(0 if first else len(self._listeners), listener)

    def emit(self, name: str, action: str | None, repo_id: int, sender_id: int, **data: Any) -> None:
        """Tell every listener (webhook delivery, mergeability) that something happened."""
        event = Event(name, action, repo_id, sender_id, data)
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)


def current_hub() -> Hub:
    """The Hub of the app answering this request. The routes are module-level blueprints
    shared by every app in the process (tests run several localhubs at once), so each app
    keeps its own state in `app.extensions`, not in the routes."""
    return current_app.extensions[EXTENSION]  # type: ignore[no-any-return]

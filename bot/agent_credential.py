"""The credential an agent writes to the forge with, for one memory clone: the one order it is
found in, and the record `memrepo identity set` keeps.

A person whose shell exports GITHUB_TOKEN would otherwise make every agent write as
themselves, and then could not approve what the agent proposes (no forge lets an author approve
their own pull request). So a clone may record an identity of its own: a second account's
token, or a GitHub App installation. It is kept in the clone's git directory (never in the
working tree, so never committed or pushed), readable by its owner only, and it comes first:

    the recorded identity, else MEMREPO_FORGE_TOKEN, else GITHUB_TOKEN, else the password of
    origin's URL (`https://x-access-token:TOKEN@host/...`).

`resolve` is that order over plain values; `agent_token` reads the record for it. The person's
side (`memrepo review`) never reads the record: it uses the person's own token.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bot import settings
from bot.errors import MemrepoError

RECORD_NAME = "agent-identity.json"
RECORD_DIR = "memrepo"  # inside the clone's git directory
WRITE_PERMISSIONS = ("admin", "maintain", "write")  # what the forge's collaborator permission says

BAD_RECORD = ("the agent identity recorded in {path} cannot be read ({problem}): "
              "run `memrepo identity clear` and set it again")


@dataclass(frozen=True)
class Recorded:
    """An agent identity: an account's token, or a GitHub App installation (id, key, installation)."""

    login: str  # the account the forge said the credential acts as, when it was recorded
    token: str | None = field(default=None, repr=False)
    app_id: str | None = None
    private_key: str | None = field(default=None, repr=False)
    installation_id: int | None = None
    source: str = ""  # where the secret was read from (a file or a variable's name), never the secret

    @property
    def kind(self) -> str:
        return "app" if self.app_id else "token"


def url_token(url: str | None) -> str | None:
    """The password of an http(s) remote URL (`https://x-access-token:TOKEN@host/...`)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not password:
        return None
    return unquote(password)


def resolve(recorded: Recorded | None, env: Mapping[str, str], url: str | None) -> str | None:
    """The agent's token: the recorded account's, else MEMREPO_FORGE_TOKEN, GITHUB_TOKEN, else the
    URL's. A recorded App has no standing token (its installation tokens are minted by the forge
    client), so the order goes on past it for what needs a plain token."""
    if recorded is not None and recorded.token:
        return recorded.token
    return settings.first_value(settings.AGENT_FORGE_TOKENS, env) or url_token(url)


def git_dir(root: str | os.PathLike[str]) -> Path:
    """The clone's git directory: `.git`, or the folder a `.git` file names (a worktree)."""
    dot = Path(root) / ".git"
    if dot.is_file():
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
        if line.startswith("gitdir:"):
            named = Path(line.removeprefix("gitdir:").strip())
            return named if named.is_absolute() else (Path(root) / named).resolve()
    return dot


def record_path(root: str | os.PathLike[str]) -> Path:
    return git_dir(root) / RECORD_DIR / RECORD_NAME


def read(root: str | os.PathLike[str]) -> Recorded | None:
    """The identity recorded for the clone at `root`, or None; a MemrepoError when it cannot be read."""
    path = record_path(root)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemrepoError(BAD_RECORD.format(path=path, problem=exc.strerror or exc)) from None
    try:
        data = json.loads(raw)
        recorded = Recorded(**{k: data[k] for k in data if k in Recorded.__dataclass_fields__})
    except (ValueError, TypeError) as exc:
        raise MemrepoError(BAD_RECORD.format(path=path, problem=type(exc).__name__)) from None
    if not recorded.login or not (recorded.token or (recorded.app_id and recorded.private_key)):
        raise MemrepoError(BAD_RECORD.format(path=path, problem="no login or no secret"))
    return recorded


def agent_token(root: str | os.PathLike[str] | None, env: Mapping[str, str], url: str | None) -> str | None:
    """`resolve` for the clone at `root` (None: no clone, nothing recorded)."""
    return resolve(read(root) if root is not None else None, env, url)


def write(root: str | os.PathLike[str], recorded: Recorded) -> Path:
    """Record `recorded` for the clone at `root`, readable by its owner only; written whole or not at all."""
    path = record_path(root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".identity-")  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(recorded), out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def clear(root: str | os.PathLike[str]) -> bool:
    """Forget the clone's identity; whether there was one."""
    path = record_path(root)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def refusal(login: str, permission: str | None, person: str | None) -> str | None:
    """Why an identity that acts as `login`, with `permission` on the repository (None: not
    asked, an App installation), may not be recorded when the person is `person`; None when it
    may. Pure, so the rule is read in one place."""
    if person is not None and login.lower() == person.lower():
        return "same"
    if permission is not None and permission not in WRITE_PERMISSIONS:
        return "cannot-write"
    return None

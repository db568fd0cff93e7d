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

Git pushes and fetches follow the same identity (`git_token`): a recorded account's token, or,
for a recorded App, the installation token kept beside the record (`agent-git-token.json`,
owner-only, with its expiry) while it has not expired; else git uses origin's URL. The memory
core reads that kept token but cannot make one (minting needs the forge client, which the core
may not import): the agent-side layer that opens pull requests (bot/pullrequest/git_token.py)
mints it, and replaces it when less than REFRESH_MARGIN remains, before every agent-side push
or fetch. A kept token belongs to one App installation: a token kept for another is ignored.

A shared memory's projection (bot/memfs/shared/) is written to as the memory it is attached
to: its git directory names that memory's root (`owner`, written when the projection is opened),
and `read` follows it to the owning memory's record. So the pull requests, pushes and fetches of
a projection go as the agent's recorded identity, found here only. An App's installation token
is per installation, and the shared repository may belong to another account than the agent's
memory: for a projection the installation is left to be found from the shared repository
(installation_id None), and its installation token is kept in the projection's own git directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bot import settings
from bot.errors import MemrepoError

RECORD_NAME = "agent-identity.json"
KEPT_NAME = "agent-git-token.json"  # a recorded App's installation token, for git
OWNER_NAME = "owner"  # in a shared memory's projection: the root of the memory it is attached to
REFRESH_MARGIN = 300.0  # a kept installation token is replaced when less than this many seconds remain
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


@dataclass(frozen=True)
class Kept:
    """A recorded App's installation token kept for git, the installation it was minted for, and
    when it expires (seconds since the epoch)."""

    token: str = field(repr=False)
    expires_at: float
    app_id: str
    installation_id: int | None


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
    client), so the order goes on past it for what needs a plain token; git sends the App's kept
    installation token instead while it lasts (`git_token`)."""
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


def owner_path(root: str | os.PathLike[str]) -> Path:
    return git_dir(root) / RECORD_DIR / OWNER_NAME


def owner_of(root: str | os.PathLike[str]) -> Path | None:
    """The root of the memory the clone at `root` is a shared memory's projection of (None: a
    memory of its own)."""
    try:
        text = owner_path(root).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return Path(text) if text else None


def mark_owner(root: str | os.PathLike[str], owner: str | os.PathLike[str]) -> None:
    """Say in the projection at `root`'s git directory which memory it is attached to (written
    only when it says something else: every open of a projection calls this)."""
    text = str(Path(owner).absolute())
    if owner_of(root) == Path(text):
        return
    path = owner_path(root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


def for_projection(recorded: Recorded | None) -> Recorded | None:
    """The owning memory's identity as a projection of a shared memory writes with: the same
    account, or the same App with its installation found from the shared repository, which may
    be another account's (an installation token is good for its installation's repositories only)."""
    if recorded is None or recorded.kind != "app":
        return recorded
    return replace(recorded, installation_id=None)


def read(root: str | os.PathLike[str]) -> Recorded | None:
    """The identity the clone at `root` writes with: its own record, or for a shared memory's
    projection its owning memory's (`for_projection`); None when there is none; a MemrepoError
    when it cannot be read."""
    owner = owner_of(root)
    if owner is not None:
        return for_projection(_read_record(owner))
    return _read_record(root)


def _read_record(root: str | os.PathLike[str]) -> Recorded | None:
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


def kept_for(recorded: Recorded | None, kept: Kept | None, now: float, margin: float = 0.0) -> str | None:
    """The kept installation token when it was minted for `recorded`'s App installation and
    outlives `margin` seconds from `now`; else None. Pure: the one rule both the core (margin 0:
    not expired) and the minting side (REFRESH_MARGIN: not about to expire) read."""
    if recorded is None or recorded.kind != "app" or kept is None or not kept.token:
        return None
    if kept.app_id != recorded.app_id:
        return None
    if recorded.installation_id is not None and kept.installation_id != recorded.installation_id:
        return None  # None: whichever installation holds the repository (a projection's)
    return kept.token if kept.expires_at - margin > now else None


def git_token(root: str | os.PathLike[str], now: float) -> str | None:
    """What the clone's git requests authenticate with before origin's URL: the recorded
    account's token, or the recorded App's kept installation token while it has not expired."""
    recorded = read(root)
    if recorded is None:
        return None
    if recorded.token:
        return recorded.token
    return kept_for(recorded, read_kept(root), now)


def kept_token_path(root: str | os.PathLike[str]) -> Path:
    return git_dir(root) / RECORD_DIR / KEPT_NAME


def read_kept(root: str | os.PathLike[str]) -> Kept | None:
    """The kept installation token, or None when there is none or it cannot be read (it is only
    a cache: a new one is minted)."""
    try:
        data = json.loads(kept_token_path(root).read_text(encoding="utf-8"))
        return Kept(str(data["token"]), float(data["expires_at"]), str(data["app_id"]),
                    None if data["installation_id"] is None else int(data["installation_id"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def keep(root: str | os.PathLike[str], kept: Kept) -> Path:
    """Keep `kept` beside the record, readable by its owner only, replacing the one before."""
    return _write_private(kept_token_path(root), asdict(kept), ".token-")


def _write_private(path: Path, data: dict[str, object], prefix: str) -> Path:
    """`data` as JSON at `path`, 0600 in a 0700 folder, written whole or not at all."""
    import tempfile  # only when an identity is set or a token kept: every tool call reads this module

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix)  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write(root: str | os.PathLike[str], recorded: Recorded) -> Path:
    """Record `recorded` for the clone at `root`, readable by its owner only; written whole or not
    at all. A token kept for the identity before is forgotten."""
    path = _write_private(record_path(root), asdict(recorded), ".identity-")
    kept_token_path(root).unlink(missing_ok=True)
    return path


def clear(root: str | os.PathLike[str]) -> bool:
    """Forget the clone's identity and any installation token kept for it; whether there was one."""
    kept_token_path(root).unlink(missing_ok=True)
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

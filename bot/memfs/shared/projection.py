"""Projections of shared memories (the shell: git): attach, detach, sync, list.

    attach(repo, url, name=..., read_only=...)  clone the shared memory at its projection root
        (refused in one line, leaving nothing behind: a name in use or not a folder name, a URL
        attached already, a forge that does not answer, a token that cannot read, a repository
        that holds no memory or holds invalid rules), then commit the record in the agent's
        memory, as the person at the keyboard, and push it
    detach(repo, name)    the record without it, committed and pushed; the projection removed
    sync_all(repo)        every projection brought to its forge's main; one whose forge no
                          longer lets the agent's token read it is removed, with a line saying why

The agent's forge token reads the shared memory (bot.agent_credential's order: the recorded
identity, MEMREPO_FORGE_TOKEN, GITHUB_TOKEN, or the password of the agent's own origin URL); it
is written into the projection's origin URL, as in the agent's own clone, and never into the
record. A projection names the memory it is attached to in its git directory (`mark`, and
every `open_projection`), so its git requests and the pull requests opened on it go as that
memory's recorded identity (bot.agent_credential.read follows it), before its URL's token.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pygit2

from bot import agent_credential, identity
from bot.errors import MemrepoError
from bot.memfs.clone import clone_repository
from bot.memfs.shared.record import (
    ADDRESS_ROOT,
    RECORD_PATH,
    Attachment,
    address,
    addressed,
    attach_problem,
    default_name,
    parse_record,
    projection_root,
    render_record,
    without_credentials,
)

__all__ = ["PROJECTION_KEY", "Row", "Synced", "access_lost", "agent_token", "attach", "attachments",
           "credentialed", "detach", "in_shared_memory", "mark", "open_projection", "projection_of", "rows",
           "shared_files", "sync_all", "sync_one", "without_credentials"]
from bot.memfs.store import checks, refs
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync import push, redact, remote_url, status, sync
from bot.memfs.sync.transport import remote_heads
from bot.memfs.texts import NOT_SYNCED
from bot.texts import Text

NOT_ATTACHED = "no shared memory named {name} is attached to {path} (memrepo shared list shows what is)"
FOLDER_TAKEN = "{path} already exists and is not the projection of {url}; move it away or attach with --as OTHER"
BAD_RULES = "{url} holds invalid rules, so it cannot be attached: {problem}"
UNREADABLE = "{url} cannot be read with this agent's forge token: {problem}"
NO_IDENTITY = ("git knows no one at {path} (user.name and user.email), and the record of a shared memory says "
               "who attached it: run git config --global user.name \"Your Name\" and git config --global "
               "user.email you@example.com, and run it again")
ATTACHED = "attached {url} as {name} at {path} (main {sha}){read_only}; {pushed}"
ATTACHED_READ_ONLY = ", read-only"
DETACHED = "detached {name} ({url}); its projection at {path} is removed; {pushed}"
RECORD_LOCAL = "the record is committed here and reaches origin with the next sync"
SYNC_MOVED = "{name}: {before} -> {after}"
SYNC_SAME = "{name}: up to date (main {sha})"
SYNC_DOWN = "{name}: could not sync, the projection stays at {sha}: {problem}"
SYNC_LOST = "{name}: removed the projection at {path}: this agent's forge token can no longer read {url} ({problem})"
SYNC_AHEAD = Text("{name}: the projection at {path} holds {count:|commit|commits} its forge's main lacks; "
                  "memrepo pushes nothing to a shared memory's main, so it is left as it is: write through the "
                  "memory tool (shared/{name}/...), which proposes a pull request, and reset the projection to "
                  "origin/main")
# What git says when the forge refuses the token (not when it does not answer), in lower case.
ACCESS_LOST_SIGNS = ("not found", "authentication failed", "could not read username", "returned error: 401",
                     "returned error: 403", "returned error: 404", "permission denied", "access denied")


def attachments(repo: MemoryRepo, rev: str = "HEAD") -> tuple[Attachment, ...]:
    """The attachments the record lists at `rev`."""
    data = repo.read(RECORD_PATH, rev)
    return parse_record(None if data is None else data.decode("utf-8", "replace"))


# A projection's own git config names the shared memory it projects: whatever judges a commit
# made in it (follow, the pre-push guard, both through CommitRouter) reads it there, and sends
# every such commit to review on the shared repository.
PROJECTION_KEY = "memrepo.sharedName"


def mark(projection: MemoryRepo, name: str, owner: MemoryRepo) -> None:
    """Say in the projection's config which shared memory it projects, and in its git directory
    which memory it is attached to (whose recorded identity writes there)."""
    if projection.get_config(PROJECTION_KEY) != name:
        projection.set_config(PROJECTION_KEY, name)
    agent_credential.mark_owner(projection.root, owner.root)


def projection_of(repo: MemoryRepo) -> str | None:
    """The name of the shared memory `repo` projects (None: `repo` is a memory of its own)."""
    return repo.get_config(PROJECTION_KEY) or None


def agent_token(repo: MemoryRepo, env: Mapping[str, str] | None = None) -> str | None:
    """The agent's forge token for its own clone, in bot.agent_credential's one order."""
    return agent_credential.agent_token(repo.root, os.environ if env is None else env, remote_url(repo))


def credentialed(url: str, token: str | None) -> str:
    """An http(s) URL with `token` as its password (`x-access-token:<token>@`), unless it has
    credentials of its own; any other URL as it is."""
    parts = urlsplit(url)
    if not token or parts.scheme not in ("http", "https") or "@" in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=f"x-access-token:{quote(token, safe='')}@{parts.netloc}"))


def access_lost(problem: str) -> bool:
    """Whether a fetch's failure says the forge refused the token (rather than not answering)."""
    text = problem.lower()
    return any(sign in text for sign in ACCESS_LOST_SIGNS)


def open_projection(repo: MemoryRepo, attachment: Attachment) -> MemoryRepo | None:
    """The projection's clone, or None when it is not checked out (yet)."""
    root = projection_root(repo.root, attachment.name)
    if refs.resolve(root) is None:
        return None
    try:
        projection = MemoryRepo.open(root)
    except MemrepoError:
        return None
    agent_credential.mark_owner(root, repo.root)  # one attached before its owner was named
    return projection


def in_shared_memory(repo: MemoryRepo, path: str) -> tuple[MemoryRepo, str]:
    """The memory a path is in, and the path there: `shared/<NAME>/<path>`, NAME attached, is a
    file of that shared memory's projection (whose history holds the pull requests and the
    provenance that wrote it); any other path is the memory's own. Every read path (why, at,
    the MCP tools) addresses a shared memory's files so."""
    if not path.startswith(f"{ADDRESS_ROOT}/"):
        return repo, path
    found = {a.name: a for a in attachments(repo)}
    target = address(path, found)
    if target is None:
        return repo, path
    projection = open_projection(repo, found[target[0]])
    if projection is None:
        raise MemrepoError(NOT_SYNCED.format(
            name=target[0], path=projection_root(repo.root, target[0]), memory=repo.root))
    return projection, target[1]


def shared_files(repo: MemoryRepo) -> dict[str, bytes]:
    """Every file of every attached shared memory at its projection's HEAD, as the agent
    addresses it (`shared/<NAME>/<path>`): what a search of memory searches beside the
    memory's own files. A projection not checked out yet has none."""
    out: dict[str, bytes] = {}
    for attachment in attachments(repo):
        projection = open_projection(repo, attachment)
        if projection is not None:
            out.update((addressed(path, attachment.name), data) for path, data in projection.files("HEAD").items())
    return out


def _person(repo: MemoryRepo) -> identity.Identity:
    """Who attaches or detaches: the person git knows at this clone. There is no default: the
    record's history is what says who attached a team's memory, so without a git identity the
    command refuses, in one line, before anything is cloned or committed."""
    try:
        signature = repo.git.default_signature
    except (KeyError, ValueError, pygit2.GitError):
        raise MemrepoError(NO_IDENTITY.format(path=repo.root)) from None
    return identity.Identity(signature.name, signature.email)


def _record(repo: MemoryRepo, found: tuple[Attachment, ...], message: str, person: identity.Identity) -> str:
    """Commit the record as `found` by `person`, then push it (where there is a remote); how it went."""
    head = repo.head_sha()
    assert head is not None
    with repo.lock():
        repo.commit({RECORD_PATH: render_record(found).encode()}, message + "\n", person, parent=head)
    if remote_url(repo) is None:
        return RECORD_LOCAL
    return "the record is pushed" if push(repo).pushed else RECORD_LOCAL


def attach(repo: MemoryRepo, url: str, *, name: str | None = None, read_only: bool = False,
           env: Mapping[str, str] | None = None) -> str:
    """Attach the shared memory at `url` (see the module docstring); the line to print."""
    if "://" not in url and ":" not in url.split("/", 1)[0]:
        url = str(Path(url).expanduser().absolute())  # a path on this machine, as git reads it
    plain = without_credentials(url)
    name = name if name is not None else default_name(plain)
    found = attachments(repo)
    problem = attach_problem(found, name, plain, remote_url(repo))
    if problem is not None:
        raise MemrepoError(problem)
    person = _person(repo)
    root = projection_root(repo.root, name)
    if root.exists() and any(root.iterdir()):
        raise MemrepoError(FOLDER_TAKEN.format(path=root, url=plain))
    agent_id = repo.get_config("memrepo.agentId") or None
    clone = _clone(repo, credentialed(url, agent_token(repo, env)), root, agent_id)
    try:
        mark(clone, name, repo)
        clone.policy("HEAD")  # raises for rules that do not parse
        problems = checks.check(clone, {}, "HEAD")  # Letta's limits file, when it is broken
        if problems:
            raise MemrepoError(str(problems[0]).strip())
    except MemrepoError as exc:
        shutil.rmtree(root, ignore_errors=True)
        _drop_empty(root.parent)
        raise MemrepoError(BAD_RULES.format(url=plain, problem=exc)) from None
    attachment = Attachment(name, plain, read_only)
    try:
        pushed = _record(repo, (*found, attachment), "shared: attach {name} ({url}){read_only}".format(
            name=name, url=plain, read_only=ATTACHED_READ_ONLY if read_only else ""), person)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        _drop_empty(root.parent)
        raise
    return ATTACHED.format(url=plain, name=name, path=root, sha=(clone.head_sha() or "")[:12],
                                 read_only=ATTACHED_READ_ONLY if read_only else "", pushed=pushed)


def _clone(repo: MemoryRepo, url: str, root: Path, agent_id: str | None) -> MemoryRepo:
    from bot.memfs.store.repo import configured_agent_id, configured_agent_name

    agent = agent_id or configured_agent_id(repo) or "agent"
    try:
        return clone_repository(url, root, agent, configured_agent_name(repo))
    except MemrepoError as exc:
        _drop_empty(root.parent)
        if access_lost(str(exc)):
            raise MemrepoError(UNREADABLE.format(url=without_credentials(url), problem=redact(str(exc))))\
                from None
        raise


def _drop_empty(folder: Path) -> None:
    """Remove memrepo's `<memory>.shared` folder once it holds no projection."""
    with contextlib.suppress(OSError):
        if folder.name.endswith(".shared") and not any(folder.iterdir()):
            folder.rmdir()


def detach(repo: MemoryRepo, name: str) -> str:
    """Detach `name`: the record without it (committed, pushed), its projection removed."""
    found = attachments(repo)
    gone = next((a for a in found if a.name == name), None)
    if gone is None:
        raise MemrepoError(NOT_ATTACHED.format(name=name, path=repo.root))
    pushed = _record(repo, tuple(a for a in found if a is not gone),
                     f"shared: detach {name} ({gone.url})", _person(repo))
    root = projection_root(repo.root, name)
    shutil.rmtree(root, ignore_errors=True)
    _drop_empty(root.parent)
    return DETACHED.format(name=name, url=gone.url, path=root, pushed=pushed)


@dataclass(frozen=True)
class Synced:
    """What a sync did to one projection: `ok` False when it could not reach the forge's main."""

    ok: bool
    line: str
    changed: bool = True  # the projection moved, was made or was removed (False: as it was)


def sync_one(repo: MemoryRepo, attachment: Attachment, env: Mapping[str, str] | None = None,
             ready: Callable[[MemoryRepo], None] | None = None) -> Synced:
    """Bring one projection to its forge's main (cloning it when missing), or remove it when
    the agent's token can no longer read it. `ready`, before the projection's fetch: the agent
    side's readying of its git credential (a recorded App's installation token); a MemrepoError
    it raises leaves the projection as it is, with the line saying why."""
    root = projection_root(repo.root, attachment.name)
    projection = open_projection(repo, attachment)
    if projection is None:
        if root.exists():
            shutil.rmtree(root, ignore_errors=True)
        try:
            clone = _clone(repo, credentialed(attachment.url, agent_token(repo, env)), root, None)
        except MemrepoError as exc:
            return Synced(False, SYNC_DOWN.format(name=attachment.name, sha="(none)", problem=exc),
                          changed=False)
        mark(clone, attachment.name, repo)
        return Synced(True, "{name}: projected at {path} (main {sha})".format(name=attachment.name, path=root,
                                                     sha=(clone.head_sha() or "")[:12]))
    before = projection.head_sha() or ""
    if ready is not None:
        try:
            ready(projection)
        except MemrepoError as exc:
            return Synced(False, SYNC_DOWN.format(name=attachment.name, sha=before[:12], problem=exc), changed=False)
    heads, problem = remote_heads(projection)
    if heads is None:
        if access_lost(problem or ""):
            shutil.rmtree(root, ignore_errors=True)
            _drop_empty(root.parent)
            return Synced(False, SYNC_LOST.format(name=attachment.name, path=root, url=attachment.url,
                                                        problem=redact(problem or "")))
        return Synced(False, SYNC_DOWN.format(name=attachment.name, sha=before[:12],
                                                    problem=redact(problem or "")), changed=False)
    ahead = status(projection).ahead or 0
    if ahead:  # nothing reaches a shared memory's main but through its pull requests
        return Synced(False, SYNC_AHEAD.format(name=attachment.name, count=ahead, path=root), changed=False)
    result = sync(projection)
    after = projection.head_sha() or ""
    if not result.pushed:
        return Synced(False, SYNC_DOWN.format(name=attachment.name, sha=before[:12], problem=result.reason),
                      changed=False)
    if after == before:
        return Synced(True, SYNC_SAME.format(name=attachment.name, sha=after[:12]), changed=False)
    return Synced(True, SYNC_MOVED.format(name=attachment.name, before=before[:12], after=after[:12]))


def sync_all(repo: MemoryRepo, env: Mapping[str, str] | None = None,
             ready: Callable[[MemoryRepo], None] | None = None) -> list[Synced]:
    """Every attachment brought to its forge's main (`ready` as sync_one's); what happened to each."""
    found = attachments(repo)
    if not found:
        return [Synced(True, "no shared memory is attached", changed=False)]
    return [sync_one(repo, attachment, env, ready) for attachment in found]


@dataclass(frozen=True)
class Row:
    """One attachment as `memrepo shared list` shows it."""

    name: str
    url: str
    read_only: bool
    projection: str
    head: str | None

    def as_data(self) -> dict[str, object]:
        return {"name": self.name, "url": self.url, "read_only": self.read_only, "projection": self.projection,
                "head": self.head, "state": self.state}

    @property
    def state(self) -> str:
        if self.head is None:
            return "missing"
        return "read-only" if self.read_only else "read-write"


def rows(repo: MemoryRepo) -> list[Row]:
    """The attachments with where each is projected and the commit it is at."""
    return [Row(a.name, a.url, a.read_only, str(projection_root(repo.root, a.name)),
                refs.resolve(projection_root(repo.root, a.name))) for a in attachments(repo)]


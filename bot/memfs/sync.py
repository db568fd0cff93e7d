"""Sync a memory repository's `main` with its remote (`origin`), never force-pushing.

Network commands (fetch, push, ls-remote) go through GitPython so git's own transports and
credential helpers apply; object work (replaying commits, moving the branch) runs
in-process through MemoryRepo and pygit2. The remote is only ever referred to as `origin`
on git's command line, and every message that may contain a URL is redacted, so a token in
the URL never reaches a log, an error or the agent.

A push that is rejected because the remote moved is settled like `git pull --rebase`, but
in-process and per file: each local commit is replayed onto the remote's main with a
three-way merge (two agents appending to one file both keep their lines). A real conflict
sets the local commits aside on a backup ref and resets main to the remote's, so nothing is
lost and nothing is overwritten. An unreachable remote is not an error: the commit stays
local ("queued") and the next push or sync sends it.
"""

from __future__ import annotations

import base64
import contextlib
import os
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit

import git
import pygit2

from bot import messages
from bot.errors import MemrepoError
from bot.memfs import checks
from bot.memfs.merge import merge3
from bot.memfs.repo import MemoryRepo

REMOTE = "origin"
BRANCH = "main"
BRANCH_REF = f"refs/heads/{BRANCH}"
TRACKING_REF = f"refs/remotes/{REMOTE}/{BRANCH}"
FETCHED_REF = f"refs/memrepo/fetched/{BRANCH}"  # where an in-process fetch lands first
BACKUP_PREFIX = "refs/memrepo/backup/"
LAST_SYNC_KEY = "memrepo.lastSync"
NO_REMOTE = messages.SYNC_NO_REMOTE

ATTEMPTS = 6
BACKOFF_START = 0.05
BACKOFF_CAP = 1.0
GIT_TIMEOUT = 120.0
CONNECT_TIMEOUT_MS = 15_000  # in-process (libgit2) fetches: connecting
IDLE_TIMEOUT_MS = 60_000  # and a server that sends nothing for this long

# git's wording for "the remote's main moved under you"; LC_ALL=C keeps it in English.
_MOVED = ("fetch first", "non-fast-forward", "stale info", "failed to update ref", "cannot lock ref",
          "incorrect old value", "failed to lock")
_NO_REMOTE_MAIN = "couldn't find remote ref"
_TRANSPORT_SETUP = re.compile(r"(?i)certificate|ssl|tls|proxy")


@dataclass(frozen=True)
class SyncResult:
    """`pushed` is True when the remote's main holds every local commit afterwards."""

    pushed: bool
    reason: str | None = None
    head: str | None = None
    sent: int = 0
    pulled: int = 0
    replayed: int = 0
    attempts: int = 0
    url: str | None = None  # redacted

    @property
    def summary(self) -> str:
        """One line for a person: what happened, or why nothing could be pushed."""
        if not self.pushed:
            return self.reason or ""
        url, sha = self.url or "", (self.head or "")[:12]
        if self.replayed:
            return messages.SYNC_PUSHED_REPLAYED.format(replayed=self.replayed, url=url, sha=sha)
        if self.sent:
            return messages.SYNC_PUSHED.format(count=self.sent, url=url, sha=sha)
        if self.pulled:
            return messages.SYNC_FAST_FORWARDED.format(count=self.pulled, url=url, sha=sha)
        return messages.SYNC_UP_TO_DATE.format(url=url, sha=sha)


@dataclass(frozen=True)
class RepoStatus:
    url: str | None
    branch: str | None
    head: str | None
    remote_head: str | None
    ahead: int | None
    behind: int | None
    last_sync: str | None
    backups: list[str] = field(default_factory=list)
    fetched: bool = False
    fetch_error: str | None = None


def status_lines(st: RepoStatus, extra: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """`repository status` as a person reads it: one aligned `label: value` line per fact."""
    when = messages.STATUS_JUST_NOW if st.fetched else messages.STATUS_LAST_FETCH
    rows = [(messages.STATUS_REMOTE, st.url or messages.STATUS_NO_REMOTE),
            (messages.STATUS_HEAD, (st.head or "")[:12] + (f" ({st.branch})" if st.branch else ""))]
    if st.url is not None:
        rows += [
            (messages.STATUS_AHEAD, messages.STATUS_UNKNOWN if st.ahead is None
             else messages.STATUS_AHEAD_VALUE.format(count=st.ahead)),
            (messages.STATUS_BEHIND, messages.STATUS_UNKNOWN if st.behind is None
             else messages.STATUS_BEHIND_VALUE.format(count=st.behind, when=when)),
            (messages.STATUS_LAST_SYNC, st.last_sync or messages.STATUS_NEVER),
        ]
        if st.fetch_error:
            rows.append(("", messages.STATUS_FETCH_FAILED.format(problem=st.fetch_error)))
    rows.append((messages.STATUS_BACKUPS, ", ".join(st.backups) if st.backups else messages.STATUS_NONE))
    rows += extra
    width = max(len(label) for label, _ in rows) + 2
    return [f"{label + ':' if label else '':<{width}}{value}" for label, value in rows]


class _ReplayFailed(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --------------------------------------------------------------------- redaction
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_ACCESS_TOKEN = re.compile(r"(?i)\bx-access-token:[^@\s]*@")
_TOKENS = re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,})")
_AUTH_HEADER = re.compile(r"(?i)(authorization:\s*(?:basic|bearer|token)\s+)\S+")


def redact(text: str) -> str:
    """Remove credentials from a URL or from anything git printed (git echoes URLs)."""
    text = _URL_USERINFO.sub(r"\1***@", text)
    text = _ACCESS_TOKEN.sub("***@", text)
    text = _TOKENS.sub("***", text)
    return _AUTH_HEADER.sub(r"\1***", text)


def check_url(url: object) -> str:
    """A remote URL worth trying: non-empty, one token, not an option."""
    if not isinstance(url, str) or not url.strip():
        raise MemrepoError(messages.REMOTE_URL_EMPTY)
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        shown = redact("".join(ch if ch.isprintable() and not ch.isspace() else "?" for ch in url))
        raise MemrepoError(messages.REMOTE_URL_BAD_CHARS.format(url=shown))
    if url.startswith("-"):
        raise MemrepoError(messages.REMOTE_URL_OPTION.format(url=redact(url)))
    return url


# --------------------------------------------------------------------- git CLI
def basic_auth_header(url: str | None) -> str | None:
    """`Authorization: Basic ...` for the credentials an http(s) URL carries, else None."""
    try:
        parts = urlsplit(url or "")
        password = parts.password
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or password is None:
        return None
    pair = f"{unquote(parts.username or '')}:{unquote(password)}".encode()
    return f"Authorization: Basic {base64.b64encode(pair).decode()}"


def _env(repo: MemoryRepo) -> dict[str, str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "LC_ALL": "C", "LANGUAGE": "C"}
    if not any(k in os.environ for k in ("GIT_SSH_COMMAND", "GIT_SSH")):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    # git sends a URL's credentials only after the server has answered 401 to a request
    # without them: a round trip more on every fetch an agent makes when HEAD moves. Sending
    # them at once (through the environment, never a config file or the process list) saves
    # it, unless the configuration already sets headers of its own.
    header = basic_auth_header(remote_url(repo))
    if header and not _extra_headers(repo):
        index = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
        env.update({"GIT_CONFIG_COUNT": str(index + 1), f"GIT_CONFIG_KEY_{index}": "http.extraHeader",
                    f"GIT_CONFIG_VALUE_{index}": header})
    return env


def _extra_headers(repo: MemoryRepo) -> bool:
    return any(entry.name.lower().endswith(".extraheader") for entry in repo.git.config)


def _fetch_in_process(repo: MemoryRepo, header: str) -> tuple[str | None, str | None]:
    """`_fetch` through libgit2, for an http(s) remote whose URL carries its token: nothing
    for a credential helper to do, and an agent fetches every time `main` moves, which `git
    fetch` does with five processes (about 35 ms of CPU) and libgit2 in-process with 2 ms.
    It fetches into a scratch ref first (libgit2 passes over a ref the remote lacks without a
    word), so a remote without main reads as one and the tracking ref only ever moves."""
    libgit2_timeouts()
    git = repo.git
    with contextlib.suppress(KeyError):
        git.references.delete(FETCHED_REF)
    try:
        git.remotes[REMOTE].fetch([f"+{BRANCH_REF}:{FETCHED_REF}"], callbacks=HeaderCallbacks(header),
                                  prune=pygit2.enums.FetchPrune.NO_PRUNE, proxy=True)
    except (pygit2.GitError, KeyError, ValueError) as exc:
        return None, redact(str(exc)) or "fetch failed"
    fetched = repo.resolve(FETCHED_REF)
    if fetched is None:
        return None, None
    git.references.create(TRACKING_REF, fetched, force=True)
    git.references.delete(FETCHED_REF)
    return fetched, None


def _git(repo: MemoryRepo, command: str, *args: str) -> tuple[int, str, str]:
    """(status, stdout, stderr) of a git command in the clone; never raises for git's errors."""
    cmd = git.Repo(repo.root).git
    try:
        status, out, err = getattr(cmd, command)(
            *args, env=_env(repo), kill_after_timeout=GIT_TIMEOUT,
            with_extended_output=True, with_exceptions=False,
        )
    except git.exc.GitCommandNotFound as exc:
        return 127, "", f"fatal: git could not be run ({exc.args[0] if exc.args else 'not found'})"
    return int(status or 0), out or "", err or ""


def git_problem(text: str) -> str:
    """The line of git's output that says what went wrong, redacted (git echoes URLs)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for prefix in ("fatal:", "error:", "remote: error:", "!"):
        for line in lines:
            if line.startswith(prefix):
                return redact(line[len(prefix):].strip())[:300] or "git failed"
    return redact(lines[-1])[:300] if lines else "git failed"


def remote_url(repo: MemoryRepo) -> str | None:
    return repo.get_config(f"remote.{REMOTE}.url")


def _shown_url(repo: MemoryRepo) -> str:
    return redact(remote_url(repo) or "")


def libgit2_timeouts() -> None:
    """Bound libgit2's network waits (process-wide; by default a server that stops answering
    is waited on forever, where a git command is killed after GIT_TIMEOUT)."""
    pygit2.option(pygit2.enums.Option.SET_SERVER_CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS)
    pygit2.option(pygit2.enums.Option.SET_SERVER_TIMEOUT, IDLE_TIMEOUT_MS)


class HeaderCallbacks(pygit2.RemoteCallbacks):
    """libgit2 callbacks that send one header (the authorization) with every request."""

    def __init__(self, header: str | None) -> None:
        super().__init__()
        self._header = header

    def custom_headers(self) -> list[str] | None:
        return [self._header] if self._header else None


def _fetch(repo: MemoryRepo) -> tuple[str | None, str | None]:
    """(the remote's main after fetching, None) or (None, problem). A remote without main
    gives (None, None)."""
    header = basic_auth_header(remote_url(repo))
    if header is not None and not _extra_headers(repo):
        remote, problem = _fetch_in_process(repo, header)
        if problem is None or not _TRANSPORT_SETUP.search(problem):
            return remote, problem
        # libgit2's TLS or proxy setup is not git's (certificate stores, proxy configuration):
        # what git can reach, git fetches
    status, out, err = _git(repo, "fetch", "--no-tags", "--quiet", REMOTE, f"+{BRANCH_REF}:{TRACKING_REF}")
    if status == 0:
        return repo.resolve(TRACKING_REF), None
    if _NO_REMOTE_MAIN in err:
        return None, None
    return None, git_problem(err or out)


def _push_once(repo: MemoryRepo) -> tuple[str, str]:
    """("ok" | "moved" | "refused" | "unreachable", problem)."""
    status, out, err = _git(repo, "push", "--porcelain", REMOTE, f"{BRANCH_REF}:{BRANCH_REF}")
    line = next((ln for ln in out.splitlines() if f"{BRANCH_REF}:{BRANCH_REF}" in ln), None)
    if status == 0 and line is not None and not line.startswith("!"):
        return "ok", ""
    if line is None:
        return "unreachable", git_problem(err or out)
    summary = line.split("\t")[-1]
    if any(word in summary or word in err for word in _MOVED):
        return "moved", redact(summary)
    return "refused", redact(summary.replace("[", "").replace("]", "").strip() or git_problem(err))


# --------------------------------------------------------------------- helpers
def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_sync(repo: MemoryRepo) -> None:
    repo.set_config(LAST_SYNC_KEY, _now())


def _set_upstream(repo: MemoryRepo) -> None:
    repo.set_config(f"branch.{BRANCH}.remote", REMOTE)
    repo.set_config(f"branch.{BRANCH}.merge", BRANCH_REF)


def _count(repo: MemoryRepo, tip: str, hide: str | None = None) -> int:
    if hide is None:
        return sum(1 for _ in repo.git.walk(tip))
    ahead, _ = repo.git.ahead_behind(tip, hide)
    return ahead


def contains(repo: MemoryRepo, descendant: str, ancestor: str) -> bool:
    """Whether `ancestor` is `descendant` or in its history (False when this clone lacks it)."""
    if descendant == ancestor:
        return True
    try:
        return repo.git.descendant_of(descendant, ancestor)
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _backoff(attempt: int) -> None:
    delay = min(BACKOFF_CAP, BACKOFF_START * (2 ** attempt))
    time.sleep(delay * random.uniform(0.5, 1.5))


def _backup(repo: MemoryRepo, sha: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{BACKUP_PREFIX}{stamp}-{sha[:8]}"
    repo.git.references.create(name, sha, force=True)
    return name


def backups(repo: MemoryRepo) -> list[str]:
    """Backup refs of local commits that sync set aside, oldest first."""
    return sorted(r for r in repo.git.listall_references() if r.startswith(BACKUP_PREFIX))


def _dirty_message(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")


# --------------------------------------------------------------------- replay
def _blob(repo: MemoryRepo, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return repo.git[entry.id].data if entry.type_str == "blob" else None


def _merge_file(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes | None:
    """The replayed content of one path; raises _ReplayFailed on a conflict."""
    if theirs == base:
        return ours
    if ours in (base, theirs):
        return theirs
    if base is None:
        raise _ReplayFailed([messages.SYNC_CONFLICT_ADDED.format(path=path)])
    if ours is None or theirs is None:
        raise _ReplayFailed([messages.SYNC_CONFLICT_DELETED.format(path=path)])
    try:
        texts = [data.decode("utf-8") for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        raise _ReplayFailed([messages.SYNC_CONFLICT_NOT_TEXT.format(path=path)]) from None
    result = merge3(*texts)
    if result.text is None:
        where = ", ".join(c.describe() for c in result.conflicts[:3])
        raise _ReplayFailed([messages.SYNC_CONFLICT_LINES.format(path=path, where=where)])
    return result.text.encode("utf-8")


def _replay_commit(repo: MemoryRepo, commit: pygit2.Commit, tip: pygit2.Commit) -> pygit2.Commit:
    """`commit`'s change re-applied on `tip`; `tip` itself when it changes nothing there."""
    g = repo.git
    parent_tree = commit.parents[0].tree if commit.parents else g[g.TreeBuilder().write()]
    changes: dict[str, bytes | None] = {}
    problems: list[str] = []
    for delta in parent_tree.diff_to_tree(commit.tree).deltas:
        path = delta.new_file.path or delta.old_file.path
        base = _blob(repo, parent_tree, path)
        ours = _blob(repo, commit.tree, path)
        theirs = _blob(repo, tip.tree, path)
        try:
            merged = _merge_file(path, base, ours, theirs)
        except _ReplayFailed as exc:
            problems += exc.problems
            continue
        if merged != theirs:
            changes[path] = merged
    if problems:
        raise _ReplayFailed(problems)
    if not changes:
        return tip
    found = checks.check(repo, {p: (d, _blob(repo, tip.tree, p)) for p, d in changes.items()}, str(tip.id))
    if found:
        raise _ReplayFailed([
            messages.SYNC_CONFLICT_INVALID.format(path=p.path, problem=p.message) for p in found
        ])
    tree_id = repo.build_tree(tip.tree, changes)
    committer = pygit2.Signature(commit.committer.name, commit.committer.email,
                                 int(time.time()), commit.committer.offset)
    new_id = g.create_commit(None, commit.author, committer, commit.message, tree_id, [tip.id])
    return g[new_id].peel(pygit2.Commit)


def _replay(repo: MemoryRepo, local: str, onto: str) -> tuple[str, int]:
    """Replay the commits of `local` that `onto` lacks, oldest first: (new tip, replayed).
    Merge commits are dropped (like `git rebase`): their sides are replayed one by one."""
    g = repo.git
    walker = g.walk(local, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(onto)
    tip = g[onto].peel(pygit2.Commit)
    replayed = 0
    for commit in list(walker):
        if len(commit.parents) > 1:
            continue
        new = _replay_commit(repo, commit, tip)
        if new.id != tip.id:
            replayed += 1
        tip = new
    return str(tip.id), replayed


def _rebase_onto(repo: MemoryRepo, local: str, remote: str) -> tuple[int, str | None]:
    """Move main to `local`'s commits replayed onto `remote`: (replayed, None) or
    (0, reason it could not be done now). Raises MemrepoError on a conflict, after setting
    the local commits aside and resetting main to `remote`."""
    dirty = repo.dirty_paths()
    if dirty:
        return 0, messages.SYNC_DIRTY_QUEUED.format(paths=_dirty_message(dirty))
    try:
        new_tip, replayed = _replay(repo, local, remote)
    except _ReplayFailed as exc:
        count = _count(repo, local, remote)
        backup = _backup(repo, local)
        repo.move_branch(remote, expected=local)
        raise MemrepoError(
            messages.SYNC_CONFLICT.format(
                count=count, problems="; ".join(exc.problems), remote=remote[:12], backup=backup),
            backup=backup, set_aside=count, problems=exc.problems,
        ) from None
    if new_tip != local:
        repo.move_branch(new_tip, expected=local)
    return replayed, None


# --------------------------------------------------------------------- push
def _publish(repo: MemoryRepo, *, pulled: int = 0, replayed: int = 0) -> SyncResult:
    """Push main, replaying onto the remote each time it moved; bounded, never forced.
    The caller holds the lock."""
    for attempt in range(ATTEMPTS):
        local = repo.head_sha()
        assert local is not None
        before = repo.resolve(TRACKING_REF)
        outcome, problem = _push_once(repo)
        if outcome == "ok":
            _record_sync(repo)
            sent = _count(repo, local, before) if before else _count(repo, local)
            return SyncResult(True, None, local, sent, pulled, replayed, attempt + 1)
        if outcome == "unreachable":
            return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        if outcome == "refused":
            return SyncResult(False, messages.SYNC_REFUSED.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        _backoff(attempt)
        remote, problem = _fetch(repo)
        if problem is not None:
            return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        if remote is None or contains(repo, local, remote):
            continue
        done, reason = _rebase_onto(repo, local, remote)
        if reason is not None:
            return SyncResult(False, reason, local, 0, pulled, replayed, attempt + 1)
        replayed += done
    return SyncResult(False, messages.SYNC_BUSY.format(attempts=ATTEMPTS), repo.head_sha(),
                      0, pulled, replayed, ATTEMPTS)


def _off_main(repo: MemoryRepo) -> str | None:
    """Why this clone cannot sync main as HEAD, or None when main is checked out."""
    branch = repo.branch()
    return None if branch == BRANCH else messages.SYNC_NOT_ON_MAIN.format(branch=branch or "a detached HEAD")


def push(repo: MemoryRepo) -> SyncResult:
    """Push main to origin after a commit; on an unreachable remote the commit stays local
    and the result says why (this never raises for network trouble)."""
    if remote_url(repo) is None:
        return SyncResult(False, NO_REMOTE, repo.head_sha())
    with repo.lock():
        off_main = _off_main(repo)
        if off_main is not None:
            return SyncResult(False, off_main, repo.head_sha())
        return replace(_publish(repo), url=_shown_url(repo))


def sync(repo: MemoryRepo) -> SyncResult:
    """Fetch, fast-forward when only the remote moved, replay when both did, then push."""
    if remote_url(repo) is None:
        raise MemrepoError(messages.SYNC_NOT_CONFIGURED.format(path=repo.root))
    with repo.lock():
        return replace(_sync_locked(repo), url=_shown_url(repo))


def _sync_locked(repo: MemoryRepo) -> SyncResult:
    off_main = _off_main(repo)
    if off_main is not None:
        raise MemrepoError(off_main)
    dirty = repo.dirty_paths()
    if dirty:
        raise MemrepoError(messages.SYNC_DIRTY.format(paths=_dirty_message(dirty)))
    local = repo.head_sha()
    assert local is not None
    remote, problem = _fetch(repo)
    if problem is not None:
        return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local)
    if remote is None or contains(repo, local, remote):
        if remote == local:
            _record_sync(repo)
            return SyncResult(True, None, local)
        return _publish(repo)
    if contains(repo, remote, local):
        pulled = _count(repo, remote, local)
        repo.move_branch(remote, expected=local)
        _record_sync(repo)
        return SyncResult(True, None, remote, pulled=pulled)
    pulled = _count(repo, remote, local)
    replayed, reason = _rebase_onto(repo, local, remote)
    if reason is not None:
        return SyncResult(False, reason, local)
    return _publish(repo, pulled=pulled, replayed=replayed)


# --------------------------------------------------------------------- status
def status(repo: MemoryRepo, fetch: bool = False) -> RepoStatus:
    """Where this clone stands against the remote's main as last fetched (or fetched now)."""
    url = remote_url(repo)
    fetch_error = None
    fetched = False
    if url is not None and fetch:
        with repo.lock():
            _, fetch_error = _fetch(repo)
        fetched = fetch_error is None
    head = repo.head_sha()
    remote_head = repo.resolve(TRACKING_REF) if url is not None else None
    ahead = behind = None
    if head is not None and url is not None:
        if remote_head is not None:
            ahead, behind = repo.git.ahead_behind(head, remote_head)
        else:
            ahead = _count(repo, head) if fetched else None
            behind = 0 if fetched else None
    return RepoStatus(
        url=redact(url) if url is not None else None,
        branch=repo.branch(),
        head=head,
        remote_head=remote_head,
        ahead=ahead,
        behind=behind,
        last_sync=repo.get_config(LAST_SYNC_KEY),
        backups=backups(repo),
        fetched=fetched,
        fetch_error=fetch_error,
    )


# --------------------------------------------------------------------- set / unset
@contextmanager
def _restoring(repo: MemoryRepo) -> Iterator[None]:
    """Put the remote configuration (URL and tracking ref) back if connecting fails."""
    previous = remote_url(repo)
    tracking = repo.resolve(TRACKING_REF)
    upstream = (repo.get_config(f"branch.{BRANCH}.remote"), repo.get_config(f"branch.{BRANCH}.merge"))
    try:
        yield
    except BaseException:
        remotes = repo.git.remotes
        if previous is None:
            if remote_url(repo) is not None:
                remotes.delete(REMOTE)
        else:
            remotes.set_url(REMOTE, previous)
        if previous is not None and tracking is not None:
            repo.git.references.create(TRACKING_REF, tracking, force=True)
        elif TRACKING_REF in repo.git.references:
            repo.git.references.delete(TRACKING_REF)
        repo.set_config(f"branch.{BRANCH}.remote", upstream[0])
        repo.set_config(f"branch.{BRANCH}.merge", upstream[1])
        raise


def _heads(repo: MemoryRepo) -> tuple[list[str] | None, str | None]:
    status_, out, err = _git(repo, "ls_remote", "--heads", REMOTE)
    if status_ != 0:
        return None, git_problem(err or out)
    names = [line.split("\t", 1)[1] for line in out.splitlines() if "\t" in line]
    return [n.removeprefix("refs/heads/") for n in names], None


def set_remote(repo: MemoryRepo, url: str) -> str:
    """Connect to `url` as origin and bring both sides together where that is safe: push to
    an empty remote, take the remote's history into a freshly initialised clone, fast-forward.
    Diverged histories are refused and an unreachable URL leaves nothing configured."""
    url = check_url(url)
    shown = redact(url)
    with repo.lock():
        off_main = _off_main(repo)
        if off_main is not None:
            raise MemrepoError(off_main)
    with repo.lock(), _restoring(repo):
        if remote_url(repo) is None:
            repo.git.remotes.create(REMOTE, url)
        else:
            repo.git.remotes.set_url(REMOTE, url)
        heads, problem = _heads(repo)
        if heads is None:
            raise MemrepoError(messages.REMOTE_SET_UNREACHABLE.format(url=shown, problem=problem))
        local = repo.head_sha()
        assert local is not None
        if not heads:
            result = _publish(repo)
            if not result.pushed:
                raise MemrepoError(messages.REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
            _set_upstream(repo)
            return messages.REMOTE_SET_PUSHED.format(url=shown, count=_count(repo, local))
        if BRANCH not in heads:
            listed = ", ".join(heads[:5]) + (" ..." if len(heads) > 5 else "")
            raise MemrepoError(messages.REMOTE_SET_NO_MAIN.format(url=shown, branches=listed))
        remote, problem = _fetch(repo)
        if remote is None:
            raise MemrepoError(messages.REMOTE_SET_UNREACHABLE.format(
                url=shown, problem=problem or f"{BRANCH} vanished"))
        if remote == local:
            _set_upstream(repo)
            _record_sync(repo)
            return messages.REMOTE_SET_IN_SYNC.format(url=shown, sha=local[:12])
        if contains(repo, local, remote):
            count = _count(repo, local, remote)
            result = _publish(repo)
            if not result.pushed:
                raise MemrepoError(messages.REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
            _set_upstream(repo)
            return messages.REMOTE_SET_AHEAD.format(url=shown, count=count, sha=(result.head or "")[:12])
        fast_forward = contains(repo, remote, local)
        fresh = _count(repo, local) == 1
        if not (fast_forward or fresh):
            raise MemrepoError(messages.REMOTE_SET_DIVERGED.format(
                url=shown, path=repo.root, count=_count(repo, local), remote=remote[:12], local=local[:12]))
        dirty = repo.dirty_paths()
        if dirty:
            raise MemrepoError(messages.REMOTE_SET_DIRTY.format(paths=_dirty_message(dirty)))
        if fast_forward:
            count = _count(repo, remote, local)
            repo.move_branch(remote, expected=local)
            _set_upstream(repo)
            _record_sync(repo)
            return messages.REMOTE_SET_FAST_FORWARDED.format(url=shown, count=count, sha=remote[:12])
        backup = _backup(repo, local)
        repo.move_branch(remote, expected=local)
        _set_upstream(repo)
        _record_sync(repo)
        return messages.REMOTE_SET_ADOPTED.format(url=shown, sha=remote[:12], backup=backup)


def unset_remote(repo: MemoryRepo) -> str:
    """Disconnect from origin; local history (and any backup refs) stay."""
    with repo.lock():
        url = remote_url(repo)
        if url is None:
            return messages.REMOTE_UNSET_NONE
        head = repo.head_sha()
        tracking = repo.resolve(TRACKING_REF)
        unpushed = 0
        if head is not None:
            unpushed = _count(repo, head, tracking) if tracking else _count(repo, head)
        repo.git.remotes.delete(REMOTE)
        repo.set_config(f"branch.{BRANCH}.remote", None)
        repo.set_config(f"branch.{BRANCH}.merge", None)
        repo.set_config(LAST_SYNC_KEY, None)
    if unpushed:
        return messages.REMOTE_UNSET_UNPUSHED.format(url=redact(url), count=unpushed)
    return messages.REMOTE_UNSET.format(url=redact(url))



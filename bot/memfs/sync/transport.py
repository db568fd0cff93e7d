"""How a clone talks to its remote (`origin`): fetch main (in-process through libgit2 for an
http(s) remote whose URL carries its token, else `git fetch`), push a ref, list the remote's
branches. The remote is only ever named `origin` on git's command line, and every problem is
redacted, so a token in the URL never reaches a log, an error or the agent."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import time
from urllib.parse import unquote, urlsplit

import pygit2

from bot import agent_credential
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync.gitcmd import GIT_TIMEOUT, GitOutput, git_problem, run_git
from bot.memfs.sync.redaction import redact

SYNC_OTHER_LOCALHUB = (
    "the localhub at {base} refused this clone's token: it keeps its data in {data}, and a token is known only to "
    "the localhub whose data folder made it (two localhubs on one port, one after the other?); start the localhub "
    "whose data folder made the token, or make a new token on this one with `memrepo localhub create-repo {repo} "
    "--url {base} --data {data} --new-token` and connect the URL it prints"
)

REMOTE = "origin"
BRANCH = "main"
BRANCH_REF = f"refs/heads/{BRANCH}"
TRACKING_REF = f"refs/remotes/{REMOTE}/{BRANCH}"
FETCHED_REF = f"refs/memrepo/fetched/{BRANCH}"  # where an in-process fetch lands first
CONNECT_TIMEOUT_MS = 15_000  # in-process (libgit2) fetches: connecting
IDLE_TIMEOUT_MS = 60_000  # and a server that sends nothing for this long

# git's wording for "the remote's main moved under you"; LC_ALL=C keeps it in English.
_MOVED = (
    "fetch first", "non-fast-forward", "stale info",
    "failed to update ref", "cannot lock ref",  # not said: git's words, matched in its output
    "incorrect old value", "failed to lock",  # not said: git's words, matched in its output
)
_NO_REMOTE_MAIN = "couldn't find remote ref"  # not said: git's words, matched in its output
_NO_REMOTE_REF = "remote ref does not exist"  # not said: git's words, matched in its output
HOOK_SAYS = "memrepo: "  # not said: how memrepo's git hooks begin a refusal (bot/follow/guard.py)
_TRANSPORT_SETUP = re.compile(r"(?i)certificate|ssl|tls|proxy")
# libgit2's "remote authentication required but no callback set" and git's "Authentication
# failed for '<url>'": the remote refused the clone's credentials.
_AUTH_REFUSED = re.compile(r"(?i)authentication (?:required|failed)")  # not said: git's and libgit2's words
LOCALHUB_DATA = "X-Localhub-Data"  # localhub's 401s name its data folder (localhub/app.py)
PROBE_TIMEOUT = 10.0


def remote_url(repo: MemoryRepo) -> str | None:
    return repo.get_config(f"remote.{REMOTE}.url")


def shown_url(repo: MemoryRepo) -> str:
    return redact(remote_url(repo) or "")


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


def identity_header(repo: MemoryRepo) -> str | None:
    """The header of the agent identity recorded for the clone (bot.agent_credential.git_token:
    an account's token, or a recorded App's kept installation token that has not expired), or None."""
    token = agent_credential.git_token(repo.root, time.time())
    if not token:
        return None
    pair = f"x-access-token:{token}".encode()
    return f"Authorization: Basic {base64.b64encode(pair).decode()}"


def auth_header(repo: MemoryRepo) -> str | None:
    """What the clone authenticates its git requests with: the recorded identity's token
    (`identity_header`), else the credentials origin's URL carries."""
    return identity_header(repo) or basic_auth_header(remote_url(repo))


def without_credentials(url: str) -> str:
    """`url` with no user or password before its host (the rest as it was)."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def refused_by_localhub(url: str, data: str) -> str:
    """What to say when a localhub whose data is in `data` refused the token of a clone of
    `url`: a token is known only to the localhub whose data made it, and git and libgit2 say
    no more than "authentication failed", so this names the folder and the two ways out."""
    parts = urlsplit(without_credentials(url))
    base = f"{parts.scheme}://{parts.netloc}"
    repo = parts.path.strip("/").removesuffix(".git") or "OWNER/NAME"
    return SYNC_OTHER_LOCALHUB.format(base=base, data=data, repo=repo)


def localhub_data(url: str) -> str | None:
    """The data folder a localhub names on its 401 to this clone's token (one request for
    `info/refs`, as git's first), or None: another forge, or no answer. The HTTP client is
    loaded here, after git was refused: every `memrepo tool` call imports this module."""
    import urllib.error
    import urllib.request

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    bare = without_credentials(parts._replace(query="", fragment="").geturl())
    request = urllib.request.Request(f"{bare.rstrip('/')}/info/refs?service=git-upload-pack")
    header = basic_auth_header(url)
    if header:
        request.add_header("Authorization", header.partition(": ")[2])
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT):
            return None
    except urllib.error.HTTPError as exc:
        return exc.headers.get(LOCALHUB_DATA) if exc.code == 401 else None
    except (OSError, ValueError):
        return None


def explained(repo: MemoryRepo, problem: str) -> str:
    """`problem`, or, when the remote refused the clone's credentials and the remote is a
    localhub that says where its data is, that localhub's folder and what to do."""
    url = remote_url(repo)
    if not url or not _AUTH_REFUSED.search(problem):
        return problem
    data = localhub_data(url)
    return refused_by_localhub(url, data) if data else problem


def remote_env(repo: MemoryRepo) -> dict[str, str]:
    env: dict[str, str] = {}
    # git sends a URL's credentials only after the server has answered 401 to a request
    # without them: a round trip more on every fetch an agent makes when HEAD moves. Sending
    # them at once (through the environment, never a config file or the process list) saves
    # it, unless the configuration already sets headers of its own.
    url = remote_url(repo) or ""
    own = identity_header(repo)
    header = own or basic_auth_header(url)
    if header and not has_extra_headers(repo):
        entries = [("http.extraHeader", header)]
        if own is not None and agent_credential.url_token(url):
            # git would answer with the URL's own credentials (the person's, often) rather than
            # the recorded identity's header: the URL is rewritten without them for this command.
            entries.append((f"url.{without_credentials(url)}.insteadOf", url))
        index = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
        for offset, (key, value) in enumerate(entries):
            env.update({f"GIT_CONFIG_KEY_{index + offset}": key, f"GIT_CONFIG_VALUE_{index + offset}": value})
        env["GIT_CONFIG_COUNT"] = str(index + len(entries))
    return env


def has_extra_headers(repo: MemoryRepo) -> bool:
    return any(entry.name.lower().endswith(".extraheader") for entry in repo.git.config)


def run_remote_git(repo: MemoryRepo, *args: str) -> GitOutput:
    """A git command in the clone that talks to the remote (credentials sent at once)."""
    return run_git(repo.root, *args, env=remote_env(repo), timeout=GIT_TIMEOUT)


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


def fetch_from(git: pygit2.Repository, url: str, refspecs: list[str], header: str | None) -> None:
    """Fetch `refspecs` from `url` into `git` through libgit2 (an anonymous remote, `header`
    with every request, the network waits bounded); pygit2.GitError or ValueError as libgit2
    raises them. For the integrator's mirror and the receiver's palace clones."""
    libgit2_timeouts()
    git.remotes.create_anonymous(url).fetch(refspecs, callbacks=HeaderCallbacks(header),
                                            prune=pygit2.enums.FetchPrune.NO_PRUNE, proxy=True)


def fetch_in_process(repo: MemoryRepo, header: str) -> tuple[str | None, str | None]:
    """`fetch` through libgit2, for an http(s) remote whose URL carries its token: nothing
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


def fetch(repo: MemoryRepo) -> tuple[str | None, str | None]:
    """(the remote's main after fetching, None) or (None, problem). A remote without main
    gives (None, None)."""
    header = auth_header(repo)
    if header is not None and not has_extra_headers(repo):
        remote, problem = fetch_in_process(repo, header)
        if problem is None or not _TRANSPORT_SETUP.search(problem):
            return remote, problem if problem is None else explained(repo, problem)
        # libgit2's TLS or proxy setup is not git's (certificate stores, proxy configuration):
        # what git can reach, git fetches
    done = run_remote_git(repo, "fetch", "--no-tags", "--quiet", REMOTE, f"+{BRANCH_REF}:{TRACKING_REF}")
    if done.ok:
        return repo.resolve(TRACKING_REF), None
    if _NO_REMOTE_MAIN in done.err:
        return None, None
    return None, explained(repo, git_problem(done.err or done.out))


def push_main(repo: MemoryRepo) -> tuple[str, str]:
    """("ok" | "moved" | "refused" | "unreachable", problem)."""
    done = run_remote_git(repo, "push", "--porcelain", REMOTE, f"{BRANCH_REF}:{BRANCH_REF}")
    status, out, err = done.status, done.out, done.err
    line = next((ln for ln in out.splitlines() if f"{BRANCH_REF}:{BRANCH_REF}" in ln), None)
    if status == 0 and line is not None and not line.startswith("!"):
        return "ok", ""
    if line is None:
        said = next((ln.strip() for ln in err.splitlines() if ln.startswith(HOOK_SAYS)), None)
        if said is not None:  # a pre-push hook of memrepo's refused the push, and said why
            return "refused", redact(said[len(HOOK_SAYS):])
        return "unreachable", explained(repo, git_problem(err or out))
    summary = line.split("\t")[-1]
    if any(word in summary or word in err for word in _MOVED):
        return "moved", redact(summary)
    return "refused", redact(summary.replace("[", "").replace("]", "").strip() or git_problem(err))


def push_branch(repo: MemoryRepo, branch: str) -> str | None:
    """Push `branch` to the remote under the same name (never forced): None, or the problem."""
    ref = f"refs/heads/{branch}"
    done = run_remote_git(repo, "push", "--porcelain", REMOTE, f"{ref}:{ref}")
    line = next((ln for ln in done.out.splitlines() if f"{ref}:{ref}" in ln), None)
    if done.ok and line is not None and not line.startswith("!"):
        return None
    reason = line.split("\t")[-1] if line else explained(repo, git_problem(done.err or done.out))
    return redact(reason.strip()) or "rejected"


def delete_branch(repo: MemoryRepo, branch: str) -> str | None:
    """Delete `branch` on the remote (a deletion, never a forced update): None, or the problem."""
    done = run_remote_git(repo, "push", "--porcelain", REMOTE, f":refs/heads/{branch}")
    if done.ok or _NO_REMOTE_REF in done.out + done.err:
        return None
    return git_problem(done.err or done.out)


def remote_heads(repo: MemoryRepo) -> tuple[list[str] | None, str | None]:
    done = run_remote_git(repo, "ls-remote", "--heads", REMOTE)
    if not done.ok:
        return None, explained(repo, git_problem(done.err or done.out))
    names = [line.split("\t", 1)[1] for line in done.out.splitlines() if "\t" in line]
    return [n.removeprefix("refs/heads/") for n in names], None


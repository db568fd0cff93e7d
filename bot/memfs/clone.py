"""`memrepo clone URL [DIR]`: a teammate's working clone of a memory repository in one step.

A plain `git clone` leaves out what makes a clone a memory clone: the pre-commit hook that
validates what a person commits, the agent the clone writes for, and `main` tracking `origin`
with a last sync recorded. This makes the clone with the same pieces `init` and `repository
set` use (`fresh_folder`, `install_hook`, `set_agent`; `remote_heads`, `fetch`, `set_upstream`,
`record_sync`), and checks the remote before anything is checked out: a URL that does not
answer, an empty repository, one without `main` or one that holds no memory is refused, and
the folder is left as it was found."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from bot import identity
from bot.errors import MemrepoError
from bot.memfs.create import fresh_folder, install_hook, set_agent
from bot.memfs.store.repo import MAIN, MemoryRepo, pin_checkout
from bot.memfs.sync.push import record_sync, set_upstream
from bot.memfs.sync.redaction import check_url, redact
from bot.memfs.sync.transport import BRANCH, BRANCH_REF, REMOTE, fetch, remote_heads
from bot.texts import first_few

# Cloning one (clone.py).
CLONE_NO_NAME = "cannot tell a folder name from {url}; give one: `memrepo clone URL DIR`"
CLONE_NOT_EMPTY = "{path} is {what}; memrepo clone only clones into a new or empty folder, so nothing was changed"
CLONE_UNREACHABLE = "cannot reach {url} ({problem}); nothing was cloned"
CLONE_EMPTY = (
    "{url} has no commits, so it holds no memory yet; nothing was cloned (make one and push it there with "
    "`memrepo init DIR --remote URL`)"
)
CLONE_NO_MAIN = "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was cloned"
CLONE_NOT_MEMORY = (
    "{url} is a git repository but not a memory repository (its main has no system/, root MEMORY.md or "
    ".memrepo/); nothing was cloned"
)


def is_local_path(url: str) -> bool:
    """Whether git reads `url` as a path on this machine: no scheme, and no `host:` before the
    first slash (git's scp-like `user@host:owner/repo.git`)."""
    return "://" not in url and ":" not in url.split("/", 1)[0]


def default_folder(url: str) -> str:
    """The folder `git clone URL` would make: the URL's last part without `.git`."""
    name = url.rstrip("/")
    name = name.removesuffix("/.git").removesuffix(".git").rstrip("/")
    name = name.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    if name in ("", ".", ".."):
        raise MemrepoError(CLONE_NO_NAME.format(url=redact(url)))
    return name


def clone_repository(url: str, directory: str | os.PathLike[str] | None = None, agent_id: str = "agent",
                     agent_name: str | None = None) -> MemoryRepo:
    """Clone the memory at `url` into `directory` (new or empty) for `agent_id`: main checked
    out and tracking origin, the agent set for the clone, the pre-commit hook installed. A
    refusal (unreachable, empty, no main, not a memory, a folder in use) leaves nothing behind."""
    url = check_url(url)
    agent_id = identity.check_agent_id(agent_id)
    agent_name = (agent_name or agent_id).strip() or agent_id
    if is_local_path(url):  # relative to where the command runs, as git clone reads it
        url = str(Path(url).expanduser().absolute())
    shown = redact(url)
    root = Path(directory if directory is not None else default_folder(url)).expanduser()
    with fresh_folder(root, "{path} is a file; give a new or empty folder for the clone", CLONE_NOT_EMPTY):
        git = pygit2.init_repository(str(root), initial_head=MAIN)
        pin_checkout(git)  # before anything is checked out: the bytes as committed
        repo = MemoryRepo(root.resolve(), git)
        git.remotes.create(REMOTE, url)
        head = _fetch_main(repo, shown)
        git.references.create(BRANCH_REF, head)  # HEAD already names main
        if not repo.looks_like_memory():
            raise MemrepoError(CLONE_NOT_MEMORY.format(url=shown))
        git.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
        set_agent(repo, agent_id, agent_name)
        install_hook(repo)
        set_upstream(repo)
        record_sync(repo)
        return repo


def _fetch_main(repo: MemoryRepo, shown: str) -> str:
    """The remote's main, fetched into the tracking ref; refused in one line when the remote
    does not answer, is empty or has no main."""
    heads, problem = remote_heads(repo)
    if heads is None:
        raise MemrepoError(CLONE_UNREACHABLE.format(url=shown, problem=problem))
    if not heads:
        raise MemrepoError(CLONE_EMPTY.format(url=shown))
    if BRANCH not in heads:
        raise MemrepoError(CLONE_NO_MAIN.format(url=shown, branches=first_few(heads)))
    head, problem = fetch(repo)
    if head is None:
        raise MemrepoError(CLONE_UNREACHABLE.format(url=shown, problem=problem or f"{BRANCH} vanished"))
    return head

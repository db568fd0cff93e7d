"""memrepo's pre-push guard in a folder a harness writes itself.

Letta Code's post-commit hook (what `/memory-repository set` installs) runs `git push URL
main:main` in the background right after each commit, before `memrepo follow` has seen it, so a
commit the policy keeps for review would reach the forge's main unreviewed. git runs the
folder's `pre-push` hook before every push and gives it the refs being pushed on standard input
(githooks(5)); the hook memrepo installs there (`install`, from `repository set` and `follow`)
hands that input to `refusal`, which routes the commits a push of `main` would add exactly as
follow's pass does (`harness_commits`, the router under the policy of the remote's main as the
push sees it). If any would be held, the push is refused with one line, and follow then takes
the commit off the folder's main and proposes it.

follow's own pushes meet the same judgment and pass, since they carry only commits the policy
allows; a harness commit that slips in between follow's routing and its push is refused too,
and held at the next pass. Letta Code writes `pre-commit` and `post-commit` only, so the guard
never replaces one of Letta's hooks; a `pre-push` hook of the user's own is kept as
`pre-push.chained` and run after the guard.

`updates` and `to_main` are pure; `refusal` reads the repository; `install` writes the hook.
The hook's process imports this module and the router, nothing else of memrepo's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.errors import MemrepoError

if TYPE_CHECKING:  # the hook reads its input before it loads git: a push of another branch loads none
    from bot.memfs import MemoryRepo

# The pre-push guard (guard.py): one line on standard error, which git shows and Letta Code's
# hook logs; each starts with "memrepo: " (bot/memfs/sync's push reads a hook's refusal by it).
GUARD_HELD = ("memrepo: commit {sha} \"{subject}\" waits for review ({reasons}), so this push to main is refused; "
              "memrepo follow takes it off main and opens its pull request")
GUARD_UNKNOWN_BASE = ("memrepo: the remote's main ({sha}) is not in this folder, so the commits this push adds cannot "
                      "be judged; fetch it first (memrepo follow does)")
GUARD_CHAINED_TAKEN = ("{hook} is not memrepo's and {chained} is taken, so memrepo's pre-push guard is not installed; "
                       "merge the two hooks into {chained}, remove {hook}, and run the command again")

MAIN_REF = "refs/heads/main"
HOOK = "pre-push"
CHAINED = "pre-push.chained"  # a user's own pre-push hook, run after the guard
MARK = "memrepo: pre-push guard"  # the line that says a pre-push hook is memrepo's
MAX_INPUT = 1024 * 1024  # characters of hook input: a few hundred refs, with room to spare


class Judge(Protocol):
    """How one commit is routed (bot/agent/write_path.py's CommitRouter.route)."""

    def route(self, repo: MemoryRepo, commit: str, parent: str | None, base: str) -> Any: ...


@dataclass(frozen=True)
class Update:
    """One line of a pre-push hook's input: a local ref and object, the remote ref and the
    object the remote has there (all zeros: a ref created, or deleted when `local` is)."""

    local_ref: str
    local: str
    remote_ref: str
    remote: str


def is_zero(sha: str) -> bool:
    return set(sha) == {"0"}


def updates(text: str) -> list[Update]:
    """The updates git announces, one per line `<local ref> <local sha> <remote ref> <remote sha>`;
    a line of another shape is no update."""
    found = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            found.append(Update(*parts))
    return found


def to_main(found: Iterable[Update]) -> list[Update]:
    """The updates that would add commits to the remote's main: not a deletion, not the
    creation of a main the remote lacks (the folder's first push makes it, as follow lets it),
    and not a push of what the remote already has."""
    return [u for u in found if u.remote_ref == MAIN_REF and not is_zero(u.local) and not is_zero(u.remote)
            and u.local != u.remote]


def harness_commits(repo: MemoryRepo, head: str, base: str) -> list[tuple[str, str | None]]:
    """The commits `head` has that `base` lacks, oldest first, each with its first parent (None
    for a first commit of all): what a push of `head` onto `base` adds. A merge commit is not
    among them: its changes are those of the commits it joins, which are."""
    import pygit2

    walker = repo.git.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base)
    return [(str(c.id), str(c.parent_ids[0]) if c.parent_ids else None) for c in walker if len(c.parents) < 2]


def first_held(repo: MemoryRepo, judge: Judge, commits: Iterable[tuple[str, str | None]],
               base: str) -> tuple[str, Any] | None:
    """The first of `commits` the policy at `base` holds for review, with its route; None when
    every one may land. A first commit of all is never held (nothing to hold it against), as in
    follow's pass."""
    for sha, parent in commits:
        route = judge.route(repo, sha, parent, base)
        if not route.direct:
            return None if parent is None else (sha, route)
    return None


def refusal(repo: MemoryRepo, text: str, judge: Judge) -> str | None:
    """Why the push git describes in `text` must not happen (one line), or None to let it go."""
    for update in to_main(updates(text)):
        if update.remote not in repo.git:
            return GUARD_UNKNOWN_BASE.format(sha=update.remote[:12])
        held = first_held(repo, judge, harness_commits(repo, update.local, update.remote), update.remote)
        if held is not None:
            sha, route = held
            info = repo.commit_info(sha)
            return GUARD_HELD.format(sha=sha[:12], subject=info.summary if info else "",
                                           reasons="; ".join(route.reasons))
    return None


@dataclass(frozen=True)
class Installed:
    """What `install` did: the hook's path, whether it was written now, and where a user's own
    pre-push hook went (None: there was none)."""

    hook: Path
    written: bool
    chained: Path | None = None


def script(python: str) -> str:
    import shlex

    from bot.templating import render

    return render("hooks/pre-push.j2", python=shlex.quote(python), mark=MARK, chained=CHAINED)


def install(repo: MemoryRepo, python: str) -> Installed:
    """Put the guard in the folder's hooks (git's own folder, where Letta Code puts its hooks),
    run by `python`. Rewritten when it differs (the interpreter moved); a pre-push hook that is
    not memrepo's is moved to CHAINED and run after the guard, unless CHAINED is taken, which
    is refused so that no hook of the user's is lost."""
    hooks = Path(repo.git.path) / "hooks"
    hook, chained = hooks / HOOK, hooks / CHAINED
    wanted = script(python)
    moved = None
    if hook.is_symlink() or hook.exists():
        try:
            current = hook.read_text(encoding="utf-8", errors="replace")
        except OSError:  # a dangling link, a folder: not ours either
            current = ""
        if current == wanted:
            return Installed(hook, False)
        if MARK not in current:
            if chained.is_symlink() or chained.exists():
                raise MemrepoError(GUARD_CHAINED_TAKEN.format(hook=hook, chained=chained))
            os.replace(hook, chained)
            moved = chained
    hooks.mkdir(parents=True, exist_ok=True)
    temporary = hooks / f".{HOOK}.memrepo-{os.getpid()}"
    temporary.write_text(wanted, encoding="utf-8")
    temporary.chmod(0o755 | stat.S_IMODE(temporary.stat().st_mode))
    os.replace(temporary, hook)
    return Installed(hook, True, moved)

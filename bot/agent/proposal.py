"""An agent edit as a pull request (the shell: git, worktree, forge).

    fetch origin ─> base = origin's main ─> worktree at base ─> the same tool call, applied
      and validated there as the agent ─> ONE commit on base (the agent's identity, trailers)
      ─> branch memrepo/edit/<agent-id>/<short id> ─> push (never forced) ─> pull request
         labelled memrepo:agent-edit (and memrepo:untrusted when the turn saw external content)

The clone's own `main`, index and working tree are never touched: the edit is not in memory
until the pull request is merged. The call is applied again at the remote's `main` (not at
the clone's HEAD) so the pull request's diff is exactly the edit, whatever the clone holds
that is not pushed yet. Anything that fails before the pull request exists removes what was
made (worktree, local and pushed branch); a pull request whose labels could not be set is
closed again, because without `memrepo:untrusted` nothing would hold it for a person.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from dataclasses import dataclass, replace

import pygit2

from bot import identity, messages
from bot.agent import render
from bot.agent.routing import Route
from bot.contracts import CONVERSATION_ID, EDIT_BRANCH_PREFIX, LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from bot.dream.runner import fetch_base
from bot.dream.worktree import push_branch, worktree
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient, NewPullRequest
from bot.forge.errors import ForgeError
from bot.memfs.calls import Call
from bot.memfs.repo import MemoryRepo
from bot.memfs.sync import BRANCH, SetAside
from bot.memfs.sync.replay import dismiss
from bot.memfs.sync.transport import delete_branch
from bot.memfs.tool import MemoryTool
from bot.trailers import external_sources, trailer_map


@dataclass(frozen=True)
class EditProposal:
    number: int
    url: str
    branch: str
    commit: str
    base: str
    paths: tuple[str, ...]
    labels: tuple[str, ...]


def branch_name(agent_id: str, short_id: str | None = None) -> str:
    """`memrepo/edit/<agent-id>/<short id>` (DESIGN.md §9); the short id is 8 random hex digits."""
    return f"{EDIT_BRANCH_PREFIX}{agent_id}/{short_id or secrets.token_hex(4)}"


def propose_edit(repo: MemoryRepo, call: Call, route: Route, client: ForgeClient, *, agent_id: str,
                 agent_name: str | None, conversation_id: str, turn: int) -> EditProposal:
    """Open the pull request for one (parsed) edit; MemrepoError (one line) when it cannot,
    with nothing left behind."""
    base = fetch_base(repo)
    with worktree(repo, base) as path:
        result = MemoryTool(path, agent_id, agent_name, push=False).apply(call)
        if not result.ok:
            raise MemrepoError(messages.AGENT_EDIT_NOT_APPLICABLE.format(base=base[:12], problem=result.message))
        tip = MemoryRepo.open(path).head_sha() or base
    branch = branch_name(agent_id)
    info = repo.commit_info(tip)
    reason = call.reason or (info.message if info is not None else call.command)
    ctx = render.EditContext(agent_id, conversation_id, turn, call.command, reason, tuple(result.paths), base,
                             branch, route)
    sha = _commit(repo, base, tip, render.commit_message(ctx), identity.agent(agent_id, agent_name))
    ref = f"refs/heads/{branch}"
    repo.git.references.create(ref, sha)
    try:
        push_branch(repo, branch)
    finally:
        with contextlib.suppress(KeyError, pygit2.GitError):
            repo.git.references.delete(ref)
    try:
        pr = client.open_pull_request(NewPullRequest(head=branch, base=BRANCH, title=render.title(ctx),
                                                     body=render.body(ctx)))
    except BaseException:
        delete_branch(repo, branch)
        raise
    try:
        labels = client.add_labels(pr.number, route.labels)
    except ForgeError as exc:
        _withdraw(repo, client, pr.number, branch)
        raise MemrepoError(messages.AGENT_EDIT_UNLABELLED.format(number=pr.number, problem=exc)) from None
    pr = replace(pr, labels=labels)
    return EditProposal(pr.number, pr.url, branch, sha, base, tuple(result.paths), tuple(pr.labels))


def propose_set_aside(repo: MemoryRepo, entry: SetAside, client: ForgeClient, *, agent_id: str) -> EditProposal:
    """Open a pull request for a queued commit sync could not replay onto main: the commit
    itself, on the parent it was made on, so the integrator (or a person) merges it with what
    moved, as for any pull request. Its set-aside ref goes once the pull request exists."""
    commit = repo.git[entry.commit].peel(pygit2.Commit)
    found = dict(trailer_map(commit.message))
    sources = external_sources([commit.message])
    route = Route(False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED) if sources else (LABEL_AGENT_EDIT,), sources=sources,
                  conflict=entry.reason)
    base = str(commit.parent_ids[0]) if commit.parent_ids else entry.commit
    deltas = commit.parents[0].tree.diff_to_tree(commit.tree).deltas if commit.parents else ()
    paths = tuple(sorted({d.new_file.path or d.old_file.path for d in deltas}))
    branch = branch_name(agent_id)
    ctx = render.EditContext(agent_id, found.get(CONVERSATION_ID, ""), 0, "replay", entry.message, paths, base,
                             branch, route)
    ref = f"refs/heads/{branch}"
    repo.git.references.create(ref, entry.commit)
    try:
        push_branch(repo, branch)
    finally:
        with contextlib.suppress(KeyError, pygit2.GitError):
            repo.git.references.delete(ref)
    try:
        pr = client.open_pull_request(NewPullRequest(head=branch, base=BRANCH, title=render.title(ctx),
                                                     body=render.body(ctx)))
    except BaseException:
        delete_branch(repo, branch)
        raise
    try:
        labels = client.add_labels(pr.number, route.labels)
    except ForgeError as exc:
        _withdraw(repo, client, pr.number, branch)
        raise MemrepoError(messages.AGENT_EDIT_UNLABELLED.format(number=pr.number, problem=exc)) from None
    dismiss(repo, entry.ref)
    return EditProposal(pr.number, pr.url, branch, entry.commit, base, paths, tuple(labels))


def _commit(repo: MemoryRepo, base: str, tip: str, message: str, who: identity.Identity) -> str:
    """One commit on `base` with the tree the call produced at `tip`, by the agent."""
    tree = repo.git[tip].peel(pygit2.Commit).tree
    signature = pygit2.Signature(who.name, who.email, int(time.time()), 0)
    parent = repo.git[base].peel(pygit2.Commit)
    return str(repo.git.create_commit(None, signature, signature, message, tree.id, [parent.id]))


def _withdraw(repo: MemoryRepo, client: ForgeClient, number: int, branch: str) -> None:
    """Close an unlabelled pull request and delete its branch (best effort: the error that
    led here is the one reported)."""
    with contextlib.suppress(ForgeError):
        client.close_pull_request(number)
    delete_branch(repo, branch)

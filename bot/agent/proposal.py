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
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pygit2

from bot import identity
from bot.agent import render
from bot.agent.routing import Route
from bot.contracts import CONVERSATION_ID, EDIT_BRANCH_PREFIX, LABEL_AGENT_EDIT, LABEL_UNTRUSTED, TRANSCRIPT_RANGE
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.errors import ForgeError
from bot.forge.shapes import NewPullRequest, PullRequest
from bot.memfs import Call, MemoryRepo, MemoryTool, is_core, memory_layout
from bot.memfs.sync import BRANCH, SetAside, delete_branch, dismiss
from bot.pullrequest.branch import fetch_base, push_branch, worktree
from bot.texts import Text
from bot.trailers import external_sources, trailer_map
from bot.transcript.model import Message

AGENT_HARNESS_COMMAND = "git commit (made by the harness in the memory folder)"
AGENT_HARNESS_COMMITS = Text("{count:|commit|commits} the harness made in the memory folder")
AGENT_HARNESS_COMMITS_MADE = "Made in the memory folder, and held back from main by memrepo follow:\n{commits}"
HARNESS_LINKED = ("The harness's commit names no conversation; by time it was made during the turn of conversation "
                  "{conversation} that ended at {ended} (messages {first} to {last}).")
HARNESS_UNKNOWN = "The conversation behind it cannot be known: {why}."
HARNESS_UNKNOWN_START = HARNESS_UNKNOWN.split("{", 1)[0]
AGENT_EDIT_NOT_APPLICABLE = "the edit does not apply to main as it is on the remote ({base}): {problem}"
AGENT_EDIT_UNLABELLED = "pull request #{number} was opened but could not be labelled ({problem}); it was closed " \
                        "again so that nothing merges it without the review its labels ask for"
AGENT_EDIT_WITHDRAWN_COMMENT = """\
**memrepo closed this pull request: its labels could not be set** ({problem}), and without them
nothing would hold it for the review it needs. The edit was not made and the agent was told so.

Nothing needs doing here: the agent may make the edit again, which opens a new pull request.
"""

log = logging.getLogger("memrepo.agent")


@dataclass(frozen=True)
class EditProposal:
    number: int
    url: str
    branch: str
    commit: str
    base: str
    paths: tuple[str, ...]
    labels: tuple[str, ...]
    turn_named: bool = True  # False: the body says the conversation behind it cannot be known


def branch_name(agent_id: str, short_id: str | None = None) -> str:
    """`memrepo/edit/<agent-id>/<short id>` (docs/architecture.md §5.1); the short id is 8 random hex digits."""
    return f"{EDIT_BRANCH_PREFIX}{agent_id}/{short_id or secrets.token_hex(4)}"


def turn_messages(transcripts: Any, agent_id: str, conversation_id: str | None,
                  transcript_range: str | None) -> tuple[Message, ...]:
    """The messages of a turn, `<first>..<last>` of the conversation's transcript, for the pull
    request to quote; none when there is no store, no range, or the store cannot say (the pull
    request is still opened: what the user said is shown where it can be, never invented)."""
    if transcripts is None or not conversation_id or not transcript_range:
        return ()
    first, _, last = transcript_range.partition("..")
    try:
        rows = transcripts.read(agent_id, conversation_id)
    except MemrepoError as exc:
        log.info("no transcript to quote for %s/%s: %s", agent_id, conversation_id, exc)
        return ()
    ids = [m.message_id for m in rows]
    if first not in ids:
        return ()
    start = ids.index(first)
    end = ids.index(last, start) if last in ids[start:] else len(ids) - 1
    return tuple(rows[start:end + 1])


def removed_paths(repo: MemoryRepo, base: str, tip: str) -> tuple[str, ...]:
    """Paths `base` has and `tip` does not: deleted, or moved out of core memory (`system/`, or
    v2's root files),
    which takes them out of the agent's prompt as surely. A file renamed within its part of
    memory is not removed."""
    old = repo.git[base].peel(pygit2.Commit).tree
    new = repo.git[tip].peel(pygit2.Commit).tree
    diff = old.diff_to_tree(new)
    diff.find_similar()
    kind = memory_layout(repo, base)
    return tuple(sorted(d.old_file.path for d in diff.deltas if d.status == pygit2.GIT_DELTA_DELETED or (
        d.status == pygit2.GIT_DELTA_RENAMED and is_core(d.old_file.path, kind)
        and not is_core(d.new_file.path, kind))))


def propose_edit(repo: MemoryRepo, call: Call, route: Route, client: ForgeClient, *, agent_id: str,
                 agent_name: str | None, conversation_id: str, turn: int,
                 window: Sequence[Message] = (), memory_repository: str | None = None) -> EditProposal:
    """Open the pull request for one (parsed) edit; MemrepoError (one line) when it cannot,
    with nothing left behind. `window`: the turn's transcript messages, which the body quotes;
    `memory_repository`: the agent's own memory, when `repo` is a shared memory's projection."""
    base = fetch_base(repo)
    with worktree(repo, base) as path:
        result = MemoryTool(path, agent_id, agent_name, push=False).apply(call)
        if not result.ok:
            raise MemrepoError(AGENT_EDIT_NOT_APPLICABLE.format(base=base[:12], problem=result.message))
        tip = MemoryRepo.open(path).head_sha() or base
    branch = branch_name(agent_id)
    info = repo.commit_info(tip)
    reason = call.reason or (info.message if info is not None else call.command)
    ctx = render.EditContext(agent_id, conversation_id, turn, call.command, reason, tuple(result.paths), base,
                             branch, route, tuple(window), removed_paths(repo, base, tip),
                             memory_layout(repo, base), memory_repository)
    sha = _commit(repo, base, tip, render.commit_message(ctx), identity.agent(agent_id, agent_name))
    pr, labels = _publish(repo, client, sha, ctx)
    return EditProposal(pr.number, pr.url, branch, sha, base, tuple(result.paths), labels)


def propose_set_aside(repo: MemoryRepo, entry: SetAside, client: ForgeClient, *, agent_id: str,
                      transcripts: Any = None) -> EditProposal:
    """Open a pull request for a queued commit sync could not replay onto main: the commit
    itself, on the parent it was made on, so the integrator (or a person) merges it with what
    moved, as for any pull request. Its set-aside ref goes once the pull request exists.
    `transcripts` (a TranscriptStore) lets the body quote the turn its trailers name."""
    commit = repo.git[entry.commit].peel(pygit2.Commit)
    found = dict(trailer_map(commit.message))
    sources = external_sources([commit.message])
    route = Route(False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED) if sources else (LABEL_AGENT_EDIT,), sources=sources,
                  conflict=entry.reason)
    base = str(commit.parent_ids[0]) if commit.parent_ids else entry.commit
    deltas = commit.parents[0].tree.diff_to_tree(commit.tree).deltas if commit.parents else ()
    paths = tuple(sorted({d.new_file.path or d.old_file.path for d in deltas}))
    branch = branch_name(agent_id)
    conversation = found.get(CONVERSATION_ID, "")
    window = turn_messages(transcripts, agent_id, conversation, found.get(TRANSCRIPT_RANGE))
    removed = removed_paths(repo, base, entry.commit) if commit.parents else ()
    ctx = render.EditContext(agent_id, conversation, 0, "replay", entry.message, paths, base, branch, route,
                             window, removed, memory_layout(repo, base))
    pr, labels = _publish(repo, client, entry.commit, ctx)
    dismiss(repo, entry.ref)
    return EditProposal(pr.number, pr.url, branch, entry.commit, base, paths, labels)


def propose_commits(repo: MemoryRepo, commits: Sequence[str], route: Route, client: ForgeClient, *, base: str,
                    tip: str, agent_id: str, agent_name: str | None, transcripts: Any = None,
                    memory_repository: str | None = None) -> EditProposal:
    """Open one pull request for the commits a harness made that the policy holds for review:
    one commit by the agent on `base` (the forge's main) with the tree `tip` has (the held
    commits applied there by the caller), so the integrator sees an agent's edit, as for a
    memory tool call. Its message and body keep the commits' own provenance: their subjects
    and shas, and the `Conversation-ID`, `Transcript-Range` and `Source` trailers they carry."""
    found = [repo.git[sha].peel(pygit2.Commit) for sha in commits]
    trailers = {key: value for commit in found for key, value in trailer_map(commit.message).items()}
    conversation = trailers.get(CONVERSATION_ID, "")
    transcript_range = trailers.get(TRANSCRIPT_RANGE)
    linked = ""
    if not conversation:  # Letta Code's commits name none: the turn is found by time, or said unknown
        conversation, transcript_range, linked = linked_turn(transcripts, agent_id, found)
    window = turn_messages(transcripts, agent_id, conversation, transcript_range)
    subjects = [c.message.split("\n", 1)[0].strip() for c in found]
    listed = "\n".join(f"- {str(c.id)[:12]} {subject}"
                       for c, subject in zip(found, subjects, strict=True))
    reason = (subjects[0] if len(found) == 1 else AGENT_HARNESS_COMMITS.format(count=len(found))) \
        + "\n\n" + AGENT_HARNESS_COMMITS_MADE.format(commits=listed) + (f"\n\n{linked}" if linked else "")
    old = repo.git[base].peel(pygit2.Commit).tree
    paths = tuple(sorted({d.new_file.path or d.old_file.path
                          for d in old.diff_to_tree(repo.git[tip].peel(pygit2.Commit).tree).deltas}))
    branch = branch_name(agent_id)
    ctx = render.EditContext(agent_id, conversation, 0, AGENT_HARNESS_COMMAND, reason, paths, base, branch,
                             route, window, removed_paths(repo, base, tip), memory_layout(repo, base),
                             memory_repository)
    sha = _commit(repo, base, tip, render.commit_message(ctx), identity.agent(agent_id, agent_name))
    pr, labels = _publish(repo, client, sha, ctx)
    return EditProposal(pr.number, pr.url, branch, sha, base, paths, labels, turn_named=bool(conversation))


def name_turn(repo: MemoryRepo, commits: Sequence[str], client: ForgeClient, number: int, *, transcripts: Any,
              agent_id: str) -> str:
    """Name in pull request #`number` (which `propose_commits` opened for harness `commits`, saying
    the conversation behind them could not be known) the turn they were made in, now imported:
    its description is edited once, with one PATCH, and nothing it proposes changes (its commit,
    branch, title and labels stay; bot.agent.render.with_turn). `waiting`: the turn is still not
    imported (the forge is not asked); `named`; `left`: the pull request is no longer open, is not
    on an agent's edit branch, or its description is not as memrepo wrote it (a person's words are
    never overwritten)."""
    found = [repo.git[sha].peel(pygit2.Commit) for sha in commits]
    conversation, transcript_range, linked = linked_turn(transcripts, agent_id, found)
    window = turn_messages(transcripts, agent_id, conversation, transcript_range)
    if not conversation or not window:
        return "waiting"
    pr = client.get_pull_request(number)
    if pr.state != "open" or pr.merged or not pr.head_ref.removeprefix("refs/heads/").startswith(EDIT_BRANCH_PREFIX):
        return "left"
    named = render.with_turn(pr.body or "", HARNESS_UNKNOWN_START, linked, conversation, window)
    if named is None:
        return "left"
    client.edit_pull_request_body(number, named)
    return "named"


def turn_known(repo: MemoryRepo, commits: Sequence[str], transcripts: Any, agent_id: str) -> bool:
    """Whether the pull request of harness `commits` would name the conversation behind them
    now: a commit names it itself, or the turn it was made in is imported (`linked_turn`)."""
    found = [repo.git[sha].peel(pygit2.Commit) for sha in commits]
    if any(CONVERSATION_ID in trailer_map(commit.message) for commit in found):
        return True
    return bool(linked_turn(transcripts, agent_id, found)[0])


def linked_turn(transcripts: Any, agent_id: str, commits: Sequence[pygit2.Commit]) -> tuple[str, str | None, str]:
    """(conversation, transcript range, the sentence the body says) for harness commits that name
    no conversation: the imported turn each was made in (bot/agent/harness_turn.py), when they
    all name one conversation; else ("", None, why it cannot be known)."""
    from datetime import UTC, datetime

    from bot.agent.harness_turn import Linked, Unknown, link

    if transcripts is None:
        return "", None, HARNESS_UNKNOWN.format(why="no transcript store was at hand")
    try:
        rows = {c: transcripts.read(agent_id, c) for c in transcripts.conversations(agent_id)}
    except MemrepoError as exc:
        log.info("no transcript to link for %s: %s", agent_id, exc)
        rows = {}
    found = [link(datetime.fromtimestamp(c.commit_time, UTC), rows, agent_id) for c in commits]
    unknown = next((one for one in found if isinstance(one, Unknown)), None)
    if unknown is not None:
        return "", None, HARNESS_UNKNOWN.format(why=unknown.why)
    linked = [one for one in found if isinstance(one, Linked)]
    if len({one.conversation_id for one in linked}) > 1:
        names = ", ".join(sorted({one.conversation_id for one in linked}))
        return "", None, HARNESS_UNKNOWN.format(why=f"the held commits were made in several conversations ({names})")
    first, last = linked[0], linked[-1]
    ended = next((m.captured_at for m in rows[last.conversation_id] if m.message_id == last.last), "")
    return first.conversation_id, f"{first.first}..{last.last}", HARNESS_LINKED.format(
        conversation=first.conversation_id, ended=ended, first=first.first, last=last.last)


def _publish(repo: MemoryRepo, client: ForgeClient, sha: str,
             ctx: render.EditContext) -> tuple[PullRequest, tuple[str, ...]]:
    """Push `sha` as the context's branch, open its pull request and label it. Nothing is left
    half-made: a branch whose pull request cannot be opened is deleted, and a pull request that
    cannot be labelled is withdrawn (an unlabelled one would escape the integrator's routing)."""
    branch = ctx.branch
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
        labels = client.add_labels(pr.number, ctx.route.labels)
    except ForgeError as exc:
        _withdraw(repo, client, pr.number, branch, exc)
        raise MemrepoError(AGENT_EDIT_UNLABELLED.format(number=pr.number, problem=exc)) from None
    return pr, tuple(labels)


def _commit(repo: MemoryRepo, base: str, tip: str, message: str, who: identity.Identity) -> str:
    """One commit on `base` with the tree the call produced at `tip`, by the agent."""
    tree = repo.git[tip].peel(pygit2.Commit).tree
    signature = pygit2.Signature(who.name, who.email, int(time.time()), 0)
    parent = repo.git[base].peel(pygit2.Commit)
    return str(repo.git.create_commit(None, signature, signature, message, tree.id, [parent.id]))


def _withdraw(repo: MemoryRepo, client: ForgeClient, number: int, branch: str, problem: object) -> None:
    """Close an unlabelled pull request, saying why on it, and delete its branch (best effort:
    the error that led here is the one reported)."""
    with contextlib.suppress(ForgeError):
        client.comment(number, AGENT_EDIT_WITHDRAWN_COMMENT.format(problem=problem))
    with contextlib.suppress(ForgeError):
        client.close_pull_request(number)
    delete_branch(repo, branch)

"""A dream run, the imperative shell: git, the transcript store, the strategy, the forge.

    fetch origin ─> base = origin's main ─> cursor at base ─> transcript after the cursor
      ─> any open dream of this conversation on the forge? (then remember, stop)
      ─> worktree at base (detached) ─> strategy proposes ─> memory tool applies each call
         (dreamer identity, validated like an agent's call) ─> worktree removed, always
      ─> ONE commit on base: the net change + the cursor file, dreamer identity, trailers
         (one `Source` per external source among the messages read)
      ─> branch memrepo/dream/<id> ─> push (never forced) ─> open the pull request, in one
         request: no labels (the integrator knows a dream by its branch and verified commits)

Decisions where the contract leaves room:
- The base is always origin's `main` as fetched now, never the clone's own `main`: the
  dream must rest on what reviewers see and where the cursor lives. The clone's working
  tree, index and `main` are never touched, so a dirty tree or unpushed agent commits do
  not stop a dream (they reach `main` by the agent's own push; the integrator reconciles).
- A run that finds nothing to change (say, no user statements for the verbatim strategy)
  opens nothing and leaves the cursor where it is: moving it would need a pull request of
  its own, noise for reviewers, and reading the same messages again next time is cheap.
- A dream whose messages include any from an `external:` source (a page, an e-mail, a
  fetched document) is untrusted as a whole, whatever the strategy took from them: a model
  reads every message of the range, and such content can carry instructions aimed at the
  agent. Its commit names each source in a `Source` trailer (what the integrator reads, so
  it waits for a person's approval from the moment the branch exists), and its body says a
  person must approve; the integrator labels it `memrepo:untrusted` and `memrepo:needs-review`
  itself, where a person looks.
- The pull request is opened with one request and no labels: GitHub labels only in a second
  content-generating request, and every dream of a team spends from one write budget. A dream
  is known by its branch and its verified provenance (bot/integrator/claims.py), never by a
  label anyone may set.
- Anything that fails before the pull request exists removes what the run made: the
  worktree, the local branch and the pushed branch; the cursor, which only moves inside
  the dream's own commit, stays. Retrying makes a new dream for the same range; before a
  pull request is opened the forge is asked whether one for the conversation is open, and
  if so it is reported instead of opening another.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from bot import agent_credential, identity
from bot.config import own_tool_sources
from bot.contracts import dream_branch, new_dream_id
from bot.dream import shared, texts, triggers
from bot.dream.cursor import Cursor, cursor_path, parse_cursor, render_cursor
from bot.dream.pulls import OpenDream, find_open_dream, pull_of_branch
from bot.dream.render import commit_message, external_sources, pr_body, title
from bot.dream.strategies import DreamInput, Proposal, ProposedCall, Strategy, get_strategy
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.errors import ForgeError
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest, PullRequest
from bot.memfs import MemoryRepo, MemoryTool, ToolResult, checks, configured_agent_id, shared_projection, validate
from bot.memfs.sync import BRANCH, REMOTE, delete_branch, remote_url
from bot.pullrequest.branch import fetch_base, push_branch, worktree
from bot.pullrequest.provenance import Change, Provenance, TranscriptRange
from bot.pullrequest.target import clone_target, forge_target, make_client
from bot.texts import Text
from bot.transcript import MessageNotFoundError, TranscriptStore
from bot.transcript import texts as transcript_texts
from bot.transcript.model import Message

DREAM_NO_REMOTE = (
    "the memory repository has no remote, so a dream has nowhere to open its pull request; "
    "connect one with `memrepo repository set URL`"
)
DREAM_BAD_TRIGGER = "dream trigger {trigger!r} is not one of step-count, compaction, manual"
DREAM_WHICH_CONVERSATION = ("agent {agent} has several conversations; name one with --conversation, or dream "
                            "each that has something new with --all: {known}")
DREAM_CURSOR_MISSING = (
    "the dream cursor {path} at {base} says conversation {conversation} of agent {agent} was consumed through "
    "message {message}, but the transcript has no such message; nothing was done (fix or remove the cursor in a "
    "reviewed commit, or restore the transcript)"
)
DREAM_NOTHING_NEW = "nothing to dream for agent {agent}, conversation {conversation}: no messages after {cursor}"
DREAM_NOTHING_TO_CHANGE = Text(
    "the {strategy} dream found nothing to change in {count:|message|messages} of conversation {conversation} "
    "({summary}); no pull request was opened and the cursor stays where it was"
)
DREAM_ALREADY_OPEN = (
    "dream {dream} for conversation {conversation} is still open as pull request #{number} ({url}, "
    "messages {range}); no other dream is opened until it is merged or closed."
)
DREAM_DUPLICATE = (
    "pull request #{number} ({url}, dream {dream}) already covers the same messages {range} of conversation "
    "{conversation}; not opening another."
)
DREAM_OPENED = Text(
    "dream {dream} opened pull request #{number} ({url}): {changes:|change|changes} from "
    "{count:|message|messages} {range}"
)
DREAM_SHARED_OPENED = " Team knowledge for shared memory {name}: pull request #{number} ({url}) on its repository."
DREAM_SHARED_READ_ONLY = ("the dream addresses shared/{name}/, which is not attached to this memory or is attached "
                          "read-only; propose it on the shared memory's repository itself")
DREAM_SHARED_NOT_PROJECTED = ("the dream addresses shared/{name}/, which has no projection here yet: run memrepo "
                              "shared sync --repo {memory}")
DREAM_SHARED_CALL_REFUSED = "the memory tool refused call {number} of {total} ({command}) on shared/{name}/: {problem}"
DREAM_FAILED = "dream {dream} failed, nothing was opened and the cursor is unchanged: {problem}"
DREAM_BRANCH_LEFT = "{error} (and the branch {branch} could not be deleted from origin: {problem})"
DREAM_OPENED_UNTRUSTED = (
    "; it read content from outside the conversation ({sources}), so a person must approve it "
    "(the integrator labels it memrepo:untrusted)"
)


@dataclass(frozen=True)
class DreamResult:
    """What a run did: `status` is one of triggers.OPENED, ALREADY_OPEN or NOTHING; `message`
    is one line for people."""

    status: str
    message: str
    dream_id: str | None = None
    pr: int | None = None
    url: str | None = None
    provenance: Provenance | None = None
    base_commit: str | None = None
    sources: tuple[str, ...] = ()  # external sources among the messages read: a person must approve


# ------------------------------------------------------------------------------- git shell
def _delete_local_branch(repo: MemoryRepo, branch: str) -> None:
    """The dream's branch lives on the remote; the clone keeps no ref per dream."""
    for ref in (f"refs/heads/{branch}", f"refs/remotes/{REMOTE}/{branch}"):
        with contextlib.suppress(KeyError, pygit2.GitError):
            repo.git.references.delete(ref)


# ------------------------------------------------------------------------------ reading
def read_cursor(repo: MemoryRepo, base: str, agent_id: str, conversation_id: str) -> Cursor | None:
    path = cursor_path(agent_id, conversation_id)
    data = repo.read(path, base)
    return None if data is None else parse_cursor(data, f"{path} at {base[:12]}")


def text_files(repo: MemoryRepo, rev: str) -> dict[str, str]:
    """Every file at `rev` that is text (binary files are not memory)."""
    out = {}
    for path, data in repo.files(rev).items():
        text, _ = validate.decode(data)
        if text is not None:
            out[path] = text
    return out


def _already_open(open_dream: OpenDream, window_range: TranscriptRange) -> DreamResult:
    p, pr = open_dream.provenance, open_dream.pr
    same = (p.transcript.first_message_id, p.transcript.last_message_id) == \
        (window_range.first_message_id, window_range.last_message_id)
    template = DREAM_DUPLICATE if same else DREAM_ALREADY_OPEN
    text = template.format(number=pr.number, url=pr.url, dream=p.dream_id, conversation=p.conversation_id,
                           range=p.transcript.text)
    return DreamResult(triggers.ALREADY_OPEN, text, p.dream_id, pr.number, pr.url, p, p.base_commit)


# ------------------------------------------------------------------------------ applying
def apply_calls(worktree_path: Path, proposal: Proposal, dream_id: str) -> list[tuple[ProposedCall, ToolResult]]:
    """Each call through the memory tool in the worktree, as the dreamer; the first refusal
    fails the dream (the worktree is thrown away, so nothing of it survives)."""
    tool = MemoryTool(worktree_path, dream_id, "memrepo dreamer", push=False)
    tool.identity = identity.dreamer(dream_id)
    done = []
    for number, proposed in enumerate(proposal.calls, 1):
        result = tool.call(proposed.call)
        if not result.ok:
            raise MemrepoError("the memory tool refused call {number} of {total} ({command}): {problem}".format(
                number=number, total=len(proposal.calls), command=result.command,
                problem=" ".join(result.message.split())[:400]))
        done.append((proposed, result))
    return done


def _net_changes(repo: MemoryRepo, base: str, tip: str) -> dict[str, bytes | None]:
    before, after = repo.paths(base), repo.paths(tip)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    return {p: repo.read(p, tip) for p in changed}


def _provenance_changes(applied: Sequence[tuple[ProposedCall, ToolResult]], net: Mapping[str, object]
                        ) -> tuple[Change, ...]:
    changes = []
    for proposed, result in applied:
        for path in result.paths:
            if path in net:
                changes.append(Change(path, proposed.summary, proposed.message_ids))
    return tuple(changes)


# ----------------------------------------------------------------------------------- run
def run_dream(
    repo: MemoryRepo | str | os.PathLike[str],
    agent_id: str | None = None,
    conversation_id: str | None = None,
    *,
    trigger: str = "manual",
    strategy: str | Strategy | None = None,
    home: str | os.PathLike[str] | None = None,
    store: TranscriptStore | None = None,
    client: ForgeClient | None = None,
    env: Mapping[str, str] | None = None,
    retry: RetryPolicy | None = None,
    now: datetime | None = None,
) -> DreamResult:
    """One dream for one conversation. Raises MemrepoError (one line) when it cannot run or
    fails; every failure before the pull request exists leaves nothing behind."""
    repo = repo if isinstance(repo, MemoryRepo) else MemoryRepo.open(repo)
    env = os.environ if env is None else env
    agent_id = agent_id or configured_agent_id(repo)
    if not agent_id:
        raise MemrepoError(texts.DREAM_NO_AGENT)
    if trigger not in ("step-count", "compaction", "manual"):
        raise MemrepoError(DREAM_BAD_TRIGGER.format(trigger=trigger))
    origin = remote_url(repo)
    if not origin:
        raise MemrepoError(DREAM_NO_REMOTE)
    own_client = client is None
    client = client or make_client(forge_target(origin, env, agent_credential.read(repo.root)), retry, shared=env)
    try:
        return _run(repo, agent_id, conversation_id, trigger, strategy, home, store, client, now)
    finally:
        if own_client:
            client.close()


def _run(repo: MemoryRepo, agent_id: str, conversation_id: str | None, trigger: str, strategy: str | Strategy | None,
         home: str | os.PathLike[str] | None, store: TranscriptStore | None, client: ForgeClient,
         now: datetime | None) -> DreamResult:
    own_store = store is None
    store = store or TranscriptStore(home)
    try:
        conversation_id = conversation_id or only_conversation(store, agent_id)
        known = store.conversations(agent_id)  # an unknown agent: the store's error, listing the agents
        if conversation_id not in known:
            raise MemrepoError(transcript_texts.TRANSCRIPT_UNKNOWN_CONVERSATION.format(
                agent=agent_id, conversation=conversation_id, known=", ".join(known)))
        base = fetch_base(repo)
        cursor = read_cursor(repo, base, agent_id, conversation_id)
        after = cursor.through_message_id if cursor else None
        try:
            window = store.read(agent_id, conversation_id, after=after)
        except MessageNotFoundError:
            raise MemrepoError(DREAM_CURSOR_MISSING.format(
                path=cursor_path(agent_id, conversation_id), base=base[:12], message=after,
                agent=agent_id, conversation=conversation_id)) from None
    finally:
        if own_store:
            store.close()
    if not window:
        text = DREAM_NOTHING_NEW.format(agent=agent_id, conversation=conversation_id,
                                              cursor=after or "the start")
        return DreamResult(triggers.NOTHING, text, base_commit=base)
    window_range = TranscriptRange.of(window)
    open_dream = find_open_dream(client, agent_id, conversation_id)
    if open_dream is not None:
        return _already_open(open_dream, window_range)
    policy = repo.policy(base)
    chosen = strategy if strategy is not None and not isinstance(strategy, str) else \
        get_strategy(strategy or policy.dream.strategy)
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    dream_id = new_dream_id(moment)
    dream = DreamInput(agent_id, conversation_id, tuple(window), text_files(repo, base), policy, base,
                       shared.writable(repo, base))
    try:
        return _dream(repo, client, chosen, dream, dream_id, trigger, moment)
    except MemrepoError as exc:
        raise MemrepoError(DREAM_FAILED.format(dream=dream_id, problem=exc), cause=exc) from None


def _dream(repo: MemoryRepo, client: ForgeClient, chosen: Strategy, dream: DreamInput, dream_id: str, trigger: str,
           moment: datetime) -> DreamResult:
    """Propose and apply in a worktree, squash with the cursor, push, open: the part of a run
    that leaves nothing behind when it fails."""
    base, window = dream.base_commit, dream.messages
    with worktree(repo, base) as path:
        proposal = chosen.propose(dream)
        attached = {a.name: a for a in shared_projection.attachments(repo, base)}
        proposal, team = shared.split(proposal, attached)  # each change to the memory it names
        applied = apply_calls(path, proposal, dream_id)
        tip = MemoryRepo.open(path).head_sha() or base
    net = _net_changes(repo, base, tip)
    if not net and not team:
        text = DREAM_NOTHING_TO_CHANGE.format(count=len(window), conversation=dream.conversation_id,
                                                    strategy=chosen.name, summary=proposal.summary)
        return DreamResult(triggers.NOTHING, text, base_commit=base)
    window_range = TranscriptRange.of(window)
    provenance = Provenance(dream_id, dream.agent_id, dream.conversation_id, base, trigger, chosen.name,
                            proposal.model, window_range, _provenance_changes(applied, net))
    cursor_file = cursor_path(dream.agent_id, dream.conversation_id)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    new_cursor = Cursor(window[-1].message_id, window[-1].captured_at, dream_id, stamp)
    changes: dict[str, bytes | None] = {**net, cursor_file: render_cursor(new_cursor)}
    problems = checks.check(repo, {p: (d, repo.read(p, base)) for p, d in changes.items()}, base)
    if problems:
        raise MemrepoError("the dream's change is not valid: {problems}".format(
            problems="; ".join(f"{p.path}: {p.message}" for p in problems)[:500]))
    sources = external_sources(window, (*repo.policy(base).trusted_sources, *own_tool_sources()))
    opened = ""  # the shared memories' pull requests first: the cursor moves only once they exist
    for name, calls in team.items():
        made = _propose_shared(repo, attached[name], calls, dream_id=dream_id, agent_id=dream.agent_id,
                              conversation_id=dream.conversation_id, trigger=trigger, strategy=chosen.name,
                              model=proposal.model, summary=proposal.summary, window=window,
                              window_range=window_range, cursor_file=cursor_file, sources=sources, moment=moment,
                              env=os.environ)
        if isinstance(made, DreamResult):
            opened += f" Shared memory {name}: {made.message}"
        elif made is not None:
            opened += DREAM_SHARED_OPENED.format(name=name, number=made.number, url=made.url)
    sha = _squash(repo, base, changes, commit_message(provenance, proposal.summary, sources), dream_id, moment)
    branch = dream_branch(dream_id)
    repo.git.references.create(f"refs/heads/{branch}", sha)
    try:
        pr = _publish(repo, client, branch, provenance, proposal.summary, window, cursor_file, window_range,
                      sources)
    finally:
        _delete_local_branch(repo, branch)
    if isinstance(pr, DreamResult):
        return pr
    text = DREAM_OPENED.format(dream=dream_id, number=pr.number, url=pr.url,
                                     changes=len(provenance.changes), count=window_range.count,
                                     range=window_range.text)
    if sources:
        text += DREAM_OPENED_UNTRUSTED.format(sources=", ".join(sources))
    text += opened
    return DreamResult(triggers.OPENED, text, dream_id, pr.number, pr.url, provenance, base, sources)


def _squash(repo: MemoryRepo, base: str, changes: Mapping[str, bytes | None], message: str, dream_id: str,
            moment: datetime) -> str:
    """One commit on `base` with every change, by the dreamer."""
    who = identity.dreamer(dream_id)
    signature = pygit2.Signature(who.name, who.email, int(moment.timestamp()), 0)
    base_commit = repo.git[base].peel(pygit2.Commit)
    tree = repo.build_tree(base_commit.tree, changes)
    return str(repo.git.create_commit(None, signature, signature, message, tree, [base_commit.id]))


def _publish(repo: MemoryRepo, client: ForgeClient, branch: str, provenance: Provenance, summary: str,
             window: Sequence[Message], cursor_file: str, window_range: TranscriptRange,
             sources: tuple[str, ...] = ()) -> PullRequest | DreamResult:
    """Push the branch and open the pull request with one request (no labels); on any failure
    the pushed branch is deleted. The commit names the external sources, so the pull request
    waits for a person from the moment it exists."""
    push_branch(repo, branch)
    try:
        open_dream = find_open_dream(client, provenance.agent_id, provenance.conversation_id)
        if open_dream is not None:  # another run opened one meanwhile
            delete_branch(repo, branch)
            return _already_open(open_dream, window_range)
        new = NewPullRequest(head=branch, base=BRANCH, title=title(provenance),
                             body=pr_body(provenance, summary, window, cursor_file, sources))
        try:
            return client.open_pull_request(new)
        except ForgeError:
            existing = pull_of_branch(client, branch)
            if existing is None:
                raise
        return existing
    except BaseException as exc:
        problem = delete_branch(repo, branch)
        if problem is not None and isinstance(exc, MemrepoError):
            raise MemrepoError(DREAM_BRANCH_LEFT.format(error=exc, branch=branch, problem=problem)) \
                from None
        raise


def only_conversation(store: TranscriptStore, agent_id: str) -> str:
    """The agent's conversation when it has exactly one; otherwise a clear error."""
    known = store.conversations(agent_id)
    if len(known) == 1:
        return known[0]
    raise MemrepoError(DREAM_WHICH_CONVERSATION.format(agent=agent_id, known=", ".join(known)))


def _propose_shared(repo: MemoryRepo, attachment: shared_projection.Attachment, calls: Sequence[shared.SharedCall],
                    *, dream_id: str,
                    agent_id: str, conversation_id: str, trigger: str, strategy: str, model: str | None,
                    summary: str, window: Sequence[Message], window_range: TranscriptRange, cursor_file: str,
                    sources: tuple[str, ...], moment: datetime,
                    env: Mapping[str, str]) -> DreamResult | PullRequest | None:
    """Open the pull request of `calls` on the shared memory of `attachment` (attached at the
    dream's base): the forge's PullRequest, None when the calls change nothing there, or a
    DreamResult when a dream of this conversation is open there already. MemrepoError (one
    line) when it cannot."""
    name = attachment.name
    if attachment.read_only:
        raise MemrepoError(DREAM_SHARED_READ_ONLY.format(name=name))
    projection = shared_projection.open_projection(repo, attachment)
    if projection is None:
        raise MemrepoError(DREAM_SHARED_NOT_PROJECTED.format(name=name, memory=repo.root))
    shared_base = fetch_base(projection)
    with worktree(projection, shared_base) as path:
        tool = MemoryTool(path, dream_id, "memrepo dreamer", push=False)
        tool.identity = identity.dreamer(dream_id)
        for number, one in enumerate(calls, 1):
            result = tool.apply(one.call)
            if not result.ok:
                raise MemrepoError(DREAM_SHARED_CALL_REFUSED.format(
                    name=name, number=number, total=len(calls), command=result.command,
                    problem=" ".join(result.message.split())[:400]))
        tip = MemoryRepo.open(path).head_sha() or shared_base
    net = _net_changes(projection, shared_base, tip)
    if not net:
        return None
    changes = tuple(Change(path, one.proposed.summary, one.proposed.message_ids)
                    for one in calls for path in shared.paths_of(one.call) if path in net)
    own = remote_url(repo)
    provenance = Provenance(dream_id, agent_id, conversation_id, shared_base, trigger, strategy, model, window_range,
                            changes, memory_repository=None if own is None else
                            shared_projection.without_credentials(own))
    problems = checks.check(projection, {p: (d, projection.read(p, shared_base)) for p, d in net.items()},
                            shared_base)
    if problems:
        raise MemrepoError("the dream's change to shared memory {name} is not valid: {problems}".format(
            name=name, problems="; ".join(f"{p.path}: {p.message}" for p in problems)[:500]))
    sha = _squash(projection, shared_base, net, commit_message(provenance, summary, sources), dream_id,
                         moment)
    branch = dream_branch(dream_id)
    projection.git.references.create(f"refs/heads/{branch}", sha)
    client = make_client(clone_target(projection, env), shared=env)  # as the memory's identity (its owner's)
    try:
        return _publish(projection, client, branch, provenance, summary, window, cursor_file, window_range,
                               sources)
    finally:
        client.close()
        _delete_local_branch(projection, branch)

"""A dream's team knowledge: the calls of a dream's proposal whose paths are
`shared/<NAME>/<path>` (NAME attached to the agent's memory at the dream's base) go to that
shared memory, never to the agent's own. The dreamer decides per change which memory it
belongs to, by the path of each call; the verbatim strategy records a conversation in the
agent's own memory only, while the llm strategy (and any strategy of a team's own) may address
an attachment.

Each shared memory a dream addresses gets one pull request on its repository: the calls applied
by the dreamer in a worktree of its projection at its forge's main, validated under that
memory's policy, squashed, pushed and labelled as a dream, whose provenance names the dream,
the agent, the agent's own memory repository, the conversation and the messages each change
rests on. The shared memory's integrator decides under its own merge mode. A read-only
attachment, or one not projected here, fails the dream in one line.

`split` is the pure decision; `propose` is the shell (git, the forge)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from bot import identity
from bot.dream import texts
from bot.dream.strategies import Proposal, ProposedCall
from bot.errors import MemrepoError
from bot.memfs import Call, MemoryRepo, MemoryTool, checks, parse_call, shared_projection, shared_record
from bot.memfs.sync import remote_url
from bot.pullrequest.branch import fetch_base, worktree
from bot.pullrequest.provenance import Change, Provenance, TranscriptRange
from bot.transcript.model import Message


@dataclass(frozen=True)
class SharedCall:
    """One proposed call of a dream, as the shared memory it addresses sees it."""

    proposed: ProposedCall
    call: Call  # its paths inside the shared memory


def split(proposal: Proposal, names: Collection[str]) -> tuple[Proposal, dict[str, tuple[SharedCall, ...]]]:
    """(the proposal of the agent's own memory, the calls of each shared memory addressed), in
    the proposal's order. A call that does not parse stays with the agent's own memory, where
    the memory tool refuses it as before; a call whose paths are in two memories is refused."""
    own: list[ProposedCall] = []
    shared: dict[str, list[SharedCall]] = {}
    for proposed in proposal.calls:
        try:
            call = parse_call(proposed.call)
        except MemrepoError:
            own.append(proposed)
            continue
        found = shared_record.split_args(call.args, names)
        if found is None:
            own.append(proposed)
        else:
            shared.setdefault(found[0], []).append(SharedCall(proposed, replace(call, args=found[1])))
    return replace(proposal, calls=tuple(own)), {name: tuple(calls) for name, calls in shared.items()}


def attached(repo: MemoryRepo, base: str) -> tuple[str, ...]:
    """The names of the shared memories attached at `base`: a call naming one of them goes to
    it (and is refused there when it is read-only), never into the agent's own memory."""
    return tuple(a.name for a in shared_projection.attachments(repo, base))


def writable(repo: MemoryRepo, base: str) -> tuple[str, ...]:
    """The names of the shared memories attached at `base` that a dream may propose to."""
    return tuple(a.name for a in shared_projection.attachments(repo, base) if not a.read_only)


def propose(repo: MemoryRepo, base: str, name: str, calls: Sequence[SharedCall], *, dream_id: str, agent_id: str,
            conversation_id: str, trigger: str, strategy: str, model: str | None, summary: str,
            window: Sequence[Message], window_range: TranscriptRange, cursor_file: str, sources: tuple[str, ...],
            moment: datetime, env: Mapping[str, str]) -> Any:
    """Open the pull request of `calls` on shared memory `name` (attached at `base`): the
    forge's PullRequest, None when the calls change nothing there, or a DreamResult when a dream
    of this conversation is open there already. MemrepoError (one line) when it cannot."""
    from bot.dream import runner  # the one way a dream is squashed and published
    from bot.pullrequest.target import forge_target, make_client

    found = {a.name: a for a in shared_projection.attachments(repo, base)}
    attachment = found.get(name)
    if attachment is None or attachment.read_only:
        raise MemrepoError(texts.DREAM_SHARED_READ_ONLY.format(name=name))
    projection = shared_projection.open_projection(repo, attachment)
    if projection is None:
        raise MemrepoError(texts.DREAM_SHARED_NOT_PROJECTED.format(name=name, memory=repo.root))
    shared_base = fetch_base(projection)
    with worktree(projection, shared_base) as path:
        tool = MemoryTool(path, dream_id, "memrepo dreamer", push=False)
        tool.identity = identity.dreamer(dream_id)
        for number, one in enumerate(calls, 1):
            result = tool.apply(one.call)
            if not result.ok:
                raise MemrepoError(texts.DREAM_SHARED_CALL_REFUSED.format(
                    name=name, number=number, total=len(calls), command=result.command,
                    problem=" ".join(result.message.split())[:400]))
        tip = MemoryRepo.open(path).head_sha() or shared_base
    net = runner._net_changes(projection, shared_base, tip)
    if not net:
        return None
    changes = tuple(Change(path, one.proposed.summary, one.proposed.message_ids)
                    for one in calls for path in _paths(one.call) if path in net)
    own = remote_url(repo)
    provenance = Provenance(dream_id, agent_id, conversation_id, shared_base, trigger, strategy, model, window_range,
                            changes, memory_repository=None if own is None else
                            shared_projection.without_credentials(own))
    problems = checks.check(projection, {p: (d, projection.read(p, shared_base)) for p, d in net.items()},
                            shared_base)
    if problems:
        raise MemrepoError(texts.DREAM_SHARED_INVALID.format(
            name=name, problems="; ".join(f"{p.path}: {p.message}" for p in problems)[:500]))
    sha = runner._squash(projection, shared_base, net, runner.commit_message(provenance, summary, sources), dream_id,
                         moment)
    branch = runner.dream_branch(dream_id)
    projection.git.references.create(f"refs/heads/{branch}", sha)
    client = make_client(forge_target(remote_url(projection), env))
    try:
        return runner._publish(projection, client, branch, provenance, summary, window, cursor_file, window_range,
                               sources)
    finally:
        client.close()
        runner._delete_local_branch(projection, branch)


def _paths(call: Call) -> tuple[str, ...]:
    return tuple(value for key in shared_record.PATH_ARGS
                 if isinstance(value := call.args.get(key), str) and value)

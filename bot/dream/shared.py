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

from collections.abc import Collection
from dataclasses import dataclass, replace

from bot.dream.strategies import Proposal, ProposedCall
from bot.errors import MemrepoError
from bot.memfs import Call, MemoryRepo, parse_call, shared_projection, shared_record


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


def writable(repo: MemoryRepo, base: str) -> tuple[str, ...]:
    """The names of the shared memories attached at `base` that a dream may propose to."""
    return tuple(a.name for a in shared_projection.attachments(repo, base) if not a.read_only)


def paths_of(call: Call) -> tuple[str, ...]:
    return tuple(value for key in shared_record.PATH_ARGS
                 if isinstance(value := call.args.get(key), str) and value)

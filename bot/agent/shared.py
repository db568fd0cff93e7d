"""The memory tool on shared memory: a call whose paths are `shared/<NAME>/<path>`, NAME an
attachment of the agent's memory (bot/memfs/shared/), is made on that memory's projection.

A read is answered from the projection's HEAD. A write never touches the agent's own memory,
nor the projection's `main`: it is planned against the projection under the shared memory's
own policy (its protected paths, limits and rules), and always becomes an agent-edit pull
request on the shared repository, through the one proposal path every agent edit takes
(bot/agent/proposal.py), whose provenance names the agent, its own memory repository, the
conversation and the turn's messages. The shared repository's integrator then decides under
that repository's merge mode and trusted sources. A read-only attachment refuses writes.

`split_call` is the pure decision: which memory a call addresses, and the call as that memory
sees it."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from bot.agent.routing import Route
from bot.contracts import LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from bot.errors import MemrepoError
from bot.memfs import Call, shared_record


def split_call(call: Call, names: Collection[str]) -> tuple[str, Call] | None:
    """(name, the call with its paths inside that shared memory) when `call` addresses one
    attached shared memory; None when it addresses the agent's own memory; MemrepoError when
    its paths are in two memories (bot/memfs/shared/record.py's `split_args`)."""
    found = shared_record.split_args(call.args, names)
    return None if found is None else (found[0], replace(call, args=found[1]))


def events_url_for(events_url: str, repository: str) -> str:
    """The receiver's event stream of `repository` (owner/name), beside the memory's own
    (`.../v1/repos/<owner>/<name>/events`): one receiver serves every repository it integrates."""
    base, marker, _ = events_url.rstrip("/").rpartition("/v1/repos/")
    if not marker:
        raise MemrepoError(f"{events_url} is not an event stream URL (.../v1/repos/OWNER/NAME/events)")
    return f"{base}/v1/repos/{repository}/events"


def shared_route(route: Route, name: str) -> Route:
    """Where an edit of shared memory `name` goes: always a pull request, for every reason the
    shared memory's policy gives and for being shared."""
    labels = (LABEL_AGENT_EDIT, LABEL_UNTRUSTED) if route.sources else (LABEL_AGENT_EDIT,)
    return replace(route, direct=False, labels=labels, shared=name)

"""The forge side of a dream: a client for the memory's forge, and the dream pull requests
already open there (one open dream per conversation: a second run reports the first instead
of opening another)."""

from __future__ import annotations

from dataclasses import dataclass

from bot import messages
from bot.contracts import DREAM_BRANCH_PREFIX, LABEL_DREAM
from bot.dream.forge_target import ForgeTarget
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient, PullRequest, RetryPolicy, TokenCredentials
from bot.forge.errors import ForgeError
from bot.pullrequest.provenance import Provenance, ProvenanceError, parse_provenance

DREAM_RETRY = RetryPolicy(max_total_seconds=30.0, max_attempts=5, backoff_base=0.5, backoff_cap=5.0)

@dataclass(frozen=True)
class OpenDream:
    pr: PullRequest
    provenance: Provenance


def make_client(target: ForgeTarget, retry: RetryPolicy | None = None) -> ForgeClient:
    if not target.token:
        raise MemrepoError(messages.DREAM_NO_TOKEN.format(repository=target.repository))
    return ForgeClient(target.repository, TokenCredentials(target.token), base_url=target.api_url,
                       policy=retry or DREAM_RETRY, timeout=30, min_write_interval=0.0 if target.loopback else 1.0)


def find_open_dream(client: ForgeClient, agent_id: str, conversation_id: str) -> OpenDream | None:
    """The open dream pull request (labelled `memrepo:dream`, or on a dream branch in case
    labelling failed) of this agent and conversation, if any. Bodies without a valid
    provenance block are not dreams memrepo can account for: skipped."""
    for pr in client.list_open_pull_requests():
        if LABEL_DREAM not in pr.labels and not pr.head_ref.startswith(DREAM_BRANCH_PREFIX):
            continue
        try:
            found = parse_provenance(pr.body)
        except ProvenanceError:
            continue
        if found is not None and found.agent_id == agent_id and found.conversation_id == conversation_id:
            return OpenDream(pr, found)
    return None


def pull_of_branch(client: ForgeClient, branch: str) -> PullRequest | None:
    try:
        return next((pr for pr in client.list_open_pull_requests() if pr.head_ref == branch), None)
    except ForgeError:
        return None

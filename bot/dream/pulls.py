"""The forge side of a dream: the dream pull requests already open on the memory's forge (one
open dream per conversation: a second run reports the first instead of opening another). The
client itself is bot.pullrequest.target's, as every writer's."""

from __future__ import annotations

from dataclasses import dataclass

from bot.contracts import DREAM_BRANCH_PREFIX, LABEL_DREAM
from bot.forge.client import ForgeClient
from bot.forge.errors import ForgeError
from bot.forge.shapes import PullRequest
from bot.pullrequest.provenance import Provenance, ProvenanceError, parse_provenance


@dataclass(frozen=True)
class OpenDream:
    pr: PullRequest
    provenance: Provenance


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

"""Dream strategies: given memory at the base commit and the transcript since the cursor,
propose memory tool calls, each with the messages it rests on. A strategy only proposes;
the runner applies every call through the memory tool (validated exactly like an agent's)
and refuses the whole dream if one call is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot import texts as shared_texts
from bot.config import DREAM_STRATEGIES, Policy
from bot.errors import MemrepoError
from bot.transcript.model import Message

DREAM_UNKNOWN_STRATEGY = "unknown dream strategy {name!r}; known strategies: {known}"


@dataclass(frozen=True)
class DreamInput:
    agent_id: str
    conversation_id: str
    messages: tuple[Message, ...]  # the transcript after the cursor, in log order (never empty)
    files: Mapping[str, str]  # memory files at the base commit that are text: path -> text
    policy: Policy
    base_commit: str
    shared: tuple[str, ...] = ()  # the shared memories a change may address as shared/<NAME>/<path>


@dataclass(frozen=True)
class ProposedCall:
    call: dict[str, Any]  # one memory tool call
    summary: str  # why, for the pull request and the provenance
    message_ids: tuple[str, ...]  # the transcript messages it rests on


@dataclass(frozen=True)
class Proposal:
    calls: tuple[ProposedCall, ...]
    summary: str  # what changed and why, for people
    model: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)


class Strategy(Protocol):
    name: str

    def propose(self, dream: DreamInput) -> Proposal: ...


def get_strategy(name: str) -> Strategy:
    """The strategy called `name` (verbatim, llm or anthropic), configured from the environment."""
    if name == "verbatim":
        from bot.dream.strategies.verbatim import VerbatimStrategy

        return VerbatimStrategy()
    if name == "llm":
        from bot.dream.strategies.llm import LlmStrategy

        return LlmStrategy.from_env()
    if name == "anthropic":
        try:
            from bot.dream.strategies.anthropic import AnthropicStrategy
        except ImportError as exc:  # the SDK is an optional extra
            raise MemrepoError(shared_texts.ANTHROPIC_SDK_MISSING.format(
                problem=f"no module named {exc.name!r}")) from None
        return AnthropicStrategy.from_env()
    raise MemrepoError(DREAM_UNKNOWN_STRATEGY.format(name=name, known=", ".join(DREAM_STRATEGIES)))

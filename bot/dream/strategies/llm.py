"""The llm strategy: an OpenAI-compatible chat endpoint proposes memory tool calls.

Configuration comes from the environment: MEMREPO_LLM_URL (e.g. http://host/v1; the
`/chat/completions` path is added), MEMREPO_LLM_MODEL, the key from MEMREPO_LLM_API_KEY or
OPENAI_API_KEY (optional for local servers), MEMREPO_LLM_TIMEOUT seconds (default 120).

Protocol (chosen over function calling because every OpenAI-compatible server supports it):
one chat completion with `response_format: {"type": "json_object"}`; the system message
(templates/prompts/dream-llm-system.md.j2) describes the memory tool, the user message is
JSON with the repository's merge instructions, the memory files at the base commit and the
transcript since the cursor. The answer must be one JSON object

    {"summary": "what changes and why",
     "calls": [{"command": "str_replace", "path": "...", ..., "reason": "why",
                "message_ids": ["m_..."]}]}

where each call is a memory tool call plus the ids of the transcript messages it rests on.
The answer is checked whole before anything is applied: not JSON, a wrong shape, an unknown
command, a path outside the repository or under `.memrepo/`, `.github/` or `.git/`, a
message id not in the transcript shown: the dream fails and nothing is written. The runner
then applies each call through the memory tool, which validates it like an agent's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import requests

from bot import llm, settings
from bot.bounded_json import TooDeepError, loads_bounded
from bot.dream.strategies import DreamInput, Proposal, ProposedCall
from bot.errors import MemrepoError
from bot.llm import endpoint as endpoint  # the completions URL, as this module has always offered it
from bot.memfs import calls as tool_calls
from bot.memfs import layout, parse_call
from bot.templating import render
from bot.texts import noun

# The llm strategy (an OpenAI-compatible endpoint).
DREAM_LLM_NOT_CONFIGURED = (
    "the llm strategy needs MEMREPO_LLM_URL (an OpenAI-compatible endpoint such as http://host/v1) and "
    "MEMREPO_LLM_MODEL"
)
DREAM_LLM_BAD_TIMEOUT = "MEMREPO_LLM_TIMEOUT must be a positive number of seconds, found {value!r}"
DREAM_LLM_INVALID = "the LLM's answer is not valid memory tool calls: {problem}"
# What the LLM reads in its request, in place of a file or the end of a message too long to show.
DREAM_LLM_OMITTED = "{chars} characters not shown"
DREAM_LLM_CUT = " [... {more} more characters]"
# What is wrong with the LLM's answer (the {problem} of DREAM_LLM_INVALID).
DREAM_LLM_EMPTY = "the answer is empty"
DREAM_LLM_UNKNOWN_KEYS = "unknown {keys} {names} (expected summary and calls)"
DREAM_LLM_TOO_MANY_CALLS = "{count} calls, more than the {limit} one dream may make"
DREAM_LLM_CALL_NO_IDS = "{where}: message_ids must be a non-empty list of transcript message ids"
DREAM_LLM_CALL_UNKNOWN_ID = "{where}: message id {message_id!r} is not in the transcript since the cursor"
DREAM_LLM_CALL_NOT_EDIT = "{where}: {command} is not an edit; propose edits only"

NAME = "llm"
TIMEOUT_ENV = "MEMREPO_LLM_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
MAX_MEMORY_CHARS = 200_000
MAX_MESSAGE_CHARS = 8_000
MAX_CALLS = 50
ANSWER_KEYS = ("summary", "calls")
SKIPPED_PREFIXES = (".memrepo/", ".github/", ".git/")
SYSTEM_PROMPT = "prompts/dream-llm-system.md.j2"


# ------------------------------------------------------------------------- request (pure)
def memory_payload(files: Mapping[str, str], budget: int = MAX_MEMORY_CHARS) -> list[dict[str, Any]]:
    """Memory files for the prompt: core memory first (system/, or a v2 memory's MEMORY.md and
    root files), then the rest, until the budget is spent; files beyond it are listed by path only."""
    kind = layout.of(files)
    ordered = sorted((p for p in files if not p.startswith(SKIPPED_PREFIXES)),
                     key=lambda p: (not layout.is_core(p, kind), p))
    out: list[dict[str, Any]] = []
    left = budget
    for path in ordered:
        text = files[path]
        if len(text) <= left:
            out.append({"path": path, "content": text})
            left -= len(text)
        else:
            out.append({"path": path, "content": None, "omitted": DREAM_LLM_OMITTED.format(chars=len(text))})
    return out


def transcript_payload(dream: DreamInput) -> list[dict[str, Any]]:
    rows = []
    for m in dream.messages:
        text = m.text
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + DREAM_LLM_CUT.format(more=len(m.text) - MAX_MESSAGE_CHARS)
        rows.append({"message_id": m.message_id, "captured_at": m.captured_at, "kind": m.kind,
                     "source": m.source, "text": text})
    return rows


def build_request(dream: DreamInput, model: str) -> dict[str, Any]:
    """The chat completion request body."""
    data = {
        "agent_id": dream.agent_id,
        "conversation_id": dream.conversation_id,
        "base_commit": dream.base_commit,
        "merge_instructions": dream.policy.merge_instructions,
        "file_chars_limit": dream.policy.limits.file_chars,
        "memory": memory_payload(dream.files),
        "transcript": transcript_payload(dream),
    }
    if dream.shared:
        data["shared_memories"] = [{"name": name, "address": f"shared/{name}/"} for name in dream.shared]
    return {
        "model": model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": render(SYSTEM_PROMPT, shared=bool(dream.shared))},
            {"role": "user", "content": json.dumps(data, ensure_ascii=False)},
        ],
    }


# -------------------------------------------------------------------------- answer (pure)
def _invalid(problem: str) -> MemrepoError:
    return MemrepoError(DREAM_LLM_INVALID.format(problem=problem))


def parse_answer(content: object, dream: DreamInput, model: str | None) -> Proposal:
    """The proposal in the model's answer, checked whole; MemrepoError on the first problem."""
    if not isinstance(content, str) or not content.strip():
        raise _invalid(DREAM_LLM_EMPTY)
    try:
        data = loads_bounded(llm.unfenced(content).strip(), what="the answer")  # a ```json fence, even in JSON mode
    except TooDeepError as exc:
        raise _invalid(str(exc)) from None
    except ValueError as exc:
        raise _invalid(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _invalid(f"expected a JSON object with summary and calls, found {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in ANSWER_KEYS)
    if unknown:
        raise _invalid(DREAM_LLM_UNKNOWN_KEYS.format(keys=noun(len(unknown), "key"), names=", ".join(unknown)))
    summary, calls = data.get("summary"), data.get("calls")
    if not isinstance(summary, str) or not summary.strip():
        raise _invalid("summary must be non-empty text")
    if not isinstance(calls, list):
        raise _invalid(f"calls must be a list, found {type(calls).__name__}")
    if len(calls) > MAX_CALLS:
        raise _invalid(DREAM_LLM_TOO_MANY_CALLS.format(count=len(calls), limit=MAX_CALLS))
    known = {m.message_id for m in dream.messages}
    proposed = []
    for number, raw in enumerate(calls, 1):
        where = f"call {number}"
        if not isinstance(raw, dict):
            raise _invalid(f"{where} must be an object, found {type(raw).__name__}")
        call = dict(raw)
        ids = call.pop("message_ids", None)
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise _invalid(DREAM_LLM_CALL_NO_IDS.format(where=where))
        strangers = [i for i in ids if i not in known]
        if strangers:
            raise _invalid(DREAM_LLM_CALL_UNKNOWN_ID.format(where=where, message_id=strangers[0]))
        try:
            parsed = parse_call(call)
        except MemrepoError as exc:
            raise _invalid(f"{where}: {exc}") from None
        if parsed.command not in tool_calls.WRITE_COMMANDS:
            raise _invalid(DREAM_LLM_CALL_NOT_EDIT.format(where=where, command=parsed.command))
        if not parsed.reason:
            raise _invalid(f"{where}: reason (why the change is made) is missing")
        proposed.append(ProposedCall(call, parsed.reason, tuple(dict.fromkeys(ids))))
    return Proposal(tuple(proposed), summary.strip(), model)


# -------------------------------------------------------------------------------- shell
WORDING = llm.Wording(shape=DREAM_LLM_INVALID.format(problem="the endpoint's answer has no choices[0].message.content"))


class LlmStrategy:
    """Calls the endpoint once per dream; every failure is one MemrepoError line."""

    name = NAME

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 session: requests.Session | None = None) -> None:
        self.chat = llm.ChatClient(url, api_key, timeout=timeout, wording=WORDING, error=MemrepoError,
                                   session=session)
        self.url = self.chat.url
        self.model = model
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"LlmStrategy(url={self.url!r}, model={self.model!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LlmStrategy:
        found = settings.llm(env)  # MEMREPO_LLM_URL, MEMREPO_LLM_MODEL, the key: as the resolver reads them
        if found is None:
            raise MemrepoError(DREAM_LLM_NOT_CONFIGURED)
        url, model, key = found
        timeout = settings.positive_number(TIMEOUT_ENV, env, default=DEFAULT_TIMEOUT,
                                           error=DREAM_LLM_BAD_TIMEOUT)
        return cls(url, model, key, timeout)

    def propose(self, dream: DreamInput) -> Proposal:
        return parse_answer(self.complete(build_request(dream, self.model)), dream, self.model)

    def complete(self, body: dict[str, Any]) -> str:
        """The content of the first choice's message, as text (a server that answers with a
        JSON value rather than a string gets it serialised, so parse_answer sees it)."""
        content = self.chat.complete(body)
        return content if isinstance(content, str) else json.dumps(content)

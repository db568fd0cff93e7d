"""The anthropic strategy: Claude dreams with tools, run by the Anthropic SDK's tool runner.

The dreamer is a model at work, not a single answer: it has Claude's memory tool over memory
as it is at the dream's base commit (bot/anthropic_memory.py, the same adapter agents use), a
`search_transcript` tool over the messages since the cursor (BM25, as `memrepo search` ranks),
and the repository's merge instructions in its system prompt
(templates/prompts/dream-anthropic-system.md.j2). The transcript itself is in the first
message when it is short. A refused edit comes back as a tool error in memrepo's words, so
the model can fix it and try again, as an agent would.

Configuration comes from the environment, as the llm strategy's does: MEMREPO_ANTHROPIC_MODEL
(required), the key from MEMREPO_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY, the API's address from
MEMREPO_ANTHROPIC_BASE_URL or ANTHROPIC_BASE_URL (the SDK's default otherwise), and the bounds
MEMREPO_ANTHROPIC_MAX_TURNS (replies, default 20), MEMREPO_ANTHROPIC_MAX_TOKENS (input and
output tokens of all replies together, default 400,000) and MEMREPO_ANTHROPIC_TIMEOUT (seconds
per request, default 120). A dream that reaches a bound before the model says it is done, or
whose reply is cut short, fails whole: nothing is opened and the cursor stays.

How its edits reach the pull request, and why this way: the runner already applies a
strategy's proposal in the dream's worktree through the memory tool, as the dreamer, and fails
the dream on the first refusal (runner.apply_calls); that is where every edit is validated and
attributed. So this strategy returns a Proposal, like the others, and the runner is unchanged.
While the model works, its calls run against a scratch repository holding the same files as
the base commit (DreamInput.files), so each one is checked at once and the model hears of a
refusal in time to retry; only the calls memrepo accepted go into the proposal, in order, and
the runner replays them on the real base, where they are checked again. (The scratch copy
holds the text files only; an edit that would fare differently beside a binary file is
refused by the replay, which fails the dream cleanly.)

Which messages each edit rests on: the memory tool's commands have no field for it, so the
model says it in its reply, where it explains the edit ("... as the user said in m_01J..."),
and the ids it names (only ids of the messages since the cursor count) become the change's
`message_ids` in the provenance block; that text is also the change's summary. An edit that
names none is refused with a message saying so.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anthropic
import pygit2
from anthropic.lib.tools import beta_tool

from bot import identity, llm, settings
from bot.anthropic_memory import AnthropicMemoryTool, ToolError
from bot.dream.strategies import DreamInput, Proposal, ProposedCall
from bot.errors import MemrepoError
from bot.memfs import MemoryRepo, MemoryTool, ToolResult
from bot.templating import render
from bot.transcript import bm25
from bot.transcript.model import Message
from bot.transcript.tokenize import parse_query, tokenize

# The anthropic strategy (strategies/anthropic.py): its errors, and what the dreamer reads.
DREAM_ANTHROPIC_NOT_CONFIGURED = (
    "the anthropic strategy needs MEMREPO_ANTHROPIC_MODEL (a Claude model, such as claude-sonnet-5-5) and an "
    "API key in ANTHROPIC_API_KEY (or MEMREPO_ANTHROPIC_API_KEY)"
)
DREAM_ANTHROPIC_BAD_COUNT = "{name} must be a positive whole number, found {value!r}"
DREAM_ANTHROPIC_BAD_TIMEOUT = "MEMREPO_ANTHROPIC_TIMEOUT must be a positive number of seconds, found {value!r}"
DREAM_ANTHROPIC_TURNS = (
    "the dreamer ({model}) was still working after {turns} turns, its bound (MEMREPO_ANTHROPIC_MAX_TURNS); "
    "none of its edits is kept"
)
DREAM_ANTHROPIC_TOKENS = (
    "the dreamer ({model}) used {used:,} tokens, more than its bound of {limit:,} (MEMREPO_ANTHROPIC_MAX_TOKENS); "
    "none of its edits is kept"
)
DREAM_ANTHROPIC_STOPPED = (
    "the dreamer's reply ({model}) ended with stop reason {reason!r} before it had finished; none of its edits "
    "is kept"
)
DREAM_ANTHROPIC_TIMEOUT = "the Anthropic API did not answer within {seconds:g}s"
DREAM_ANTHROPIC_NEEDS_IDS = (
    "This edit was not made: before each edit, say in your reply's text why you make it and which transcript "
    "messages it rests on, by their ids ({example}); then call the memory tool again."
)
DREAM_ANTHROPIC_KEPT = (
    "It goes into the dream's pull request (edit {number}), which is reviewed before it reaches the agent's memory."
)
DREAM_ANTHROPIC_SEARCH_DESCRIPTION = (
    "Search the conversation's transcript since the last dream (BM25 over words and their stems, in English, "
    "Korean, Japanese and Chinese; \"quoted words\" match as a phrase). Returns the best messages, each with its "
    "id, when it was captured, its kind and source, and its text."
)
DREAM_ANTHROPIC_SEARCH_LIMIT = "how many messages at most (1 to {limit}, default {default})"
DREAM_ANTHROPIC_SEARCH_FOUND = (
    "The best matches for {query!r} among the messages since the last dream ({total} in all):"
)
DREAM_ANTHROPIC_MESSAGE = "[{message_id} · {captured_at} · {kind} from {source}]\n{text}"
DREAM_ANTHROPIC_TRANSCRIPT_SHOWN = "The transcript since the last dream:\n\n{messages}"
DREAM_ANTHROPIC_TRANSCRIPT_LONG = (
    "The transcript since the last dream has {chars:,} characters, too long to show here: read it with "
    "search_transcript."
)
DREAM_ANTHROPIC_NO_INSTRUCTIONS = "(none: use your judgement, and prefer small, well-founded edits)"
# The anthropic dreamer's first message: the conversation it consolidates.
DREAM_ANTHROPIC_TASK = """\
Conversation {conversation} of agent {agent}: the messages since the last dream, from {first} ({first_at}) \
to {last} ({last_at}), {count} in all. Consolidate what they teach into memory.

{transcript}"""

NAME = "anthropic"
MODEL_ENV = "MEMREPO_ANTHROPIC_MODEL"
KEY_ENVS = ("MEMREPO_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
BASE_URL_ENVS = ("MEMREPO_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL")
TURNS_ENV = "MEMREPO_ANTHROPIC_MAX_TURNS"
TOKENS_ENV = "MEMREPO_ANTHROPIC_MAX_TOKENS"
TIMEOUT_ENV = "MEMREPO_ANTHROPIC_TIMEOUT"
DEFAULT_TURNS = 20
DEFAULT_TOKENS = 400_000
DEFAULT_TIMEOUT = 120.0
REPLY_TOKENS = 4096  # max_tokens of one reply
SHOWN_CHARS = 40_000  # a transcript up to this long is in the first message
MAX_MESSAGE_CHARS = 8_000  # of one message, shown or found
SEARCH_TOOL = "search_transcript"
SEARCH_DEFAULT, SEARCH_MAX = 5, 20
SUMMARY_CHARS = 300
SYSTEM_PROMPT = "prompts/dream-anthropic-system.md.j2"
DONE = ("end_turn", "stop_sequence")
SCRATCH_AGENT = "dreamer"
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# ----------------------------------------------------------------------------------- pure
def search(window: Sequence[Message], query: str, k: int = SEARCH_DEFAULT) -> list[tuple[Message, float]]:
    """The k messages of `window` that best match `query`, best first: BM25 with the
    transcript search's tokens, query parsing and constants, over these messages alone (so
    the statistics are the window's). Ties go to the earlier message id."""
    units = parse_query(query)
    if not units or not window:
        return []
    streams = [tokenize(m.text) for m in window]
    avgdl = (sum(len(s) for s in streams) / len(streams)) or 1.0
    counts = [[bm25.count(s, u.tokens) for u in units] for s in streams]
    idfs = [bm25.idf(len(window), sum(1 for row in counts if row[i])) for i in range(len(units))]
    scored = [(m, bm25.score(idfs, row, len(s), avgdl)) for m, s, row in zip(window, streams, counts, strict=True)
              if any(row)]
    return sorted(scored, key=lambda hit: (-hit[1], hit[0].message_id))[:k]


def cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def render_message(m: Message) -> str:
    return DREAM_ANTHROPIC_MESSAGE.format(message_id=m.message_id, captured_at=m.captured_at, kind=m.kind,
                                                source=m.source, text=cut(m.text))


def found_text(window: Sequence[Message], query: str, hits: Sequence[tuple[Message, float]]) -> str:
    if not hits:
        return f"No message since the last dream matches {query!r}."
    head = DREAM_ANTHROPIC_SEARCH_FOUND.format(query=query, total=len(window))
    return "\n\n".join([head, *(render_message(m) for m, _ in hits)])


def example_id(window: Sequence[Message]) -> str:
    """A message id to show the model how ids look: the first user message's, or the first."""
    return next((m.message_id for m in window if m.kind == "user"), window[0].message_id)


def system_text(dream: DreamInput) -> str:
    return render(
        SYSTEM_PROMPT, file_chars=dream.policy.limits.file_chars, example=example_id(dream.messages),
        merge_instructions=dream.policy.merge_instructions.strip() or DREAM_ANTHROPIC_NO_INSTRUCTIONS)


def task_text(dream: DreamInput) -> str:
    """The first message: which conversation and messages, and the transcript when it is short."""
    window = dream.messages
    shown = "\n\n".join(render_message(m) for m in window)
    transcript = DREAM_ANTHROPIC_TRANSCRIPT_SHOWN.format(messages=shown) if len(shown) <= SHOWN_CHARS \
        else DREAM_ANTHROPIC_TRANSCRIPT_LONG.format(chars=len(shown))
    return DREAM_ANTHROPIC_TASK.format(
        conversation=dream.conversation_id, agent=dream.agent_id, count=len(window), first=window[0].message_id,
        first_at=window[0].captured_at, last=window[-1].message_id, last_at=window[-1].captured_at,
        transcript=transcript)


def cited(text: str, known: set[str]) -> tuple[str, ...]:
    """The ids of `known` messages that `text` names, in the order it names them."""
    found = []
    for word in _WORD.findall(text):
        for candidate in (word, word.rstrip("._-")):
            if candidate in known:
                found.append(candidate)
                break
    return tuple(dict.fromkeys(found))


def one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def memory_uses(content: Sequence[Any]) -> list[tuple[dict[str, Any], str]]:
    """Each memory tool call of one reply, in order, with the text that explains it: the
    reply's text since the call before it; or, for a call with none of its own, the text of
    the memory call before it in the reply, or else all the reply's text."""
    everything = " ".join(b.text for b in content if getattr(b, "type", None) == "text")
    uses: list[tuple[dict[str, Any], str]] = []
    since: list[str] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            since.append(block.text)
        elif kind == "tool_use":
            own = " ".join(since).strip()
            since = []
            if block.name == "memory":
                why = own or (uses[-1][1] if uses else everything.strip())
                uses.append((dict(block.input) if isinstance(block.input, Mapping) else {}, why))
    return uses


def reply_text(message: Any) -> str:
    return " ".join(b.text for b in message.content if getattr(b, "type", None) == "text").strip()


def tokens_used(usage: Any) -> int:
    """Input and output tokens of one reply, cached input included."""
    fields = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(getattr(usage, name, None) or 0 for name in fields)


# ---------------------------------------------------------------------------------- shell
@contextlib.contextmanager
def scratch_memory(files: Mapping[str, str]) -> Iterator[MemoryRepo]:
    """A throwaway repository whose one commit holds `files`: where the dreamer's calls are
    tried while it works. Removed afterwards whatever happens."""
    with tempfile.TemporaryDirectory(prefix="memrepo-dreamer-") as holder:
        root = Path(holder) / "memory"
        git = pygit2.init_repository(str(root), initial_head="main")
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
            git.index.add(path)
        git.index.write()
        who = identity.dreamer(SCRATCH_AGENT)
        signature = pygit2.Signature(who.name, who.email)
        git.create_commit("HEAD", signature, signature, "base", git.index.write_tree(), [])
        yield MemoryRepo.open(root)


class DreamerSession:
    """The dreamer's memory tool on the scratch repository, for AnthropicMemoryTool: views as
    they are, edits checked by the memory tool and, when accepted, kept for the proposal with
    the reply text that explains them and the messages it names."""

    def __init__(self, repo: MemoryRepo, window: Sequence[Message]) -> None:
        self.repo = repo
        self.tool = MemoryTool(repo, SCRATCH_AGENT, "memrepo dreamer", push=False)
        self.tool.identity = identity.dreamer(SCRATCH_AGENT)
        self.known = {m.message_id for m in window}
        self.example = example_id(window)
        self.pending: list[tuple[dict[str, Any], str]] = []
        self.accepted: list[ProposedCall] = []
        self.refused = 0

    def reply(self, message: Any) -> None:
        """The model's reply whose tool calls run next: what each memory call rests on."""
        self.pending = memory_uses(message.content)

    def _why(self, call: Mapping[str, Any]) -> str:
        at = next((i for i, (sent, _) in enumerate(self.pending) if sent == call), 0 if self.pending else None)
        return "" if at is None else self.pending.pop(at)[1]

    def handle_tool_call(self, call: object) -> ToolResult:
        data = dict(call) if isinstance(call, Mapping) else {}
        why = self._why(data)
        if data.get("command") == "view":
            return self.tool.call(data)
        ids = cited(why, self.known)
        if not ids:
            self.refused += 1
            return ToolResult(False, str(data.get("command")),
                              DREAM_ANTHROPIC_NEEDS_IDS.format(example=self.example))
        summary = one_line(why)
        proposed = {**data, "reason": summary}
        result = self.tool.call(proposed)
        if not result.ok:
            self.refused += 1
            return result
        self.accepted.append(ProposedCall(proposed, summary, ids))
        result.message = DREAM_ANTHROPIC_KEPT.format(number=len(self.accepted))
        return result


def search_tool(window: Sequence[Message]) -> Any:
    """`search_transcript` over the messages since the cursor, as an SDK function tool."""

    def search_transcript(query: str, limit: int = SEARCH_DEFAULT) -> str:
        if not parse_query(query):
            raise ToolError("the query has no words to search for; give one or more words")
        k = min(max(int(limit), 1), SEARCH_MAX)
        return found_text(window, query, search(window, query, k))

    schema = {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "the words to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX, "description":
                  DREAM_ANTHROPIC_SEARCH_LIMIT.format(limit=SEARCH_MAX, default=SEARCH_DEFAULT)}}}
    return beta_tool(search_transcript, name=SEARCH_TOOL, description=DREAM_ANTHROPIC_SEARCH_DESCRIPTION,
                     input_schema=schema)


class AnthropicStrategy:
    """One dream, one tool-runner conversation; every failure is one MemrepoError line."""

    name = NAME

    def __init__(self, model: str, api_key: str | None = None, *, base_url: str | None = None,
                 max_turns: int = DEFAULT_TURNS, max_tokens: int = DEFAULT_TOKENS, timeout: float = DEFAULT_TIMEOUT,
                 client: anthropic.Anthropic | None = None) -> None:
        self.model = model
        self.max_turns, self.max_tokens, self.timeout = max_turns, max_tokens, timeout
        self._key = api_key
        self.client = client or anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout)

    def __repr__(self) -> str:
        return f"AnthropicStrategy(model={self.model!r}, max_turns={self.max_turns}, max_tokens={self.max_tokens})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AnthropicStrategy:
        model, key = settings.value(MODEL_ENV, env), settings.first_value(KEY_ENVS, env)
        if not model or not key:
            raise MemrepoError(DREAM_ANTHROPIC_NOT_CONFIGURED)
        timeout = settings.positive_number(TIMEOUT_ENV, env, default=DEFAULT_TIMEOUT,
                                           error=DREAM_ANTHROPIC_BAD_TIMEOUT)
        max_turns = settings.positive_whole_number(TURNS_ENV, env, default=DEFAULT_TURNS,
                                                   error=DREAM_ANTHROPIC_BAD_COUNT)
        max_tokens = settings.positive_whole_number(TOKENS_ENV, env, default=DEFAULT_TOKENS,
                                                    error=DREAM_ANTHROPIC_BAD_COUNT)
        return cls(model, key, base_url=settings.first_value(BASE_URL_ENVS, env), max_turns=max_turns,
                   max_tokens=max_tokens, timeout=timeout)

    def propose(self, dream: DreamInput) -> Proposal:
        with scratch_memory(dream.files) as repo:
            dreamer = DreamerSession(repo, dream.messages)
            runner = self.client.beta.messages.tool_runner(
                model=self.model, max_tokens=REPLY_TOKENS, system=system_text(dream), max_iterations=self.max_turns,
                messages=[{"role": "user", "content": task_text(dream)}],
                tools=[AnthropicMemoryTool(dreamer), search_tool(dream.messages)])
            try:
                last, turns, used = self._converse(runner, dreamer)
            except anthropic.APITimeoutError:
                raise MemrepoError(DREAM_ANTHROPIC_TIMEOUT.format(seconds=self.timeout)) from None
            except anthropic.APIConnectionError as exc:
                raise MemrepoError(
                f"the Anthropic API cannot be reached ({llm.excerpt(str(exc), self._key)})") from None
            except anthropic.APIStatusError as exc:
                raise MemrepoError(f"the Anthropic API answered HTTP {exc.status_code}: "
                               f"{llm.excerpt(exc.message, self._key)}") from None
            finally:
                runner.close()
        summary = reply_text(last) or "The dreamer gave no summary of its edits."
        return Proposal(tuple(dreamer.accepted), summary, self.model,
                        notes={"turns": turns, "tokens": used, "refused": dreamer.refused})

    def _converse(self, runner: Any, dreamer: DreamerSession) -> tuple[Any, int, int]:
        """Drive the runner to the model's last reply within the bounds: (the reply, turns,
        tokens). A reply's tool calls run when the loop asks for the next one, so the bounds
        are checked, and the dreamer told what the calls rest on, before they run."""
        last, turns, used = None, 0, 0
        for message in runner:
            last, turns, used = message, turns + 1, used + tokens_used(message.usage)
            if used > self.max_tokens:
                raise MemrepoError(DREAM_ANTHROPIC_TOKENS.format(model=self.model, used=used,
                                                                       limit=self.max_tokens))
            if message.stop_reason == "tool_use":
                if turns >= self.max_turns:
                    raise MemrepoError(DREAM_ANTHROPIC_TURNS.format(model=self.model, turns=turns))
                dreamer.reply(message)
            elif message.stop_reason not in (*DONE, "pause_turn"):
                raise MemrepoError(DREAM_ANTHROPIC_STOPPED.format(model=self.model,
                                                                        reason=message.stop_reason))
        if last is None or last.stop_reason not in DONE:
            raise MemrepoError(DREAM_ANTHROPIC_TURNS.format(model=self.model, turns=turns))
        return last, turns, used

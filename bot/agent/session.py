"""AgentSession: what an agent harness drives to give its agent memory.

    session = AgentSession("memory", "c1", events_url=..., agent_token=...)
    prompt = session.system_prompt()                       # compiled from committed HEAD, cached
    session.record("user", "I moved to Paris.")            # transcript row; a user message starts a turn
    result = session.handle_tool_call({...})               # the memory tool, guarded (see below)
    session.record("assistant", "Noted.")                  # counts a step for the dream trigger
    print(session.command("/doctor").text)                 # slash commands typed by the user
    session.close()

Where a write goes is decided here, where it happens, not by instructions to the model:
each edit is previewed (validated, nothing written), then `routing.route_edit` sends it
straight to `main` (commit + push) or to a pull request labelled `memrepo:agent-edit`, and
also `memrepo:untrusted` when the current turn (`turns.py`) saw content from an `external:`
source. Such a pull request needs a person's approval before the integrator merges it.

Dreams: an `assistant` row is a step, a `compaction` row a compaction, `/dream` (or
`dream()`) the manual trigger, all through `bot.dream.events.handle_event` under the
repository's policy or the agent's `/sleeptime` setting. Automatic dreams run on one
background thread (a dream takes seconds; the agent's turn should not wait); manual ones run
now and answer with their outcome. A dream that cannot run (the forge is down, say) changes
neither memory nor the cursor, and its trigger is remembered for the next attempt.

Following `main`: with an events URL, a `HeadSubscriber` (its bearer the agent's forge token:
`agent_token`, else the clone's, as git finds it; never the operator's) keeps the clone
on the newest `main` (fetch, fast-forward, or replay the agent's unpushed commits; reconnect
with backoff; sync on every (re)connect, so a move missed while the stream was down is
caught). The prompt cache is keyed by HEAD, so the next `system_prompt()` after a move is
recompiled with nothing else to do.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bot.agent import doctor, sleeptime, texts, turns
from bot.agent.commands import Command, parse_command
from bot.agent.tool import EditResult
from bot.agent.write_path import WritePath
from bot.config import Dream
from bot.contracts import AGENT_ID, CONVERSATION_ID, TRANSCRIPT_RANGE, check_id
from bot.dream.events import handle_event
from bot.dream.strategies import Strategy
from bot.errors import MemrepoError
from bot.forge.retry import RetryPolicy
from bot.memfs import (
    V2,
    CompiledPrompt,
    MemoryRepo,
    PromptCompiler,
    configured_agent_id,
    configured_agent_name,
    memory_layout,
    sync,
)
from bot.memfs import texts as memfs_texts
from bot.notify.events import HeadEvent
from bot.notify.follower import HeadSubscriber
from bot.pullrequest import git_token
from bot.transcript import TranscriptStore
from bot.transcript.model import Message

AGENT_SLEEPTIME_SHOW_SETTING = "dreams run {what} (this agent's /sleeptime setting; the policy says {policy})"
AGENT_RECOMPILED = "system prompt recompiled from {sha}: {chars:,} characters"
AGENT_NOTES_DESCRIPTION = "Notes the user asked the agent to remember, each dated when it was noted."
AGENT_NOTES_TITLE = "Notes"
AGENT_DREAM_FAILED = "the dream could not run: {problem}. Memory and the dreamer's cursor are unchanged; the " \
                     "request is remembered and runs at the next trigger."
AGENT_DREAM_CRASHED = "the dream stopped on an unexpected error ({error}); memory and the dreamer's cursor " \
                      "are unchanged"
AGENT_COMMAND_CRASHED = "/{command} stopped on an unexpected error ({error}); nothing was changed"
# The head event stream, as the session reports it.
AGENT_STATUS_STREAM = "event stream"
AGENT_STREAM_DOWN = "not connected to {url} ({problem}); reconnecting with backoff, and memory is brought up " \
                    "to date on reconnect"

log = logging.getLogger("memrepo.agent")

NOTES_PATH = "system/notes.md"
V2_NOTES_PATH = "notes.md"  # a v2 memory's core files are at the root
SUMMARY_CHARS = 60
DREAM_MESSAGES = 50  # outcomes of recent dreams kept for the harness


@dataclass(frozen=True)
class CommandResult:
    """What a slash command did: `text` is for the person who typed it."""

    ok: bool
    text: str
    command: str | None = None


class AgentSession:
    """One agent, one conversation, one memory clone. Not for use from several harness
    threads at once; its own background threads (dreams, the event stream) are safe."""

    def __init__(self, repo: MemoryRepo | str | os.PathLike[str], conversation_id: str, *,
                 agent_id: str | None = None, agent_name: str | None = None, system_prompt: str = "",
                 home: str | os.PathLike[str] | None = None, store: TranscriptStore | None = None,
                 events_url: str | None = None, agent_token: str | None = None,
                 env: Mapping[str, str] | None = None, strategy: str | Strategy | None = None,
                 forge_retry: RetryPolicy | None = None, background_dreams: bool = True,
                 subscriber_options: Mapping[str, Any] | None = None, push: bool = True,
                 connect_hint: str = texts.AGENT_CONNECT_HINT) -> None:
        self.repo = repo if isinstance(repo, MemoryRepo) else MemoryRepo.open(repo)
        configured = configured_agent_id(self.repo)
        self.agent_id = agent_id or configured
        if not self.agent_id:
            raise MemrepoError(memfs_texts.NO_AGENT_ID)
        if agent_name is None and self.agent_id == configured:
            agent_name = configured_agent_name(self.repo)
        self.agent_name = agent_name
        self.conversation_id = check_id(conversation_id, "conversation_id")
        self.env = os.environ if env is None else env
        self.writes = WritePath(self.repo, self.agent_id, agent_name, push=push, env=self.env,
                                forge_retry=forge_retry, connect_hint=connect_hint)
        self.tool = self.writes.tool
        self.base_prompt = system_prompt
        self.compiler = PromptCompiler(self.repo.root)
        self.last_prompt: CompiledPrompt | None = None
        self._own_store = store is None
        self.store = store or TranscriptStore(home)
        self.writes.transcripts = self.store  # a pull request quotes the turn's messages
        self.strategy = strategy
        self.forge_retry = forge_retry
        self.turn = turns.Turn()
        self.dream_messages: deque[str] = deque(maxlen=DREAM_MESSAGES)
        self.head_moves = 0
        self._background = background_dreams
        self._dreams: ThreadPoolExecutor | None = None
        self._pending: list[Future[str]] = []
        self._lock = threading.Lock()
        self.subscriber: HeadSubscriber | None = None
        self.shared_subscribers: list[HeadSubscriber] = []  # one per attached shared memory
        if events_url is not None:
            self.follow(events_url, agent_token or "", **dict(subscriber_options or {}))

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop following, let a running dream finish, close what the session opened."""
        if self.subscriber is not None:
            self.subscriber.stop()
        for subscriber in self.shared_subscribers:
            subscriber.stop()
        if self._dreams is not None:
            self._dreams.shutdown(wait=True)
            self._dreams = None
        if self._own_store:
            self.store.close()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the prompt
    def prompt(self) -> CompiledPrompt:
        """The compiled prompt with its HEAD and whether the cache served it."""
        self.last_prompt = self.compiler.compile(self.base_prompt)
        return self.last_prompt

    def system_prompt(self) -> str:
        """The system prompt for the next model call: compiled from committed HEAD, reused
        while HEAD has not moved."""
        return self.prompt().text

    # ------------------------------------------------------------------ the transcript
    def begin_turn(self) -> turns.Turn:
        """Start a new turn explicitly (recording a message the user typed does it too)."""
        self.turn = turns.begin(self.turn)
        return self.turn

    def context_cleared(self) -> turns.Turn:
        """The harness says the model's context no longer holds the untrusted content it saw
        (it was dropped or summarised away): writes from now on are trusted again."""
        self.turn = turns.cleared(self.turn)
        return self.turn

    def record(self, kind: str, text: str, source: str | None = None, *, at: Any = None) -> Message:
        """Append one transcript row (captured_at from the store's clock; `at`, a time the
        caller claims, is only carried as stated_at). Its source feeds the turn's trust; an
        `assistant` row counts a dream step and a `compaction` row is the compaction trigger.
        A row refused for its source label still reached the model: the context is tainted."""
        try:
            message = self.store.append(self.agent_id, self.conversation_id, kind, text, source=source, at=at)
        except MemrepoError:
            if source is not None and source not in ("user", "agent", "human"):
                self.turn = turns.taint(self.turn, turns.UNREADABLE_SOURCE)
            raise
        trusted = self.repo.policy("HEAD").trusted_sources
        self.turn = turns.after_row(self.turn, message.kind, message.source, message.message_id, trusted)
        if message.kind == "assistant":
            self._trigger("step")
        elif message.kind == "compaction":
            self._trigger("compaction")
        return message

    def observe(self, rows: Iterable[Message], own: Iterable[str] = ()) -> turns.Turn:
        """Rows the harness keeps itself (a Claude Code session's, imported into the store):
        the turn follows them as `record` would, without writing them again. `own`: the sources
        of memrepo's own tool results as the harness names them, which bring nothing from outside."""
        trusted = (*self.repo.policy("HEAD").trusted_sources, *own)
        for row in rows:
            self.turn = turns.after_row(self.turn, row.kind, row.source, row.message_id, trusted)
        return self.turn

    # ------------------------------------------------------------------ memory tool
    def handle_tool_call(self, call: object) -> EditResult:
        """One memory tool call from the model, as it sent it (a mapping or its JSON text).
        Views and small trusted edits behave as MemoryTool's; the rest become pull requests
        (see the module docstring). Never raises for bad input: refusals are results with ok
        False."""
        return self._edit(call, self.turn.external)

    def _edit(self, raw: object, external: tuple[str, ...]) -> EditResult:
        return self.writes.handle(raw, external=external, trailers=self.provenance(),
                                  conversation_id=self.conversation_id, turn=self.turn.number)

    # ------------------------------------------------------------------ dreams
    def dream_policy(self, repo: MemoryRepo | None = None) -> Dream:
        """The dream trigger in force: the policy at HEAD, under the agent's /sleeptime setting."""
        repo = repo or self.repo
        return sleeptime.effective(repo.policy("HEAD").dream, repo.get_config(sleeptime.CONFIG_KEY))

    def dream(self) -> str:
        """A dream now (the manual trigger), answered with its outcome in one line."""
        return self._attempt("manual")[1]

    def wait_for_dreams(self, timeout: float | None = None) -> list[str]:
        """Wait for the automatic dreams started so far; their messages, in order."""
        with self._lock:
            pending, self._pending = self._pending, []
        return [f.result(timeout) for f in pending]

    def _trigger(self, event: str) -> None:
        if not self._background:
            self._run_event(event)
            return
        with self._lock:
            if self._dreams is None:
                self._dreams = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"memrepo-dream-{self.agent_id}")
            self._pending.append(self._dreams.submit(self._run_event, event))

    def _run_event(self, event: str) -> str:
        return self._attempt(event)[1]

    def _attempt(self, event: str) -> tuple[bool, str]:
        """Handle one trigger event: (no failure, one line). Runs on the dream thread too, so it
        opens its own view of the clone. Outcomes of dreams that ran or failed are kept in
        `dream_messages` (the step counts in between are not)."""
        try:
            repo = MemoryRepo.open(self.repo.root)
            outcome = handle_event(repo, self.agent_id, self.conversation_id, event, home=self.store.home,
                                   dream_policy=self.dream_policy(repo), store=self.store, strategy=self.strategy,
                                   retry=self.forge_retry, env=self.env)
            ok, text, ran = True, outcome.message, outcome.ran
        except MemrepoError as exc:
            ok, text, ran = False, AGENT_DREAM_FAILED.format(problem=exc), True
        except Exception as exc:  # a background thread must never die silently
            log.exception("dream trigger %s", event)
            ok, text, ran = False, AGENT_DREAM_CRASHED.format(error=f"{type(exc).__name__}: {exc}"), True
        if ran:
            with self._lock:
                self.dream_messages.append(text)
        return ok, text

    # ------------------------------------------------------------------ following main
    def follow(self, events_url: str, token: str, **options: Any) -> HeadSubscriber:
        """Follow `main` through the receiver's event stream (replacing any earlier one)."""
        if self.subscriber is not None:
            self.subscriber.stop()
        self.subscriber = HeadSubscriber(self.repo.root, events_url, token, self._on_head, **options).start()
        self._follow_shared(events_url, options)
        return self.subscriber

    def _follow_shared(self, events_url: str, options: Mapping[str, Any]) -> None:
        """Follow each attached shared memory's main too, keeping its projection on it: the
        prompt's cache is keyed by every projection's HEAD, so the next prompt shows a merge.
        Each stream is opened with the token in the projection's origin (the agent's own)."""
        from bot.agent.shared import events_url_for
        from bot.memfs import shared_projection, shared_record
        from bot.pullrequest.target import forge_target

        for subscriber in self.shared_subscribers:
            subscriber.stop()
        self.shared_subscribers = []
        try:
            found = shared_projection.attachments(self.repo)
        except MemrepoError as exc:
            log.warning("shared memories not followed: %s", exc)
            return
        for attachment in found:
            root = shared_record.projection_root(self.repo.root, attachment.name)
            try:
                url = events_url_for(events_url, forge_target(attachment.url, self.env).repository)
            except MemrepoError as exc:  # not on a forge (a path): `memrepo shared sync` keeps it
                log.info("shared memory %s not followed: %s", attachment.name, exc)
                continue
            self.shared_subscribers.append(HeadSubscriber(
                root, url, "", self._on_head, syncer=self._shared_syncer(attachment, root), **options).start())

    def _shared_syncer(self, attachment: Any, root: Any) -> Any:
        """A projection's sync on a head event: shared_projection.sync_one, which never pushes
        (a commit made in the projection is not proposed by pushing it to the shared main)."""
        from bot.memfs import refs, shared_projection

        def syncer() -> str | None:
            done = shared_projection.sync_one(self.repo, attachment, self.env,
                                              ready=lambda projection: git_token.ensure(projection, self.env))
            if not done.ok:
                log.warning("%s", done.line)
            return refs.resolve(root)

        return syncer

    def _on_head(self, event: HeadEvent | None, head: str | None) -> None:
        with self._lock:
            self.head_moves += 1
        log.info("memory of %s moved to %s; the next prompt is recompiled", self.agent_id, head)

    def stream_state(self) -> str:
        """One line: is the event stream connected, and if not, why."""
        sub = self.subscriber
        if sub is None:
            return "not followed (no event stream configured)"
        url = sync.redact(sub.url)
        if sub.connected.is_set():
            return f"connected to {url}"
        return AGENT_STREAM_DOWN.format(url=url, problem=sub.last_error or "connecting")

    # ------------------------------------------------------------------ slash commands
    def command(self, text: str) -> CommandResult:
        """A slash command as the user typed it; never raises for bad input."""
        try:
            parsed = parse_command(text)
        except MemrepoError as exc:
            return CommandResult(False, exc.message)
        try:
            return self._dispatch(parsed)
        except MemrepoError as exc:
            return CommandResult(False, exc.message, parsed.name)
        except Exception as exc:
            log.exception("/%s", parsed.name)
            return CommandResult(False, AGENT_COMMAND_CRASHED.format(
                command=parsed.name, error=f"{type(exc).__name__}: {exc}"), parsed.name)

    def _dispatch(self, c: Command) -> CommandResult:
        if c.name == "memory-repository":
            return self._repository(c)
        if c.name == "dream":
            ok, text = self._attempt("manual")
            return CommandResult(ok, text, c.name)
        if c.name == "sleeptime":
            return CommandResult(True, self._sleeptime(c), c.name)
        if c.name == "recompile":
            self.compiler = PromptCompiler(self.repo.root)  # drops every cached parse, too
            compiled = self.prompt()
            return CommandResult(True, AGENT_RECOMPILED.format(sha=compiled.head_sha[:12],
                                                                     chars=len(compiled.text)), c.name)
        if c.name == "remember":
            result = self.remember(str(c.value))
            return CommandResult(result.ok, f"noted in {NOTES_PATH}: {result.message}"
                                 if result.ok else result.message, c.name)
        return CommandResult(True, self.doctor(), c.name)

    def _repository(self, c: Command) -> CommandResult:
        name = c.name
        if c.action == "set":
            return CommandResult(True, sync.set_remote(self.repo, str(c.value)), name)
        if c.action == "unset":
            return CommandResult(True, sync.unset_remote(self.repo), name)
        if c.action == "sync":
            try:
                git_token.ensure(self.repo, self.env)  # a recorded GitHub App pushes as itself
            except MemrepoError as exc:
                return CommandResult(False, memfs_texts.SYNC_FAILED.format(reason=exc), name)
            result = sync.sync(self.repo)
            if not result.pushed:
                return CommandResult(False, memfs_texts.SYNC_FAILED.format(reason=result.reason), name)
            return CommandResult(True, result.summary, name)
        return CommandResult(True, self._status(), name)

    def _status(self) -> str:
        with contextlib.suppress(MemrepoError):  # the status then says the fetch failed, or fetched as the URL
            git_token.ensure(self.repo, self.env)
        st = sync.status(self.repo, fetch=True)
        return "\n".join(sync.status_lines(st, ((AGENT_STATUS_STREAM, self.stream_state()),)))

    def _sleeptime(self, c: Command) -> str:
        if c.action is not None:
            setting = sleeptime.render_setting(c.action, c.value if isinstance(c.value, int) else None)
            self.repo.set_config(sleeptime.CONFIG_KEY, setting)
            return f"from now on dreams run {_when(self.dream_policy())}"
        policy = self.repo.policy("HEAD").dream
        setting = self.repo.get_config(sleeptime.CONFIG_KEY)
        if setting is None or sleeptime.effective(policy, setting) == policy:
            return f"dreams run {_when(policy)} (the repository's policy)"
        return AGENT_SLEEPTIME_SHOW_SETTING.format(what=_when(self.dream_policy()), policy=_when(policy))

    def remember(self, text: str) -> EditResult:
        """A note the user asked for, dated by the store's clock, appended to system/notes.md
        (a v2 memory's notes.md).
        It is routed like every other write: while the context holds untrusted content the
        note goes to a pull request a person approves (what reads as the user's words may be a
        page's, pasted or relayed by the harness), and size and protected paths decide too."""
        date = self.store.clock().strftime("%Y-%m-%d")
        lines = text.strip().splitlines()
        entry = "\n".join([f"- {date}: {lines[0]}", *(f"  {line}" if line else "" for line in lines[1:])])
        summary = " ".join(text.split())
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
        reason = f"Remember, as the user asked: {summary}"
        notes = V2_NOTES_PATH if memory_layout(self.repo) == V2 else NOTES_PATH
        if self.repo.read(notes) is None:
            call: dict[str, Any] = {"command": "create", "path": notes,
                                    "description": AGENT_NOTES_DESCRIPTION,
                                    "file_text": f"# {AGENT_NOTES_TITLE}\n\n{entry}\n", "reason": reason}
        else:
            call = {"command": "insert", "path": notes, "insert_line": -1, "insert_text": entry,
                    "reason": reason}
        return self._edit(call, self.turn.external)

    def provenance(self) -> tuple[tuple[str, str], ...]:
        """The trailers of a direct edit made now: the agent, the conversation and the turn's
        transcript messages (docs/architecture.md §5.2), so `memrepo why` can quote what the user said."""
        found = [(AGENT_ID, self.agent_id), (CONVERSATION_ID, self.conversation_id)]
        if self.turn.transcript_range is not None:
            found.append((TRANSCRIPT_RANGE, self.turn.transcript_range))
        return tuple(found)

    def doctor(self) -> str:
        """`/doctor`'s report."""
        st = sync.status(self.repo)
        report = doctor.diagnose(self.repo.files("HEAD"), self.repo.policy("HEAD").limits,
                                 pending=st.ahead if st.url is not None else None, backups=st.backups,
                                 stream=None if self.subscriber is None else self.stream_state())
        text = doctor.render(report)
        if st.url is None:
            return text
        from bot.review import accounts, waiting

        # what waits on the forge and who writes it, before the verdict (the last line)
        body, _, verdict = text.rpartition("\n")
        found, reason = accounts.find(self.repo, self.env)
        writer = f"\n{accounts.said(found, reason)}" if found or reason else ""
        return f"{body}\n{waiting.said(*waiting.count(self.repo, self.env))}{writer}\n{verdict}"


def _when(policy: Dream) -> str:
    if policy.trigger == "step-count":
        return f"every {policy.steps} assistant steps"
    if policy.trigger == "compaction":
        return "when the context is compacted"
    return "only on /dream (automatic dreams are off)"

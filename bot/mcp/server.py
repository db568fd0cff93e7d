"""The MCP server of one memory clone, on the official SDK's low-level `Server`: the tools of
catalog.py, the compiled core memory as a resource, and its update announcements (head.py).

Memory tool calls go through one agent session (bot/agent) made when the server starts
(writes.py): its conversation is `--conversation` or a fresh `mcp-<hex>`, its agent the
memory's, and it follows the receiver's head events when given `--events`, so the server runs
one head subscriber, the session's. Where an edit goes (main, or a pull request) is the
session's decision, and the tool result carries it as `route`.

The low-level server rather than the decorator API because the tool schemas are data here
(catalog.py), arguments are checked with one-line messages (arguments.py), and resource
subscriptions of both protocol eras are served. Handlers run git and searches in worker
threads so that one slow push does not stall the other clients.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError

from bot import __version__
from bot import texts as shared_texts
from bot.agent import AgentSession
from bot.errors import MemrepoError
from bot.forge.retry import RetryPolicy
from bot.mcp import arguments, search, writes
from bot.mcp.catalog import (
    CORE_MEMORY_NAME,
    CORE_MEMORY_URI,
    ToolSpec,
    core_memory_description,
    core_memory_title,
    instructions,
    memory_call,
    tools,
)
from bot.mcp.head import POLL_SECONDS, HeadWatcher
from bot.mcp.writes import CODEX_CALL_META, TOOL_USE_META
from bot.memfs import DEFAULT_MEMORY_DIR, MemoryRepo, PromptCompiler
from bot.transcript import documents

MCP_NO_CLAUDE_SESSION = (
    "--claude-code: CLAUDE_CODE_SESSION_ID is not set; Claude Code sets it for the MCP servers it starts "
    "(outside Claude Code, give --conversation ID instead)"
)
MCP_RECORDED = "recorded {kind} message {id} from {source} in conversation {conversation} (turn {turn})."
MCP_RECORDED_UNTRUSTED = ("The context holds untrusted content ({sources}): every memory edit goes to a pull "
                          "request a person must approve until the context no longer holds it (record a "
                          "`compaction` message when it was dropped or summarised away).")
MCP_UNKNOWN_RESOURCE = "unknown resource {uri}; this server has: {uris}"
MCP_TOOL_BUG = "{tool} failed unexpectedly ({error}); this is a bug in memrepo, please report it"
MCP_SEARCH_NO_TRANSCRIPTS = "No conversation of agent {agent} is recorded (in {home})."

log = logging.getLogger("memrepo.mcp")

SERVER_NAME = "memrepo"


@dataclass(frozen=True)
class Options:
    """How `memrepo mcp` was asked to serve (defaults: as `memrepo tool` and `memrepo compile`)."""

    repo: str | os.PathLike[str] = "."
    agent_id: str | None = None
    agent_name: str | None = None
    home: str | None = None
    system_prompt: str = ""
    memory_dir: str = DEFAULT_MEMORY_DIR
    push: bool = True
    poll_seconds: float = POLL_SECONDS
    conversation: str | None = None  # None: a fresh mcp-<hex> per server process
    claude_code: bool = False  # serve one Claude Code session: its id is the conversation, its file the transcript
    codex: bool = False  # serve Codex: each write's conversation is the session its call's _meta names
    events_url: str | None = None  # the receiver's event stream to follow (with agent_token)
    agent_token: str | None = None
    record: bool = False  # offer memory_record (the harness's tool)
    background_dreams: bool = False  # dream triggers run on a thread instead of in the memory_record call
    env: Mapping[str, str] | None = None  # where the forge token is looked up (None: os.environ)
    forge_retry: RetryPolicy | None = None


def _text(text: str, *, error: bool = False, data: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data,
                                is_error=error)


class MemoryServer:
    """One memory clone served to MCP clients; `server` is the SDK server to run on a transport,
    `watcher.run()` the task that announces HEAD moves (both transports start it)."""

    def __init__(self, options: Options) -> None:
        repo = MemoryRepo.open(options.repo)  # not a memory: a MemrepoError saying so
        self.options = options
        env = os.environ if options.env is None else options.env
        self.claude_session = None
        conversation = options.conversation
        if options.claude_code:
            from bot.claude_code.transcript import SessionTranscript, session_id

            conversation = conversation or session_id(env)
            if conversation is None:
                raise MemrepoError(MCP_NO_CLAUDE_SESSION)
            self.claude_session = SessionTranscript(repo.root, conversation, env)
        self.root: Path = repo.root
        self.tools = tools(record=options.record)
        self.by_name: dict[str, ToolSpec] = {spec.name: spec for spec in self.tools}
        session = self._agent_session(repo, conversation)  # no agent id anywhere: a MemrepoError now
        self.session = session
        self.writes = writes.Writes(session)
        self.agent_id = session.agent_id
        self.conversation_id = session.conversation_id
        self.compiler = PromptCompiler(self.root, memory_dir=options.memory_dir)
        self.bus = InMemorySubscriptionBus()
        self.watcher = HeadWatcher(self.root, CORE_MEMORY_URI, self.bus, interval=options.poll_seconds)
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            title="memrepo memory",
            instructions=instructions(),
            get_tool_input_schema=lambda name: self.by_name[name].input_schema if name in self.by_name else None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    def _agent_session(self, repo: MemoryRepo, conversation: str | None) -> AgentSession:
        options = self.options
        return AgentSession(  # a bad conversation id: a MemrepoError now, not per call
            repo, writes.conversation_id(conversation), agent_id=options.agent_id,
            agent_name=options.agent_name, home=options.home, env=options.env, forge_retry=options.forge_retry,
            background_dreams=options.background_dreams, events_url=options.events_url,
            agent_token=options.agent_token, push=options.push,
            connect_hint=shared_texts.CONNECT_HINT.format(root=repo.root))

    def _codex_session(self, meta: dict[str, Any]) -> None:
        """Serve the Codex session a write's `_meta` names: the first write of a session (and
        a write of another session, when Codex starts a new one on this server) opens an agent
        session for it, whose turn follows the session's rollout (bot/codex/transcript.py)."""
        from bot.codex.transcript import CodexTranscript, session_of

        session = session_of(meta)
        if session is None or session == self.conversation_id:
            return
        fresh = self._agent_session(MemoryRepo.open(self.root), session)
        self.writes.replace(fresh)
        self.session, self.conversation_id = fresh, fresh.conversation_id
        self.claude_session = CodexTranscript(self.root, session, os.environ if self.options.env is None
                                              else self.options.env)

    def close(self) -> None:
        """Stop following head events, let a running dream finish, close the transcripts."""
        self.writes.close()

    # ------------------------------------------------------------------ tools
    async def _list_tools(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(spec) for spec in self.tools])

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                         ) -> types.CallToolResult:
        spec = self.by_name.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, "unknown tool '{name}'; this server has: {tools}".format(
                name=params.name, tools=", ".join(self.by_name)))
        try:
            args = arguments.check(spec, params.arguments)
            meta = params.meta if isinstance(params.meta, dict) else {}
            if self.options.codex and spec.command is not None and not spec.read_only:
                await anyio.to_thread.run_sync(self._codex_session, meta)
            tool_use = meta.get(CODEX_CALL_META) if self.options.codex else meta.get(TOOL_USE_META)
            result = await anyio.to_thread.run_sync(self._run_tool, spec, args, tool_use)
        except MemrepoError as exc:
            return _text(exc.message, error=True)
        except Exception as exc:  # a bug: one line to the client, the traceback to the log
            log.exception("tool %s", spec.name)
            return _text(MCP_TOOL_BUG.format(tool=spec.name, error=f"{type(exc).__name__}: {exc}"),
                         error=True)
        if spec.command is not None and not spec.read_only and not result.is_error:
            await self.watcher.check()  # announce our own commit now, not at the next poll
        return result

    def _run_tool(self, spec: ToolSpec, args: dict[str, Any], tool_use: object = None) -> types.CallToolResult:
        """One tool call, blocking (git, network, SQLite): runs in a worker thread. `tool_use`:
        the harness's id of the call (Claude Code's), if it gave one."""
        if spec.command is not None:
            return self._memory(spec, args, tool_use if isinstance(tool_use, str) else None)
        handlers: dict[str, Callable[[dict[str, Any]], types.CallToolResult]] = {
            "memory_search": self._search, "memory_why": self._why, "memory_at": self._at,
            "memory_record": self._record}
        return handlers[spec.name](args)

    def _memory(self, spec: ToolSpec, args: dict[str, Any], tool_use: str | None = None) -> types.CallToolResult:
        if self.claude_session is not None and not spec.read_only:
            self.writes.catch_up(self.claude_session, tool_use)
        result = self.writes.perform(memory_call(spec, args))
        text = result.message
        if not result.ok and result.content is not None and result.content != result.message:
            text += "\n\n" + result.content
        return _text(text, error=not result.ok, data=result.to_dict())

    def _record(self, args: dict[str, Any]) -> types.CallToolResult:
        try:
            done = self.writes.record(args["kind"], args["text"], args.get("source"))
        except MemrepoError as exc:
            raise MemrepoError(f"memory_record: {exc.message}; nothing was recorded") from None
        text = MCP_RECORDED.format(kind=done.row["kind"], source=done.row["source"],
                                         id=done.row["message_id"], conversation=self.conversation_id,
                                         turn=done.turn)
        if done.untrusted:
            text += " " + MCP_RECORDED_UNTRUSTED.format(sources=", ".join(done.untrusted))
        if done.dream is not None:
            text += "\n" + f"dream: {done.dream}"
        return _text(text, data=done.to_dict())

    def _transcripts(self) -> Any:
        return self.session.store

    def _search(self, args: dict[str, Any]) -> types.CallToolResult:
        scope, query, k = args["scope"], args["query"], args["k"]
        files = hits = note = None
        if scope in ("all", "memory"):
            from bot.memfs import shared_projection  # the memory's own files and its shared memories'

            repo = MemoryRepo.open(self.root)
            searchable = documents.searchable({**repo.files("HEAD"), **shared_projection.shared_files(repo)})
            files = documents.search_files(searchable, query, k)
        if scope in ("all", "transcripts"):
            store = self._transcripts()
            hits = search.search_transcripts(store, self.agent_id, query, k, conversation=args.get("conversation"),
                                             since=args.get("since"), until=args.get("until"))
            if hits is None:
                note = MCP_SEARCH_NO_TRANSCRIPTS.format(agent=self.agent_id, home=store.home)
        data = {"memory": None if files is None else [hit.to_dict() for hit in files],
                "transcripts": None if hits is None else [hit.to_dict() for hit in hits]}
        return _text(search.render(query, files, hits, note), data=data)

    def _why(self, args: dict[str, Any]) -> types.CallToolResult:
        from bot.mcp import past  # the history modules: loaded on the first history call, not at start

        text, data = past.why(self.root, args["path"], args.get("line"), transcripts=self._transcripts())
        return _text(text, data=data)

    def _at(self, args: dict[str, Any]) -> types.CallToolResult:
        from bot.mcp import past

        text, data = past.at(self.root, args["when"], args.get("path"))
        return _text(text, data=data)

    # -------------------------------------------------------------- resources
    async def _list_resources(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(
            uri=CORE_MEMORY_URI, name=CORE_MEMORY_NAME, title=core_memory_title(),
            description=core_memory_description(), mime_type="text/plain")])

    async def _read_resource(self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
                             ) -> types.ReadResourceResult:
        _check_uri(params.uri)
        try:
            compiled = await anyio.to_thread.run_sync(self.compiler.compile, self.options.system_prompt)
        except MemrepoError as exc:
            raise MCPError(types.INTERNAL_ERROR, exc.message) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=CORE_MEMORY_URI, mime_type="text/plain", text=compiled.text, _meta={"revision": compiled.head_sha})])

    async def _subscribe(self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
                         ) -> types.EmptyResult:
        _check_uri(params.uri)
        self.watcher.subscribe(ctx.session)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
                           ) -> types.EmptyResult:
        self.watcher.unsubscribe(ctx.session)
        return types.EmptyResult()


def _check_uri(uri: str) -> None:
    if str(uri) != CORE_MEMORY_URI:
        raise MCPError(types.INVALID_PARAMS, MCP_UNKNOWN_RESOURCE.format(uri=uri, uris=CORE_MEMORY_URI),
                       data={"uri": str(uri)})


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name, title=spec.title, description=spec.description, input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(
            title=spec.title, read_only_hint=spec.read_only, destructive_hint=spec.destructive if not spec.read_only
            else None, idempotent_hint=spec.read_only, open_world_hint=False))

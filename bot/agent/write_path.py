"""The one way an agent's memory tool call becomes a write, read forward: parse it once, plan
it (`MemoryTool.plan`: every check, nothing written), route the plan (`routing.route_edit`:
straight to `main`, or a pull request for protected paths, large edits and untrusted content),
then commit that plan with its provenance (`MemoryTool.commit`) or open the pull request. The
commits a push set aside come back with the commit's result, and are proposed here as pull
requests where the memory has a forge. Where there is no forge, an edit that needs a pull
request is refused with a message that says how to connect one: it is never committed around
the policy.

`AgentSession` (and through it MCP and the slash commands) and `memrepo tool` all write through
this, so the rules cannot differ by entry point."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bot import agent_credential
from bot.agent import texts
from bot.agent.routing import EditFacts, Route, changed_lines, route_edit
from bot.agent.tool import EditResult
from bot.contracts import TRANSCRIPT_RANGE
from bot.errors import MemrepoError
from bot.memfs import (
    Call,
    Committed,
    MemoryRepo,
    MemoryTool,
    calls,
    layout,
    memory_layout,
    named_command,
    parse_call,
)

if TYPE_CHECKING:
    import logging

    from bot.forge.retry import RetryPolicy
from bot.memfs.texts import NOT_SYNCED

AGENT_SET_ASIDE_PROPOSED = ("Commit {sha} \"{message}\" could not be replayed onto main ({reason}); it is now pull "
                            "request #{number} ({url}), where the integrator or a person resolves it.")
AGENT_SET_ASIDE_NOT_PROPOSED = ("Commit {sha} \"{message}\" could not be replayed onto main and is kept at {ref}; "
                                "opening a pull request for it failed ({problem}); it stays there until a person "
                                "deals with it.")
AGENT_EDIT_OPENED = "Not in main yet: this edit went to pull request #{number} ({url}) on branch {branch}, " \
                    "because {reasons}. {next}"
AGENT_EDIT_NEXT_REVIEW = "A person must approve it before it is merged; until then memory is unchanged, " \
                         "so do not rely on this edit."
AGENT_EDIT_NEXT_INTEGRATOR = "The integrator merges it once it is valid; memory changes only then."
AGENT_EDIT_NEEDS_REMOTE = "This edit was not made: it must go through a pull request ({reasons}), but memory " \
                          "has no remote. {connect}"
AGENT_EDIT_PR_FAILED = "This edit was not made: it must go through a pull request ({reasons}), and opening it " \
                       "failed: {problem}. Memory is unchanged; try again later."
# Shared memory through the memory tool (bot/agent/shared.py).
AGENT_SHARED_READ_ONLY = "shared memory {name} is attached read-only: this edit was not made; propose it as a " \
    "pull request on {url}"
AGENT_SHARED_NO_FORGE = "This edit to shared memory {name} was not made: it becomes a pull request on {url}, " \
    "and that needs a forge: {problem}"


def _log() -> logging.Logger:
    """The agent's logger, for errors nobody expected: `logging` (with traceback) is imported
    when one is logged, not by every `memrepo tool` call."""
    import logging

    return logging.getLogger("memrepo.agent")


class WritePath:
    """Memory tool calls of one agent on one clone, under the repository's policy."""

    def __init__(self, repo: MemoryRepo, agent_id: str | None = None, agent_name: str | None = None, *,
                 push: bool = True,
                 env: Mapping[str, str] | None = None, forge_retry: RetryPolicy | None = None,
                 connect_hint: str = texts.AGENT_CONNECT_HINT) -> None:
        self.repo = repo
        # The repository's agent when none is named; push False: direct commits stay local until a
        # sync (pull requests still push).
        self.tool = MemoryTool(repo, agent_id, agent_name, push=push)
        self.agent_id, self.agent_name = self.tool.agent_id, self.tool.agent_name
        self.env = os.environ if env is None else env
        self.forge_retry = forge_retry
        self.connect_hint = connect_hint  # how the person at this entry point connects a remote
        self._told: set[str] = set()  # set-aside refs already reported or proposed
        self.transcripts: Any = None  # a TranscriptStore: pull requests quote the turn's messages from it

    def handle(self, raw: object, *, external: tuple[str, ...] = (), trailers: tuple[tuple[str, str], ...] = (),
               conversation_id: str | None = None, turn: int = 0) -> EditResult:
        """One call as the agent sent it (a mapping or its JSON text). `external`: the untrusted
        sources in the agent's context; `trailers`: the provenance a direct commit carries.
        Never raises for bad input: refusals are results with ok False."""
        try:
            call = parse_call(raw)
        except MemrepoError as exc:
            return self.refusal(named_command(raw), exc)
        if call.command in calls.SEARCH_COMMANDS:
            return self._search(call)
        try:
            shared = self._shared_target(call)
        except MemrepoError as exc:
            return self.refusal(call.command, exc)
        if shared is not None:
            return self._shared(*shared, external, conversation_id, turn, dict(trailers).get(TRANSCRIPT_RANGE))
        if not call.writes:
            return EditResult.of(self.tool.apply(call), "view")
        try:
            plan = self.tool.plan(call)
            policy = self.repo.policy(plan.head)
        except MemrepoError as exc:
            return self.refusal(call.command, exc)
        empties_core = leaves_core_empty(self.repo, plan.head, plan.changes)
        facts = EditFacts(plan.paths, changed_lines(plan.changes), external, empties_core)
        route = route_edit(facts, policy)
        if not route.direct:
            return self._propose(call, route, conversation_id, turn, dict(trailers).get(TRANSCRIPT_RANGE))
        try:
            self._ready_to_push()
            done = self.tool.commit(plan, trailers)
        except MemrepoError as exc:
            return self.refusal(call.command, exc)
        return self._with_set_aside(done)

    def _ready_to_push(self) -> None:
        """Before a direct commit is pushed: a recorded GitHub App's installation token for git
        (bot/pullrequest/git_token.py), so main is pushed as the App; a MemrepoError, before
        anything is written, when the forge refuses one. A forge that does not answer refuses
        nothing: the commit is saved locally, as any commit made offline, and its push waits
        for the next sync."""
        if not self.tool.push or not agent_credential.record_path(self.repo.root).exists():
            return  # the usual call: no forge client is imported
        from bot.memfs import sync
        from bot.pullrequest import git_token

        if sync.remote_url(self.repo) is not None:
            with contextlib.suppress(git_token.Unreachable):
                git_token.ensure(self.repo, self.env)

    def _shared_target(self, call: Call) -> tuple[Any, Any, Call] | None:
        """(attachment, its projection or None, the call inside it) when `call` addresses an
        attached shared memory (`shared/<NAME>/...`); None for the agent's own memory."""
        if not any(isinstance(call.args.get(k), str) and call.args[k].startswith("shared/")
                   for k in ("path", "old_path", "new_path")):
            return None  # the usual call: no record is read
        from bot.agent.shared import split_call
        from bot.memfs import shared_projection as shared

        found = {a.name: a for a in shared.attachments(self.repo)}
        split = split_call(call, found)
        if split is None:
            return None
        attachment = found[split[0]]
        return attachment, shared.open_projection(self.repo, attachment), split[1]

    def _shared(self, attachment: Any, projection: MemoryRepo | None, call: Call, external: tuple[str, ...],
                conversation_id: str | None, turn: int, transcript_range: str | None) -> EditResult:
        """A call on shared memory: a read from its projection, or a write proposed as a pull
        request on its repository (bot/agent/shared.py)."""
        from bot.agent.proposal import propose_edit, turn_messages
        from bot.agent.shared import shared_route
        from bot.memfs import shared_projection as shared
        from bot.memfs import shared_record, sync
        from bot.pullrequest.target import clone_target, make_client

        if projection is None:
            return self.refusal(call.command, MemrepoError(NOT_SYNCED.format(
                name=attachment.name, path=shared_record.projection_root(self.repo.root, attachment.name),
                memory=self.repo.root)))
        tool = MemoryTool(projection, self.agent_id, self.agent_name, push=False)
        if not call.writes:
            return EditResult.of(tool.apply(call), "view")
        if attachment.read_only:
            return self.refusal(call.command, MemrepoError(AGENT_SHARED_READ_ONLY.format(
                name=attachment.name, url=attachment.url)))
        try:
            plan = tool.plan(call)
            policy = projection.policy(plan.head)
        except MemrepoError as exc:
            return self.refusal(call.command, exc)
        facts = EditFacts(plan.paths, changed_lines(plan.changes), external,
                          leaves_core_empty(projection, plan.head, plan.changes))
        route = shared_route(route_edit(facts, policy), attachment.name)
        own = sync.remote_url(self.repo)
        head = self.repo.head_sha()
        try:  # as the memory's recorded identity: the projection names its owner (agent_credential.read)
            client = make_client(clone_target(projection, self.env), self.forge_retry)
        except MemrepoError as exc:
            return EditResult(False, call.command, AGENT_SHARED_NO_FORGE.format(
                name=attachment.name, url=attachment.url, problem=exc), revision=head, route="refused")
        try:
            window = turn_messages(self.transcripts, self.agent_id, conversation_id, transcript_range)
            made = propose_edit(projection, call, route, client, agent_id=self.agent_id, agent_name=self.agent_name,
                                conversation_id=conversation_id or "", turn=turn, window=window,
                                memory_repository=None if own is None else shared.without_credentials(own))
        except Exception as exc:  # the agent is told; nothing is kept
            if not isinstance(exc, MemrepoError):
                _log().exception("opening a pull request for a shared memory edit")
            problem = exc if isinstance(exc, MemrepoError) else f"{type(exc).__name__}: {exc}"
            return EditResult(False, call.command, AGENT_EDIT_PR_FAILED.format(
                reasons="; ".join(route.reasons), problem=problem), revision=head, route="refused")
        finally:
            client.close()
        after = AGENT_EDIT_NEXT_REVIEW if route.untrusted else AGENT_EDIT_NEXT_INTEGRATOR
        text = AGENT_EDIT_OPENED.format(number=made.number, url=made.url, branch=made.branch,
                                              reasons="; ".join(route.reasons), next=after)
        return EditResult(True, call.command, text, commit=made.commit, revision=head, pushed=False,
                          paths=[shared_record.addressed(p, attachment.name) for p in made.paths], route="pull-request",
                          pull_request=made.number, url=made.url, branch=made.branch, labels=list(made.labels))

    def refusal(self, command: str, exc: MemrepoError) -> EditResult:
        """A refused call's result, as MemoryTool shapes one."""
        return EditResult.of(self.tool.refused(command, exc), "refused")

    def _search(self, call: Call) -> EditResult:
        """MemGPT's archival_memory_search and conversation_search (memgpt.py): reads, never routed."""
        from bot.agent import memgpt

        try:
            if call.command == "archival_memory_search":
                page = memgpt.archival_search(self.repo, call)
            elif self.transcripts is not None:
                page = memgpt.conversation_search(self.transcripts, self.agent_id, call)
            else:  # `memrepo tool`: the transcripts of MEMREPO_HOME, as `memrepo search` reads them
                from bot.transcript import TranscriptStore

                with TranscriptStore() as store:
                    page = memgpt.conversation_search(store, self.agent_id, call)
        except MemrepoError as exc:
            return self.refusal(call.command, exc)
        return EditResult(True, call.command, page.text, revision=self.repo.head_sha(), content=page.text,
                          route="view", results=page.results)

    def _with_set_aside(self, done: Committed) -> EditResult:
        """A direct commit's result, also telling of the commits its push set aside and of those
        set aside since the last result (by a sync that followed main in the background), each
        proposed as a pull request where there is a forge: no queued edit is dropped without a word."""
        from bot.memfs import sync

        result = EditResult.of(done.result, "direct")
        known = {e.ref for e in done.set_aside}
        earlier = tuple(e for e in sync.set_aside_commits(self.repo) if e.ref not in known)
        pending = tuple(e for e in (*done.set_aside, *earlier) if e.ref not in self._told)
        if pending:
            result.message = f"{result.message} {self._set_aside(pending)}"
        return result

    def _set_aside(self, entries: tuple[Any, ...]) -> str:
        """What the agent is told of queued commits sync could not replay: each becomes an
        agent-edit pull request when the memory has a forge, else it stays on its ref."""
        from bot.agent.proposal import propose_set_aside
        from bot.memfs import sync

        self._told.update(e.ref for e in entries)
        client = self._forge()
        if client is None:
            return sync.set_aside_note(entries)
        notes = []
        try:
            for entry in entries:
                try:
                    made = propose_set_aside(self.repo, entry, client, agent_id=self.agent_id,
                                             transcripts=self.transcripts)
                except Exception as exc:  # the commit stays on its ref; the agent hears why
                    if not isinstance(exc, MemrepoError):
                        _log().exception("opening a pull request for a set-aside commit")
                    notes.append(AGENT_SET_ASIDE_NOT_PROPOSED.format(
                        sha=entry.commit[:12], message=entry.message, ref=entry.ref, problem=exc))
                    continue
                notes.append(AGENT_SET_ASIDE_PROPOSED.format(
                    sha=entry.commit[:12], message=entry.message, reason=entry.reason, number=made.number,
                    url=made.url))
        finally:
            client.close()
        return " ".join(notes)

    def _forge(self) -> Any:
        """A client for the memory's forge, or None when origin is not one (or has no token)."""
        from bot.memfs import sync
        from bot.pullrequest.target import clone_target, make_client

        if sync.remote_url(self.repo) is None:
            return None
        try:
            return make_client(clone_target(self.repo, self.env), self.forge_retry)
        except MemrepoError:
            return None

    def _propose(self, call: Call, route: Route, conversation_id: str | None, turn: int,
                 transcript_range: str | None = None) -> EditResult:
        from bot.agent.proposal import propose_edit, turn_messages  # the forge and the worktree: only when needed
        from bot.memfs import sync
        from bot.pullrequest.target import clone_target, make_client

        reasons = "; ".join(route.reasons)
        head = self.repo.head_sha()
        url = sync.remote_url(self.repo)
        if url is None:
            return EditResult(False, call.command, AGENT_EDIT_NEEDS_REMOTE.format(reasons=reasons,
                                                                                  connect=self.connect_hint),
                              revision=head, route="refused")
        try:
            client = make_client(clone_target(self.repo, self.env), self.forge_retry)
            window = turn_messages(self.transcripts, self.agent_id, conversation_id, transcript_range)
            try:
                made = propose_edit(self.repo, call, route, client, agent_id=self.agent_id,
                                    agent_name=self.agent_name, conversation_id=conversation_id or "", turn=turn,
                                    window=window)
            finally:
                client.close()
        except Exception as exc:  # MemrepoError, or anything unexpected: the agent is told, nothing is kept
            if not isinstance(exc, MemrepoError):
                _log().exception("opening a pull request for an edit")
            problem = exc if isinstance(exc, MemrepoError) else f"{type(exc).__name__}: {exc}"
            refusal = AGENT_EDIT_PR_FAILED.format(reasons=reasons, problem=problem)
            return EditResult(False, call.command, refusal, revision=head, route="refused")
        after = AGENT_EDIT_NEXT_REVIEW if route.untrusted else AGENT_EDIT_NEXT_INTEGRATOR
        text = AGENT_EDIT_OPENED.format(number=made.number, url=made.url, branch=made.branch,
                                              reasons=reasons, next=after)
        return EditResult(True, call.command, text, commit=made.commit, revision=head, pushed=False,
                          paths=list(made.paths), route="pull-request", pull_request=made.number, url=made.url,
                          branch=made.branch, labels=list(made.labels))


def leaves_core_empty(repo: MemoryRepo, head: str, changes: Mapping[str, tuple[bytes | None, bytes | None]]) -> bool:
    """Whether the change deletes the last file of core memory (`system/`, or a v2 memory's root
    files): the agent would start its next turn with no persona and nothing about the user."""
    kind = memory_layout(repo, head)
    core = {path for path in repo.paths(head) if layout.is_core_file(path, kind)}
    if not core:
        return False
    deleted = {path for path, (_, after) in changes.items() if after is None}
    added = {path for path, (before, after) in changes.items() if before is None and after is not None}
    return not (core - deleted) and not any(layout.is_core_file(path, kind) for path in added)


def commit_changes(repo: MemoryRepo, parent: str | None, commit: str) -> dict[str, tuple[bytes | None, bytes | None]]:
    """What `commit` changes against `parent` (None: an empty tree), path by path."""
    before = repo.paths(parent) if parent else {}
    after = repo.paths(commit)
    return {path: (repo.blob(before[path]) if path in before else None,
                   repo.blob(after[path]) if path in after else None)
            for path in sorted(set(before) | set(after)) if before.get(path) != after.get(path)}


class CommitRouter:
    """The memory tool's routing, for the commits a harness made in the folder itself (Letta
    Code, or any agent committing with git), which `memrepo follow` finds before it pushes:
    `route` judges one commit as `WritePath.handle` judges a call (`routing.route_edit`, under
    the policy of the forge's main, so a commit cannot loosen the rules it is judged by), and
    `propose` opens the pull request for those held back, as an agent edit."""

    def __init__(self, env: Mapping[str, str] | None = None, forge_retry: RetryPolicy | None = None,
                 home: str | None = None) -> None:
        self.env = os.environ if env is None else env
        self.forge_retry = forge_retry
        self.home = home  # the transcript store the harness's conversations are imported into (None: the default)

    def route(self, repo: MemoryRepo, commit: str, parent: str | None, base: str) -> Route:
        """Where `commit` (made on `parent`) goes, by the policy at `base`."""
        from bot.agent.routing import commit_facts
        from bot.agent.shared import shared_route
        from bot.memfs import shared_projection

        changes = commit_changes(repo, parent, commit)
        info = repo.commit_info(commit)
        empties = parent is not None and leaves_core_empty(repo, parent, changes)
        route = route_edit(commit_facts(changes, info.message if info else "", empties), repo.policy(base))
        name = shared_projection.projection_of(repo)  # a commit in a shared memory's projection: always reviewed
        return route if name is None else shared_route(route, name)

    def propose(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...], *, base: str, tip: str,
                memory_repository: str | None = None) -> Any:
        """Open the pull request for `commits` ((sha, parent) each; their change is `tip`'s tree
        on `base`, the forge's main): an `EditProposal`, or a MemrepoError saying why it cannot
        be opened now. `memory_repository`: the agent's own memory, when `repo` is a shared
        memory's projection (the provenance names it)."""
        from bot.agent.proposal import propose_commits
        from bot.agent.routing import combined

        held = combined(self.route(repo, sha, parent, base) for sha, parent in commits)
        tool = MemoryTool(repo, push=False)  # the folder's agent, as its name and id are configured
        from bot.transcript import TranscriptStore

        client = self._client(repo)
        store = TranscriptStore(self.home)
        try:
            return propose_commits(repo, tuple(sha for sha, _ in commits), held, client, base=base, tip=tip,
                                   agent_id=tool.agent_id, agent_name=tool.agent_name, transcripts=store,
                                   memory_repository=memory_repository)
        finally:
            client.close()
            store.close()

    def turn_known(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...]) -> bool:
        """Whether the conversation behind `commits` can be named now (bot.agent.proposal.turn_known)."""
        from bot.agent.proposal import turn_known
        from bot.transcript import TranscriptStore

        with TranscriptStore(self.home) as store:
            return turn_known(repo, tuple(sha for sha, _ in commits), store, MemoryTool(repo, push=False).agent_id)

    def name_turn(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...], number: int) -> str:
        """Name in pull request #`number`, which `propose` opened for `commits` before the turn
        behind them was imported, that turn once it is (bot.agent.proposal.name_turn: `waiting`,
        with no forge call, `named` or `left`)."""
        from bot.agent.proposal import name_turn, turn_known
        from bot.transcript import TranscriptStore

        shas = tuple(sha for sha, _ in commits)
        agent_id = MemoryTool(repo, push=False).agent_id
        with TranscriptStore(self.home) as store:
            if not turn_known(repo, shas, store, agent_id):
                return "waiting"
            client = self._client(repo)
            try:
                return name_turn(repo, shas, client, number, transcripts=store, agent_id=agent_id)
            finally:
                client.close()

    def pull_state(self, repo: MemoryRepo, number: int) -> str:
        """`open`, `merged` or `closed`: what became of a pull request `propose` opened."""
        client = self._client(repo)
        try:
            pr = client.get_pull_request(number)
        finally:
            client.close()
        return "merged" if pr.merged else pr.state

    def _client(self, repo: MemoryRepo) -> Any:
        from bot.pullrequest.target import clone_target, make_client

        return make_client(clone_target(repo, self.env), self.forge_retry)

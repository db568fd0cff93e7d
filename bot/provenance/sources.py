"""Where `why` finds what git alone does not hold: the forge (pull requests and their reviews)
and the transcript store (the messages a dream rests on), each found once per call and only
when a line needs it. This is the imperative shell of `bot.provenance.why`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.memfs import MemoryRepo
from bot.memfs.sync import redact, remote_url
from bot.pullrequest.target import forge_target
from bot.transcript.store import TranscriptStore

HISTORY_FORGE_NOT_FORGE = "the forge was not asked: origin ({url}) is not a GitHub-style repository URL"
HISTORY_FORGE_NO_TOKEN = "the forge was not asked: no token for {repository} (set MEMREPO_FORGE_TOKEN or GITHUB_TOKEN)"
HISTORY_TRANSCRIPTS_DISABLED = ("transcripts were not read here (--no-transcripts, or a palace served by the "
                                "integrator, which holds none; `memrepo why` where the agent's transcripts are "
                                "quotes them)")
HISTORY_TRANSCRIPT_MISSING = "the transcript of conversation {conversation} (agent {agent}) is not available " \
                             "locally{where}: {problem}"


def unasked(reason: str, repository: str | None = None) -> dict[str, Any]:
    """The forge status of a forge that is not asked, and why."""
    return {"asked": False, "repository": repository, "reason": reason}


def find_forge(repo: MemoryRepo, given: Any, *, disabled: Mapping[str, Any], policy: RetryPolicy
               ) -> tuple[Any, dict[str, Any], bool]:
    """(the forge client or None, {"asked", "repository", "reason"}, whether the client was made
    here and is the caller's to close). `given`: False never asks (the status is `disabled`); a
    client is used as it is; None finds the forge from origin's URL and its token, as dreams do."""
    if given is False:
        return None, dict(disabled), False
    if given is not None:
        return given, {"asked": True, "repository": getattr(given, "repository", None), "reason": None}, False
    url = remote_url(repo)
    if not url:
        return None, unasked("the forge was not asked: memory has no remote"), False
    try:
        target = forge_target(url, os.environ)
    except MemrepoError:
        return None, unasked(HISTORY_FORGE_NOT_FORGE.format(url=redact(url))), False
    if not target.token:
        return None, unasked(HISTORY_FORGE_NO_TOKEN.format(repository=target.repository),
                             target.repository), False
    client = ForgeClient(target.repository, TokenCredentials(target.token), base_url=target.api_url, policy=policy,
                         timeout=10, min_write_interval=0.0)
    return client, {"asked": True, "repository": target.repository, "reason": None}, True


class Sources:
    """The forge and the transcript store of one `why` call, found once and only when needed."""

    def __init__(self, repo: MemoryRepo, forge: Any, transcripts: Any,
                 unasked_forge: Mapping[str, Any] | None = None) -> None:
        self.repo = repo
        self._forge_arg = forge
        self._unasked_forge = unasked_forge or unasked("the forge was not asked (--no-forge)")
        self._transcripts_arg = transcripts
        self._forge: Any = None
        self.forge_status: dict[str, Any] | None = None
        self._store: Any = None
        self._owned: list[Any] = []

    def forge(self) -> Any:
        """The forge client, or None (then `forge_status["reason"]` says why it is not asked)."""
        if self.forge_status is None:
            self._forge, self.forge_status = self._find_forge()
        return self._forge

    def _find_forge(self) -> tuple[Any, dict[str, Any]]:
        client, status, owned = find_forge(self.repo, self._forge_arg, disabled=self._unasked_forge,
                                           policy=RetryPolicy(max_total_seconds=20.0, max_attempts=3,
                                                              backoff_base=0.2, backoff_cap=2.0))
        if owned:
            self._owned.append(client)
        return client, status

    def read_transcript(self, agent_id: str, conversation_id: str) -> tuple[list[dict[str, Any]] | None, str | None]:
        """(the conversation's rows, None) or (None, why they are not available here)."""
        if self._transcripts_arg is False:
            return None, HISTORY_TRANSCRIPTS_DISABLED
        store = self._transcripts_arg
        if store is None:
            if self._store is None:
                try:
                    self._store = TranscriptStore()
                except MemrepoError as exc:
                    return None, str(exc)
                self._owned.append(self._store)
            store = self._store
        try:
            rows = store.read(agent_id, conversation_id)
        except MemrepoError as exc:
            where = getattr(store, "home", None)
            return None, HISTORY_TRANSCRIPT_MISSING.format(
                agent=agent_id, conversation=conversation_id, where=f" in {where}" if where else "", problem=exc)
        return [r.to_row() if hasattr(r, "to_row") else dict(r) for r in rows], None

    def close(self) -> None:
        for thing in self._owned:
            with contextlib.suppress(Exception):
                thing.close()
